"""Stream a town from disk: layers spilled once in spatial row groups, read chunk by chunk.

``gis-sw batch --stream`` reads each layer the batch needs through the project's reader
(one layer at a time, validated as :func:`gis_sw.layers.read.read_layers` does) and
*spills* it at once to a GeoParquet file of its own, rows sorted along a Hilbert curve and
cut into row groups whose envelopes are kept (the layer's spatial index, a few numbers per
group); the frame is then dropped before the next layer is read.  The parcels are spilled
in chunk order: row group ``i`` holds exactly the rows of chunk ``i``.

A chunk is then read back from disk (:class:`DiskChunkSource`): its parcels' row group, and
for every other layer only the row groups whose envelope meets the chunk's haloed envelope,
filtered to the features whose envelope meets it, ordered by their row in the whole layer.
That is exactly what the in-memory :class:`gis_sw.batch.chunks.ChunkSource` hands the
screening (same features, same order, same WKB), so the figures are identical; but what a
chunk costs in memory is set by the chunk size and the group size, not by the town.

A :class:`DiskChunkSource` holds paths and envelopes only, so it pickles in a few
kilobytes: the Dask engine sends it (not frames) to workers, which read their chunk
themselves (on a real cluster the spill folder must be on a file system every worker
sees).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import geopandas as gpd
import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import shapely

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
        The layer's CRS as WKT.
    """

    path: str | None
    bounds: npt.NDArray[np.float64]
    template: gpd.GeoDataFrame
    crs: str | None

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
    frame: gpd.GeoDataFrame, path: Path, groups: list[npt.NDArray[np.int64]]
) -> SpilledLayer:
    """Write ``frame`` (RangeIndex = row) to ``path``, one row group per entry of ``groups``.

    Each group lists row positions; the group is written in that order, with the rows'
    positions in a ``_row`` column.  The frame is converted to Arrow and its geometries to
    WKB once, in the order of the groups, and each group is a slice of that table.
    """
    geometry = frame.geometry.name
    template = frame.iloc[:0].copy()
    crs = frame.crs.to_wkt() if frame.crs is not None else None
    if not groups or len(frame) == 0:
        return SpilledLayer(path=None, bounds=np.zeros((0, 4)), template=template, crs=crs)
    order = np.concatenate(groups).astype(np.int64)
    sizes = np.array([len(rows) for rows in groups], dtype=np.int64)
    geoms = np.asarray(frame.geometry.to_numpy(), dtype=object)[order]
    table = pa.Table.from_pandas(
        pd.DataFrame(frame.drop(columns=geometry)), preserve_index=False
    ).take(pa.array(order))
    table = table.append_column(ROW, pa.array(order, type=pa.int64()))
    table = table.append_column(GEOMETRY, pa.array(shapely.to_wkb(geoms), pa.binary()))
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    bounds = _groups_bounds(shapely.bounds(geoms), starts, sizes)
    with pq.ParquetWriter(str(path), table.schema, compression=SPILL_COMPRESSION) as writer:
        for start, size in zip(starts.tolist(), sizes.tolist(), strict=True):
            writer.write_table(table.slice(start, size), row_group_size=max(1, size))
    return SpilledLayer(path=str(path), bounds=bounds, template=template, crs=crs)


def spill_layer(
    frame: gpd.GeoDataFrame, path: Path, *, group_rows: int = GROUP_ROWS
) -> SpilledLayer:
    """Write a context layer in Hilbert-ordered row groups of ``group_rows`` features."""
    order = hilbert_order(np.asarray(frame.geometry.to_numpy(), dtype=object))
    groups = [order[i : i + group_rows] for i in range(0, len(order), group_rows)]
    return spill_groups(frame.reset_index(drop=True), path, groups)


def read_groups(layer: SpilledLayer, groups: npt.NDArray[np.int64]) -> gpd.GeoDataFrame:
    """Return the features of some row groups (index: their row in the whole layer)."""
    if layer.path is None or len(groups) == 0:
        return layer.template.copy()
    table = pq.ParquetFile(layer.path).read_row_groups([int(g) for g in groups])
    frame = table.drop_columns([GEOMETRY]).to_pandas()
    geoms = shapely.from_wkb(table.column(GEOMETRY).to_numpy(zero_copy_only=False))
    index = pd.Index(frame.pop(ROW).to_numpy(dtype=np.int64))
    frame.index = index
    name = layer.template.geometry.name
    frame[name] = gpd.GeoSeries(geoms, index=index, crs=layer.crs)
    out = gpd.GeoDataFrame(frame, geometry=name, crs=layer.crs)
    return out[list(layer.template.columns)]


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
    """Features whose envelope meets ``box``, in the order of their row in the layer."""
    if not np.isfinite(box).all() or layer.n_groups == 0:
        return layer.template.copy()
    groups = np.flatnonzero(_meets(layer.bounds, box))
    frame = read_groups(layer, groups)
    if len(frame) == 0:
        return frame
    env = shapely.bounds(np.asarray(frame.geometry.to_numpy(), dtype=object))
    keep = _meets(env, box)
    return frame[keep].sort_index(kind="stable")


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
        Context kind to its spilled layer.
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

    def chunk(self, chunk_id: int) -> Chunk:
        """Return the inputs of one chunk, read from disk (equal to the in-memory source's)."""
        rows = self.plan.rows(chunk_id)
        parcels = self.parcel_group(chunk_id)
        box = self.plan.bounds[chunk_id]
        context: dict[str, gpd.GeoDataFrame] = {
            kind: read_window(layer, box) for kind, layer in self.layers.items()
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
    an empty frame of the same columns, so the reader holds one layer at a time.
    """

    folder: Path
    chunk_size: int
    halo_ft: float
    hash_layer: Callable[[gpd.GeoDataFrame], str]
    group_rows: int = GROUP_ROWS
    spilled: dict[str, SpilledLayer] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    prepared: PreparedParcels | None = None
    plan: ChunkPlan | None = None

    def __call__(self, kind: str, frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        """Spill one layer; return it with no rows."""
        self.hashes[kind] = self.hash_layer(frame)
        self.counts[kind] = len(frame)
        path = self.folder / f"{kind}.parquet"
        if kind == "parcels":
            prepared = prepare_parcels(frame)
            plan = plan_chunks(
                prepared.parcels.geometry,
                chunk_size=self.chunk_size,
                halo_ft=self.halo_ft,
                skip=~prepared.screened,
            )
            self.take_parcels(prepared, plan)
        else:
            layer = subdivide(frame) if kind in POLYGON_KINDS else frame.reset_index(drop=True)
            self.spilled[kind] = spill_layer(layer, path, group_rows=self.group_rows)
        # a copy: an empty slice is a view that would keep every row of the layer alive
        return frame.iloc[:0].copy()

    def take_parcels(self, prepared: PreparedParcels, plan: ChunkPlan) -> None:
        """Spill prepared parcels in chunk order (row group ``i`` = chunk ``i``)."""
        groups = [plan.rows(i) for i in range(plan.n_chunks)]
        path = self.folder / "parcels.parquet"
        self.spilled["parcels"] = spill_groups(prepared.parcels, path, groups)
        self.prepared = PreparedParcels(
            parcels=prepared.parcels.iloc[:0].copy(), problems=prepared.problems
        )
        self.plan = plan

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
