"""The town's layers on a sheet: zoning, resources, parcels, buildings, wells.

:func:`draw_town_layers` draws what the town holds in a map view, in a fixed order (one
table of layers plus the few drawn their own way: the R-10 zone, the wetland adjacent band,
the protected buildings).  The band and the protected buildings come from the screening
(:meth:`gis_sw.screening.Screening.wetland_band`,
:meth:`~gis_sw.screening.Screening.protected_buildings`): this module only draws them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from matplotlib.axes import Axes

from gis_sw.layers.layerset import LayerSet
from gis_sw.outputs.maps.draw import (
    add_lines,
    add_points,
    add_polygons,
    legend_handle,
    polygon_parts,
)
from gis_sw.outputs.maps.site import add_handle, in_view, view_box
from gis_sw.outputs.maps.style import STYLES, LayerStyle
from gis_sw.ruleset import Ruleset

__all__ = ["TownData", "draw_town_layers"]


class TownData(Protocol):
    """What the maps draw of a town: its layers, ruleset and the two derived layers.

    :class:`gis_sw.screening.Screening` and :class:`gis_sw.api.Town` are both.
    """

    @property
    def layers(self) -> LayerSet:
        """Return the town's layers."""
        ...

    @property
    def ruleset(self) -> Ruleset:
        """Return the ruleset."""
        ...

    def wetland_band(self, wetlands: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        """Return the adjacent-area outline of each wetland row."""
        ...

    def protected_buildings(self, buildings: pd.DataFrame) -> np.ndarray:
        """Return True per building row for a structure SW206 protects."""
        ...


PLAIN_LAYERS: tuple[tuple[str, str], ...] = (
    ("floodplain", "polygon"),
    ("wetlands", "polygon"),
    ("water_bodies", "polygon"),
    ("band", ""),
    ("pavement", "polygon"),
    ("septic_fields", "polygon"),
    ("parcels", "line"),
    ("buildings", ""),
    ("streams", "line"),
    ("wells", "point"),
)
"""The order the town's layers are drawn in, and how (``""``: drawn their own way)."""

_DRAW: dict[str, Callable[[Axes, Any, LayerStyle], Any]] = {
    "polygon": add_polygons,
    "line": add_lines,
    "point": add_points,
}


def draw_town_layers(ax: Axes, town: TownData, bounds: tuple[float, ...]) -> list[Any]:
    """Draw the town's layers in view; return their legend handles.

    Zoning (R-10 hatched), floodplain, wetlands and their adjacent area, water, pavement,
    septic fields, parcels, buildings (basement ones dark and hatched), streams and wells.
    """
    handles: list[Any] = []
    _draw_zoning(ax, town, bounds, handles)
    for kind, how in PLAIN_LAYERS:
        if kind == "band":
            _draw_band(ax, town, bounds, handles)
        elif kind == "buildings":
            _draw_buildings(ax, town, bounds, handles)
        else:
            frame = in_view(town.layers.get(kind), bounds)
            if frame is not None and _DRAW[how](ax, frame.geometry.to_numpy(), STYLES[kind]):
                add_handle(handles, legend_handle(STYLES[kind], kind=how))
    return handles


def _draw_zoning(ax: Axes, town: TownData, bounds: tuple[float, ...], handles: list[Any]) -> None:
    ruleset = town.ruleset
    zone_col = ruleset.zones.zone_column
    zoning = in_view(town.layers.get("zoning"), bounds)
    if zoning is None or zone_col not in zoning.columns:
        return
    low = zoning[ruleset.low_threshold_mask(zoning[zone_col])]
    if len(low) and add_polygons(ax, low.geometry.to_numpy(), STYLES["zoning_low"]):
        label = f"Zone {', '.join(ruleset.zones.low_threshold_zones)} (lower permit threshold)"
        add_handle(handles, legend_handle(STYLES["zoning_low"], kind="polygon", label=label))
    if add_lines(ax, zoning.geometry.to_numpy(), STYLES["zoning"]):
        add_handle(handles, legend_handle(STYLES["zoning"], kind="line"))
    _label_zones_in_view(ax, zoning, zone_col, bounds)


def _draw_band(ax: Axes, town: TownData, bounds: tuple[float, ...], handles: list[Any]) -> None:
    adjacent_ft = town.ruleset.resources.wetland_adjacent_area_ft
    near = in_view(town.layers.get("wetlands"), _grow(bounds, adjacent_ft))
    if near is None or adjacent_ft <= 0:
        return
    ring = town.wetland_band(near).geometry.to_numpy()
    if add_lines(ax, ring, STYLES["wetland_adjacent"]):
        label = f"Wetland adjacent area ({adjacent_ft:g} ft)"
        style = STYLES["wetland_adjacent"]
        add_handle(handles, legend_handle(style, kind="line", label=label))


def _draw_buildings(
    ax: Axes, town: TownData, bounds: tuple[float, ...], handles: list[Any]
) -> None:
    buildings = in_view(town.layers.get("buildings"), bounds)
    if buildings is None:
        return
    # the protected structures of SW206: a habitable basement or below-ground storage
    basement = town.protected_buildings(buildings)
    if add_polygons(ax, buildings.geometry.to_numpy()[~basement], STYLES["buildings"]):
        add_handle(handles, legend_handle(STYLES["buildings"], kind="polygon"))
    style = STYLES["buildings_basement"]
    if add_polygons(ax, buildings.geometry.to_numpy()[basement], style):
        add_handle(handles, legend_handle(style, kind="polygon"))


def _grow(bounds: tuple[float, ...], by: float) -> tuple[float, ...]:
    return (bounds[0] - by, bounds[1] - by, bounds[2] + by, bounds[3] + by)


def _away_from_site(poly: shapely.Polygon, bounds: tuple[float, ...]) -> tuple[float, float]:
    """Return a point inside ``poly`` near an edge of the view, away from the site.

    Tries a 5 x 5 grid inset 10% from the frame; falls back to a representative point.
    """
    width, height = bounds[2] - bounds[0], bounds[3] - bounds[1]
    fractions = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    grid_x, grid_y = np.meshgrid(bounds[0] + fractions * width, bounds[1] + fractions * height)
    xs, ys = grid_x.ravel(), grid_y.ravel()
    inside = shapely.contains_xy(shapely.buffer(poly, -0.04 * min(width, height)), xs, ys)
    if not inside.any():
        point = poly.representative_point()
        return (float(point.x), float(point.y))
    cx, cy = bounds[0] + width / 2, bounds[1] + height / 2
    # relative distance from the middle, measured as a fraction of the frame
    spread = np.hypot((xs - cx) / width, (ys - cy) / height)
    spread[~inside] = -1.0
    best = int(np.argmax(spread))
    return (float(xs[best]), float(ys[best]))


def _inside_frame(ax: Axes, text: Any) -> None:
    """Move ``text`` (centred on its position) so its box lies inside the map frame."""
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    box, frame = text.get_window_extent(renderer), ax.get_window_extent(renderer)
    margin = 3.0
    shift_x = max(frame.x0 + margin - box.x0, 0.0) + min(frame.x1 - margin - box.x1, 0.0)
    shift_y = max(frame.y0 + margin - box.y0, 0.0) + min(frame.y1 - margin - box.y1, 0.0)
    if shift_x or shift_y:
        x, y = ax.transData.transform(text.get_position())
        text.set_position(ax.transData.inverted().transform((x + shift_x, y + shift_y)))


def _label_zones_in_view(
    ax: Axes, zoning: gpd.GeoDataFrame, zone_col: str, bounds: tuple[float, ...]
) -> list[Any]:
    """Name each zone that fills enough of the view, inside the frame; the texts drawn."""
    clipped = np.asarray(shapely.intersection(zoning.geometry.to_numpy(), view_box(bounds)))
    polys, index = polygon_parts(clipped)
    texts: list[Any] = []
    if len(polys) == 0:
        return texts
    view_area = (bounds[2] - bounds[0]) * (bounds[3] - bounds[1])
    zones = zoning[zone_col].astype(str).to_numpy()[index]
    areas = shapely.area(polys)
    for zone in sorted(set(zones)):
        mask = zones == zone
        best = int(np.argmax(np.where(mask, areas, -1.0)))
        if areas[best] < 0.02 * view_area:
            continue
        x, y = _away_from_site(polys[best], bounds)
        text = ax.text(
            x,
            y,
            f"ZONE {zone}",
            ha="center",
            va="center",
            fontsize=9,
            color="#6a3d9a",
            alpha=0.75,
            fontweight="bold",
            zorder=2.45,  # above pavement and buildings, so no road hides half of it
            clip_on=True,
            gid="zone-label",
        )
        _inside_frame(ax, text)
        texts.append(text)
    return texts
