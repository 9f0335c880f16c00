"""Map furniture: north arrow, scale bar, legend, title block and location map.

Everything here is placed in sheet inches (``fig.dpi_scale_trans``) so its size on paper is
exact whatever the output format.  The north arrow points to true north: in a Transverse
Mercator or Lambert zone grid north and true north differ by the grid convergence, computed
with pyproj at the centre of the sheet.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Polygon, Rectangle
from matplotlib.transforms import Bbox
from pyproj import CRS, Transformer

from gis_sw.outputs.maps.draw import add_lines, add_polygons, polygon_parts
from gis_sw.outputs.maps.style import STYLES, zone_fill
from gis_sw.ruleset import zone_key

DISCLAIMER = "Screening result, not a permit decision"
"""Printed on every sheet: the Town Engineer decides, gis-sw screens."""


def grid_convergence_deg(crs: CRS, x: float, y: float) -> float:
    """Angle from grid north to true north at (x, y), degrees, clockwise positive.

    Positive means true north points to the right (east) of the grid's up direction.
    Computed by projecting a short step north along the meridian with pyproj.
    """
    crs = CRS.from_user_input(crs)
    if crs.is_geographic:
        return 0.0
    to_geo = Transformer.from_crs(crs, CRS.from_epsg(4326), always_xy=True)
    to_grid = Transformer.from_crs(CRS.from_epsg(4326), crs, always_xy=True)
    lon, lat = to_geo.transform(x, y)
    step = 0.001 if lat < 89.0 else -0.001
    x2, y2 = to_grid.transform(lon, lat + step)
    dx, dy = (x2 - x) * math.copysign(1, step), (y2 - y) * math.copysign(1, step)
    if not (math.isfinite(dx) and math.isfinite(dy)):
        return 0.0
    return math.degrees(math.atan2(dx, dy))


def _dms(angle_deg: float) -> str:
    total_min = round(abs(angle_deg) * 60)
    return f"{total_min // 60}°{total_min % 60:02d}′"


def map_frame(fig: Figure, frame_in: tuple[float, float, float, float]) -> Axes:
    """Return the map frame's axes: placed in sheet inches, framed, with no ticks."""
    ax = inch_axes(fig, *frame_in)
    ax.set_gid("map-frame")
    ax.set_axis_on()
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def inch_axes(fig: Figure, left: float, bottom: float, width: float, height: float) -> Axes:
    """Return an axes placed in sheet inches, with no ticks or frame."""
    w_in, h_in = fig.get_size_inches()
    ax = fig.add_axes((left / w_in, bottom / h_in, width / w_in, height / h_in))
    ax.set_axis_off()
    return ax


def draw_north_arrow(
    fig: Figure, left: float, bottom: float, size: float, convergence_deg: float
) -> Axes:
    """True-north arrow in a ``size`` inch square; a thin line shows grid north when they differ.

    Returns the axes (its ``gid`` is ``north-arrow``).
    """
    ax = inch_axes(fig, left, bottom, size, size)
    ax.set_gid("north-arrow")
    ax.set_xlim(-1, 1)
    ax.set_ylim(-1, 1)
    ax.set_aspect("equal")
    theta = math.radians(convergence_deg)
    ux, uy = math.sin(theta), math.cos(theta)
    px, py = uy, -ux  # perpendicular
    tip = (0.62 * ux, 0.62 * uy)
    tail = (-0.55 * ux, -0.55 * uy)
    half_w = 0.2
    left_barb = (tail[0] + half_w * -px, tail[1] + half_w * -py)
    right_barb = (tail[0] + half_w * px, tail[1] + half_w * py)
    notch = (-0.3 * ux, -0.3 * uy)
    ax.add_patch(Polygon([tip, left_barb, notch], closed=True, fc="black", ec="black", lw=0.8))
    ax.add_patch(Polygon([tip, right_barb, notch], closed=True, fc="white", ec="black", lw=0.8))
    ax.text(0.85 * ux, 0.85 * uy, "N", ha="center", va="center", fontsize=11, fontweight="bold")
    if abs(convergence_deg) >= 0.01:
        ax.plot([0.75, 0.75], [-0.6, 0.55], color="#555555", lw=0.7)
        ax.plot([0.75], [0.55], marker="^", ms=3, color="#555555")
        ax.text(0.75, 0.68, "GN", ha="center", va="bottom", fontsize=5.5, color="#555555")
    return ax


def north_arrow_note(convergence_deg: float) -> str:
    """One line saying how true north relates to grid north."""
    if abs(convergence_deg) < 0.01:
        return "True north = grid north"
    side = "east" if convergence_deg > 0 else "west"
    return f"True north {_dms(convergence_deg)} {side} of grid north (GN)"


def scale_bar_ft(scale_ft_per_in: float, max_width_in: float) -> tuple[float, int]:
    """Segment length (ft) and number of segments of a scale bar that fits ``max_width_in``.

    Segments are one inch long on paper, so each is one scale unit (50 ft at 1" = 50').
    """
    segments = max(1, min(4, int(max_width_in)))
    return float(scale_ft_per_in), segments


def draw_scale_bar(
    fig: Figure, left: float, bottom: float, max_width: float, scale_ft_per_in: float
) -> list[Rectangle]:
    """Alternating black and white boxes, one inch each, labelled in feet.

    Returns the boxes (their widths are exact inches on the sheet; gid ``scale-bar``).
    """
    segment_ft, count = scale_bar_ft(scale_ft_per_in, max_width)
    trans = fig.dpi_scale_trans
    boxes = []
    height = 0.09
    for i in range(count):
        box = Rectangle(
            (left + i, bottom),
            1.0,
            height,
            transform=trans,
            facecolor="black" if i % 2 == 0 else "white",
            edgecolor="black",
            linewidth=0.6,
            gid="scale-bar",
        )
        fig.add_artist(box)
        boxes.append(box)
    for i in range(count + 1):  # a figure at every tick, the last one with its unit
        unit = " ft" if i == count else ""
        fig.text(
            left + i,
            bottom + height + 0.04,
            f"{segment_ft * i:g}{unit}",
            transform=trans,
            ha="center",
            va="bottom",
            fontsize=6.5,
        )
    fig.text(
        left,
        bottom - 0.05,
        f"Scale 1\" = {scale_ft_per_in:g}'  (feet)",
        transform=trans,
        ha="left",
        va="top",
        fontsize=7,
        fontweight="bold",
    )
    return boxes


def draw_legend(
    fig: Figure, handles: Sequence[Any], *, left: float, top: float, width: float, height: float
) -> Any:
    """Draw the legend of every layer and finding drawn, in a box below ``top`` (inches).

    Switches to two columns, then a smaller font, when one column would not fit.
    """
    if not handles:
        return None
    trans = fig.dpi_scale_trans
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    legend = None
    for ncol, size in ((1, 7.0), (2, 6.5), (2, 5.5), (3, 5.0)):
        if legend is not None:
            legend.remove()
        legend = fig.legend(
            handles=list(handles),
            loc="upper left",
            bbox_to_anchor=(left, top),
            bbox_transform=trans,
            fontsize=size,
            title="Legend",
            title_fontsize=size + 1,
            ncol=ncol,
            frameon=True,
            edgecolor="black",
            fancybox=False,
            handlelength=2.2,
            handleheight=1.1,
            borderaxespad=0.0,
        )
        box = legend.get_window_extent(renderer).transformed(trans.inverted())
        if box.height <= height and box.width <= width:
            break
    return legend


@dataclass(frozen=True, slots=True)
class TitleBlock:
    """What the title block says."""

    proposal: str
    parcels: Sequence[str]
    zones: Sequence[str]
    ruleset: str
    ruleset_version: str
    law: str
    run_date: str
    scale: str
    sheet: str
    counts: str
    addresses: Sequence[str] = ()
    """``address, owner`` of each parcel (the parcels layer's ``address`` and ``owner``)."""


def _id_list(values: Sequence[str], limit: int = 10) -> str:
    if not values:
        return "none"
    shown = ", ".join(values[:limit])
    if len(values) > limit:
        shown += f" and {len(values) - limit} more"
    return shown


def title_lines(block: TitleBlock) -> list[str]:
    """Return the title block's lines (before wrapping)."""
    return [
        f"Proposal: {block.proposal}",
        f"Parcels: {_id_list(list(block.parcels))}",
        *([f"Address, owner: {'; '.join(block.addresses[:3])}"] if block.addresses else []),
        f"Zones: {_id_list(list(block.zones))}",
        f"Ruleset: {block.ruleset}, version {block.ruleset_version}",
        f"Law: {block.law}",
        f"Findings: {block.counts}",
        f"{block.scale}    {block.sheet}",
        f"Run date: {block.run_date}",
    ]


def draw_title_block(
    fig: Figure, block: TitleBlock, *, left: float, bottom: float, width: float, height: float
) -> None:
    """Draw a boxed title block: heading, the proposal's facts and the disclaimer."""
    trans = fig.dpi_scale_trans
    fig.add_artist(
        Rectangle(
            (left, bottom), width, height, transform=trans, fill=False, lw=1.2, edgecolor="black"
        )
    )
    fig.text(
        left + 0.1,
        bottom + height - 0.1,
        "STORMWATER SCREENING MAP",
        transform=trans,
        ha="left",
        va="top",
        fontsize=10,
        fontweight="bold",
    )
    chars = max(30, int(width * 17))
    wrapped: list[str] = []
    for line in title_lines(block):
        wrapped.extend(textwrap.wrap(line, chars, subsequent_indent="  ") or [""])
    fig.text(
        left + 0.1,
        bottom + height - 0.35,
        "\n".join(wrapped),
        transform=trans,
        ha="left",
        va="top",
        fontsize=7,
        linespacing=1.35,
    )
    fig.add_artist(
        Rectangle(
            (left, bottom),
            width,
            0.34,
            transform=trans,
            facecolor="#f0f0f0",
            edgecolor="black",
            lw=1.2,
        )
    )
    fig.text(
        left + width / 2,
        bottom + 0.17,
        DISCLAIMER,
        transform=trans,
        ha="center",
        va="center",
        fontsize=8.5,
        fontweight="bold",
    )


def draw_location_map(
    fig: Figure,
    rect_in: tuple[float, float, float, float],
    *,
    zoning: gpd.GeoDataFrame | None,
    parcels: gpd.GeoDataFrame | None,
    site_bounds: tuple[float, float, float, float],
    zone_column: str,
    low_threshold_zones: tuple[str, ...],
) -> Axes:
    """General location map with zoning (§ 183-12C(3)(a)[1]): the town, the site marked."""
    left, bottom, width, height = rect_in
    ax = inch_axes(fig, left, bottom, width, height - 0.2)
    ax.set_gid("location-map")
    fig.text(
        left,
        bottom + height,
        "General location map with zoning",
        transform=fig.dpi_scale_trans,
        ha="left",
        va="top",
        fontsize=7.5,
        fontweight="bold",
    )
    boxes = [site_bounds]
    if zoning is not None and len(zoning):
        low_keys = [zone_key(z) for z in low_threshold_zones]
        zones = sorted({str(z) for z in zoning[zone_column].dropna()})
        fills = [zone_fill(str(z), zones, low_threshold_zones) for z in zoning[zone_column]]
        add_polygons(
            ax,
            zoning.geometry.to_numpy(),
            STYLES["zoning"],
            facecolors=fills,
            hatch="",
            linestyle="-",
        )
        low = zoning[np.isin([zone_key(z) for z in zoning[zone_column]], low_keys)]
        if len(low):
            add_polygons(ax, low.geometry.to_numpy(), STYLES["zoning_low"])
        boxes.append(tuple(zoning.total_bounds))
        _label_zones(ax, zoning, zone_column)
    elif parcels is not None and len(parcels):
        boxes.append(tuple(parcels.total_bounds))
    if parcels is not None and 0 < len(parcels) <= 20000:
        add_lines(ax, parcels.geometry.to_numpy(), STYLES["parcels"], linewidth=0.15)
    arr = np.asarray(boxes, dtype=float)
    minx, miny = arr[:, 0].min(), arr[:, 1].min()
    maxx, maxy = arr[:, 2].max(), arr[:, 3].max()
    span = max(maxx - minx, maxy - miny, 1.0) * 1.04
    cx, cy = (minx + maxx) / 2, (miny + maxy) / 2
    aspect = width / (height - 0.2)
    half_w = max(span / 2, span * aspect / 2)
    half_h = half_w / aspect
    if half_h * 2 < span:
        half_h = span / 2
        half_w = half_h * aspect
    ax.set_xlim(cx - half_w, cx + half_w)
    ax.set_ylim(cy - half_h, cy + half_h)
    sx0, sy0, sx1, sy1 = site_bounds
    pad = span * 0.012
    ax.add_patch(
        Rectangle(
            (sx0 - pad, sy0 - pad),
            sx1 - sx0 + 2 * pad,
            sy1 - sy0 + 2 * pad,
            fill=False,
            ec=STYLES["site"].edgecolor,
            lw=1.4,
            zorder=5,
        )
    )
    ax.plot(
        [(sx0 + sx1) / 2],
        [(sy0 + sy1) / 2],
        marker="*",
        ms=9,
        mfc="#d7191c",
        mec="black",
        mew=0.5,
        zorder=6,
    )
    ax.set_axis_on()
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_linewidth(0.8)
    return ax


def _label_zones(ax: Axes, zoning: gpd.GeoDataFrame, zone_column: str) -> None:
    """One label per zone, on its largest polygon part."""
    polys, index = polygon_parts(zoning.geometry.to_numpy())
    if len(polys) == 0:
        return
    zones = zoning[zone_column].astype(str).to_numpy()[index]
    areas = np.asarray([p.area for p in polys])
    total = float(areas.sum()) or 1.0
    for zone in sorted(set(zones)):
        mask = zones == zone
        best = int(np.argmax(np.where(mask, areas, -1)))
        if areas[best] / total < 0.01:
            continue
        point = polys[best].representative_point()
        ax.text(
            point.x,
            point.y,
            zone,
            ha="center",
            va="center",
            fontsize=5.5,
            fontweight="bold",
            color="#3f007d",
            zorder=4,
            clip_on=True,
            bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7},
        )


def frame_box_in(fig: Figure, ax: Axes) -> Bbox:
    """Return an axes' box in sheet inches."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    return ax.get_window_extent(renderer).transformed(fig.dpi_scale_trans.inverted())


__all__ = [
    "DISCLAIMER",
    "TitleBlock",
    "draw_legend",
    "draw_location_map",
    "draw_north_arrow",
    "draw_scale_bar",
    "draw_title_block",
    "grid_convergence_deg",
    "north_arrow_note",
]
