"""``gis-sw calendar``: inspection and notice calendar of a proposal (CSV and .ics).

    gis-sw calendar PROPOSAL [--rain CSV] [--proposal-id ID] --out DIR [--overwrite]

For each proposal (or only ``--proposal-id``) with a construction period, writes
``calendar_<id>.csv``, ``calendar_<id>.ics`` and, when the phases are dated,
``timeline_<id>.png`` into ``--out``.  The rainfall CSV has the columns ``date,inches``
(one row per day, ISO dates); a bad row is named in the error.
"""

from __future__ import annotations

from pathlib import Path

import click

from gis_sw.cli import options
from gis_sw.errors import ProposalError
from gis_sw.layers.rainfall import read_rainfall
from gis_sw.redact import printable


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
    from gis_sw.analysis.phasing import proposal_timeline
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
            proposal_timeline(proposals, pid),
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
