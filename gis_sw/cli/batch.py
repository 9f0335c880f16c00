"""``gis-sw batch``: screen every parcel of a town (and every pending proposal) in one run."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gis_sw.cli import options
from gis_sw.cli.profile import profiled
from gis_sw.redact import shown

if TYPE_CHECKING:
    from gis_sw.batch.api import BatchRun
    from gis_sw.batch.run import ChunkPlan

log = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 5000
"""``--chunk-size`` default: :data:`gis_sw.batch.run.DEFAULT_CHUNK_SIZE` (a test says so)."""
ENGINES = ("local", "dask")
"""``--engine`` values: those of :class:`gis_sw.batch.run.Engine` (a test says so)."""
PARALLEL = ("processes", "threads")
"""``--parallel`` values: those of :class:`gis_sw.batch.run.Parallel` (a test says so)."""


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
    help="Chunks screened at once: worker processes or threads (see --parallel); with "
    "--engine dask and no --scheduler, the workers of the local cluster.",
)
@click.option(
    "--parallel",
    type=click.Choice(PARALLEL),
    default="processes",
    show_default=True,
    help="How --workers run (local engine): processes, forked with the layers inherited "
    "(Linux; threads elsewhere), or threads (shapely releases the GIL, the Python between "
    "GEOS calls does not).",
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
    help="local: worker processes (or threads, --parallel) on this machine; dask: a Dask "
    "cluster (without --scheduler, a local one of --workers processes).",
)
@click.option("--scheduler", default=None, help="Dask scheduler address (with --engine dask).")
@click.option(
    "--resume", is_flag=True, help="Finish a run that was stopped, redoing only unfinished chunks."
)
@options.overwrite_opt
@click.option("--no-gpkg", is_flag=True, help="Skip parcels.gpkg (GeoParquet only; faster).")
@click.option("--no-map", is_flag=True, help="Skip the overview map.")
@click.option(
    "--stream",
    is_flag=True,
    help="Spill the layers to disk in spatial row groups and screen and write chunk by "
    "chunk: memory set by --chunk-size, not the town (rows in chunk order; not with "
    "--proposals).",
)
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
    parallel: str,
    chunk_size: int,
    engine: str,
    scheduler: str | None,
    resume: bool,
    overwrite: bool,
    no_gpkg: bool,
    no_map: bool,
    stream: bool,
    quick: bool,
    profile: bool,
) -> None:
    """Screen every parcel of a town: zones, permit threshold, resources, siting room.

    Writes parcels.parquet / parcels.gpkg, summary.csv, problems.csv, the overview map and,
    with --proposals, findings.parquet / .gpkg / .geojson into OUT, with the parts --resume
    finishes from.  Progress goes to stderr when it is a terminal.  Like `check`, an
    existing output needs --overwrite; no output is ever written over an input
    (docs/outputs.md).  The run is :func:`gis_sw.screen_town`.
    """
    with profiled(profile) as prof:
        from gis_sw.batch.api import screen_town

        prof.imported(*(["gis_sw.analysis.engine"] if proposals_path is not None else []))
        bar = None

        def on_plan(plan: ChunkPlan) -> None:
            nonlocal bar
            if sys.stderr.isatty():
                from tqdm import tqdm

                # no monitor thread: worker processes are forked only where no other
                # thread runs (gis_sw.batch.forked)
                tqdm.monitor_interval = 0
                width = shutil.get_terminal_size((80, 24)).columns  # 80 when the tty says 0
                bar = tqdm(
                    total=plan.n_chunks,
                    unit="chunk",
                    desc="screening",
                    file=sys.stderr,
                    ncols=width,
                )

        def progress(n: int) -> None:
            if bar is not None:
                bar.update(n)

        try:
            run = screen_town(
                source,
                out_dir,
                proposals=proposals_path,
                ruleset=ruleset_name,
                workers=workers,
                parallel=parallel,
                chunk_size=chunk_size,
                engine=engine,
                scheduler=scheduler,
                stream=stream,
                quick=quick,
                resume=resume,
                overwrite=overwrite,
                gpkg=not no_gpkg,
                overview=not no_map,
                progress=progress,
                on_plan=on_plan,
            )
        finally:
            if bar is not None:
                bar.close()
        prof.split("plan", run.stages)
        _report(run)


def _report(run: BatchRun) -> None:
    """Print on stderr the run's speed and stages, recomputed parts and layer problems."""
    from gis_sw.batch.resume import part_name

    elapsed = sum(run.stages.values())
    rate = run.parcels / max(elapsed, 1e-9)
    click.echo(
        f"screened {run.parcels} parcels in {run.chunks} chunks ({run.chunks_run} run now) "
        f"in {elapsed:.1f} s ({rate:,.0f} parcels/s; "
        + ", ".join(f"{name} {secs:.1f} s" for name, secs in run.stages.items())
        + ")",
        err=True,
    )
    for chunk_id, why in sorted(run.recomputed.items()):
        click.echo(f"part {part_name(chunk_id)} of the interrupted run {why}: recomputed", err=True)
    if run.problems:
        click.echo(shown(f"parcel layer problems: {run.problems}"), err=True)
    if run.missing_note:
        click.echo(run.missing_note, err=True)
    for name, path in run.written.items():
        click.echo(f"{name}\t{path}")
