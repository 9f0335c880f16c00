"""A batch run into part files: hash the inputs, open the part store, screen into it.

:func:`run_chunks_to_store` is what ``gis-sw batch`` and :func:`gis_sw.screen_town` run
for a whole (not streamed) town: the layers are hashed for the resume manifest and the
context layers cut and indexed on threads while the chunks are planned, the part store is
opened (a resume keeps what an earlier run of the same inputs finished), and the chunks
are screened by :func:`gis_sw.batch.run.screen_layers`, each one's rows written as a
part as it comes back.  :func:`start_store` opens the store for the streamed run too.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from gis_sw.batch.chunks import ChunkPlan, ChunkSource, ContextIndex
from gis_sw.batch.fingerprint import layer_hashes_of, run_fingerprint
from gis_sw.batch.prepare import PreparedParcels
from gis_sw.batch.resume import PartStore, Resumed
from gis_sw.batch.run import (
    Engine,
    Progress,
    RunOptions,
    ScreenResult,
    context_index,
    memory_source,
    plan_for,
    screen_layers,
    streams,
)
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

if TYPE_CHECKING:
    from gis_sw.batch.dask_engine import Cluster

log = logging.getLogger(__name__)


def start_store(
    out_dir: Path,
    fingerprint: Mapping[str, object],
    plan: ChunkPlan,
    *,
    resume: bool,
    overwrite: bool,
    on_plan: Callable[[ChunkPlan], None] | None = None,
) -> tuple[PartStore, Resumed]:
    """Open the part store of ``out_dir`` for a run (what a resume keeps), then ``on_plan``.

    Raises
    ------
    OutputError
        When earlier parts are in the way, or a resume meets a different run or a manifest
        it cannot read (see :meth:`PartStore.start`).
    """
    store = PartStore.in_output(out_dir)
    found = store.start(dict(fingerprint), resume=resume, overwrite=overwrite, rows_of=plan.rows)
    if on_plan:
        on_plan(plan)
    log.info(
        "%d parcels in %d chunks of %d (%d already done)",
        len(plan.order),
        plan.n_chunks,
        plan.chunk_size,
        len(found.done),
    )
    return store, found


def run_chunks_to_store(
    layers: LayerSet,
    ruleset: Ruleset,
    out_dir: Path,
    *,
    options: RunOptions,
    resume: bool,
    overwrite: bool,
    proposals: str | Path | None = None,
    files: Mapping[str, Path] | None = None,
    progress: Progress | None = None,
    on_plan: Callable[[ChunkPlan], None] | None = None,
) -> ScreenResult:
    """Screen into part files under ``out_dir/parts``, resuming a killed run if asked.

    ``files`` (description to path, :func:`gis_sw.batch.fingerprint.input_files`) and
    ``proposals`` go into the resume manifest with the layers as read, so ``--resume``
    refuses to continue when any of them changed.

    Raises
    ------
    OutputError
        When earlier parts are in the way, or a resume meets a different run or a manifest
        it cannot read (see :meth:`PartStore.start`).
    """
    starting: Future[Cluster] | None = None
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="gis-sw-source") as early:
        # neither needs the chunk plan: the layers are hashed and the context layers cut
        # and indexed (big polygons cut, trees built: GEOS work without the GIL) while
        # this thread plans the chunks; none of them changes a layer or prepares a geometry
        hashing = early.submit(layer_hashes_of, layers)
        indexing = None if streams(options) else early.submit(context_index, layers, options)
        prepared, plan = plan_for(layers, ruleset, chunk_size=options.chunk_size)
        building = (
            None
            if indexing is None
            else early.submit(_source_when_indexed, layers, prepared, plan, options, indexing)
        )
        if options.engine == Engine.DASK and building is not None and not options.scheduler:
            # meanwhile too: import distributed (0.4 to 0.9 s), then start the local
            # cluster as soon as the source its workers inherit is built
            starting = early.submit(_start_cluster, building, options)
        try:
            store, found = _fingerprint_and_store(
                layers,
                ruleset,
                out_dir,
                plan,
                options,
                resume,
                overwrite,
                proposals,
                files,
                on_plan,
                hashing.result(),
            )
            built = building.result() if building is not None else None
            cluster = starting.result() if starting is not None else None
        except BaseException:
            if starting is not None and starting.exception() is None:
                starting.result().close()
            raise
    return screen_layers(
        layers,
        ruleset,
        options=options,
        store=store,
        done=found.done,
        progress=progress,
        prepared_plan=(prepared, plan),
        recomputed=found.damaged,
        built=built,
        cluster=cluster,
    )


def _source_when_indexed(
    layers: LayerSet,
    prepared: PreparedParcels,
    plan: ChunkPlan,
    options: RunOptions,
    indexing: Future[ContextIndex],
) -> ChunkSource:
    """Return the memory chunk source once its context index is built (costs counted)."""
    source = memory_source(layers, prepared, plan, options, indexing.result())
    source.costs()  # here, beside the hashing, not on the way to the fork
    return source


def _start_cluster(building: Future[ChunkSource], options: RunOptions) -> Cluster:
    """Import distributed, start the local cluster, its workers once the source is built."""
    importlib.import_module("dask.distributed")
    from gis_sw.batch.dask_engine import start_local

    return start_local(building, options)


def _fingerprint_and_store(  # noqa: PLR0917  # the run's options, passed through
    layers: LayerSet,
    ruleset: Ruleset,
    out_dir: Path,
    plan: ChunkPlan,
    options: RunOptions,
    resume: bool,
    overwrite: bool,
    proposals: str | Path | None,
    files: Mapping[str, Path] | None,
    on_plan: Callable[[ChunkPlan], None] | None,
    layer_hashes: Mapping[str, str] | None = None,
) -> tuple[PartStore, Resumed]:
    """Hash the run's inputs and open its part store (what a resume keeps).

    ``layer_hashes`` are the layers' hashes when they were taken already
    (:func:`gis_sw.batch.fingerprint.layer_hashes_of`).
    """
    fingerprint = run_fingerprint(
        layers,
        ruleset,
        files=files or {},
        proposals=Path(proposals) if proposals is not None else None,
        chunk_size=plan.chunk_size,
        quick=options.quick,
        halo_ft=plan.halo_ft,
        chunks=plan.fingerprints,
        layer_hashes=layer_hashes,
    )
    store, found = start_store(
        out_dir, fingerprint, plan, resume=resume, overwrite=overwrite, on_plan=on_plan
    )
    return store, found
