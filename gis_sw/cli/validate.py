"""``gis-sw validate``: read and validate town layers (and a proposals file); print a report.

Exit :attr:`~gis_sw.cli.options.ExitCode.OK` when every layer is clean, skipped features
each have their reason (``on_bad_feature = "skip"``) and absent layers are declared
(``none = true``); :attr:`~gis_sw.cli.options.ExitCode.BAD_INPUT` when any layer has a
problem (every problem is printed, grouped by layer, before exiting).  The report
goes to stdout.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gis_sw.cli import options
from gis_sw.errors import LayerError, Problem
from gis_sw.layers.specs import RASTER_LAYERS, TOWN_LAYERS
from gis_sw.redact import shown

if TYPE_CHECKING:
    from pyproj import CRS

    from gis_sw.layers.layerset import DroppedFeature, LayerReport
    from gis_sw.layers.read import LayerInspection
    from gis_sw.ruleset import Ruleset


def _extent(bounds: tuple[float, float, float, float]) -> str:
    if any(math.isnan(v) for v in bounds):
        return "empty"
    minx, miny, maxx, maxy = bounds
    return (
        f"{minx:,.2f}, {miny:,.2f} to {maxx:,.2f}, {maxy:,.2f} "
        f"({maxx - minx:,.2f} x {maxy - miny:,.2f})"
    )


def format_dropped(dropped: tuple[DroppedFeature, ...]) -> list[str]:
    """Skipped features grouped by reason: ``58 x placeholder parcel_id '---': row 3, ...``."""
    if not dropped:
        return []
    from gis_sw.layers.validate import listing

    by_reason: dict[str, list[str]] = {}
    for feature in dropped:
        by_reason.setdefault(feature.reason, []).append(feature.feature)
    lines = [f'  skipped:  {len(dropped):,} feature(s) (on_bad_feature = "skip"):']
    for why, features in by_reason.items():
        lines.append(f"    - {len(features):,} x {why}: {listing(features)}")
    return lines


def format_duplicates(kind: str, groups: tuple[tuple[str, ...], ...]) -> list[str]:
    """Return lines naming features that share one geometry (condominium units on one lot)."""
    if not groups:
        return []
    from gis_sw.layers.validate import listing

    shown = [" = ".join(group) for group in groups]
    ids = sum(len(g) for g in groups)
    spec = TOWN_LAYERS.get(kind)
    column = spec.id_column if spec is not None and spec.id_column else "id"
    shapes = "1 geometry carries" if len(groups) == 1 else f"{len(groups):,} geometries carry"
    return [
        (
            f"  note:     {shapes} {ids:,} different {column} values (condominium units stacked "
            f"on one lot?); batch screens each geometry once, naming its ids together: "
            f"{listing(shown)}"
        )
    ]


def format_report(report: LayerReport, *, working: str, unit: str) -> list[str]:
    """Lines describing one layer that read cleanly."""
    if report.declared_none:
        return [
            f"{report.kind}: declared none",
            (
                f"  the layers manifest says the town has none (none = true): rules see no "
                f"{report.kind} and may pass on that part."
            ),
        ]
    from gis_sw.layers.validate import listing

    what = "cells" if report.kind in RASTER_LAYERS else "features"
    lines = [
        f"{report.kind}: ok",
        f"  source:   {report.source}",
        f"  {what + ':':<9} {report.features:,}",
        f"  CRS:      {report.source_crs} ({report.units})",
        f"  extent:   {_extent(report.bounds)} {unit}, {working}",
    ]
    if report.repaired_ids:
        lines.append(
            f"  repaired: {len(report.repaired_ids)} invalid geometries with make_valid: "
            f"{listing(report.repaired_ids)}"
        )
    lines.extend(f"  note:     {w}" for w in report.warnings)
    lines.extend(format_dropped(report.dropped))
    lines.extend(format_duplicates(report.kind, report.duplicate_geometries))
    return lines


def format_problems(kind: str, problems: list[Problem], *, source: str | None = None) -> list[str]:
    """Lines listing a layer's problems (after the file it was read from, when known)."""
    lines = [f"{kind}: {len(problems)} problem(s)"]
    if source is not None:
        lines.append(f"  source:   {source}")
    for problem in problems:
        lines.append(f"  - {problem.message}")
        if problem.fix:
            lines.append(f"    fix: {problem.fix}")
    return lines


def format_inspection(inspection: LayerInspection, *, declared: CRS | None = None) -> list[str]:
    """Return the whole report: a header, each layer, absent optional layers, a summary.

    ``declared`` is the CRS the ruleset names when work happens in its foot twin.
    """
    from gis_sw.layers.vector import crs_text, crs_units

    crs = inspection.crs
    working, unit = crs_text(crs), crs_units(crs)
    manifest = inspection.manifest
    lines = [
        f"Layers: {manifest.source} ({manifest.name})",
        f"Working CRS: {working} ({crs.name}), unit: {unit}",
    ]
    if declared is not None:
        lines.append(
            f"  the ruleset names {crs_text(declared)} ({crs_units(declared)}); every layer "
            "is measured in that projection with its axes in feet, so figures are in feet."
        )
    lines.append("")
    order = [*TOWN_LAYERS, *RASTER_LAYERS]
    for kind in order:
        if kind in inspection.problems:
            entry = manifest.entries.get(kind)
            source = entry.label if entry is not None else None
            lines.extend(format_problems(kind, inspection.problems[kind], source=source))
        elif kind in inspection.reports:
            lines.extend(format_report(inspection.reports[kind], working=working, unit=unit))
        else:
            continue
        lines.append("")
    absent = [k for k in order if k not in manifest.entries and k not in inspection.problems]
    if absent:
        lines.append(f"Not provided (rules that need them answer review): {', '.join(absent)}")
        lines.append(
            "  A town that has none of one (no private wells, no septic fields) says so in "
            "the layers manifest: [wells] none = true."
        )
    declared_kinds = [
        k for k in order if k in inspection.reports and inspection.reports[k].declared_none
    ]
    if declared_kinds:
        lines.append(f"Declared none: {', '.join(declared_kinds)}")
    if manifest.ignored:
        lines.append(f"Ignored (not a known layer kind): {', '.join(manifest.ignored)}")
    count = len(inspection.all_problems())
    layers = len(inspection.problems)
    skipped = len(inspection.dropped)
    extra = []
    if skipped:
        extra.append(f"{skipped:,} feature(s) skipped with a reason")
    if declared_kinds:
        extra.append(f"{len(declared_kinds)} layer(s) declared none")
    tail = f" ({'; '.join(extra)})" if extra else ""
    lines.append(
        f"Result: every layer is valid{tail}."
        if inspection.ok
        else f"Result: {count} problem(s) in {layers} layer(s)."
    )
    return lines


@click.command("validate")
@options.layers_opt
@options.ruleset_opt
@options.strict_opt
@options.proposals_opt("Also validate a proposals file (GeoPackage, GeoJSON, Shapefile, DXF ...).")
@options.crs_opt
def command(
    source: Path,
    ruleset_name: str | None,
    strict: bool,
    proposals_path: Path | None,
    crs: str | None,
) -> None:
    """Read and validate town layers; print a report per layer.

    Every layer is reprojected to the ruleset's working CRS.  Exit 2 when any layer (or the
    proposals file) has a problem; every problem is listed first.
    """
    from gis_sw.layers.read import inspect_layers
    from gis_sw.ruleset import load_ruleset

    ruleset = load_ruleset(ruleset_name)
    inspection = inspect_layers(source, ruleset=ruleset, strict=strict)
    declared = ruleset.crs_declared if ruleset.crs_is_twin else None
    for line in format_inspection(inspection, declared=declared):
        click.echo(shown(line))
    failed = not inspection.ok
    if proposals_path is not None:
        failed = not _validate_proposals(proposals_path, ruleset, crs=crs, strict=strict) or failed
    if failed:
        click.echo("gis-sw: error: input layers have problems (listed above).", err=True)
        raise click.exceptions.Exit(options.ExitCode.BAD_INPUT)


def _validate_proposals(path: Path, ruleset: Ruleset, *, crs: str | None, strict: bool) -> bool:
    """Print the report of a proposals file; return whether it read without a problem."""
    from gis_sw.api import read_proposals
    from gis_sw.layers.layerset import LayerReport
    from gis_sw.layers.validate import listing
    from gis_sw.layers.vector import crs_text, crs_units

    click.echo("")
    click.echo(shown(f"Proposals: {path}"))
    working, unit = crs_text(ruleset.working_crs), crs_units(ruleset.working_crs)
    try:
        proposals = read_proposals(path, ruleset=ruleset, crs=crs, strict=strict)
    except LayerError as exc:
        by_layer: dict[str, list[Problem]] = {}
        for problem in exc.problems:
            by_layer.setdefault(problem.layer, []).append(problem)
        for layer, problems in by_layer.items():
            for line in format_problems(layer, problems):
                click.echo(shown(line))
        return False
    click.echo(shown(f"  proposals: {len(proposals.ids)} ({listing(proposals.ids)})"))
    for report in proposals.reports.values():
        if isinstance(report, LayerReport):
            for line in format_report(report, working=working, unit=unit):
                click.echo(shown(f"  {line}"))
    return True
