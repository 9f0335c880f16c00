"""``gis-sw check``: screen proposals against the law; print a table, write findings.

A thin caller of the public API: the ruleset, then the proposals
(:func:`gis_sw.read_proposals`), then the town around them (:func:`gis_sw.read_town`),
screened with :meth:`gis_sw.Town.screen`, written by
:func:`gis_sw.outputs.report.write_check_outputs`.  Exit
:attr:`~gis_sw.cli.options.ExitCode.FINDINGS` when a finding reaches ``--fail-on`` (waived
findings never do).  The table goes to stdout, logs and progress to stderr.
"""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gis_sw.cli import options
from gis_sw.cli.profile import Profile, profiled

if TYPE_CHECKING:
    import geopandas as gpd

    from gis_sw.analysis.waivers import Waiver, WaiverResult
    from gis_sw.api import Screening
    from gis_sw.ruleset import Ruleset

log = logging.getLogger("gis_sw.cli.check")


def _progress(ids: Iterable[str]) -> Iterable[str]:
    """Wrap the per-application loop in a progress bar on stderr (none off a terminal)."""
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: a later batch in this process may fork
    items = list(ids)
    return tqdm(items, desc="reports", unit="application", disable=not sys.stderr.isatty())


@click.command("check")
@options.proposal_arg
@options.layers_opt
@options.ruleset_opt
@options.out_opt(required=False)
@click.option(
    "--fail-on",
    type=click.Choice(["fail", "review", "required", "never"]),
    default="fail",
    show_default=True,
    help="Exit 1 when a finding reaches this outcome (order: fail, review, required).",
)
@click.option(
    "--waivers",
    "waivers_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="TOML or CSV of reviewed exceptions (finding_id or rule_id + subject_id, reason).",
)
@options.formats_opt(
    "--map", "map_choice", "Map sheets of each proposal in --out, with webmap.html (none: neither)."
)
@click.option(
    "--report/--no-report",
    default=None,
    help="With --out: a report.pdf per application in its own folder, and index.html "
    "(default: on, off with --map none, which draws nothing per application).",
)
@click.option(
    "--details",
    is_flag=True,
    help="Print the full table of every finding (passes included) instead of one block "
    "per application.",
)
@options.overwrite_opt
@options.select_opt
@options.ignore_opt
@options.crs_opt
@options.strict_opt
@options.profile_opt
def command(
    *,
    proposal: Path,
    source: Path,
    ruleset_name: str | None,
    out_dir: Path | None,
    fail_on: str,
    waivers_path: Path | None,
    overwrite: bool,
    map_choice: str,
    report: bool | None,
    details: bool,
    select: list[str] | None,
    ignore: list[str] | None,
    crs: str | None,
    strict: bool,
    profile: bool,
) -> None:
    """Screen PROPOSAL (a proposals GeoPackage or a disturbance file) against the law.

    Prints one block per application: its verdict, then every fail, review, required and
    info finding with the measured figure, the limit, the citation and the sentence
    (--details prints the full table, passes included).  With --out it writes
    findings.geojson (RFC 7946, plus _lines and _points files), findings.gpkg,
    summary.csv, summary.xlsx, calcsheet.csv, index.csv, the map sheets and webmap.html
    (--map, on by default), a report.pdf per application in a folder of its own with
    index.html linking them (--report, on by default), and waivers.csv when --waivers is
    given.  gis-sw screens; the Town Engineer decides.
    """
    with profiled(profile) as prof:
        import gis_sw
        from gis_sw.ruleset import load_ruleset

        prof.imported(
            "gis_sw.api",
            "gis_sw.outputs.console",
            *(["gis_sw.outputs.report"] if out_dir is not None else []),
        )
        _freeze_imports()
        chosen = options.chosen_rules(select, ignore)
        ruleset = load_ruleset(ruleset_name)
        waivers = _load_waivers(waivers_path)
        if out_dir is not None:
            _check_writable(
                out_dir,
                inputs=(source, proposal, waivers_path),
                ruleset=ruleset,
                overwrite=overwrite,
            )
        maps = options.FORMATS[map_choice] or None
        # sheets and reports draw the whole town around a lot (its location map): read it
        # whole then; otherwise only what the proposals' rules can reach
        drawn = out_dir is not None and (maps is not None or bool(report))
        if not drawn:  # the town's whole-layer id checks run while the proposals are read
            from gis_sw.around import prefetch

            prefetch(source)
        log.info("reading proposals from %s", proposal)
        proposals = gis_sw.read_proposals(proposal, ruleset=ruleset, crs=crs, strict=strict)
        log.info("reading layers from %s", source)
        town = gis_sw.read_town(
            source, ruleset=ruleset, strict=strict, around=None if drawn else proposals
        )
        prof.mark("read")
        log.info("screening %d proposal(s) with %d rule(s)", len(proposals.ids), len(chosen))
        screening = town.screen(proposals, select=select, ignore=ignore, waivers=waivers)
        prof.mark("screen")
        _warn_waivers(screening.waiver_results or ())
        _print_findings(screening.findings, details=details)
        if out_dir is not None:
            _write(
                out_dir,
                screening,
                maps=maps,
                report=maps is not None if report is None else report,
                overwrite=overwrite,
                prof=prof,
            )
        _exit_on(screening.findings, fail_on)


def _freeze_imports() -> None:
    """As the ``gis-sw`` program, keep every object alive now out of garbage collection.

    The modules just imported live as long as the process: no collection need walk their
    80,000 objects again (each full one did; 0.05-0.1 s a check).  A process that goes on
    after the command (a test runner invoking it) keeps collecting them.
    """
    root = click.get_current_context().find_root().command
    if getattr(root, "started", None) is not None:  # set by gis_sw.cli.main
        gc.freeze()


def _load_waivers(path: Path | None) -> list[Waiver] | None:
    """Read the waivers file before any layer is read (a bad one stops the run first)."""
    if path is None:
        return None
    from gis_sw.analysis.registry import RULES
    from gis_sw.analysis.waivers import load_waivers

    return load_waivers(path, known_rules={r.rule_id for r in RULES})


def _check_writable(
    out_dir: Path,
    *,
    inputs: tuple[Path, Path, Path | None],
    ruleset: Ruleset,
    overwrite: bool,
) -> None:
    """Refuse an existing output, or one that is an input, before anything is read.

    ``inputs`` are the layers source, the proposals file and the waivers file; the outputs
    of each application's folder are checked again on writing.
    """
    from gis_sw.cli.guard import refuse_outputs_over_inputs
    from gis_sw.outputs.atomic import check_writable
    from gis_sw.outputs.report import CHECK_OUTPUTS

    source, proposal, waivers = inputs
    targets = [out_dir / n for n in (*CHECK_OUTPUTS, *(["waivers.csv"] if waivers else []))]
    refuse_outputs_over_inputs(
        targets,
        source=source,
        proposals=proposal,
        ruleset=ruleset,
        extra={"the waivers file": waivers},
    )
    for target in targets:
        check_writable(target, overwrite=overwrite)


def _warn_waivers(results: Iterable[WaiverResult]) -> None:
    """Warn on stderr of each waiver that expired or matched no finding."""
    from gis_sw.analysis.waivers import WaiverStatus
    from gis_sw.redact import shown

    for result in results:
        where = f"gis-sw: warning: waiver for {result.waiver.label()} ({result.waiver.where})"
        if result.status is WaiverStatus.EXPIRED:
            what = f"expired on {result.waiver.expires} and was not applied"
        elif result.status is WaiverStatus.UNMATCHED:
            what = "matched no finding"
        else:
            continue
        click.echo(shown(f"{where} {what}"), err=True)


def _print_findings(findings: gpd.GeoDataFrame, *, details: bool) -> None:
    """Print one block per application, or with ``details`` the full table and its notes."""
    from gis_sw.outputs.summary import count_line

    if details:
        from gis_sw.outputs.summary import format_notes, format_table

        click.echo(format_table(findings))
        notes = format_notes(findings)
        if notes:
            click.echo("")
            click.echo(notes)
    else:
        from gis_sw.outputs.console import format_blocks

        click.echo(format_blocks(findings))
        click.echo("")
        click.echo(count_line(findings))


def _write(
    out_dir: Path,
    screening: Screening,
    *,
    maps: tuple[str, ...] | None,
    report: bool,
    overwrite: bool,
    prof: Profile,
) -> None:
    """Write every output of the run into ``out_dir`` (drawing what ``maps``/``report`` ask)."""
    from gis_sw.outputs.report import write_check_outputs

    drawing = [w for w, on in (("map sheets", maps is not None), ("reports", report)) if on]
    if drawing:
        click.echo(
            f"Drawing {' and '.join(drawing)} of {len(screening.proposals.ids)} "
            f"application(s) into {out_dir} ...",
            err=True,
        )
    written = write_check_outputs(
        out_dir,
        screening,
        overwrite=overwrite,
        maps=maps,
        report=report,
        progress=_progress,
    )
    prof.mark("write and draw" if drawing else "write")
    for path in written:
        log.info("wrote %s", path)
    click.echo(f"Wrote {len(written)} files to {out_dir}.", err=True)


def _exit_on(findings: gpd.GeoDataFrame, fail_on: str) -> None:
    """Exit :attr:`~gis_sw.cli.options.ExitCode.FINDINGS` when a finding reaches ``fail_on``."""
    from gis_sw.analysis.findings import tripping
    from gis_sw.outputs.summary import count_line

    hits = tripping(findings, fail_on)
    if len(hits):
        click.echo(
            f"gis-sw: {len(hits)} finding(s) reach --fail-on {fail_on} ({count_line(hits)})",
            err=True,
        )
        raise click.exceptions.Exit(options.ExitCode.FINDINGS)
