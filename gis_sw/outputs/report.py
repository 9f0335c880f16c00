"""Every output of ``gis-sw check`` in one call: :func:`write_check_outputs`.

Files in ``out_dir``:

* ``findings.geojson``, ``findings_lines.geojson``, ``findings_points.geojson``: RFC 7946,
  one geometry type each (:mod:`gis_sw.outputs.geojson`);
* ``findings.gpkg``: the same findings in the working CRS (:mod:`gis_sw.outputs.geopackage`);
* ``summary.csv``: one row per finding, no geometry (:mod:`gis_sw.outputs.summary`);
* ``waivers.csv``: when waivers were given, what each did (applied, expired, unmatched).

* ``calcsheet.csv``: the runoff calculation sheet (:mod:`gis_sw.outputs.calcsheet`), and
  ``calcsheet.pdf``, its page of the PDF map set, when PDF maps are written;
* ``timeline_<id>.png``: disturbed acres over time, per proposal with dated phases, when
  maps are asked for (with ``--map none`` no file is written per proposal);
* map sheets and ``webmap.html`` when maps are asked for (:mod:`gis_sw.outputs.maps`);
* ``index.csv``: when any per-proposal file is written, each proposal id, its file stem and
  its files (:mod:`gis_sw.outputs.names`: file names from ids are unique by construction);
* ``summary.xlsx``: the findings for Excel, one sheet per application and one for the town;
* ``<application>/report.pdf`` and ``index.html`` with ``report``
  (:mod:`gis_sw.outputs.deliverable`).

Every file is written atomically, and the whole set is published together
(:func:`gis_sw.outputs.atomic.output_group`): a run that fails or is killed half-way leaves
the previous outputs as they were.  When any output exists and ``overwrite`` is False,
nothing is written.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from gis_sw.outputs.atomic import (
    check_all_writable,
    clean_stale_temps,
    output_group,
    write_text_atomic,
)
from gis_sw.outputs.calcsheet import write_run_calc_sheet
from gis_sw.outputs.csvcells import csv_frame, excel_text
from gis_sw.outputs.deliverable import Progress, report_paths, write_application_reports
from gis_sw.outputs.excel import write_summary_xlsx
from gis_sw.outputs.geojson import FAMILY_FILES, write_findings_geojson
from gis_sw.outputs.geopackage import write_findings_geopackage
from gis_sw.outputs.names import INDEX_NAME, file_stems, files_by_id, write_index
from gis_sw.outputs.summary import write_summary_csv
from gis_sw.outputs.timeline import timeline_path, write_timelines

if TYPE_CHECKING:
    from gis_sw.outputs.maps.town_layers import TownData
    from gis_sw.screening import Screening, WaiverResult

__all__ = ["CHECK_OUTPUTS", "waivers_frame", "write_check_outputs"]

XLSX_NAME = "summary.xlsx"

CHECK_OUTPUTS: tuple[str, ...] = (
    *(name for name, _ in FAMILY_FILES.values()),
    "findings.gpkg",
    "summary.csv",
    "summary.xlsx",
)
"""Files every ``gis-sw check`` run writes (``waivers.csv`` only with waivers)."""


def waivers_frame(results: Sequence[WaiverResult]) -> pd.DataFrame:
    """One row per waiver: status, what it names, reason, expiry, matched finding ids."""
    return pd.DataFrame(
        {
            "status": [str(r.status) for r in results],
            "finding_id": [r.waiver.finding_id or "" for r in results],
            "rule_id": [r.waiver.rule_id or "" for r in results],
            "subject_id": [r.waiver.subject_id or "" for r in results],
            "proposal_id": [r.waiver.proposal_id or "" for r in results],
            "reason": [r.waiver.reason for r in results],
            "expires": [r.waiver.expires.isoformat() if r.waiver.expires else "" for r in results],
            "matched": [" ".join(r.finding_ids) for r in results],
            "source": [r.waiver.where for r in results],
        }
    )


def write_check_outputs(
    out_dir: str | Path,
    screening: Screening,
    *,
    town: TownData | None = None,
    overwrite: bool = False,
    maps: Sequence[str] | None = None,
    report: bool = False,
    progress: Progress | None = None,
) -> list[Path]:
    """Write findings (GeoJSON, GeoPackage), the summary and the waiver report.

    Parameters
    ----------
    out_dir
        Folder for the outputs (created when missing).
    screening
        What :meth:`gis_sw.api.Town.screen` found (waivers applied); ``waivers.csv`` is
        written when waivers were given (``screening.waiver_results`` is not None).
    town
        The town screened, when given: it must be the screening's own.
    overwrite
        Replace existing outputs.
    maps
        Formats of the map sheets (``("pdf", "png")``, one of them, or none), written with
        ``webmap.html`` by :func:`gis_sw.outputs.maps.bundle.write_maps` and a phasing chart
        per proposal; None: no map and no per-proposal drawing (none is computed either).
    report
        Also write ``<application>/report.pdf`` for every proposal and ``index.html``
        (:mod:`gis_sw.outputs.deliverable`).
    progress
        Wraps the per-proposal loops of the sheets and reports (a progress bar from the CLI).

    Returns
    -------
    list of Path
        Every file written.

    Raises
    ------
    OutputError
        If an output exists and ``overwrite`` is False (checked before anything is written),
        or a file cannot be written.
    ValueError
        If ``town`` is not the town the screening was made by.
    """
    if town is not None and town is not screening.town:
        raise ValueError("write_check_outputs: the screening was made by another town")
    out_dir = Path(out_dir)
    planned = planned_outputs(out_dir, screening, maps=maps, report=report)
    check_all_writable(planned, overwrite=overwrite)
    clean_stale_temps(out_dir, [p.name for p in planned])  # left by a killed run
    with output_group():
        written = _write_findings(out_dir, screening, overwrite=overwrite)
        if maps is not None:  # a chart per proposal only when drawings are asked for
            written += write_timelines(
                out_dir, screening, overwrite=overwrite, per_application=True
            )
        written += write_run_calc_sheet(
            out_dir, screening, overwrite=overwrite, pdf=maps is not None and "pdf" in maps
        )
        if maps is not None:
            from gis_sw.outputs.maps.bundle import write_maps

            written += write_maps(out_dir, screening, formats=maps, overwrite=overwrite)
        stems = file_stems(screening.proposals.ids)
        if report:
            written += _write_reports(
                out_dir,
                screening,
                stems=stems,
                written=written,
                overwrite=overwrite,
                progress=progress,
            )
        if files_by_id(stems, written):  # the id-to-file map of per-proposal files
            written.append(write_index(out_dir / INDEX_NAME, stems, written, overwrite=overwrite))
    return written


def _write_findings(out_dir: Path, screening: Screening, *, overwrite: bool) -> list[Path]:
    """Write the findings files, the summaries and ``waivers.csv``; the files written."""
    findings = screening.findings
    written = write_findings_geojson(out_dir, findings, overwrite=overwrite)
    written.append(
        write_findings_geopackage(out_dir / "findings.gpkg", findings, overwrite=overwrite)
    )
    written.append(write_summary_csv(out_dir / "summary.csv", findings, overwrite=overwrite))
    written.append(write_summary_xlsx(out_dir / XLSX_NAME, findings, overwrite=overwrite))
    if screening.waiver_results is not None:
        buffer = io.StringIO()
        csv_frame(waivers_frame(screening.waiver_results)).to_csv(
            buffer, index=False, lineterminator="\n"
        )
        written.append(
            write_text_atomic(
                out_dir / "waivers.csv", excel_text(buffer.getvalue()), overwrite=overwrite
            )
        )
    return written


def planned_outputs(
    out_dir: Path,
    screening: Screening,
    *,
    maps: Sequence[str] | None,
    report: bool = False,
) -> list[Path]:
    """Return every file a check run may write, so existing ones are refused before any write."""
    proposals = screening.proposals
    waivers = screening.waiver_results is not None
    names = [*CHECK_OUTPUTS, "calcsheet.csv", *(["waivers.csv"] if waivers else [])]
    names += ["calcsheet.pdf"] if maps is not None and "pdf" in maps else []
    paths = [out_dir / name for name in names]
    stems = file_stems(proposals.ids)
    if maps is not None:
        dated = proposals.disturbance.loc[
            proposals.disturbance["start_date"].notna(), "proposal_id"
        ]
        paths += [
            timeline_path(out_dir, pid, stems=stems, per_application=True)
            for pid in sorted(set(dated.astype(str)))
        ]
        from gis_sw.outputs.maps.bundle import map_paths

        paths += map_paths(out_dir, screening, formats=maps)
    if report:
        paths += report_paths(out_dir, proposals.ids, stems.__getitem__)
    if files_by_id(stems, paths):
        paths.append(out_dir / INDEX_NAME)
    return paths


def _write_reports(
    out_dir: Path,
    screening: Screening,
    *,
    stems: dict[str, str],
    written: Sequence[Path],
    overwrite: bool,
    progress: Progress | None,
) -> list[Path]:
    """Write each application's report (its sheets and calc sheet page appended), index.html."""
    by_id = files_by_id(stems, written)
    sheet_pdfs = {
        pid: [out_dir / name for name in names if name.endswith(".pdf")]
        for pid, names in by_id.items()
    }
    links = {pid: [(Path(name).name, name) for name in names] for pid, names in by_id.items()}
    top = [
        (label, name)
        for label, name in (
            ("web map", "webmap.html"),
            ("findings (GeoJSON)", "findings.geojson"),
            ("summary (Excel)", XLSX_NAME),
            ("summary (CSV)", "summary.csv"),
            ("calculation sheet", "calcsheet.pdf"),
        )
        if (out_dir / name) in set(written)
    ]
    calc = out_dir / "calcsheet.pdf"
    return write_application_reports(
        out_dir,
        screening,
        stem=stems.__getitem__,
        sheet_pdfs=sheet_pdfs,
        links=links,
        top_links=top,
        calc_pdf=calc if calc in set(written) else None,
        overwrite=overwrite,
        progress=progress,
    )
