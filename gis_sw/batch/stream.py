"""Stream a town from disk: layers spilled once in spatial row groups, read chunk by chunk.

``gis-sw batch --stream`` reads each layer the batch needs through the project's reader
(one layer at a time, validated as :func:`gis_sw.layers.read.read_layers` does) and
*spills* it at once to a GeoParquet file of its own; the frame is then dropped before the
next layer is read.  The parcels are spilled in chunk order: row group ``i`` holds exactly
the rows of chunk ``i``.

Every other layer is spilled **by chunk** as well: row group ``i`` holds the features
whose envelope meets chunk ``i``'s haloed envelope, in the order of their row in the whole
layer, found with one bulk ``STRtree.query`` over the chunks' boxes while the layer is in
memory anyway -- the very query :class:`gis_sw.batch.chunks.ChunkSource` runs per chunk.
A chunk then reads one row group per layer (:class:`DiskChunkSource`), decodes only the
features it screens and sorts and filters nothing: what it hands the screening is exactly
the in-memory source's chunk (same features, same order, same WKB, same dtypes), so the
figures are identical, and what a chunk costs in memory is set by the chunk size, not by
the town.  A feature in the halo of several chunks is stored once per chunk (about 1.5x
the layer at 5,000-parcel chunks): disk is cheap, decoding three times the features was
not (measured at 100,000 parcels, 20 chunks: reading and decoding the Hilbert row groups
of 2,048 features that met each chunk and filtering them cost 2.75 s CPU, against 0.5 s
for the in-memory chunks).

A layer that arrives before the parcels (a manifest listing it first) is spilled in
Hilbert-ordered row groups with their envelopes kept (:func:`spill_layer`, readable by
window: :func:`read_window`) and laid out by chunk once the plan is known.

A :class:`DiskChunkSource` holds paths, the chunk plan (about 8 bytes a parcel) and a few
numbers per chunk, never a layer's rows: the Dask engine sends it (not frames) to
workers, which read their chunk themselves (on a real cluster the spill folder must be on
a file system every worker sees).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import shapely
from geopandas.array import from_shapely

from gis_sw.batch.chunks import (
    POLYGON_KINDS,
    Chunk,
    ChunkPlan,
    hilbert_order,
    plan_chunks,
    subdivide,
)
from gis_sw.batch.prepare import PreparedParcels, prepare_parcels

GROUP_ROWS = 2048
"""Features per row group of a spilled context layer (the unit a chunk reads)."""

ROW = "_row"
"""Column holding each spilled feature's row in the whole layer."""

GEOMETRY = "geometry"

SPILL_COMPRESSION = "none"
"""Spill files are scratch, read once per chunk: not compressing them is faster both ways."""


@dataclass(frozen=True, slots=True, eq=False)
class SpilledLayer:
    """One layer on disk in row groups, and the envelope of each group.

    Attributes
    ----------
    path
        The GeoParquet-like file (attributes, ``_row`` and WKB ``geometry``), or None for
        an empty layer.
    bounds
        ``(n_groups, 4)`` envelope of each row group's features (NaN for a group with no
        geometry).
    template
        The layer's columns and dtypes, no rows (what an empty read returns).
    crs
        The layer's CRS (the template's; parsed once, not per read).
    by_chunk
        True when row group ``i`` holds the features of chunk ``i`` (:func:`spill_by_chunk`).
    """

    path: str | None
    bounds: npt.NDArray[np.float64]
    template: gpd.GeoDataFrame
    crs: Any
    by_chunk: bool = False

    @property
    def n_groups(self) -> int:
        """Number of row groups."""
        return len(self.bounds)


def _groups_bounds(
    env: npt.NDArray[np.float64], starts: npt.NDArray[np.int64], sizes: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Envelope of each run ``env[start:start + size]`` (NaN for a run with no geometry)."""
    bounds = np.full((len(sizes), 4), np.nan)
    full = sizes > 0
    if not full.any() or len(env) == 0:
        return bounds
    at = starts[full]
    with np.errstate(invalid="ignore"):
        low = np.where(np.isnan(env[:, :2]), np.inf, env[:, :2])
        high = np.where(np.isnan(env[:, 2:]), -np.inf, env[:, 2:])
        mins = np.minimum.reduceat(low, at, axis=0)
        maxs = np.maximum.reduceat(high, at, axis=0)
    found = np.isfinite(mins).all(axis=1)
    bounds[np.flatnonzero(full)[found]] = np.hstack([mins, maxs])[found]
    return bounds


def spill_groups(
    frame: gpd.GeoDataFrame,
    path: Path,
    groups: list[npt.NDArray[np.int64]],
    *,
    by_chunk: bool = False,
) -> SpilledLayer:
    """Write ``frame`` (RangeIndex = row) to ``path``, one row group per entry of ``groups``.

    Each group lists row positions; the group is written in that order, with the rows'
    positions in a ``_row`` column.  A row may be in several groups (the halo of several
    chunks).  The frame's attributes are converted to Arrow and its geometries to WKB
    once, in row order, and each group is taken from that table in its turn.
    """
    geometry = frame.geometry.name
    template = frame.iloc[:0].copy()
    crs = frame.crs
    if not groups or len(frame) == 0:
        return SpilledLayer(
            path=None, bounds=np.zeros((0, 4)), template=template, crs=crs, by_chunk=by_chunk
        )
    order = np.concatenate(groups).astype(np.int64)
    sizes = np.array([len(rows) for rows in groups], dtype=np.int64)
    geoms = np.asarray(frame.geometry.to_numpy(), dtype=object)
    table = pa.Table.from_pandas(pd.DataFrame(frame.drop(columns=geometry)), preserve_index=False)
    table = table.append_column(ROW, pa.array(np.arange(len(frame), dtype=np.int64)))
    table = table.append_column(GEOMETRY, pa.array(shapely.to_wkb(geoms), pa.binary()))
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    bounds = _groups_bounds(shapely.bounds(geoms)[order], starts, sizes)
    with pq.ParquetWriter(
        str(path), table.schema, compression=SPILL_COMPRESSION, use_dictionary=False
    ) as writer:
        # one group taken at a time: never a second copy of the whole layer
        for rows in groups:
            part = table.take(pa.array(np.asarray(rows, dtype=np.int64)))
            writer.write_table(part, row_group_size=max(1, len(part)))
    return SpilledLayer(
        path=str(path), bounds=bounds, template=template, crs=crs, by_chunk=by_chunk
    )


def spill_layer(
    frame: gpd.GeoDataFrame, path: Path, *, group_rows: int = GROUP_ROWS
) -> SpilledLayer:
    """Write a context layer in Hilbert-ordered row groups of ``group_rows`` features."""
    order = hilbert_order(np.asarray(frame.geometry.to_numpy(), dtype=object))
    groups = [order[i : i + group_rows] for i in range(0, len(order), group_rows)]
    return spill_groups(frame.reset_index(drop=True), path, groups)


def chunk_members(
    geoms: npt.NDArray[np.object_], boxes: npt.NDArray[np.float64]
) -> list[npt.NDArray[np.int64]]:
    """Row positions of the features meeting each chunk's box, ascending, one array a chunk.

    The query :meth:`gis_sw.batch.chunks.ChunkSource.chunk` runs (``STRtree.query`` of
    the box: envelopes meeting, touching counts; no features for a box that is not
    finite), for every box at once.
    """
    members = [np.zeros(0, dtype=np.int64) for _ in range(len(boxes))]
    finite = np.flatnonzero(np.isfinite(boxes).all(axis=1))
    if len(finite) == 0 or len(geoms) == 0:
        return members
    tree = shapely.STRtree(geoms)
    found, rows = tree.query(shapely.box(*boxes[finite].T))
    order = np.lexsort((rows, found))
    found, rows = found[order], rows[order].astype(np.int64)
    cuts = np.searchsorted(found, np.arange(1, len(finite)))
    for at, part in zip(finite.tolist(), np.split(rows, cuts), strict=True):
        members[at] = part
    return members


def spill_by_chunk(frame: gpd.GeoDataFrame, path: Path, plan: ChunkPlan) -> SpilledLayer:
    """Write a context layer with row group ``i`` = the features chunk ``i`` reads.

    ``frame`` is the layer as the chunks see it (big polygons already cut, RangeIndex).
    """
    frame = frame.reset_index(drop=True)
    members = chunk_members(np.asarray(frame.geometry.to_numpy(), dtype=object), plan.bounds)
    return spill_groups(frame, path, members, by_chunk=True)


def _column(table: pa.Table, name: str, dtype: Any, index: pd.Index) -> pd.Series:
    """One spilled column as the in-memory layer held it (``dtype``: the template's)."""
    column = table.column(name)
    text = pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
    if isinstance(dtype, np.dtype) and dtype.kind == "O" and text:
        # the layer held Python str and None; Arrow's pandas conversion would give "str"
        return pd.Series(column.to_numpy(zero_copy_only=False), index=index, dtype=object)
    values = column.to_pandas()
    values.index = index
    return values if values.dtype == dtype else values.astype(dtype)


def read_groups(layer: SpilledLayer, groups: npt.NDArray[np.int64]) -> gpd.GeoDataFrame:
    """Return the features of some row groups (index: their row in the whole layer).

    Columns, their order and dtypes are the layer's as it was spilled (its template).
    """
    if layer.path is None or len(groups) == 0:
        return layer.template.copy()
    table = pq.ParquetFile(layer.path).read_row_groups([int(g) for g in groups])
    index = pd.Index(table.column(ROW).to_numpy(), dtype=np.int64)
    template = layer.template
    name = template.geometry.name
    wkb = table.column(GEOMETRY).to_numpy(zero_copy_only=False)
    data: dict[str, Any] = {}
    for column, dtype in template.dtypes.items():
        if column == name:
            data[column] = from_shapely(shapely.from_wkb(wkb), crs=layer.crs)
        else:
            data[column] = _column(table, str(column), dtype, index)
    return gpd.GeoDataFrame(data, index=index, geometry=name, crs=layer.crs)


def _meets(env: npt.NDArray[np.float64], box: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Envelopes meeting ``box`` (closed: touching counts, as ``STRtree.query`` does)."""
    with np.errstate(invalid="ignore"):
        return (
            (env[:, 0] <= box[2])
            & (env[:, 2] >= box[0])
            & (env[:, 1] <= box[3])
            & (env[:, 3] >= box[1])
        )


def read_window(layer: SpilledLayer, box: npt.NDArray[np.float64]) -> gpd.GeoDataFrame:
    """Features whose envelope meets ``box``, in the order of their row in the layer.

    For a layer in Hilbert row groups (:func:`spill_layer`); a layer spilled by chunk is
    read by chunk (:meth:`DiskChunkSource.chunk`).
    """
    if not np.isfinite(box).all() or layer.n_groups == 0:
        return layer.template.copy()
    groups = np.flatnonzero(_meets(layer.bounds, box))
    frame = read_groups(layer, groups)
    if len(frame) == 0:
        return frame
    env = shapely.bounds(np.asarray(frame.geometry.to_numpy(), dtype=object))
    keep = _meets(env, box)
    return frame[keep].sort_index(kind="stable")


def read_all(layer: SpilledLayer) -> gpd.GeoDataFrame:
    """Return a layer spilled in Hilbert row groups whole, in row order (RangeIndex)."""
    frame = read_groups(layer, np.arange(layer.n_groups, dtype=np.int64))
    return frame.sort_index(kind="stable").reset_index(drop=True)


@dataclass(frozen=True, slots=True, eq=False)
class DiskChunkSource:
    """Builds each chunk's inputs from spilled layers (picklable: paths and envelopes).

    Attributes
    ----------
    plan
        The chunk plan.
    parcels
        The prepared parcels, row group ``i`` = chunk ``i``.
    layers
        Context kind to its spilled layer (by chunk: row group ``i`` = chunk ``i``'s
        features; or in Hilbert row groups, read by window).
    small
        Context frames kept in memory (the coverage areas: one polygon each).
    """

    plan: ChunkPlan
    parcels: SpilledLayer
    layers: Mapping[str, SpilledLayer]
    small: Mapping[str, gpd.GeoDataFrame] = field(default_factory=dict)

    @property
    def present(self) -> frozenset[str]:
        """Context kinds the town provided."""
        return frozenset(self.layers) | frozenset(self.small)

    def parcel_group(self, chunk_id: int) -> gpd.GeoDataFrame:
        """Return the prepared parcels of one chunk (index: their row), ascending row order."""
        return read_groups(self.parcels, np.array([chunk_id], dtype=np.int64))

    def parcel_wkb(self, chunk_id: int) -> pa.Array:
        """Return the WKB of one chunk's prepared parcels, as spilled (ascending row order)."""
        if self.parcels.path is None:
            return pa.array([], pa.binary())
        table = pq.ParquetFile(self.parcels.path).read_row_groups([chunk_id], columns=[GEOMETRY])
        return table.column(GEOMETRY).combine_chunks()

    def context_frame(self, kind: str, chunk_id: int) -> gpd.GeoDataFrame:
        """Return one layer's features of one chunk (index: their row), ascending row order."""
        layer = self.layers[kind]
        if layer.by_chunk:
            return read_groups(layer, np.array([chunk_id], dtype=np.int64))
        return read_window(layer, self.plan.bounds[chunk_id])

    def chunk(self, chunk_id: int) -> Chunk:
        """Return the inputs of one chunk, read from disk (equal to the in-memory source's)."""
        rows = self.plan.rows(chunk_id)
        parcels = self.parcel_group(chunk_id)
        box = self.plan.bounds[chunk_id]
        context: dict[str, gpd.GeoDataFrame] = {
            kind: self.context_frame(kind, chunk_id) for kind in self.layers
        }
        for kind, frame in self.small.items():
            env = shapely.bounds(np.asarray(frame.geometry.to_numpy(), dtype=object))
            keep = _meets(env, box) if np.isfinite(box).all() else np.zeros(len(frame), bool)
            context[kind] = frame[keep]
        return Chunk(
            chunk_id=chunk_id,
            rows=rows,
            parcels=parcels,
            context=context,
            present=self.present,
        )


@dataclass(slots=True)
class Spiller:
    """Spills each layer handed to it into ``folder``; keeps the parcels' plan and problems.

    Call it as the ``keep`` hook of :func:`gis_sw.layers.read.inspect_layers`: it returns
    an empty frame of the same columns, so the reader holds one layer at a time.  A
    context layer is spilled by chunk (:func:`spill_by_chunk`) when the parcels came
    first, else in Hilbert row groups, re-laid by chunk when the parcels come.
    """

    folder: Path
    chunk_size: int
    halo_ft: float
    hash_layer: Callable[[gpd.GeoDataFrame], str]
    group_rows: int = GROUP_ROWS
    workers: int = 1
    spilled: dict[str, SpilledLayer] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    prepared: PreparedParcels | None = None
    plan: ChunkPlan | None = None

    def __call__(self, kind: str, frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        """Spill one layer; return it with no rows.

        With ``workers`` above 1 the layer is hashed on a thread of its own while it is
        prepared and planned (parcels) or its big polygons are cut on ``workers`` threads
        (:func:`gis_sw.batch.chunks.subdivide`: the same pieces, in the same order);
        neither changes the frame or prepares a geometry, and GEOS and hashing release
        the GIL.  The spill itself waits for the hash, so the hash's WKB copy of the
        layer and the spill's are never held at once (the read stage's memory peak).
        Every thread has ended when this returns (a fork needs one thread).
        """
        self.counts[kind] = len(frame)
        if self.workers < 2:
            self.hashes[kind] = self.hash_layer(frame)
            self._spill_cut(kind, self._cut(kind, frame, None))
        else:
            with ThreadPoolExecutor(
                max_workers=self.workers + 1, thread_name_prefix="gis-sw-spill"
            ) as pool:
                hashing = pool.submit(self.hash_layer, frame)
                try:
                    cut = self._cut(kind, frame, pool)
                finally:
                    wait([hashing])
                self.hashes[kind] = hashing.result()
            self._spill_cut(kind, cut)
        # a copy: an empty slice is a view that would keep every row of the layer alive
        return frame.iloc[:0].copy()

    def _cut(
        self, kind: str, frame: gpd.GeoDataFrame, pool: Executor | None
    ) -> PreparedParcels | gpd.GeoDataFrame:
        """Return the layer as the chunks see it: prepared parcels, or big polygons cut."""
        if kind == "parcels":
            return prepare_parcels(frame)
        if kind in POLYGON_KINDS:
            return subdivide(frame, pool=pool, workers=self.workers)
        return frame.reset_index(drop=True)

    def _spill_cut(self, kind: str, cut: PreparedParcels | gpd.GeoDataFrame) -> None:
        """Plan and spill prepared parcels, or spill a context layer."""
        if isinstance(cut, PreparedParcels):
            plan = plan_chunks(
                cut.parcels.geometry,
                chunk_size=self.chunk_size,
                halo_ft=self.halo_ft,
                skip=~cut.screened,
            )
            self.take_parcels(cut, plan)
        else:
            self._spill(kind, cut)

    def _spill(self, kind: str, layer: gpd.GeoDataFrame) -> None:
        """Spill a context layer (as the chunks see it) by chunk, or by Hilbert groups."""
        path = self.folder / f"{kind}.parquet"
        if self.plan is not None:
            self.spilled[kind] = spill_by_chunk(layer, path, self.plan)
        else:
            self.spilled[kind] = spill_layer(layer, path, group_rows=self.group_rows)

    def take_parcels(self, prepared: PreparedParcels, plan: ChunkPlan) -> None:
        """Spill prepared parcels in chunk order (row group ``i`` = chunk ``i``).

        Context layers spilled before (in Hilbert row groups) are read back one at a time
        and spilled again by chunk.
        """
        groups = [plan.rows(i) for i in range(plan.n_chunks)]
        path = self.folder / "parcels.parquet"
        self.spilled["parcels"] = spill_groups(prepared.parcels, path, groups)
        self.prepared = PreparedParcels(
            parcels=prepared.parcels.iloc[:0].copy(), problems=prepared.problems
        )
        self.plan = plan
        for kind, layer in list(self.spilled.items()):
            if kind == "parcels" or layer.by_chunk:
                continue
            frame = read_all(layer)
            if layer.path is not None:
                Path(layer.path).unlink()
            self._spill(kind, frame)
            del frame

    def source(
        self, context_kinds: tuple[str, ...], small: Mapping[str, gpd.GeoDataFrame]
    ) -> DiskChunkSource:
        """Return the chunk source over what was spilled.

        Raises
        ------
        RuntimeError
            If no parcels layer went through the spiller.
        """
        if self.plan is None or "parcels" not in self.spilled:
            raise RuntimeError("the parcels layer was not spilled")
        return DiskChunkSource(
            plan=self.plan,
            parcels=self.spilled["parcels"],
            layers={k: v for k, v in self.spilled.items() if k in context_kinds},
            small=dict(small),
        )
