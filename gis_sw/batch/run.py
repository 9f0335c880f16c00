"""The batch driver: plan chunks, screen them in worker processes, threads or on Dask.

The local engine forks ``workers`` processes that inherit the layers and the chunk plan
(:mod:`gis_sw.batch.forked`): each screens one chunk at a time and sends back its rows,
figures without geometry.  Threads (``parallel="threads"``, and the fallback where a fork
is not possible) reach about 1.7x on 2 cores: shapely releases the GIL inside GEOS calls,
but the numpy and pandas work between them holds it; forked processes have no GIL to share
(measured at 100,000 parcels, docs/batch.md).  DESIGN.md's process pools lost to threads
because they serialised geometries on the way in; a fork serialises none.  At most
``2 * workers`` chunks are in flight on threads and one per worker process, so memory is
bounded by the chunk size, not the size of the town.

The library shows no progress bar itself: pass ``progress`` (called with the number of
chunks finished since the last call) and the CLI drives tqdm with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING

import geopandas as gpd
import numpy as np
import pandas as pd

from gis_sw.batch.chunks import (
    CONTEXT_KINDS,
    ChunkPlan,
    ChunkSource,
    ContextIndex,
    halo_ft,
    index_context,
    plan_chunks,
)
from gis_sw.batch.coverage import coverage_context
from gis_sw.batch.parcels import RESULT_COLUMNS, screen_chunk
from gis_sw.batch.prepare import PreparedParcels, prepare_parcels
from gis_sw.batch.resume import PartStore
from gis_sw.errors import LayerError, Problem
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

if TYPE_CHECKING:
    from gis_sw.batch.dask_engine import Cluster
    from gis_sw.batch.stream import DiskChunkSource

log = logging.getLogger(__name__)

Progress = Callable[[int], None]
DEFAULT_CHUNK_SIZE = 5000


class Engine(StrEnum):
    """Where chunks are screened: local threads or a Dask cluster."""

    LOCAL = "local"
    DASK = "dask"


class Parallel(StrEnum):
    """How the local engine runs ``workers`` chunks at once."""

    PROCESSES = "processes"
    """Forked worker processes inheriting the layers (:mod:`gis_sw.batch.forked`); threads
    where a fork is not possible (not Linux, or other threads running)."""
    THREADS = "threads"
    """Threads of this process (shapely releases the GIL inside GEOS calls)."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run the chunks.

    Attributes
    ----------
    chunk_size
        Parcels per chunk.
    workers
        Chunks screened at once: worker processes or threads (local engine, see
        ``parallel``), or workers of the local Dask cluster.
    parallel
        Local engine: ``processes`` (forked, the default; threads where a fork is not
        possible) or ``threads``.
    engine
        ``local`` or ``dask``.
    scheduler
        Address of a running Dask scheduler (``tcp://host:8786``); None starts a local
        cluster of ``workers`` forked processes (in-process threads where there is no fork).
    quick
        Only zones, threshold, resource areas and nearby counts (see
        :func:`gis_sw.batch.parcels.screen_chunk`).
    stream
        Read each chunk's inputs from layers spilled to disk in spatial row groups
        (:mod:`gis_sw.batch.stream`) instead of from whole layers in memory.  The Dask
        engine with a ``scheduler`` always does (it sends workers paths and envelopes,
        not frames).
    spill_dir
        Where the spilled layers go (a temporary folder inside it, removed at the end);
        None: the system's temporary folder.  With a Dask scheduler on other machines it
        must be a folder every worker can read.
    """

    chunk_size: int = DEFAULT_CHUNK_SIZE
    workers: int = 2
    parallel: Parallel = Parallel.PROCESSES
    engine: Engine = Engine.LOCAL
    scheduler: str | None = None
    quick: bool = False
    stream: bool = False
    spill_dir: Path | None = None


@dataclass(frozen=True, slots=True, eq=False)
class ScreenResult:
    """Per-parcel rows of a whole layer, and what was wrong with the layer."""

    rows: pd.DataFrame
    prepared: PreparedParcels
    plan: ChunkPlan
    chunks_run: int
    recomputed: Mapping[int, str] = field(default_factory=dict)
    """Parts of an interrupted run found damaged and screened again (chunk id to why)."""


def plan_for(
    layers: LayerSet, ruleset: Ruleset, *, chunk_size: int
) -> tuple[PreparedParcels, ChunkPlan]:
    """Check the parcels and cut them into chunks.

    Raises
    ------
    LayerError
        If the layer set has no parcels layer.
    """
    parcels = layers.get("parcels")
    if parcels is None:
        raise LayerError(
            Problem("parcels", "no parcels layer was provided", "add a 'parcels' layer")
        )
    prepared = prepare_parcels(parcels)
    plan = plan_chunks(
        prepared.parcels.geometry,
        chunk_size=chunk_size,
        halo_ft=halo_ft(ruleset),
        skip=~prepared.screened,
    )
    return prepared, plan


def _context(layers: LayerSet) -> dict[str, gpd.GeoDataFrame | None]:
    context = {kind: layers.get(kind) for kind in CONTEXT_KINDS}
    context.update(coverage_context(layers))  # layers mapping part of the town (realdata)
    return context


def screen_layers(
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    options: RunOptions | None = None,
    store: PartStore | None = None,
    done: Iterable[int] = (),
    progress: Progress | None = None,
    prepared_plan: tuple[PreparedParcels, ChunkPlan] | None = None,
    recomputed: Mapping[int, str] | None = None,
    built: ChunkSource | None = None,
    cluster: Cluster | None = None,
) -> ScreenResult:
    """Screen every parcel of ``layers``.

    With ``store``, each chunk's rows are written as a part as soon as it is finished and
    chunks in ``done`` are skipped (resume); the rows are read back from the parts (each as
    soon as it is written, the resumed ones at the end).  Without it, rows are kept in
    memory.  ``built`` is the chunk source of ``prepared_plan`` when it was built already
    (:func:`gis_sw.batch.run_store.run_chunks_to_store` builds it while it hashes the
    layers); a streamed run ignores it.  ``cluster`` is the local Dask cluster started for
    ``built`` (:func:`gis_sw.batch.dask_engine.connect`); it is closed when the run ends.

    Raises
    ------
    LayerError
        If there is no parcels layer.
    """
    options = options or RunOptions()
    prepared, plan = prepared_plan or plan_for(layers, ruleset, chunk_size=options.chunk_size)
    kept: dict[int, pd.DataFrame] = {}

    def finish(chunk_id: int, rows: pd.DataFrame) -> None:
        # with a store, the part just written is read back now, while the workers screen
        # on: the same frame the end would read, off the run's tail
        kept[chunk_id] = rows if store is None else store.read_part(chunk_id, plan.rows)
        if progress:
            progress(1)

    todo = todo_chunks(plan, done, progress)
    with ExitStack() as stack:
        source: ChunkSource | DiskChunkSource
        if streams(options):
            from gis_sw.batch.stream_run import spill_layerset

            folder = Path(
                stack.enter_context(TemporaryDirectory(prefix=SPILL_PREFIX, dir=options.spill_dir))
            )
            source = spill_layerset(layers, prepared, plan, folder)
        else:
            source = built or memory_source(layers, prepared, plan, options)
        if cluster is not None:
            stack.callback(cluster.close)  # closed here if not by the engine
        run_source(source, todo, ruleset, saving(store, finish), options=options, cluster=cluster)
    if store is not None:
        rows = store.read_all(plan.n_chunks, plan.rows, read=kept)
    elif kept:
        rows = pd.concat([kept[i] for i in sorted(kept)], ignore_index=True)
        rows = rows.sort_values("row", kind="stable").reset_index(drop=True)
    else:
        rows = pd.DataFrame({c: [] for c in RESULT_COLUMNS})
    return ScreenResult(
        rows=rows,
        prepared=prepared,
        plan=plan,
        chunks_run=len(todo),
        recomputed=dict(recomputed or {}),
    )


def streams(options: RunOptions) -> bool:
    """Return True when the run reads its chunks from layers spilled to disk."""
    return bool(options.stream or (options.engine == Engine.DASK and options.scheduler))


def memory_source(
    layers: LayerSet,
    prepared: PreparedParcels,
    plan: ChunkPlan,
    options: RunOptions,
    index: ContextIndex | None = None,
) -> ChunkSource:
    """Return the chunk source of whole layers in memory (big polygons cut on the workers).

    ``index`` is the context of ``layers`` cut and indexed already (:func:`context_index`).
    """
    if index is not None:
        return ChunkSource(prepared.parcels, {}, plan, workers=options.workers, index=index)
    return ChunkSource(prepared.parcels, _context(layers), plan, workers=options.workers)


def context_index(layers: LayerSet, options: RunOptions) -> ContextIndex:
    """Return the context layers of ``layers`` cut and indexed for a memory chunk source."""
    return index_context(_context(layers), workers=options.workers)


SPILL_PREFIX = ".gis-sw-spill-"
"""Name start of the folders a streamed run spills layers into (removed at the end)."""


def todo_chunks(plan: ChunkPlan, done: Iterable[int], progress: Progress | None) -> list[int]:
    """Return the chunks still to screen (reporting the ``done`` ones to ``progress``)."""
    done_set = set(done)
    if progress and done_set:
        progress(len(done_set))
    return [i for i in range(plan.n_chunks) if i not in done_set]


Finish = Callable[[int, pd.DataFrame], None]


def saving(store: PartStore | None, finish: Finish) -> Finish:
    """Return ``finish``, after writing each chunk's rows as a part when there is a store."""
    if store is None:
        return finish

    def save(chunk_id: int, rows: pd.DataFrame) -> None:
        store.write(chunk_id, rows)
        finish(chunk_id, rows)

    return save


def run_source(
    source: ChunkSource | DiskChunkSource,
    todo: list[int],
    ruleset: Ruleset,
    finish: Finish,
    *,
    options: RunOptions,
    cluster: Cluster | None = None,
) -> None:
    """Screen the chunks ``todo`` of ``source`` on the engine of ``options``.

    ``finish(chunk_id, rows)`` is called on this thread as each chunk completes; a Dask
    run uses ``cluster`` when one was started for ``source`` already.
    """
    if options.engine == Engine.DASK:
        from gis_sw.batch.dask_engine import run_on_dask

        run_on_dask(source, todo, ruleset, finish, options=options, cluster=cluster)
    else:
        _run_local(source, todo, ruleset, finish, options=options)


def uses_processes(options: RunOptions, n_chunks: int) -> bool:
    """Return True when the local engine will fork worker processes for ``n_chunks``."""
    from gis_sw.batch.children import fork_ready

    return (
        options.engine == Engine.LOCAL
        and options.parallel == Parallel.PROCESSES
        and options.workers > 1
        and n_chunks > 1
        and fork_ready()
    )


def _run_local(
    source: ChunkSource | DiskChunkSource,
    todo: list[int],
    ruleset: Ruleset,
    finish: Callable[[int, pd.DataFrame], None],
    *,
    options: RunOptions,
) -> None:
    """Screen ``todo`` here: one by one, in forked processes, or on threads."""
    workers, quick = options.workers, options.quick

    def task(chunk_id: int) -> pd.DataFrame:
        return screen_chunk(source.chunk(chunk_id), ruleset, quick=quick)

    if workers <= 1 or len(todo) <= 1:
        for chunk_id in todo:
            finish(chunk_id, task(chunk_id))
        return
    todo = costliest_first(source, todo)
    if uses_processes(options, len(todo)):
        from gis_sw.batch.forked import run_forked

        run_forked(task, todo, finish, workers=workers)
        return
    if options.parallel == Parallel.PROCESSES:
        log.info("no fork here (not Linux, or other threads running): screening on threads")
    _run_threads(task, todo, finish, workers=workers)


def costliest_first(source: ChunkSource | DiskChunkSource, todo: list[int]) -> list[int]:
    """Return ``todo`` with the costliest chunks first (:meth:`ChunkSource.costs`).

    So the last chunks are the cheapest and the workers end together: the run's tail,
    one worker idle while another finishes a big chunk, is as short as it can be.  Chunks
    of equal cost keep the plan's order; a source without an estimate keeps it too.
    The order of the work changes no figure: rows are put back in parcel order.
    """
    if not isinstance(source, ChunkSource) or len(todo) < 2:
        return list(todo)
    cost = source.costs()[np.asarray(todo, dtype=np.int64)]
    ranked = np.argsort(-cost, kind="stable")
    return [todo[i] for i in ranked]


def _run_threads(
    task: Callable[[int], pd.DataFrame],
    todo: list[int],
    finish: Callable[[int, pd.DataFrame], None],
    *,
    workers: int,
) -> None:
    pending: dict[Future[pd.DataFrame], int] = {}
    queue = list(reversed(todo))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gis-sw-batch") as pool:
        while queue or pending:
            while queue and len(pending) < 2 * workers:
                chunk_id = queue.pop()
                pending[pool.submit(task, chunk_id)] = chunk_id
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                chunk_id = pending.pop(future)
                finish(chunk_id, future.result())


def rows_equal(left: pd.DataFrame, right: pd.DataFrame) -> bool:
    """Return True when two result tables hold the same figures (NaN equal to NaN)."""
    if list(left.columns) != list(right.columns) or len(left) != len(right):
        return False
    for column in left.columns:
        a, b = left[column].to_numpy(), right[column].to_numpy()
        if a.dtype.kind == "f" and b.dtype.kind == "f":
            if not np.array_equal(a, b, equal_nan=True):
                return False
        elif not pd.Series(a).equals(pd.Series(b)):
            return False
    return True


_MOVED = {"run_chunks_to_store", "start_store"}
"""Names that lived here until issue 16 split the module: now in :mod:`gis_sw.batch.run_store`."""


def __getattr__(name: str) -> object:
    """Return the names moved to :mod:`gis_sw.batch.run_store` (old imports keep working)."""
    if name in _MOVED:
        from gis_sw.batch import run_store

        return getattr(run_store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
