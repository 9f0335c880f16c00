"""``gis_sw.screen_town``: the townwide batch as one function (what ``gis-sw batch`` runs)."""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gis_sw.batch.chunks import ChunkPlan
from gis_sw.batch.fingerprint import input_files
from gis_sw.batch.inputs import BATCH_KINDS
from gis_sw.batch.resume import PartStore
from gis_sw.batch.run import DEFAULT_CHUNK_SIZE, SPILL_PREFIX, Engine, Parallel, RunOptions
from gis_sw.batch.write import planned_batch_outputs
from gis_sw.errors import GisSwError
from gis_sw.outputs.atomic import (
    check_all_writable,
    clean_stale_temps,
    input_identities,
    refuse_inputs,
)
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, eq=False)
class BatchRun:
    """What :func:`screen_town` did.

    Attributes
    ----------
    written
        Output name (``parcels.parquet``, ``summary.csv`` ...) to its path.
    parcels
        Parcels screened (one per group of identical geometries).
    chunks, chunks_run
        Chunks in the plan, and chunks screened by this call (fewer on ``resume``).
    stages
        Seconds per stage: ``read``, ``screen``, ``rules`` (with proposals), ``write``.
    recomputed
        Parts of an interrupted run found damaged and screened again (chunk id to why).
    problems
        One line on the parcel layer's repaired, duplicated or empty rows ("" if none).
    missing_note
        What to do about layers not provided that made parcels ``review`` ("" if none).
    streamed
        True when the layers were streamed from disk (``stream=True``).
    """

    written: Mapping[str, Path]
    parcels: int
    chunks: int
    chunks_run: int
    stages: Mapping[str, float] = field(default_factory=dict)
    recomputed: Mapping[int, str] = field(default_factory=dict)
    problems: str = ""
    missing_note: str = ""
    streamed: bool = False


class _Stages:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._tick = time.perf_counter()

    def __call__(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = now - self._tick
        self._tick = now


@dataclass(frozen=True, slots=True)
class _Plan:
    """The checked inputs and outputs of one run, before any layer is read."""

    ruleset: Ruleset
    formats: tuple[str, ...]
    files: Mapping[str, Path]
    store: PartStore
    replace: bool
    """Outputs may be replaced (``overwrite``, or a resume of a run that began to publish)."""
    overview: bool
    overwrite: bool


def _check_outputs(
    layers: str | Path,
    out_dir: Path,
    ruleset: Ruleset,
    *,
    proposals: Path | None,
    formats: tuple[str, ...],
    overview: bool,
    resume: bool,
    overwrite: bool,
) -> _Plan:
    """Refuse outputs over inputs and existing outputs without ``overwrite``."""
    from gis_sw.layers.manifest import resolve_source

    planned = [
        out_dir / name
        for name in planned_batch_outputs(
            findings=proposals is not None, formats=formats, overview=overview
        )
    ]
    store = PartStore.in_output(out_dir)
    if resume:
        store.refuse_damaged(overwrite=overwrite)
    # a resumed run may replace what the interrupted run itself began to publish
    replace = overwrite or (resume and store.publishing())
    files = input_files(
        resolve_source(layers),
        ruleset=ruleset,
        proposals=proposals,
        kinds=None if proposals is not None else BATCH_KINDS,
    )
    refuse_inputs(
        [*planned, store.manifest_path, store.journal_path, *store.own_files()],
        input_identities(files),
    )
    check_all_writable(planned, overwrite=replace)  # after the inputs: no --overwrite fixes those
    clean_stale_temps(out_dir, [p.name for p in planned])
    return _Plan(
        ruleset=ruleset,
        formats=formats,
        files=files,
        store=store,
        replace=replace,
        overview=overview,
        overwrite=overwrite,
    )


def screen_town(
    layers: str | Path,
    out: str | Path,
    *,
    proposals: str | Path | None = None,
    ruleset: Ruleset | str | Path | None = None,
    workers: int = 2,
    parallel: Parallel | str = Parallel.PROCESSES,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    engine: Engine | str = Engine.LOCAL,
    scheduler: str | None = None,
    stream: bool = False,
    quick: bool = False,
    resume: bool = False,
    overwrite: bool = False,
    gpkg: bool = True,
    overview: bool = True,
    progress: Callable[[int], None] | None = None,
    on_plan: Callable[[ChunkPlan], None] | None = None,
) -> BatchRun:
    """Screen every parcel of a town (and every proposal of a file) and write the outputs.

    The batch of ``gis-sw batch`` (docs/batch.md): the parcels are cut into Hilbert
    chunks, screened on threads or Dask, kept as part files (so ``resume`` finishes a
    killed run), then ``parcels.parquet``, ``parcels.gpkg``, ``problems.csv``,
    ``summary.csv``, ``overview.png`` and, with ``proposals``, the findings are written
    into ``out`` together.

    Parameters
    ----------
    layers
        A layers manifest (``layers.toml``), a GeoPackage or a folder holding
        ``layers.toml``.
    out
        The output folder.
    proposals
        A proposals file: every proposal is checked with every rule.
    ruleset
        A :class:`~gis_sw.ruleset.Ruleset`, a packaged name or a TOML path; None: the
        default.
    workers
        Chunks screened at once (worker processes or threads, see ``parallel``; or the
        workers of the local Dask cluster).
    parallel
        ``"processes"`` (forked, the layers inherited; threads where a fork is not
        possible) or ``"threads"``: how the local engine runs ``workers`` chunks.
    chunk_size
        Parcels per chunk; memory grows with it.
    engine
        ``"local"`` (threads) or ``"dask"``.
    scheduler
        Address of a running Dask scheduler (with ``engine="dask"``).
    stream
        Read the layers one at a time and spill each to disk in spatial row groups, then
        screen and write chunk by chunk (:mod:`gis_sw.batch.stream`): memory is set by
        the chunk size, not the town.  Rows of the parcel outputs are then in chunk
        order.  Not with ``proposals``.
    quick
        Zones, threshold, resource areas and nearby counts only.
    resume
        Finish an interrupted run with the same inputs (only unfinished chunks).
    overwrite
        Replace the outputs and parts of an earlier run.
    gpkg
        Also write ``parcels.gpkg``.
    overview
        Also draw ``overview.png``.
    progress
        Called with the number of chunks finished since the last call.
    on_plan
        Called with the chunk plan before screening starts.

    Returns
    -------
    BatchRun
        What was written and how long each stage took.

    Raises
    ------
    GisSwError
        A subclass naming the file, layer, feature and fix: bad layers or proposals
        (``LayerError``, ``ProposalError``), outputs in the way or over an input, a resume
        of a different run (``OutputError``), ``stream`` with ``proposals``.

    Examples
    --------
    >>> import gis_sw
    >>> run = gis_sw.screen_town("data/sample/layers.toml", "out/batch", overwrite=True)
    >>> run.parcels, sorted(run.written)[:2]  # doctest: +SKIP
    (323, ['overview.png', 'parcels.gpkg'])
    """
    from gis_sw.ruleset import load_ruleset

    if stream and proposals is not None:
        raise GisSwError(
            "stream screens the parcels only: the proposals' rules read whole layers. "
            "Fix: run the proposals without stream (--stream), or the parcels without them."
        )
    rules = ruleset if isinstance(ruleset, Ruleset) else load_ruleset(ruleset)
    out_dir = Path(out)
    plan = _check_outputs(
        layers,
        out_dir,
        rules,
        proposals=Path(proposals) if proposals is not None else None,
        formats=("parquet", "gpkg") if gpkg else ("parquet",),
        overview=overview,
        resume=resume,
        overwrite=overwrite,
    )
    options = RunOptions(
        chunk_size=chunk_size,
        workers=workers,
        parallel=Parallel(parallel),
        engine=Engine(engine),
        scheduler=scheduler,
        quick=quick,
        stream=stream,
        spill_dir=out_dir,
    )
    hooks = (progress, on_plan)
    if stream:
        return _streamed(layers, out_dir, plan, options, resume=resume, hooks=hooks)
    return _whole(layers, out_dir, plan, options, proposals, resume=resume, hooks=hooks)


Hooks = tuple[Callable[[int], None] | None, Callable[[ChunkPlan], None] | None]


def _whole(
    source: str | Path,
    out_dir: Path,
    plan: _Plan,
    options: RunOptions,
    proposals: str | Path | None,
    *,
    resume: bool,
    hooks: Hooks,
) -> BatchRun:
    """Return the run with the layers read whole (and the proposals' rules, if any)."""
    from gis_sw.batch.inputs import read_town
    from gis_sw.batch.run_store import run_chunks_to_store
    from gis_sw.batch.write import missing_layers_note, write_batch_outputs

    stage = _Stages()
    if plan.overview:
        from gis_sw.batch.tail import TailWork, importer
        from gis_sw.batch.write import OVERVIEW_MODULE

        # the core the screen's last chunk leaves idle imports the map's module, which
        # the write stage's drawing child then inherits
        tail = TailWork(
            importer(OVERVIEW_MODULE), workers=options.workers, progress=hooks[0], on_plan=hooks[1]
        )
        hooks = (tail.progress, tail.on_plan)
    layers = read_town(source, ruleset=plan.ruleset, everything=proposals is not None)
    read = None
    if proposals is not None:
        from gis_sw.layers.read import read_proposals

        # like `gis-sw check`: a proposals file without a CRS is refused, never assumed
        read = read_proposals(Path(proposals), ruleset=plan.ruleset)
    stage("read")
    result = run_chunks_to_store(
        layers,
        plan.ruleset,
        out_dir,
        options=options,
        resume=resume,
        overwrite=plan.overwrite,
        proposals=proposals,
        files=plan.files,
        progress=hooks[0],
        on_plan=hooks[1],
    )
    stage("screen")
    findings = disturbance = None
    if read is not None:
        from gis_sw.analysis.engine import run_rules

        findings = run_rules(layers, read, plan.ruleset)
        disturbance = read.disturbance
        stage("rules")
    plan.store.mark_publishing()
    written = write_batch_outputs(
        out_dir,
        result,
        layers,
        plan.ruleset,
        findings=findings,
        disturbance=disturbance,
        overwrite=plan.replace,
        formats=plan.formats,
        overview=plan.overview,
    )
    stage("write")
    return BatchRun(
        written=written,
        parcels=len(result.rows),
        chunks=result.plan.n_chunks,
        chunks_run=result.chunks_run,
        stages=stage.seconds,
        recomputed=result.recomputed,
        problems=result.prepared.summary(),
        missing_note=missing_layers_note(result, layers),
    )


def _remove_stale_spills(out_dir: Path) -> None:
    """Spill folders a killed streamed run left in ``out_dir`` (named by us only)."""
    if out_dir.is_dir():
        for path in out_dir.glob(f"{SPILL_PREFIX}*"):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)


def _streamed(
    source: str | Path,
    out_dir: Path,
    plan: _Plan,
    options: RunOptions,
    *,
    resume: bool,
    hooks: Hooks,
) -> BatchRun:
    """Return the run with the layers spilled to disk and everything done chunk by chunk."""
    from tempfile import TemporaryDirectory

    from gis_sw.batch.stream_run import read_streamed, run_streamed_to_store
    from gis_sw.batch.stream_write import write_streamed_outputs
    from gis_sw.batch.write import missing_note

    stage = _Stages()
    out_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_spills(out_dir)
    with TemporaryDirectory(prefix=SPILL_PREFIX, dir=out_dir) as folder:
        town = read_streamed(
            source,
            ruleset=plan.ruleset,
            folder=Path(folder),
            chunk_size=options.chunk_size,
            workers=options.workers,
        )
        stage("read")
        run = run_streamed_to_store(
            town,
            plan.ruleset,
            out_dir,
            options=options,
            resume=resume,
            overwrite=plan.overwrite,
            files=plan.files,
            progress=hooks[0],
            on_plan=hooks[1],
        )
        stage("screen")
        plan.store.mark_publishing()
        written, summary = write_streamed_outputs(
            out_dir,
            run,
            plan.ruleset,
            overwrite=plan.replace,
            formats=plan.formats,
            overview=plan.overview,
        )
        stage("write")
    return BatchRun(
        written=written,
        parcels=len(town.plan.order),
        chunks=town.plan.n_chunks,
        chunks_run=run.chunks_run,
        stages=stage.seconds,
        recomputed=run.recomputed,
        problems=town.prepared.summary(),
        missing_note=missing_note(town.layers, summary),
        streamed=True,
    )
