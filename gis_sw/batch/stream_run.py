"""A streamed batch run: read and spill the town layer by layer, screen chunks from disk.

:func:`read_streamed` reads the layers a parcel screening needs through
:func:`gis_sw.layers.read.inspect_layers` (the same validation, repairs and coverage as
:func:`~gis_sw.layers.read.read_layers`), spilling each to disk as soon as it is read
(:class:`gis_sw.batch.stream.Spiller`), so at most one layer is in memory at a time.
:func:`run_streamed_to_store` screens every chunk from disk into the part files of
:mod:`gis_sw.batch.resume`, and :mod:`gis_sw.batch.stream_write` writes the outputs from
the parts, one chunk at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from gis_sw.batch.chunks import CONTEXT_KINDS, ChunkPlan, halo_ft
from gis_sw.batch.coverage import coverage_context
from gis_sw.batch.fingerprint import layer_hash, run_fingerprint
from gis_sw.batch.inputs import BATCH_KINDS
from gis_sw.batch.prepare import PreparedParcels
from gis_sw.batch.resume import PartStore
from gis_sw.batch.run import RunOptions, run_source, saving, todo_chunks
from gis_sw.batch.run_store import start_store
from gis_sw.batch.stream import DiskChunkSource, Spiller
from gis_sw.errors import LayerError, Problem
from gis_sw.layers.build import make_layerset
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)


def spill_layerset(
    layers: LayerSet, prepared: PreparedParcels, plan: ChunkPlan, folder: Path
) -> DiskChunkSource:
    """Spill layers already in memory (and their prepared parcels and plan) to ``folder``."""
    spiller = Spiller(folder, plan.chunk_size, plan.halo_ft, hash_layer=lambda _: "")
    spiller.take_parcels(prepared, plan)
    for kind in CONTEXT_KINDS:
        frame = layers.get(kind)
        if frame is not None:
            spiller(kind, frame)
    return spiller.source(CONTEXT_KINDS, coverage_context(layers))


@dataclass(frozen=True, slots=True, eq=False)
class StreamedTown:
    """A town read for a streamed batch: its layers on disk, what is known of them here.

    Attributes
    ----------
    layers
        The layer set with every frame emptied (reports, coverage, what is missing or
        declared absent); never screen it, its rows are on disk.
    source
        The chunks, read from the spill folder.
    prepared
        The parcel layer's problems (its frame has no rows).
    hashes
        Layer kind to :func:`gis_sw.batch.fingerprint.layer_hash` of the layer as read.
    n_parcels
        Features of the parcel layer.
    """

    layers: LayerSet
    source: DiskChunkSource
    prepared: PreparedParcels
    hashes: Mapping[str, str] = field(default_factory=dict)
    n_parcels: int = 0

    @property
    def plan(self) -> ChunkPlan:
        """The chunk plan."""
        return self.source.plan


def read_streamed(
    source: str | Path, *, ruleset: Ruleset, folder: Path, chunk_size: int, workers: int = 1
) -> StreamedTown:
    """Read the batch layers of ``source`` one at a time, spilling each into ``folder``.

    With ``workers`` above 1, each layer is hashed while it is spilled and its big
    polygons are cut on ``workers`` threads (:class:`gis_sw.batch.stream.Spiller`).

    Raises
    ------
    InputFileError
        If the source cannot be found or read.
    LayerError
        Naming every problem of every layer read (as ``read_layers`` does).
    """
    from gis_sw.layers.read import inspect_layers

    spiller = Spiller(folder, chunk_size, halo_ft(ruleset), hash_layer=layer_hash, workers=workers)
    inspection = inspect_layers(source, ruleset=ruleset, kinds=BATCH_KINDS, keep=spiller)
    if not inspection.ok:
        raise LayerError(inspection.all_problems())
    layers = make_layerset(
        inspection.crs,
        inspection.vectors,
        inspection.rasters,
        reports=inspection.reports,
        source=str(inspection.manifest.source),
        coverage=inspection.coverage,
    )
    if spiller.prepared is None:
        raise LayerError(
            Problem("parcels", "no parcels layer was provided", "add a 'parcels' layer")
        )
    return StreamedTown(
        layers=layers,
        source=spiller.source(CONTEXT_KINDS, coverage_context(layers)),
        prepared=spiller.prepared,
        hashes=dict(spiller.hashes),
        n_parcels=spiller.counts.get("parcels", 0),
    )


@dataclass(frozen=True, slots=True, eq=False)
class StreamedRun:
    """What a streamed screening left in the part store (the rows stay on disk)."""

    town: StreamedTown
    store: PartStore
    chunks_run: int
    recomputed: Mapping[int, str] = field(default_factory=dict)


def run_streamed_to_store(
    town: StreamedTown,
    ruleset: Ruleset,
    out_dir: Path,
    *,
    options: RunOptions,
    resume: bool,
    overwrite: bool,
    files: Mapping[str, Path] | None = None,
    progress: Callable[[int], None] | None = None,
    on_plan: Callable[[ChunkPlan], None] | None = None,
) -> StreamedRun:
    """Screen a streamed town into part files under ``out_dir/parts`` (resumable).

    Raises
    ------
    OutputError
        When earlier parts are in the way, or a resume meets a different run or a manifest
        it cannot read (see :meth:`PartStore.start`).
    """
    plan = town.plan
    fingerprint = run_fingerprint(
        town.layers,
        ruleset,
        files=files or {},
        proposals=None,
        chunk_size=plan.chunk_size,
        quick=options.quick,
        halo_ft=plan.halo_ft,
        chunks=plan.fingerprints,
        layer_hashes=town.hashes,
        n_parcels=town.n_parcels,
    )
    store, found = start_store(
        out_dir, fingerprint, plan, resume=resume, overwrite=overwrite, on_plan=on_plan
    )
    todo = todo_chunks(plan, found.done, progress)

    def finish(chunk_id: int, rows: pd.DataFrame) -> None:
        if progress:
            progress(1)

    run_source(town.source, todo, ruleset, saving(store, finish), options=options)
    return StreamedRun(town=town, store=store, chunks_run=len(todo), recomputed=found.damaged)
