"""Townwide overview map of a batch run: every parcel coloured by what constrains it.

A batch's parcels (with its area and siting columns) are coloured by the first of
:data:`CONSTRAINT_CLASSES` that holds for them (no legal place for a roof device, none for a
vehicle-traffic device, a wetland, water body or floodplain on the lot, the low-threshold
zone, clear), with the count of each class in the legend; parcels whose result is ``review``
(data missing) carry a hatch over their class instead of hiding it.  A frame with only a
``result`` column (as tests and other callers pass) is coloured by result, as before.  The
scale bar is drawn inside the map frame, in its lower-left corner.

All parcels go into one :class:`~matplotlib.collections.PathCollection` (holes kept) with a
colour per parcel, so 10,000 parcels draw in about a second (DESIGN.md: collections are ten
times faster than ``GeoDataFrame.plot``).
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from pathlib import Path

import geopandas as gpd
import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from gis_sw.errors import OutputError
from gis_sw.outputs.atomic import atomic_path
from gis_sw.outputs.maps.draw import add_polygons
from gis_sw.outputs.maps.furniture import DISCLAIMER, draw_north_arrow, grid_convergence_deg
from gis_sw.outputs.maps.style import OUTCOME_COLOURS, LayerStyle
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

RESULT_COLUMNS = ("result", "outcome", "worst_outcome", "screening_result")
"""Columns read, in this order, for each parcel's screening result."""

RESULT_ORDER = ("fail", "review", "required", "info", "pass", "none")
"""Legend order; any other value is drawn as ``none``."""

CONSTRAINT_CLASSES: tuple[tuple[str, str, str], ...] = (
    ("no_roof_site", "No legal place for\na roof-runoff device", "#7b3294"),
    ("no_vehicle_site", "No legal place for a\nvehicle-traffic device", "#c2a5cf"),
    ("resource", "Wetland, its adjacent area,\nwater or floodplain on the lot", "#4daf4a"),
    ("low_zone", "Low-threshold zone\n(permit from {low:g} sq ft)", "#fdb863"),
    ("clear", "Clear", "#f7f7f7"),
)
"""(key, legend label, fill) in priority order: a parcel takes the first that holds."""

CLASS_COLUMNS = (
    "low_zone_area_sqft",
    "wetland_sqft",
    "wetland_adjacent_sqft",
    "water_body_sqft",
    "floodplain_sqft",
    "roof_siting_sqft",
    "vehicle_siting_sqft",
)
"""Batch columns that switch the map from results to constraint classes."""

MIN_SITING_AREA_SQFT = 1.0
"""Less siting room than this is no legal place (the batch's default ``min_siting_area_sqft``)."""


def constraint_classes(
    parcels: pd.DataFrame, *, min_siting_area_sqft: float = MIN_SITING_AREA_SQFT
) -> np.ndarray:
    """Each parcel's constraint class key (:data:`CONSTRAINT_CLASSES`), from batch columns.

    A siting area that is missing (not computed) is not read as "no place"; the parcel then
    takes its next class, and its ``review`` result shows as a hatch.
    """

    def col(name: str) -> np.ndarray:
        return pd.to_numeric(parcels[name], errors="coerce").to_numpy(dtype="float64")

    resource = np.zeros(len(parcels), dtype=bool)
    for name in ("wetland_sqft", "wetland_adjacent_sqft", "water_body_sqft", "floodplain_sqft"):
        resource |= np.nan_to_num(col(name)) > 0
    conditions = [
        col("roof_siting_sqft") < min_siting_area_sqft,
        col("vehicle_siting_sqft") < min_siting_area_sqft,
        resource,
        np.nan_to_num(col("low_zone_area_sqft")) > 0,
    ]
    keys = [k for k, _, _ in CONSTRAINT_CLASSES]
    return np.select(conditions, keys[:-1], default=keys[-1]).astype(object)


def result_column(parcels: gpd.GeoDataFrame) -> str:
    """The column holding the screening result.

    Raises
    ------
    OutputError
        When none of :data:`RESULT_COLUMNS` is present.
    """
    for name in RESULT_COLUMNS:
        if name in parcels.columns:
            return name
    raise OutputError(
        f"the parcels passed to the overview map have no result column (one of "
        f"{', '.join(RESULT_COLUMNS)}); columns: {', '.join(map(str, parcels.columns))}. "
        "Fix: add the worst outcome of each parcel as a 'result' column."
    )


def write_overview(
    path: str | Path,
    parcels_with_result: gpd.GeoDataFrame,
    *,
    ruleset: Ruleset,
    overwrite: bool = False,
    title: str | None = None,
    dpi: int = 150,
) -> Path:
    """Draw every parcel coloured by its screening result (PNG or PDF by the suffix).

    Parameters
    ----------
    path
        Output file, ``.png`` or ``.pdf``.
    parcels_with_result
        Parcels with a ``result`` column (``fail``, ``review``, ``required``, ``info``,
        ``pass``; anything else shows as not screened).
    ruleset
        Named in the title.
    overwrite
        Replace an existing file.

    Raises
    ------
    OutputError
        When the file exists without ``overwrite``, the suffix is not .png or .pdf, or the
        result column is missing.
    """
    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    if fmt not in ("png", "pdf"):
        raise OutputError(f"overview map {target}: use a .png or .pdf name.")
    column = result_column(parcels_with_result)
    results = (
        parcels_with_result[column]
        .astype("object")
        .where(parcels_with_result[column].isin(RESULT_ORDER[:-1]), "none")
        .astype(str)
        .to_numpy()
    )
    by_class = all(c in parcels_with_result.columns for c in CLASS_COLUMNS)
    handles: list[Patch]
    if by_class:
        classes = constraint_classes(parcels_with_result)
        fills = {k: f for k, _, f in CONSTRAINT_CLASSES}
        colours = [fills[c] for c in classes]
        class_counts = pd.Series(classes).value_counts()
        low = ruleset.permit.threshold_low_zone_sqft
        handles = [
            Patch(
                facecolor=fill,
                edgecolor="#606060",
                label=f"{label.format(low=low)}: {int(class_counts.get(key, 0)):,}",
            )
            for key, label, fill in CONSTRAINT_CLASSES
        ]
        legend_title = "What constrains the parcel"
    else:
        colours = [OUTCOME_COLOURS[r] for r in results]
        counts = pd.Series(results).value_counts()
        handles = [
            Patch(
                facecolor=OUTCOME_COLOURS[r],
                edgecolor="#606060",
                label=f"{r if r != 'none' else 'not screened'}: {int(counts.get(r, 0)):,}",
            )
            for r in RESULT_ORDER
            if r in counts.index
        ]
        legend_title = "Screening result (parcels)"
    fig = Figure(figsize=(11.0, 8.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.04, 0.1, 0.7, 0.82))
    ax.set_xticks([])
    ax.set_yticks([])
    style = LayerStyle("Parcel", "none", "#606060", 0.15)
    geoms = parcels_with_result.geometry.to_numpy()
    with mpl.rc_context({"pdf.fonttype": 42, "hatch.color": "#e66101", "hatch.linewidth": 0.6}):
        add_polygons(ax, geoms, style, facecolors=colours)
        review = results == "review"
        if by_class and review.any():
            hatched = LayerStyle("Review", "none", "#e66101", 0.0, "////")
            add_polygons(ax, geoms[review], hatched)
            handles.append(
                Patch(
                    facecolor="white",
                    edgecolor="#e66101",
                    hatch="////",
                    label=f"Review (data missing),\nover its class: {int(review.sum()):,}",
                )
            )
        if len(parcels_with_result):
            minx, miny, maxx, maxy = parcels_with_result.total_bounds
            pad = max(maxx - minx, maxy - miny) * 0.02
            ax.set_xlim(minx - pad, maxx + pad)
            ax.set_ylim(miny - pad, maxy + pad)
            ax.set_aspect("equal", adjustable="box", anchor="NW")
            convergence = grid_convergence_deg(
                parcels_with_result.crs or ruleset.working_crs, (minx + maxx) / 2, (miny + maxy) / 2
            )
            draw_north_arrow(fig, 8.55, 6.6, 0.8, convergence)
            _scale_bar(ax)
        fig.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(0.77, 0.68),
            title=legend_title,
            fontsize=8,
            title_fontsize=9,
        )
        fig.text(
            0.04,
            0.95,
            title or f"Townwide stormwater screening: {len(geoms):,} parcels",
            fontsize=13,
            fontweight="bold",
        )
        fig.text(
            0.04, 0.06, f"{ruleset.title}; ruleset {ruleset.name} {ruleset.version}", fontsize=7.5
        )
        run = dt.datetime.now(tz=dt.UTC).date().isoformat()
        fig.text(0.04, 0.035, f"Run date {run}. {DISCLAIMER}.", fontsize=8, fontweight="bold")
        with atomic_path(target, overwrite=overwrite) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi)
    log.info("overview map %s: %d parcels", target, len(geoms))
    return target


def scale_bar_length_ft(width_ft: float) -> float:
    """A round length (1, 2 or 5 x 10^n ft) of at most a quarter of ``width_ft``."""
    target_ft = max(width_ft / 4.0, 1.0)
    exponent = 10 ** math.floor(math.log10(target_ft))
    return float(max(m * exponent for m in (1, 2, 5) if m * exponent <= target_ft))


def _scale_bar(ax: Axes) -> None:
    """A scale bar in feet inside the map frame, lower left, on a white box."""
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    length_ft = scale_bar_length_ft(x1 - x0)
    left, bottom = x0 + (x1 - x0) * 0.03, y0 + (y1 - y0) * 0.03
    height = (y1 - y0) * 0.008
    ax.add_patch(
        Rectangle(
            (left - (x1 - x0) * 0.01, bottom - (y1 - y0) * 0.012),
            length_ft + (x1 - x0) * 0.02,
            (y1 - y0) * 0.06,
            facecolor="white",
            edgecolor="#606060",
            linewidth=0.5,
            zorder=5,
        )
    )
    ax.add_patch(Rectangle((left, bottom), length_ft, height, facecolor="black", zorder=6))
    ax.text(
        left,
        bottom + height * 1.8,
        f"0    {length_ft:,.0f} ft",
        fontsize=8,
        zorder=6,
        va="bottom",
    )


def result_counts(parcels_with_result: gpd.GeoDataFrame) -> dict[str, int]:
    """How many parcels have each result (the numbers in the overview's legend)."""
    column = result_column(parcels_with_result)
    values = parcels_with_result[column].astype("object")
    values = values.where(values.isin(RESULT_ORDER[:-1]), "none")
    return {str(k): int(v) for k, v in values.value_counts().items()}


__all__ = ["constraint_classes", "result_counts", "scale_bar_length_ft", "write_overview"]
