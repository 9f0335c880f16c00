"""Draw one view of a site: the town's layers, the proposal, setback rings and findings.

Every layer is cut to the view with its spatial index before drawing, and drawn as one
collection.  Each function returns the legend handles of what it actually drew, so the legend
lists every layer and finding on the sheet and nothing that is not there.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from pyproj import CRS

from gis_sw.errors import InputFileError
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.layerset import LayerSet
from gis_sw.outputs.maps.draw import (
    add_lines,
    add_points,
    add_polygons,
    legend_handle,
)
from gis_sw.outputs.maps.labels import LabelItem, anchor_point, finding_label
from gis_sw.outputs.maps.style import PHASE_HATCHES, RING_STYLES, STYLES, LayerStyle
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

HIGHLIGHT_OUTCOMES = ("fail", "review")
"""Findings drawn and labelled on the sheets in their outcome's style."""

LABELLED_REQUIRED = ("SW101", "SW102", "SW103", "SW106")
"""Rules whose ``required`` findings carry the answer on the sheet (the permit and its area,
the R-10 part, the SWPPP, every wetland, band, water or floodplain overlap with its area)."""

RUNOFF_RULES = ("SW501", "SW502", "SW503", "SW504")
"""Runoff findings: drawn on their drainage area in a style of their own, never as the limit
of disturbance's outline."""


def _is_runoff(rule_ids: Any) -> np.ndarray:
    return np.isin(np.asarray(rule_ids, dtype=object).astype(str), RUNOFF_RULES)


def _shown_required(findings: gpd.GeoDataFrame) -> np.ndarray:
    return (findings["outcome"].to_numpy() == "required") & np.isin(
        findings["rule_id"].astype(str).to_numpy(), LABELLED_REQUIRED
    )


@dataclass(slots=True)
class SiteData:
    """What one proposal's sheets draw (already in the working CRS)."""

    proposal_id: str
    disturbance: gpd.GeoDataFrame
    devices: gpd.GeoDataFrame
    impervious: gpd.GeoDataFrame | None
    findings: gpd.GeoDataFrame
    siting: gpd.GeoDataFrame | None = None
    handles: list[Any] = field(default_factory=list)


def in_view(frame: gpd.GeoDataFrame | None, bounds: tuple[float, ...]) -> gpd.GeoDataFrame | None:
    """Rows whose geometry meets the box (spatial index), or None for an absent layer."""
    if frame is None or len(frame) == 0:
        return None
    hits = frame.sindex.query(view_box(bounds), predicate="intersects")
    if len(hits) == 0:
        return None
    return frame.iloc[np.sort(hits)]


def add_handle(handles: list[Any], handle: Any) -> None:
    """Add a legend handle unless one with its label is there already."""
    if handle.get_label() not in {h.get_label() for h in handles}:
        handles.append(handle)


def view_box(bounds: tuple[float, ...]) -> shapely.Polygon:
    """Return the box of a map view's ``(minx, miny, maxx, maxy)``."""
    return shapely.box(bounds[0], bounds[1], bounds[2], bounds[3])


CONTOUR_INTERVALS_FT: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0)


def draw_contours(ax: Axes, layers: LayerSet, bounds: tuple[float, ...]) -> list[Any]:
    """Existing ground contours from the DEM (§ 183-12C(3)(a)[4]), index contours labelled.

    The interval is the smallest of 1, 2, 5, 10, 20, 50 ft giving at most 30 lines in view.
    """
    dem = layers.raster("dem")
    if dem is None:
        return []
    inv = ~dem.transform
    c0, r0 = inv @ (bounds[0], bounds[3])
    c1, r1 = inv @ (bounds[2], bounds[1])
    rows, cols = dem.shape
    col_lo, col_hi = (
        max(int(np.floor(min(c0, c1))) - 1, 0),
        min(int(np.ceil(max(c0, c1))) + 1, cols),
    )
    row_lo, row_hi = (
        max(int(np.floor(min(r0, r1))) - 1, 0),
        min(int(np.ceil(max(r0, r1))) + 1, rows),
    )
    if col_hi - col_lo < 2 or row_hi - row_lo < 2:
        return []
    window = dem.values[row_lo:row_hi, col_lo:col_hi]
    if not np.isfinite(window).any():
        return []
    low, high = float(np.nanmin(window)), float(np.nanmax(window))
    interval = next(
        (i for i in CONTOUR_INTERVALS_FT if (high - low) / i <= 30), CONTOUR_INTERVALS_FT[-1]
    )
    levels = np.arange(np.ceil(low / interval) * interval, high + interval / 2, interval)
    if len(levels) == 0:
        return []
    xs = dem.transform.c + dem.transform.a * (np.arange(col_lo, col_hi) + 0.5)
    ys = dem.transform.f + dem.transform.e * (np.arange(row_lo, row_hi) + 0.5)
    index = np.isclose(np.mod(levels, interval * 5), 0) | np.isclose(
        np.mod(levels, interval * 5), interval * 5
    )
    colour = "#a6761d"
    widths = np.where(index, 0.7, 0.3)
    contours = ax.contour(
        xs,
        ys,
        np.ma.masked_invalid(window),
        levels=levels,
        colors=colour,
        linewidths=widths,
        zorder=1.5,
    )
    if index.any():
        ax.clabel(contours, levels=levels[index], fontsize=5.5, fmt="%g", inline=True)
    label = f"Existing ground contour ({interval:g} ft; DEM)"
    return [Line2D([], [], color=colour, linewidth=0.6, label=label)]


def _flag(frame: gpd.GeoDataFrame, column: str) -> np.ndarray:
    """Return a boolean column as a numpy array, NA and absent as False."""
    if column not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    values = frame[column].astype("boolean")
    return np.asarray(values.fillna(value=False), dtype=bool)


def device_rings(ruleset: Ruleset, devices: gpd.GeoDataFrame) -> list[tuple[float, str, str, Any]]:
    """(distance ft, label, style key, ring geometries) of the device setbacks to draw.

    Every device gets the property-line ring and the basement / septic ring; devices that serve
    vehicle traffic also get the well / wetland / water-body ring.
    """
    params = ruleset.devices
    geoms = devices.geometry.to_numpy()
    vehicle = _flag(devices, "serves_vehicle_traffic")
    by_distance: dict[float, tuple[str, list[str]]] = {}
    for name, text in (
        ("property_line_ft", "property line"),
        ("habitable_basement_ft", "basement structure"),
        ("septic_upgradient_ft", "septic field up-gradient"),
    ):
        distance = float(getattr(params, name))
        by_distance.setdefault(distance, (name, []))[1].append(text)
    rings: list[tuple[float, str, str, Any]] = []
    for distance, (name, texts) in sorted(by_distance.items()):
        if distance > 0:
            key = name if name in RING_STYLES else "habitable_basement_ft"
            rings.append((distance, ", ".join(texts), key, shapely.buffer(geoms, distance)))
    if vehicle.any() and params.vehicle_traffic_ft > 0:
        ring = shapely.buffer(geoms[vehicle], params.vehicle_traffic_ft)
        text = "vehicle device: well, wetland, water"
        rings.append((params.vehicle_traffic_ft, text, "vehicle_traffic_ft", ring))
    return rings


def draw_proposal(
    ax: Axes, site: SiteData, ruleset: Ruleset, bounds: tuple[float, ...]
) -> list[Any]:
    """Siting polygon, disturbance by phase, new impervious, devices and their setback rings."""
    handles: list[Any] = []
    siting = in_view(site.siting, bounds)
    if siting is not None and add_polygons(ax, siting.geometry.to_numpy(), STYLES["siting"]):
        add_handle(handles, legend_handle(STYLES["siting"], kind="polygon"))
    disturbance = in_view(site.disturbance, bounds)
    if disturbance is not None:
        phases = disturbance["phase"].astype("object").where(disturbance["phase"].notna(), "")
        names = sorted({str(p) for p in phases})
        for number, phase in enumerate(names):
            part = disturbance[phases.astype(str) == phase]
            hatch = PHASE_HATCHES[number % len(PHASE_HATCHES)]
            style = STYLES["disturbance"]
            if add_polygons(ax, part.geometry.to_numpy(), style, hatch=hatch):
                label = style.label + (f", phase {phase}" if phase else "")
                add_handle(handles, legend_handle(style, kind="polygon", label=label, hatch=hatch))
    impervious = in_view(site.impervious, bounds)
    if impervious is not None and add_polygons(
        ax, impervious.geometry.to_numpy(), STYLES["impervious"]
    ):
        add_handle(handles, legend_handle(STYLES["impervious"], kind="polygon"))
    devices = in_view(site.devices, bounds)
    if devices is not None:
        for distance, text, key, rings in device_rings(ruleset, devices):
            linestyle = RING_STYLES[key]
            if add_lines(ax, rings, STYLES["ring"], linestyle=linestyle):
                label = f"Device setback {distance:g} ft ({text})"
                handle = legend_handle(
                    STYLES["ring"], kind="line", label=label, linestyle=linestyle
                )
                add_handle(handles, handle)
        geoms = devices.geometry.to_numpy()
        polygonal = shapely.get_type_id(geoms) >= 3
        style = STYLES["devices"]
        drew = add_points(ax, geoms[~polygonal], style)
        drew += 1 if add_polygons(ax, geoms[polygonal], style) else 0
        if drew:
            add_handle(handles, legend_handle(style, kind="point"))
    return handles


def finding_items(findings: gpd.GeoDataFrame) -> tuple[list[LabelItem], list[str]]:
    """Return the label items of the fail and review findings that have a place.

    And the short texts of those that have none (listed in the side panel instead).
    """
    items: list[LabelItem] = []
    unplaced: list[str] = []
    for row in findings.itertuples(index=False):
        required = row.outcome == "required" and str(row.rule_id) in LABELLED_REQUIRED
        if row.outcome not in HIGHLIGHT_OUTCOMES and not required:
            continue
        text = finding_label(
            str(row.rule_id), str(row.outcome), row.measured, row.threshold, str(row.unit or "")
        )
        xy = anchor_point(row.geometry)
        key = str(getattr(row, "finding_id", "") or f"{row.rule_id}:{row.subject_id}")
        if xy is None:
            waived = " (waived)" if _is_waived(row) else ""
            unplaced.append(f"{text}{waived}: {row.message}")
            continue
        if _is_waived(row):
            text += " (waived)"
            grey = STYLES["finding_waived"].edgecolor
            items.append(LabelItem(text, xy, grey, 2, key))
            continue
        runoff = str(row.rule_id) in RUNOFF_RULES
        colour = STYLES["finding_runoff" if runoff else f"finding_{row.outcome}"].edgecolor
        priority = {"fail": 0, "review": 1}.get(str(row.outcome), 2)
        items.append(LabelItem(text, xy, colour, priority + (1 if runoff else 0), key))
    return items, unplaced


def _is_waived(row: Any) -> bool:
    value = getattr(row, "waived", False)
    return bool(value) if value is not None and value is not pd.NA else False


def _waived_mask(findings: gpd.GeoDataFrame) -> np.ndarray:
    if "waived" not in findings.columns:
        return np.zeros(len(findings), dtype=bool)
    return np.asarray(findings["waived"].astype("boolean").fillna(value=False), dtype=bool)


def draw_findings(ax: Axes, findings: gpd.GeoDataFrame, bounds: tuple[float, ...]) -> list[Any]:
    """Highlight every fail and review finding's geometry; return the legend handles.

    Waived ones in grey, the required findings of :data:`LABELLED_REQUIRED`, and runoff
    findings on their drainage area.
    """
    handles: list[Any] = []
    waived = _waived_mask(findings)
    runoff = _is_runoff(findings["rule_id"]) if len(findings) else np.zeros(0, dtype=bool)
    highlighted = findings["outcome"].isin(HIGHLIGHT_OUTCOMES).to_numpy()
    for outcome in (*HIGHLIGHT_OUTCOMES, "required", "runoff", "waived"):
        style: LayerStyle = STYLES[f"finding_{outcome}"]
        if outcome == "waived":
            rows = findings[waived & highlighted]
        elif outcome == "runoff":
            rows = findings[runoff & highlighted & ~waived]
        elif outcome == "required":
            rows = findings[_shown_required(findings) & ~waived]
        else:
            rows = findings[(findings["outcome"] == outcome).to_numpy() & ~waived & ~runoff]
        rows = rows[~unlocated(rows.geometry.to_numpy())]
        rows = in_view(gpd.GeoDataFrame(rows, geometry="geometry"), bounds)
        if rows is None:
            continue
        geoms = rows.geometry.to_numpy()
        drew = add_lines(ax, geoms, style) is not None
        points = shapely.get_type_id(geoms) == 0
        if points.any():
            xy = shapely.get_coordinates(geoms[points])
            ax.plot(
                xy[:, 0],
                xy[:, 1],
                linestyle="none",
                marker="o",
                markersize=15,
                markerfacecolor="none",
                markeredgecolor=style.edgecolor,
                markeredgewidth=style.linewidth,
                zorder=style.zorder,
            )
            drew = True
        if drew:
            add_handle(handles, legend_handle(style, kind="line"))
    return handles


def device_label_items(devices: gpd.GeoDataFrame) -> list[LabelItem]:
    """Plain labels with each device's id."""
    items = []
    for device_id, geom in zip(devices["device_id"], devices.geometry, strict=True):
        xy = anchor_point(geom)
        if xy is not None:
            items.append(
                LabelItem(str(device_id), xy, "#000000", 5, f"device:{device_id}", plain=True)
            )
    return items


def draw_basemap(ax: Axes, path: str | Path, crs: CRS, bounds: tuple[float, ...]) -> None:
    """Draw a local GeoTIFF (orthophoto) under the map, warped to the working CRS if needed.

    Raises
    ------
    InputFileError
        When the file cannot be read as a raster.
    """
    import rasterio
    from rasterio.vrt import WarpedVRT
    from rasterio.windows import from_bounds

    try:
        with rasterio.open(path) as src:
            source = src if src.crs and CRS(src.crs).equals(crs) else WarpedVRT(src, crs=crs)
            with source:
                window = from_bounds(*bounds, transform=source.transform)
                width_px = 2400
                height_px = max(1, round(width_px * window.height / max(window.width, 1e-9)))
                bands = [1, 2, 3] if source.count >= 3 else [1]
                data = source.read(
                    bands,
                    window=window,
                    out_shape=(len(bands), height_px, width_px),
                    boundless=True,
                    fill_value=0,
                )
    except rasterio.errors.RasterioError as exc:
        raise InputFileError(
            f"basemap {path} cannot be read as a GeoTIFF: {exc}. Fix: pass a GeoTIFF with a CRS."
        ) from None
    extent = (bounds[0], bounds[2], bounds[1], bounds[3])
    if len(bands) == 3:
        image = np.moveaxis(data, 0, -1).astype("float64")
        top = float(np.nanmax(image)) or 1.0
        image = np.clip(image / (255.0 if top <= 255 else top), 0, 1)
        ax.imshow(
            image, extent=extent, origin="upper", zorder=0.5, alpha=0.7, interpolation="bilinear"
        )
    else:
        ax.imshow(
            data[0],
            extent=extent,
            origin="upper",
            zorder=0.5,
            cmap="gray",
            alpha=0.6,
            interpolation="bilinear",
        )
    log.debug("basemap %s drawn", path)
