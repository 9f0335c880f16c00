"""``gis-sw check``: screen proposals against the law; print a table, write findings.

Exit codes: 0 when no finding reaches ``--fail-on`` (waived findings never do), 1 when one
does, 2 for bad input (one readable line on stderr).  The table goes to stdout, logs and
progress to stderr.
"""

from __future__ import annotations

import datetime as dt
import logging
import sys
from collections.abc import Iterable
from pathlib import Path

import click

from gis_sw.analysis.engine import run_rules
from gis_sw.analysis.findings import tripping
from gis_sw.analysis.registry import RULES, select_rules
from gis_sw.analysis.waivers import WaiverStatus, apply_waivers, load_waivers
from gis_sw.outputs.atomic import check_writable
from gis_sw.outputs.console import format_blocks
from gis_sw.outputs.report import CHECK_OUTPUTS, write_check_outputs
from gis_sw.outputs.summary import count_line, format_notes, format_table
from gis_sw.redact import shown
from gis_sw.ruleset import load_ruleset

log = logging.getLogger("gis_sw.cli.check")

EXIT_OK, EXIT_FINDINGS = 0, 1


def _progress(ids: Iterable[str]) -> Iterable[str]:
    """A progress bar on stderr while reports are drawn (quiet when stderr is no terminal)."""
    from tqdm import tqdm

    items = list(ids)
    return tqdm(items, desc="reports", unit="application", disable=not sys.stderr.isatty())


def _prefixes(values: tuple[str, ...], option: str) -> list[str] | None:
    """Rule id prefixes from repeated and comma-separated values; each must match a rule."""
    prefixes = [p.strip().upper() for v in values for p in v.split(",") if p.strip()]
    for prefix in prefixes:
        if not any(r.rule_id.startswith(prefix) for r in RULES):
            raise click.BadParameter(
                f"{prefix!r} matches no rule id (see `gis-sw rules`).", param_hint=option
            )
    return prefixes or None


@click.command("check")
@click.argument("proposal", type=click.Path(path_type=Path))
@click.option(
    "--layers",
    "source",
    required=True,
    type=click.Path(path_type=Path),
    help="Layers manifest (layers.toml), GeoPackage of town layers, or a folder with layers.toml.",
)
@click.option("--ruleset", "ruleset_name", default=None, help="Ruleset name or TOML path.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for findings.geojson, findings.gpkg, summary.csv (none: table only).",
)
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
@click.option(
    "--map",
    "map_choice",
    type=click.Choice(["pdf", "png", "both", "none"]),
    default="both",
    show_default=True,
    help="Map sheets of each proposal in --out, with webmap.html (none: neither).",
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
@click.option("--overwrite", is_flag=True, help="Replace existing outputs in --out.")
@click.option("--select", multiple=True, help="Only rules with these id prefixes (SW1, SW205).")
@click.option("--ignore", multiple=True, help="Skip rules with these id prefixes.")
@click.option(
    "--crs",
    default=None,
    help="CRS of the proposals file's coordinates: for a file with none (DXF), and it "
    "overrides a wrong one (a state-plane GeoJSON without a crs member).",
)
@click.option("--strict", is_flag=True, help="Refuse invalid geometries instead of repairing.")
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
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    crs: str | None,
    strict: bool,
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
    from gis_sw.layers.read import read_layers, read_proposals
    from gis_sw.outputs.maps.bundle import MAP_CHOICES

    ruleset = load_ruleset(ruleset_name)
    chosen = select_rules(_prefixes(select, "--select"), _prefixes(ignore, "--ignore"))
    if not chosen:
        raise click.BadParameter("--select and --ignore leave no rule to run.")
    waivers = (
        load_waivers(waivers_path, known_rules={r.rule_id for r in RULES})
        if waivers_path is not None
        else None
    )
    if out_dir is not None:
        for name in (*CHECK_OUTPUTS, *(["waivers.csv"] if waivers is not None else [])):
            check_writable(out_dir / name, overwrite=overwrite)
    log.info("reading layers from %s", source)
    layers = read_layers(source, ruleset=ruleset, strict=strict)
    log.info("reading proposals from %s", proposal)
    proposals = read_proposals(proposal, ruleset=ruleset, crs=crs, strict=strict)
    log.info("screening %d proposal(s) with %d rule(s)", len(proposals.ids), len(chosen))
    findings = run_rules(
        layers,
        proposals,
        ruleset,
        select=[r.rule_id for r in chosen],
    )
    results = None
    if waivers is not None:
        findings, results = apply_waivers(findings, waivers, today=dt.datetime.now(dt.UTC).date())
        for result in results:
            if result.status is WaiverStatus.EXPIRED:
                click.echo(
                    shown(
                        f"gis-sw: warning: waiver for {result.waiver.label()} "
                        f"({result.waiver.where}) expired on {result.waiver.expires} and was "
                        "not applied"
                    ),
                    err=True,
                )
            elif result.status is WaiverStatus.UNMATCHED:
                click.echo(
                    shown(
                        f"gis-sw: warning: waiver for {result.waiver.label()} "
                        f"({result.waiver.where}) matched no finding"
                    ),
                    err=True,
                )
    if details:
        click.echo(format_table(findings))
        notes = format_notes(findings)
        if notes:
            click.echo("")
            click.echo(notes)
    else:
        click.echo(format_blocks(findings))
        click.echo("")
        click.echo(count_line(findings))
    if report is None:
        report = map_choice != "none"
    if out_dir is not None:
        drawing = [w for w, on in (("map sheets", map_choice != "none"), ("reports", report)) if on]
        if drawing:
            click.echo(
                f"Drawing {' and '.join(drawing)} of {len(proposals.ids)} application(s) "
                f"into {out_dir} ...",
                err=True,
            )
        written = write_check_outputs(
            out_dir,
            findings,
            layers=layers,
            proposals=proposals,
            ruleset=ruleset,
            overwrite=overwrite,
            waiver_results=results,
            maps=None if map_choice == "none" else MAP_CHOICES[map_choice],
            report=report,
            progress=_progress,
        )
        for path in written:
            log.info("wrote %s", path)
        click.echo(f"Wrote {len(written)} files to {out_dir}.", err=True)
    hits = tripping(findings, fail_on)
    if len(hits):
        click.echo(
            f"gis-sw: {len(hits)} finding(s) reach --fail-on {fail_on} ({count_line(hits)})",
            err=True,
        )
        raise click.exceptions.Exit(EXIT_FINDINGS)
