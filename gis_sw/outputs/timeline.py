"""Timeline chart (PNG): disturbed acres over time, the limit line and the peak marked.

Readable in grey-scale print: the disturbed area is a solid black step line over a light
grey fill, the limit a dashed line labelled with its value, the peak a black circle with its
acreage and date written beside it.  Uses matplotlib's object API (no pyplot state), so it is
safe to call many times in one process.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gis_sw.outputs.atomic import atomic_path
from gis_sw.outputs.names import file_stem, file_stems
from gis_sw.ruleset import Ruleset

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from gis_sw.screening import Screening, Timeline

log = logging.getLogger(__name__)


def timeline_figure(timeline: Timeline, *, limit_acres: float, title: str) -> Figure:
    """Draw one timeline as a figure (6.5 x 3.5 in)."""
    # matplotlib (0.4 s to import) only when a chart is drawn: check --map none draws none
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 3.5), dpi=150)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    days = np.array(timeline.days, dtype="datetime64[D]")
    acres = np.asarray(timeline.acres, dtype="float64")
    # Start from zero the day before the first event so the first rise is drawn.
    xs = np.concatenate([[days[0] - np.timedelta64(1, "D")], days])
    ys = np.concatenate([[0.0], acres])
    ax.fill_between(xs, ys, step="post", color="0.85", linewidth=0)
    ax.step(xs, ys, where="post", color="black", linewidth=1.6, label="Disturbed area")
    ax.axhline(limit_acres, color="0.3", linestyle="--", linewidth=1.2)
    ax.annotate(
        f"limit {limit_acres:.2f} ac",
        xy=(0.995, limit_acres),
        xycoords=("axes fraction", "data"),
        ha="right",
        va="bottom",
        fontsize=8,
        color="0.2",
    )
    best = int(np.argmax(np.round(acres, 6)))
    ax.plot(days[best : best + 1], acres[best : best + 1], marker="o", color="black", markersize=6)
    ax.annotate(
        f"peak {acres[best]:.2f} ac\n{timeline.days[best].isoformat()}",
        xy=(days[best], acres[best]),
        xytext=(6, 6),
        textcoords="offset points",
        fontsize=8,
        fontweight="bold",
    )
    top = max(float(acres.max()), limit_acres) * 1.2
    ax.set_ylim(0, top)
    ax.set_ylabel("Disturbed area (acres)")
    ax.set_title(title, fontsize=10)
    locator = AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.grid(axis="y", color="0.9", linewidth=0.6)
    fig.tight_layout()
    return fig


def write_timeline(
    path: str | Path,
    timeline: Timeline | None,
    *,
    ruleset: Ruleset,
    proposal_id: str,
    overwrite: bool = True,
) -> Path | None:
    """Write the timeline PNG of one proposal; None (nothing written) without a timeline.

    Parameters
    ----------
    path
        The PNG to write.
    timeline
        The proposal's disturbed area over time
        (:meth:`gis_sw.screening.Screening.timeline`); None when no phase is dated.
    ruleset
        Gives the five-acre limit drawn.
    proposal_id
        Named in the title.
    overwrite
        Replace an existing file.

    Returns
    -------
    Path or None
        The file written.

    Raises
    ------
    OutputError
        If ``path`` exists and ``overwrite`` is False, or it cannot be written.
    """
    if timeline is None:
        log.info("proposal %s has no dated disturbance: no timeline chart", proposal_id)
        return None
    limit = ruleset.phasing.max_disturbed_acres
    title = f"Proposal {proposal_id}: disturbed area over time (limit {limit:g} acres)"
    fig = timeline_figure(timeline, limit_acres=limit, title=title)
    target = Path(path)
    with atomic_path(target, overwrite=overwrite) as tmp:
        fig.savefig(tmp, format="png")
    return target


def timeline_path(
    folder: str | Path,
    proposal_id: str,
    *,
    stems: Mapping[str, str] | None = None,
    per_application: bool = False,
) -> Path:
    """Return ``timeline_<stem>.png`` in ``folder`` (``folder/<stem>/`` with ``per_application``).

    The stem comes from ``stems`` (every id of the run,
    :func:`gis_sw.outputs.names.file_stems`), else from the id alone.
    """
    stem = stems[str(proposal_id)] if stems is not None else file_stem(str(proposal_id))
    base = Path(folder) / stem if per_application else Path(folder)
    return base / f"timeline_{stem}.png"


def write_timelines(
    folder: str | Path,
    screening: Screening,
    *,
    overwrite: bool = True,
    per_application: bool = False,
) -> list[Path]:
    """Write ``timeline_<id>.png`` for every proposal with dated phases; return the paths.

    In each proposal's own folder with ``per_application``.

    Raises
    ------
    OutputError
        If a chart exists and ``overwrite`` is False, or it cannot be written.
    """
    written = []
    proposals = screening.proposals
    stems = file_stems(proposals.ids)
    for pid in proposals.ids:
        path = write_timeline(
            timeline_path(folder, pid, stems=stems, per_application=per_application),
            screening.timeline(pid),
            ruleset=screening.ruleset,
            proposal_id=pid,
            overwrite=overwrite,
        )
        if path is not None:
            written.append(path)
    return written
