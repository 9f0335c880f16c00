"""Townwide overview map of a batch run: every parcel coloured by its screening result.

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
    colours = [OUTCOME_COLOURS[r] for r in results]
    fig = Figure(figsize=(11.0, 8.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.04, 0.1, 0.7, 0.82))
    ax.set_xticks([])
    ax.set_yticks([])
    style = LayerStyle("Parcel", "none", "#606060", 0.15)
    geoms = parcels_with_result.geometry.to_numpy()
    with mpl.rc_context({"pdf.fonttype": 42}):
        add_polygons(ax, geoms, style, facecolors=colours)
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
            _scale_bar(fig, ax)
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
        fig.legend(
            handles=handles,
            loc="upper left",
            bbox_to_anchor=(0.77, 0.68),
            title="Screening result (parcels)",
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


def _scale_bar(fig: Figure, ax: Axes) -> None:
    """A scale bar in feet (a round length near a quarter of the map's width)."""
    fig.canvas.draw_idle()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    ax.apply_aspect()
    box = ax.get_window_extent(renderer)
    width_in = box.width / fig.dpi
    x0, x1 = ax.get_xlim()
    ft_per_in = (x1 - x0) / width_in
    target_ft = ft_per_in * 1.5
    exponent = 10 ** math.floor(math.log10(target_ft))
    length_ft = max(m * exponent for m in (1, 2, 5) if m * exponent <= target_ft)
    length_in = length_ft / ft_per_in
    trans = fig.dpi_scale_trans
    left, bottom = 8.55, 6.2
    fig.add_artist(Rectangle((left, bottom), length_in, 0.07, transform=trans, fc="black"))
    fig.text(left, bottom + 0.12, f"0    {length_ft:,.0f} ft", transform=trans, fontsize=8)


def result_counts(parcels_with_result: gpd.GeoDataFrame) -> dict[str, int]:
    """How many parcels have each result (the numbers in the overview's legend)."""
    column = result_column(parcels_with_result)
    values = parcels_with_result[column].astype("object")
    values = values.where(values.isin(RESULT_ORDER[:-1]), "none")
    return {str(k): int(v) for k, v in values.value_counts().items()}


__all__ = ["result_counts", "write_overview"]
