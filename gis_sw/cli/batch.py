"""``gis-sw batch``: screen every parcel of a town (and every pending proposal) in one run."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gis_sw.cli import options
from gis_sw.cli.profile import Profile, profiled
from gis_sw.redact import shown

if TYPE_CHECKING:
    from gis_sw.batch.run import RunOptions, ScreenResult
    from gis_sw.layers.layerset import LayerSet
    from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 5000
"""``--chunk-size`` default: :data:`gis_sw.batch.run.DEFAULT_CHUNK_SIZE` (a test says so)."""
ENGINES = ("local", "dask")
"""``--engine`` values: those of :class:`gis_sw.batch.run.Engine` (a test says so)."""


@click.command(name="batch")
@options.layers_option(exists=True)
@options.out_opt()
@options.proposals_opt(
    "Proposals file: every proposal in it is checked with every rule.", exists=True
)
@options.ruleset_opt
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="Threads screening chunks (shapely releases the GIL); with --engine dask and no "
    "--scheduler, threads of the in-process cluster.",
)
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1),
    default=DEFAULT_CHUNK_SIZE,
    show_default=True,
    help="Parcels per chunk; memory grows with it.",
)
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="local",
    show_default=True,
    help="local: threads on this machine; dask: a Dask cluster.",
)
@click.option("--scheduler", default=None, help="Dask scheduler address (with --engine dask).")
@click.option(
    "--resume", is_flag=True, help="Finish a run that was stopped, redoing only unfinished chunks."
)
@options.overwrite_opt
@click.option("--no-gpkg", is_flag=True, help="Skip parcels.gpkg (GeoParquet only; faster).")
@click.option("--no-map", is_flag=True, help="Skip the overview map.")
@click.option(
    "--quick",
    is_flag=True,
    help="Only zones, threshold, resource areas and nearby counts (no siting areas, "
    "wetland adjacent area or constrained share).",
)
@options.profile_opt
def command(  # noqa: PLR0917  # click passes every option by keyword
    source: Path,
    out_dir: Path,
    proposals_path: Path | None,
    ruleset_name: str | None,
    workers: int,
    chunk_size: int,
    engine: str,
    scheduler: str | None,
    resume: bool,
    overwrite: bool,
    no_gpkg: bool,
    no_map: bool,
    quick: bool,
    profile: bool,
) -> None:
    """Screen every parcel of a town: zones, permit threshold, resources, siting room.

    Writes parcels.parquet / parcels.gpkg, summary.csv, problems.csv, the overview map and,
    with --proposals, findings.parquet / .gpkg / .geojson into OUT, with the parts --resume
    finishes from.  Progress goes to stderr
    when it is a terminal.  Like `check`, an existing output needs --overwrite; no output is
    ever written over an input (docs/outputs.md).
    """
    with profiled(profile) as prof:
        from gis_sw.batch.fingerprint import input_files
        from gis_sw.batch.inputs import BATCH_KINDS, read_town
        from gis_sw.batch.resume import PartStore
        from gis_sw.batch.run import Engine, RunOptions
        from gis_sw.batch.write import planned_batch_outputs, write_batch_outputs
        from gis_sw.layers.manifest import resolve_source
        from gis_sw.outputs.atomic import (
            check_all_writable,
            clean_stale_temps,
            input_identities,
            refuse_inputs,
        )
        from gis_sw.ruleset import load_ruleset

        prof.imported(*(["gis_sw.analysis.engine"] if proposals_path is not None else []))
        ruleset = load_ruleset(ruleset_name)
        formats = ("parquet",) if no_gpkg else ("parquet", "gpkg")
        planned = [
            out_dir / name
            for name in planned_batch_outputs(
                findings=proposals_path is not None, formats=formats, overview=not no_map
            )
        ]
        store = PartStore.in_output(out_dir)
        if resume:
            store.refuse_damaged(overwrite=overwrite)
        # a resumed run may replace what the interrupted run itself began to publish
        replace = overwrite or (resume and store.publishing())
        files = input_files(
            resolve_source(source),
            ruleset=ruleset,
            proposals=proposals_path,
            kinds=None if proposals_path is not None else BATCH_KINDS,
        )
        refuse_inputs(
            [*planned, store.manifest_path, store.journal_path, *store.own_files()],
            input_identities(files),
        )
        check_all_writable(planned, overwrite=replace)  # after the inputs: --overwrite can't
        clean_stale_temps(out_dir, [p.name for p in planned])
        prof.mark("plan")
        layers = read_town(source, ruleset=ruleset, everything=proposals_path is not None)
        proposals = None
        if proposals_path is not None:
            from gis_sw.layers.read import read_proposals

            # like `gis-sw check`: a proposals file without a CRS is refused, never assumed
            proposals = read_proposals(proposals_path, ruleset=ruleset)
        prof.mark("read")
        run_options = RunOptions(
            chunk_size=chunk_size,
            workers=workers,
            engine=Engine(engine),
            scheduler=scheduler,
            quick=quick,
        )
        result = _screen(
            layers,
            ruleset,
            out_dir,
            run_options,
            resume=resume,
            overwrite=overwrite,
            proposals=proposals_path,
            files=files,
        )
        prof.mark("screen")
        rules: dict[str, Any] = {"overview": not no_map}
        if proposals is not None:
            from gis_sw.analysis.engine import run_rules

            rules = {
                "findings": run_rules(layers, proposals, ruleset),
                "disturbance": proposals.disturbance,
            }
            prof.mark("rules")
        store.mark_publishing()
        written = write_batch_outputs(
            out_dir, result, layers, ruleset, overwrite=replace, formats=formats, **rules
        )
        prof.mark("write")
        _report(result, layers, prof)
        for name, path in written.items():
            click.echo(f"{name}\t{path}")


def _screen(
    layers: LayerSet, ruleset: Ruleset, out_dir: Path, run_options: RunOptions, **kwargs: Any
) -> ScreenResult:
    """Screen the chunks into the part store, a progress bar on stderr when it is a terminal.

    ``kwargs`` are those of :func:`gis_sw.batch.run.run_chunks_to_store`.
    """
    from gis_sw.batch.run import ChunkPlan, run_chunks_to_store

    bar = None

    def on_plan(plan: ChunkPlan) -> None:
        nonlocal bar
        if sys.stderr.isatty():
            from tqdm import tqdm

            width = shutil.get_terminal_size((80, 24)).columns  # 80 when the tty says 0
            bar = tqdm(
                total=plan.n_chunks, unit="chunk", desc="screening", file=sys.stderr, ncols=width
            )

    def progress(n: int) -> None:
        if bar is not None:
            bar.update(n)

    try:
        return run_chunks_to_store(
            layers,
            ruleset,
            out_dir,
            options=run_options,
            progress=progress,
            on_plan=on_plan,
            **kwargs,
        )
    finally:
        if bar is not None:
            bar.close()


def _report(result: ScreenResult, layers: LayerSet, prof: Profile) -> None:
    """Print on stderr the run's speed and stages, recomputed parts and layer problems."""
    from gis_sw.batch.resume import part_name
    from gis_sw.batch.write import missing_layers_note

    stages = {k: v for k, v in prof.stages.items() if k not in ("import", "plan")}
    elapsed = sum(v for k, v in prof.stages.items() if k != "import")
    n = len(result.rows)
    rate = n / max(elapsed, 1e-9)
    click.echo(
        f"screened {n} parcels in {result.plan.n_chunks} chunks ({result.chunks_run} run now) "
        f"in {elapsed:.1f} s ({rate:,.0f} parcels/s; "
        + ", ".join(f"{name} {secs:.1f} s" for name, secs in stages.items())
        + ")",
        err=True,
    )
    for chunk_id, why in sorted(result.recomputed.items()):
        click.echo(f"part {part_name(chunk_id)} of the interrupted run {why}: recomputed", err=True)
    problems = result.prepared.summary()
    if problems:
        click.echo(shown(f"parcel layer problems: {problems}"), err=True)
    missing = missing_layers_note(result, layers)
    if missing:
        click.echo(missing, err=True)
