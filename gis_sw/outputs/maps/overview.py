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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
from gis_sw.outputs.maps.fills import add_fills
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
    """Return the column holding the screening result.

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


VECTOR_MAX_PARCELS = 100_000
"""Up to this many parcels the map is drawn as one vector collection; beyond, parcels are
rasterised slice by slice (:class:`OverviewCanvas`), so the map's memory does not grow
with the town."""

SLICE_PARCELS = 50_000
"""Parcels drawn at a time onto the raster of a big overview."""

FIGSIZE_IN = (11.0, 8.5)
MAP_AXES = (0.04, 0.1, 0.7, 0.82)
PARCEL_STYLE = LayerStyle("Parcel", "none", "#606060", 0.15)
REVIEW_STYLE = LayerStyle("Review", "none", "#e66101", 0.0, "////")
RC_PARAMS: Any = {"pdf.fonttype": 42, "hatch.color": "#e66101", "hatch.linewidth": 0.6}


def _results(parcels: pd.DataFrame, column: str) -> np.ndarray:
    values = parcels[column].astype("object")
    return values.where(parcels[column].isin(RESULT_ORDER[:-1]), "none").astype(str).to_numpy()


@dataclass(slots=True)
class _Tally:
    """What the legend counts, summed over everything drawn."""

    by_class: bool
    classes: dict[str, int] = field(default_factory=dict)
    results: dict[str, int] = field(default_factory=dict)
    review: int = 0
    parcels: int = 0

    def colours(self, parcels: pd.DataFrame, results: np.ndarray) -> list[str]:
        """Return each parcel's fill, counting classes and results on the way."""
        self.parcels += len(parcels)
        self.review += int((results == "review").sum())
        for key, count in pd.Series(results).value_counts().items():
            self.results[str(key)] = self.results.get(str(key), 0) + int(count)
        if not self.by_class:
            return [OUTCOME_COLOURS[r] for r in results]
        classes = constraint_classes(parcels)
        for key, count in pd.Series(classes).value_counts().items():
            self.classes[str(key)] = self.classes.get(str(key), 0) + int(count)
        fills = {k: f for k, _, f in CONSTRAINT_CLASSES}
        return [fills[c] for c in classes]

    def handles(self, ruleset: Ruleset) -> tuple[list[Patch], str]:
        """Return the legend entries and title."""
        if not self.by_class:
            return [
                Patch(
                    facecolor=OUTCOME_COLOURS[r],
                    edgecolor="#606060",
                    label=f"{r if r != 'none' else 'not screened'}: {self.results[r]:,}",
                )
                for r in RESULT_ORDER
                if r in self.results
            ], "Screening result (parcels)"
        low = ruleset.permit.threshold_low_zone_sqft
        handles = [
            Patch(
                facecolor=fill,
                edgecolor="#606060",
                label=f"{label.format(low=low)}: {self.classes.get(key, 0):,}",
            )
            for key, label, fill in CONSTRAINT_CLASSES
        ]
        if self.review:
            handles.append(
                Patch(
                    facecolor="white",
                    edgecolor="#e66101",
                    hatch="////",
                    label=f"Review (data missing),\nover its class: {self.review:,}",
                )
            )
        return handles, "What constrains the parcel"


def _draw_parcels(ax: Axes, parcels: gpd.GeoDataFrame, tally: _Tally, column: str) -> list:
    """Draw parcels on ``ax`` in their fills (and the review hatch); return the artists."""
    results = _results(parcels, column)
    colours = tally.colours(parcels, results)
    geoms = np.asarray(parcels.geometry.to_numpy(), dtype=object)
    artists = [add_polygons(ax, geoms, PARCEL_STYLE, facecolors=colours)]
    review = results == "review"
    if tally.by_class and review.any():
        artists.append(add_polygons(ax, geoms[review], REVIEW_STYLE))
    return [a for a in artists if a is not None]


def _raster_parcels(ax: Axes, parcels: gpd.GeoDataFrame, tally: _Tally, column: str) -> list:
    """:func:`_draw_parcels` as compound paths, one per fill (:mod:`..fills`)."""
    results = _results(parcels, column)
    fills = np.asarray(tally.colours(parcels, results), dtype=object)
    geoms = np.asarray(parcels.geometry.to_numpy(), dtype=object)
    review = results == "review"
    artists = [add_fills(ax, geoms, fills, PARCEL_STYLE)]
    if tally.by_class and review.any():
        artists.append(add_fills(ax, geoms[review], None, REVIEW_STYLE))
    return [a for a in artists if a is not None]


def _limits(ax: Axes, bounds: tuple[float, float, float, float]) -> None:
    minx, miny, maxx, maxy = bounds
    pad = max(maxx - minx, maxy - miny) * 0.02
    ax.set_xlim(minx - pad, maxx + pad)
    ax.set_ylim(miny - pad, maxy + pad)
    ax.set_aspect("equal", adjustable="box", anchor="NW")


class OverviewCanvas:
    """An overview map drawn a piece at a time: each piece is rasterised and let go.

    ``add`` draws a frame of parcels (with the columns :func:`write_overview` reads) onto
    an Agg raster the size of the map frame at the output's resolution, then drops its
    paths; ``write`` puts the raster in the page with the legend and furniture.  Memory is
    that of one piece plus the raster (about 5 MB at 150 dpi), whatever the town's size.
    """

    def __init__(
        self,
        bounds: tuple[float, float, float, float],
        *,
        crs: Any,
        by_class: bool,
        column: str = "result",
        dpi: int = 150,
    ) -> None:
        self.bounds = bounds
        self.crs = crs
        self.column = column
        self.dpi = dpi
        self.tally = _Tally(by_class=by_class)
        width, height = FIGSIZE_IN[0] * MAP_AXES[2], FIGSIZE_IN[1] * MAP_AXES[3]
        self._fig = Figure(figsize=(width, height), dpi=dpi)
        self._fig.patch.set_alpha(0.0)
        self._canvas = FigureCanvasAgg(self._fig)
        self._ax = self._fig.add_axes((0.0, 0.0, 1.0, 1.0))
        self._ax.set_axis_off()
        self._ax.patch.set_alpha(0.0)
        _limits(self._ax, bounds)
        with mpl.rc_context(RC_PARAMS):
            self._canvas.draw()
        self._renderer = self._canvas.get_renderer()

    def add(self, parcels: gpd.GeoDataFrame) -> None:
        """Rasterise some parcels onto the map (bounded memory: a slice at a time)."""
        for start in range(0, len(parcels), SLICE_PARCELS):
            piece = parcels.iloc[start : start + SLICE_PARCELS]
            with mpl.rc_context(RC_PARAMS):
                for artist in _raster_parcels(self._ax, piece, self.tally, self.column):
                    artist.draw(self._renderer)
                    artist.remove()

    def image(self) -> np.ndarray:
        """Return the raster of the map frame's data area (RGBA, rows from the top)."""
        buffer = np.asarray(self._renderer.buffer_rgba())
        height, width = buffer.shape[:2]
        box = self._ax.get_position()  # figure fraction, after the aspect was applied
        x0, x1 = round(box.x0 * width), round(box.x1 * width)
        top, bottom = round((1 - box.y1) * height), round((1 - box.y0) * height)
        return buffer[top:bottom, x0:x1].copy()

    def write(
        self,
        path: str | Path,
        *,
        ruleset: Ruleset,
        overwrite: bool = False,
        title: str | None = None,
    ) -> Path:
        """Write the page (PNG or PDF) with the raster, legend and furniture.

        Raises
        ------
        OutputError
            When the file exists without ``overwrite`` or the suffix is not .png or .pdf.
        """
        image = self.image()
        x0, x1 = self._ax.get_xlim()
        y0, y1 = self._ax.get_ylim()

        def draw(ax: Axes) -> None:
            ax.imshow(image, extent=(x0, x1, y0, y1), interpolation="nearest", zorder=1)

        return _page(
            path,
            draw,
            tally=self.tally,
            bounds=self.bounds,
            crs=self.crs,
            ruleset=ruleset,
            overwrite=overwrite,
            title=title,
            dpi=self.dpi,
        )


def _page(
    path: str | Path,
    draw: Callable[[Axes], None],
    *,
    tally: _Tally,
    bounds: tuple[float, float, float, float] | None,
    crs: Any,
    ruleset: Ruleset,
    overwrite: bool,
    title: str | None,
    dpi: int,
) -> Path:
    """Lay out the page around what ``draw`` puts in the map frame, and save it."""
    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    if fmt not in ("png", "pdf"):
        raise OutputError(f"overview map {target}: use a .png or .pdf name.")
    fig = Figure(figsize=FIGSIZE_IN, dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes(MAP_AXES)
    ax.set_xticks([])
    ax.set_yticks([])
    with mpl.rc_context(RC_PARAMS):
        draw(ax)
        if bounds is not None:
            minx, miny, maxx, maxy = bounds
            _limits(ax, bounds)
            convergence = grid_convergence_deg(
                crs or ruleset.working_crs, (minx + maxx) / 2, (miny + maxy) / 2
            )
            draw_north_arrow(fig, 8.55, 6.6, 0.8, convergence)
            _scale_bar(ax)
        handles, legend_title = tally.handles(ruleset)
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
            title or f"Townwide stormwater screening: {tally.parcels:,} parcels",
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
    log.info("overview map %s: %d parcels", target, tally.parcels)
    return target


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

    Up to :data:`VECTOR_MAX_PARCELS` parcels are drawn as vectors; a bigger town is
    rasterised a slice at a time (:class:`OverviewCanvas`), which looks the same at the
    page's resolution and keeps the map's memory bounded.

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
    title
        The page title (default: the number of parcels).
    dpi
        Resolution of the saved page.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    OutputError
        When the file exists without ``overwrite``, the suffix is not .png or .pdf, or the
        result column is missing.
    """
    if Path(path).suffix.lower() not in (".png", ".pdf"):
        raise OutputError(f"overview map {Path(path)}: use a .png or .pdf name.")
    column = result_column(parcels_with_result)
    by_class = all(c in parcels_with_result.columns for c in CLASS_COLUMNS)
    crs = parcels_with_result.crs
    bounds = (
        tuple(float(v) for v in parcels_with_result.total_bounds)
        if len(parcels_with_result)
        else None
    )
    if bounds is not None and len(parcels_with_result) > VECTOR_MAX_PARCELS:
        canvas = OverviewCanvas(bounds, crs=crs, by_class=by_class, column=column, dpi=dpi)  # type: ignore[arg-type]
        canvas.add(parcels_with_result)
        return canvas.write(path, ruleset=ruleset, overwrite=overwrite, title=title)
    tally = _Tally(by_class=by_class)

    def draw(ax: Axes) -> None:
        _draw_parcels(ax, parcels_with_result, tally, column)

    return _page(
        path,
        draw,
        tally=tally,
        bounds=bounds,  # type: ignore[arg-type]
        crs=crs,
        ruleset=ruleset,
        overwrite=overwrite,
        title=title,
        dpi=dpi,
    )


def scale_bar_length_ft(width_ft: float) -> float:
    """Return a round length (1, 2 or 5 x 10^n ft) of at most a quarter of ``width_ft``."""
    target_ft = max(width_ft / 4.0, 1.0)
    exponent = 10 ** math.floor(math.log10(target_ft))
    return float(max(m * exponent for m in (1, 2, 5) if m * exponent <= target_ft))


def _scale_bar(ax: Axes) -> None:
    """Draw a scale bar in feet inside the map frame, lower left, on a white box."""
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


__all__ = [
    "OverviewCanvas",
    "constraint_classes",
    "result_counts",
    "scale_bar_length_ft",
    "write_overview",
]
