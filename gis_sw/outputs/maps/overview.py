"""Townwide overview map of a batch run: every parcel coloured by what constrains it.

A batch's parcels (with its area and siting columns) are coloured by the first of
:data:`CONSTRAINT_CLASSES` that holds for them (no legal place for a roof device, none for a
vehicle-traffic device, a wetland, water body or floodplain on the lot, the low-threshold
zone, clear), with the count of each class in the legend; parcels whose result is ``review``
(data missing) carry a hatch over their class instead of hiding it.  A frame with only a
``result`` column (as tests and other callers pass) is coloured by result, as before.  The
scale bar is drawn inside the map frame, in its lower-left corner.

A PNG's parcels are painted into a raster of labels with numpy (:mod:`..scanfill`: no
matplotlib object per parcel; 100,000 parcels painted and composed in about 0.4 s CPU)
and shown unresampled with ``imshow``; a PDF of up to :data:`VECTOR_MAX_PARCELS` parcels
goes into one :class:`~matplotlib.collections.PathCollection` (holes kept) with a colour
per parcel.
The classes, counts and legend entries are :mod:`..overview_legend`'s.
"""

from __future__ import annotations

import datetime as dt
import io
import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import geopandas as gpd
import matplotlib as mpl
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from gis_sw.errors import OutputError
from gis_sw.outputs.atomic import atomic_path
from gis_sw.outputs.maps.draw import add_polygons
from gis_sw.outputs.maps.furniture import DISCLAIMER, draw_north_arrow, grid_convergence_deg
from gis_sw.outputs.maps.overview_legend import (
    CLASS_COLUMNS,
    CONSTRAINT_CLASSES,
    MIN_SITING_AREA_SQFT,
    RESULT_COLUMNS,
    RESULT_ORDER,
    constraint_classes,
    result_column,
    result_counts,
)
from gis_sw.outputs.maps.overview_legend import Tally as _Tally
from gis_sw.outputs.maps.overview_legend import results_of as _results
from gis_sw.outputs.maps.scanfill import PixelGrid, compose, paint
from gis_sw.outputs.maps.style import LayerStyle
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

VECTOR_MAX_PARCELS = 100_000
"""Up to this many parcels a PDF map is drawn as one vector collection; a PNG, and a bigger
PDF, are painted into a raster slice by slice (:class:`OverviewCanvas`), so the map's time
and memory do not grow with a matplotlib object per parcel."""

SLICE_PARCELS = 50_000
"""Parcels painted at a time into the raster."""

RASTER_SCALE = 3
"""Raster pixels per page pixel, each way: fills blended at their edges, and outlines a
third of a page pixel wide, blended to the vector map's weight (its 0.15 pt line is 0.31
px at 150 dpi, 0.17 px at 80)."""

HATCH_DENSITY = 3
"""Lines per inch of each ``/`` of a hatch pattern, as matplotlib's Agg draws it (measured:
``////`` puts a line every 12.5 px across a row at 150 dpi, 8.3 px at 100)."""

FIGSIZE_IN = (11.0, 8.5)
MAP_AXES = (0.04, 0.1, 0.7, 0.82)
PARCEL_STYLE = LayerStyle("Parcel", "none", "#606060", 0.15)
REVIEW_STYLE = LayerStyle("Review", "none", "#e66101", 0.0, "////")
RC_PARAMS: Any = {"pdf.fonttype": 42, "hatch.color": "#e66101", "hatch.linewidth": 0.6}


def _rgba8(colour: str) -> tuple[int, int, int, int]:
    r, g, b, a = (round(c * 255) for c in to_rgba(colour))
    return r, g, b, a


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


def _limits(ax: Axes, bounds: tuple[float, float, float, float]) -> None:
    minx, miny, maxx, maxy = bounds
    pad = max(maxx - minx, maxy - miny) * 0.02
    ax.set_xlim(minx - pad, maxx + pad)
    ax.set_ylim(miny - pad, maxy + pad)
    ax.set_aspect("equal", adjustable="box", anchor="NW")


class OverviewCanvas:
    """An overview map drawn a piece at a time into a raster of labels (:mod:`..scanfill`).

    ``add`` paints a frame of parcels (with the columns :func:`write_overview` reads) into
    an image of parcel labels :data:`RASTER_SCALE` times the map frame's resolution, and
    keeps only each parcel's fill and whether it is ``review``; ``write`` turns the labels
    into the map's pixels (fills, outlines where parcels meet, the review hatch, averaged
    down to the page's resolution) and puts them in the page with the legend and
    furniture.  Memory is that of one piece plus the labels (about 45 MB at 150 dpi) and
    five bytes a parcel, whatever the town's size; no matplotlib path is made per parcel.
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
        fig = Figure(figsize=(width, height), dpi=dpi)
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
        _limits(ax, bounds)
        ax.apply_aspect()  # the frame's box as drawn: the raster is exactly its pixels
        box = ax.get_position()
        fig_w, fig_h = int(fig.bbox.width), int(fig.bbox.height)
        x0, x1 = round(box.x0 * fig_w), round(box.x1 * fig_w)
        top, bottom = round((1 - box.y1) * fig_h), round((1 - box.y0) * fig_h)
        self._xlim, self._ylim = ax.get_xlim(), ax.get_ylim()
        n_x, n_y, scale = max(x1 - x0, 1), max(bottom - top, 1), RASTER_SCALE
        self._grid = PixelGrid(
            left=self._xlim[0],
            top=self._ylim[1],
            step_x=(self._xlim[1] - self._xlim[0]) / (n_x * scale),
            step_y=(self._ylim[1] - self._ylim[0]) / (n_y * scale),
            width=n_x * scale,
            height=n_y * scale,
        )
        self._labels = np.zeros((n_y * scale, n_x * scale), dtype=np.int32)
        self._fills: list[np.ndarray] = [np.array([[255, 255, 255, 255]], dtype=np.uint8)]
        self._review: list[np.ndarray] = [np.zeros(1, dtype=bool)]
        self._next = 1

    def add(self, parcels: gpd.GeoDataFrame) -> None:
        """Paint some parcels onto the map (bounded memory: a slice at a time)."""
        for start in range(0, len(parcels), SLICE_PARCELS):
            piece = parcels.iloc[start : start + SLICE_PARCELS]
            results = _results(piece, self.column)
            colours = np.asarray(self.tally.colours(piece, results), dtype=str)
            palette, code = np.unique(colours, return_inverse=True)
            rgba = np.array([[round(c * 255) for c in to_rgba(p)] for p in palette], np.uint8)
            self._fills.append(rgba[code.reshape(-1)])
            self._review.append((results == "review") & self.tally.by_class)
            ids = np.arange(self._next, self._next + len(piece), dtype=np.int32)
            self._next += len(piece)
            paint(self._labels, self._grid, piece.geometry.to_numpy(), ids)

    def image(self) -> np.ndarray:
        """Return the raster of the map frame's data area (RGBA, rows from the top)."""
        points = RC_PARAMS["hatch.linewidth"] * self.dpi / 72.0
        return compose(
            self._labels,
            np.concatenate(self._fills),
            scale=RASTER_SCALE,
            outline=_rgba8(PARCEL_STYLE.edgecolor),
            outline_alpha=min(1.0, PARCEL_STYLE.linewidth * self.dpi / 72.0 * RASTER_SCALE),
            hatch=np.concatenate(self._review),
            hatch_colour=_rgba8(RC_PARAMS["hatch.color"]),
            hatch_period_px=self.dpi / (REVIEW_STYLE.hatch.count("/") * HATCH_DENSITY),
            hatch_width_px=points * math.sqrt(2.0),
        )

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
        data = self.render(ruleset=ruleset, fmt=_page_format(path), title=title)
        return write_rendered(path, data, parcels=self.tally.parcels, overwrite=overwrite)

    def render(self, *, ruleset: Ruleset, fmt: str = "png", title: str | None = None) -> bytes:
        """Return the bytes of the page :meth:`write` writes (``fmt``: ``png`` or ``pdf``)."""
        image = self.image()
        (x0, x1), (y0, y1) = self._xlim, self._ylim

        def draw(ax: Axes) -> None:
            ax.imshow(image, extent=(x0, x1, y0, y1), interpolation="none", zorder=1)

        return _page_bytes(
            draw,
            fmt=fmt,
            tally=self.tally,
            bounds=self.bounds,
            crs=self.crs,
            ruleset=ruleset,
            title=title,
            dpi=self.dpi,
        )


def _page_format(path: str | Path) -> str:
    """Return ``png`` or ``pdf``, the format ``path``'s suffix names.

    Raises
    ------
    OutputError
        For any other suffix.
    """
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in ("png", "pdf"):
        raise OutputError(f"overview map {Path(path)}: use a .png or .pdf name.")
    return fmt


def _page_bytes(
    draw: Callable[[Axes], None],
    *,
    fmt: str,
    tally: _Tally,
    bounds: tuple[float, float, float, float] | None,
    crs: Any,
    ruleset: Ruleset,
    title: str | None,
    dpi: int,
) -> bytes:
    """Lay out the page around what ``draw`` puts in the map frame; return it saved."""
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
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, dpi=dpi)
    return buffer.getvalue()


def write_overview(
    path: str | Path,
    parcels_with_result: gpd.GeoDataFrame,
    *,
    ruleset: Ruleset,
    overwrite: bool = False,
    title: str | None = None,
    dpi: int = 150,
    vector: bool | None = None,
) -> Path:
    """Draw every parcel coloured by its screening result (PNG or PDF by the suffix).

    A PNG is painted into a raster a slice at a time (:class:`OverviewCanvas`): at the
    page's resolution it shows what the vector drawing shows, in a fraction of the time,
    with the map's memory bounded.  A PDF of up to :data:`VECTOR_MAX_PARCELS` parcels is
    drawn as vectors (a bigger one as the raster).

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
    vector
        Draw the parcels as vectors (True) or the raster (False); None: as above.

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
    fmt = _page_format(path)
    data = render_overview(
        parcels_with_result, ruleset=ruleset, fmt=fmt, title=title, dpi=dpi, vector=vector
    )
    return write_rendered(path, data, parcels=len(parcels_with_result), overwrite=overwrite)


def write_rendered(path: str | Path, data: bytes, *, parcels: int, overwrite: bool) -> Path:
    """Write a page :func:`render_overview` returned, atomically (``parcels``: for the log).

    Raises
    ------
    OutputError
        When the file exists without ``overwrite``, or cannot be written.
    """
    target = Path(path)
    with atomic_path(target, overwrite=overwrite) as tmp:
        tmp.write_bytes(data)
    log.info("overview map %s: %d parcels", target, parcels)
    return target


def render_overview(
    parcels_with_result: gpd.GeoDataFrame,
    *,
    ruleset: Ruleset,
    fmt: str = "png",
    title: str | None = None,
    dpi: int = 150,
    vector: bool | None = None,
) -> bytes:
    """Return the bytes of the page :func:`write_overview` writes, in ``fmt`` (png or pdf).

    It reads no file and writes none, so it can run aside (``gis-sw batch`` draws it in a
    forked process while the parcels are written, :mod:`gis_sw.batch.aside`).

    Raises
    ------
    OutputError
        When ``fmt`` is not png or pdf, or the result column is missing.
    """
    fmt = _page_format(f"overview.{fmt}")
    column = result_column(parcels_with_result)
    by_class = all(c in parcels_with_result.columns for c in CLASS_COLUMNS)
    crs = parcels_with_result.crs
    bounds = (
        tuple(float(v) for v in parcels_with_result.total_bounds)
        if len(parcels_with_result)
        else None
    )
    if vector is None:
        vector = fmt == "pdf" and len(parcels_with_result) <= VECTOR_MAX_PARCELS
    if bounds is not None and not vector:
        canvas = OverviewCanvas(bounds, crs=crs, by_class=by_class, column=column, dpi=dpi)  # type: ignore[arg-type]
        canvas.add(parcels_with_result)
        return canvas.render(ruleset=ruleset, fmt=fmt, title=title)
    tally = _Tally(by_class=by_class)

    def draw(ax: Axes) -> None:
        _draw_parcels(ax, parcels_with_result, tally, column)

    return _page_bytes(
        draw,
        fmt=fmt,
        tally=tally,
        bounds=bounds,  # type: ignore[arg-type]
        crs=crs,
        ruleset=ruleset,
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


__all__ = [
    "CLASS_COLUMNS",
    "CONSTRAINT_CLASSES",
    "MIN_SITING_AREA_SQFT",
    "RESULT_COLUMNS",
    "RESULT_ORDER",
    "OverviewCanvas",
    "constraint_classes",
    "render_overview",
    "result_counts",
    "scale_bar_length_ft",
    "write_overview",
    "write_rendered",
]
