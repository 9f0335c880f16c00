"""The planner's set: ``<application>/report.pdf`` per application and ``index.html``.

:func:`write_application_reports` writes, for every application of a run, its report (the
summary pages of :mod:`gis_sw.outputs.application`, then its site sheets, its calculation
sheet page and its phasing chart) into a folder of its own, and ``index.html`` at the top of
``out_dir``, one row per application linking its report, its sheets and the web map.
:func:`report_paths` says which files that will be, so a caller can refuse an existing one
before anything is written.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from gis_sw import __version__
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.application import (
    ApplicationSummary,
    ParcelLine,
    stamp_figure,
    summarise_application,
    summary_figures,
    write_application_report,
)
from gis_sw.outputs.atomic import readable
from gis_sw.outputs.index_page import index_html, write_index_html

if TYPE_CHECKING:
    from gis_sw.screening import Screening

Progress = Callable[[Iterable[str]], Iterable[str]]
"""Wraps a loop over proposal ids (the CLI passes a progress bar)."""

REPORT_NAME = "report.pdf"
INDEX_NAME = "index.html"
_CALC_TITLE = re.compile(r"Runoff calculation sheet: proposal (.+?) \(")
MIN_OVERLAP_SQFT = 0.01
"""A parcel is under an application when it shares at least this much with the disturbance."""


def _text(value: object) -> str:
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):  # noqa: PLR0124
        return ""
    return str(value)


def application_site(
    layers: LayerSet, proposals: Proposals, proposal_id: str
) -> tuple[tuple[ParcelLine, ...], tuple[str, ...]]:
    """Return the parcels and zones under one application's disturbance.

    Parcels carry their address and owner when the layer has them.
    """
    mine = proposals.disturbance[proposals.disturbance["proposal_id"].astype(str) == proposal_id]
    if len(mine) == 0:
        return (), ()
    site = mine.geometry.union_all()
    parcels_out: list[ParcelLine] = []
    zones: list[str] = []
    for kind, column in (("parcels", "parcel_id"), ("zoning", "zone")):
        frame = layers.get(kind)
        if frame is None or len(frame) == 0:
            continue
        hits = frame.iloc[frame.sindex.query(site, predicate="intersects")]
        hits = hits[hits.geometry.intersection(site).area >= MIN_OVERLAP_SQFT]
        if kind == "zoning":
            zones = sorted({_text(z) for z in hits[column]} - {""})
            continue
        for rec in hits.sort_values(column).to_dict("records"):
            parcels_out.append(
                ParcelLine(
                    parcel_id=_text(rec.get(column)),
                    address=_text(rec.get("address")),
                    owner=_text(rec.get("owner")),
                )
            )
    return tuple(parcels_out), tuple(zones)


def _calc_pages(calc_pdf: Path | None) -> dict[str, tuple[Path, int]]:
    """Proposal id -> its page of ``calcsheet.pdf``, read from each page's title line."""
    if calc_pdf is None or not readable(calc_pdf).exists():
        return {}
    from pypdf import PdfReader

    pages: dict[str, tuple[Path, int]] = {}
    for index, page in enumerate(PdfReader(str(readable(calc_pdf))).pages):
        match = _CALC_TITLE.search(" ".join(page.extract_text().split()))
        if match:
            pages[match.group(1)] = (Path(calc_pdf), index)
    return pages


def report_paths(
    out_dir: str | Path, proposal_ids: Sequence[str], stem: Callable[[str], str]
) -> list[Path]:
    """``index.html`` and every ``<stem>/report.pdf`` a run will write."""
    out = Path(out_dir)
    return [out / INDEX_NAME, *(out / stem(pid) / REPORT_NAME for pid in proposal_ids)]


def write_application_reports(
    out_dir: str | Path,
    screening: Screening,
    *,
    stem: Callable[[str], str],
    sheet_pdfs: Mapping[str, Sequence[Path]] | None = None,
    calc_pdf: Path | None = None,
    links: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    top_links: Sequence[tuple[str, str]] = (),
    run_date: dt.date | None = None,
    proposal_ids: Sequence[str] | None = None,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> list[Path]:
    """Write every application's ``report.pdf`` and the run's ``index.html``.

    Parameters
    ----------
    out_dir
        The run's output folder; each report goes to ``out_dir / stem(id) / report.pdf``.
    screening
        The run's screening: its findings (after waivers), the town's parcels, zones and
        addresses for the title, each proposal's phasing timeline for the chart.
    stem
        Folder name of an application (unique per id).
    sheet_pdfs
        Per proposal id, its site sheet PDFs, appended after the summary.
    links
        Per proposal id, ``(label, path relative to out_dir)`` of its other files, listed in
        ``index.html`` after the report.
    top_links
        Run-wide files for the top of ``index.html`` (web map, findings, summary).
    calc_pdf
        The run's ``calcsheet.pdf`` (one page per application, in id order, as
        :func:`gis_sw.outputs.calcsheet.write_calc_sheet_pdf` writes it): each application's
        page is copied into its report.
    run_date
        Date printed on every page (today, UTC, by default).
    proposal_ids
        Only these applications (all by default).
    overwrite
        Replace existing reports and index.
    progress
        Wraps the loop over applications (a progress bar from the CLI).

    Returns
    -------
    list of Path
        The files written.

    Raises
    ------
    OutputError
        If a file exists without ``overwrite`` or cannot be written.
    """
    from gis_sw.outputs.timeline import timeline_figure

    layers, proposals, ruleset = screening.layers, screening.proposals, screening.ruleset
    findings = screening.findings
    out = Path(out_dir)
    date_text = (run_date or dt.datetime.now(tz=dt.UTC).date()).isoformat()
    footer = (
        f"Ruleset {ruleset.name}, version {ruleset.version} · run {date_text} · "
        f"gis-sw {__version__}"
    )
    names = proposals.attributes.get("name")
    written: list[Path] = []
    summaries: list[ApplicationSummary] = []
    all_links: dict[str, list[tuple[str, str]]] = {}
    calc_page = _calc_pages(calc_pdf)
    ids = list(proposals.ids if proposal_ids is None else proposal_ids)
    for pid in progress(ids) if progress is not None else ids:
        parcels, zones = application_site(layers, proposals, pid)
        name = _text(names.get(pid)) if names is not None else ""
        summary = summarise_application(findings, pid, name=name, parcels=parcels, zones=zones)
        summaries.append(summary)
        pages = summary_figures(
            summary,
            ruleset_name=ruleset.name,
            ruleset_version=ruleset.version,
            run_date=date_text,
            version=__version__,
        )
        after = []
        timeline = screening.timeline(pid)
        if timeline is not None:
            limit = ruleset.phasing.max_disturbed_acres
            chart = timeline_figure(
                timeline, limit_acres=limit, title=f"Proposal {pid}: disturbed area over time"
            )
            after.append(stamp_figure(chart, footer=footer))
        folder = stem(pid)
        extra: list[Path | tuple[Path, int]] = list((sheet_pdfs or {}).get(pid, ()))
        if pid in calc_page:
            extra.append(calc_page[pid])
        path = write_application_report(
            out / folder / REPORT_NAME,
            pages,
            attachments=extra,
            after=after,
            overwrite=overwrite,
        )
        written.append(path)
        all_links[pid] = [("report", f"{folder}/{REPORT_NAME}"), *(links or {}).get(pid, ())]
    page = index_html(
        summaries,
        all_links,
        title=f"Stormwater screening: {len(summaries)} application(s)",
        footer=footer,
        top_links=top_links,
    )
    written.append(write_index_html(out / INDEX_NAME, page, overwrite=overwrite))
    return written
