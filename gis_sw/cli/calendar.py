"""``gis-sw calendar``: inspection and notice calendar of a proposal (CSV and .ics).

    gis-sw calendar PROPOSAL [--rain CSV] [--proposal-id ID] --out DIR [--overwrite]

For each proposal (or only ``--proposal-id``) with a construction period, writes
``calendar_<id>.csv``, ``calendar_<id>.ics`` and, when the phases are dated,
``timeline_<id>.png`` into ``--out``.  The rainfall CSV has the columns ``date,inches``
(one row per day, ISO dates); a bad row is named in the error.
"""

from __future__ import annotations

import codecs
import csv
import math
from datetime import date
from pathlib import Path

import click

from gis_sw.cli import options
from gis_sw.errors import GisSwError, InputFileError, ProposalError
from gis_sw.redact import printable


class RainfallError(GisSwError, ValueError):
    """A rainfall CSV cannot be read as ``date,inches``."""


def read_rainfall(path: str | Path) -> dict[date, float]:
    """Daily rainfall from a CSV with the columns ``date`` (YYYY-MM-DD) and ``inches``.

    UTF-8 (with or without a byte-order mark) and UTF-16/32 with one are read; a file whose
    header has tabs and no comma (Excel's "Unicode text") is read as tab-separated.

    Raises
    ------
    InputFileError
        If the file does not exist, is not a regular file (a named pipe), or is not text.
    RainfallError
        Naming the row (counted from 1 after the header) for a missing column, a bad date,
        a value that is not a number of 0 or more, or a date given twice.
    """
    path = Path(path)
    if not path.exists():
        raise InputFileError(f"rainfall file {path} does not exist. Fix: check --rain.")
    from gis_sw.layers.proposals_io import check_input_file

    check_input_file(path, "rainfall CSV")
    text = _rainfall_text(path)
    lines = text.splitlines()
    tabbed = bool(lines) and "\t" in lines[0] and "," not in lines[0]
    reader = csv.DictReader(lines, delimiter="\t" if tabbed else ",")
    columns = [c.strip().lower() for c in reader.fieldnames or []]
    if "date" not in columns or "inches" not in columns:
        raise RainfallError(
            f"rainfall file {path} has columns {columns or 'none'}; it needs 'date' and "
            "'inches'. Fix: give a header line 'date,inches'."
        )
    reader.fieldnames = columns
    rain: dict[date, float] = {}
    for number, row in enumerate(reader, start=1):
        where = f"rainfall file {path}, row {number}"
        raw_day, raw_inches = (row.get("date") or "").strip(), (row.get("inches") or "").strip()
        extra = row.get(None)  # values beyond the header (restkey None)
        if extra:
            raise RainfallError(
                f"{where} ({raw_day}): more values than columns ({len(columns) + len(extra)} "
                f"for {len(columns)}); a decimal comma? Fix: write inches with a decimal point "
                "(0.75), or quote the value."
            )
        try:
            day = date.fromisoformat(raw_day)
        except ValueError:
            raise RainfallError(
                f"{where}: date {raw_day!r} is not a date. Fix: write it as YYYY-MM-DD."
            ) from None
        try:
            inches = float(raw_inches)
        except ValueError:
            inches = math.nan
        if not math.isfinite(inches) or inches < 0:
            raise RainfallError(
                f"{where} ({raw_day}): inches {raw_inches!r} is not a number of 0 or more. "
                "Fix: give the day's total rainfall in inches (0 for a dry day)."
            )
        if day in rain:
            raise RainfallError(
                f"{where}: {raw_day} is given twice. Fix: one row per day (the day's total)."
            )
        rain[day] = inches
    return rain


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
"""Byte-order marks and the encoding each names (Excel's "Unicode text" is UTF-16)."""


def _rainfall_text(path: Path) -> str:
    """Return the rainfall file's text: UTF-8, or UTF-16/32 (from a byte-order mark or NULs).

    Raises
    ------
    InputFileError
        If it cannot be read, or is not text in one of those encodings.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputFileError(
            f"rainfall file {path} cannot be read ({exc.strerror or exc}). Fix: check the "
            "path and its permissions."
        ) from None
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), "utf-8")
    head = data[:512]
    if encoding == "utf-8" and b"\x00" in head:  # UTF-16 without a byte-order mark
        odd, even = head[1::2].count(0), head[0::2].count(0)
        encoding = "utf-16-le" if odd > even else "utf-16-be"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise InputFileError(
            f"rainfall file {path} is not {encoding.upper().replace('-SIG', '')} text (byte "
            f"{exc.start + 1} cannot be decoded). Fix: save it as CSV UTF-8 (in Excel: "
            "Save As, 'CSV UTF-8 (Comma delimited)')."
        ) from None


@click.command(name="calendar")
@options.proposal_arg
@click.option(
    "--rain",
    "rain_csv",
    type=click.Path(path_type=Path),
    help="Daily rainfall CSV with columns date,inches (adds storm inspections).",
)
@click.option("--proposal-id", "proposal_id", help="Only this proposal (default: every one).")
@options.out_opt()
@options.overwrite_opt
@options.ruleset_opt
@options.crs_opt
def command(
    *,
    proposal: Path,
    rain_csv: Path | None,
    proposal_id: str | None,
    out_dir: Path,
    overwrite: bool,
    ruleset_name: str | None,
    crs: str | None,
) -> None:
    """Inspection report due dates and 48-hour notices of a proposal, as CSV and .ics.

    Writes calendar_<id>.csv, calendar_<id>.ics and, when the phases are dated,
    timeline_<id>.png for each proposal with a construction period.
    """
    from gis_sw.analysis.calendar import build_calendar
    from gis_sw.analysis.construction import construction_periods
    from gis_sw.api import read_proposals
    from gis_sw.outputs.atomic import check_writable
    from gis_sw.outputs.calendar import calendar_paths, write_calendar
    from gis_sw.outputs.timeline import write_timeline
    from gis_sw.ruleset import load_ruleset

    ruleset = load_ruleset(ruleset_name)
    rainfall = read_rainfall(rain_csv) if rain_csv is not None else None
    proposals = read_proposals(proposal, ruleset=ruleset, crs=crs)
    ids = proposals.ids
    if proposal_id is not None:
        if str(proposal_id) not in ids:
            raise ProposalError(
                f"{proposal}: no proposal {proposal_id!r} (ids: {', '.join(ids) or 'none'}). "
                "Fix: pass one of those to --proposal-id."
            )
        ids = [str(proposal_id)]
    periods = construction_periods(proposals)
    written = 0
    for pid in ids:
        period = periods.get(pid)
        if period is None:
            click.echo(
                f"{printable(pid)}: no construction period (construction_start/construction_end or "
                "disturbance dates); no calendar written",
                err=True,
            )
            continue
        cal = build_calendar(
            period.start, period.end, construction=ruleset.construction, rainfall=rainfall
        )
        csv_path, ics_path, png_path = calendar_paths(out_dir, pid)
        for path in (csv_path, ics_path, png_path):
            check_writable(path, overwrite=overwrite)
        write_calendar(out_dir, cal, proposal_id=pid, overwrite=overwrite)
        png = write_timeline(
            png_path,
            proposals=proposals,
            ruleset=ruleset,
            proposal_id=pid,
            overwrite=overwrite,
        )
        written += 1
        click.echo(
            f"{printable(pid)}: {period.start.isoformat()} to {period.end.isoformat()} "
            f"({period.source}): {cal.weekly_count} weekly and {cal.storm_count} storm "
            f"inspection report(s), {len(cal.inspections)} due date(s)"
        )
        if rainfall is not None and cal.rain_days_missing:
            click.echo(
                f"{printable(pid)}: warning: the rainfall file has no value for "
                f"{cal.rain_days_missing} "
                "day(s) of the construction period; storms on those days are not listed",
                err=True,
            )
        for wrote in (csv_path, ics_path, png):
            if wrote is not None:
                click.echo(f"  wrote {wrote}")
    if written == 0:
        raise ProposalError(
            f"{proposal}: no proposal has a construction period. Fix: give "
            "construction_start and construction_end, or start_date and end_date on the "
            "disturbance polygons."
        )
