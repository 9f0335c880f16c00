"""Spatial chunks of a parcel layer, each with a halo of context features.

Parcels are sorted along a Hilbert curve (``GeoSeries.hilbert_distance``) and cut into runs
of ``chunk_size`` consecutive parcels, so each chunk is spatially compact and memory is
bounded by the chunk size, not the town.  A chunk carries:

* its own parcels (the rows it answers for), and
* every feature of the other layers whose envelope meets the chunk's envelope grown by
  the *halo*, at least as wide as the widest distance any screening uses
  (``ruleset.devices.largest_setback_ft`` and ``ruleset.resources.wetland_adjacent_area_ft``).

Any feature within the halo distance of a chunk parcel has an envelope inside the grown
envelope, so a parcel at a chunk edge sees exactly the features it would see in one
piece, and (because every per-parcel figure is ordered by the feature's row in the whole
layer, see :mod:`gis_sw.batch.areas`) gets the same answer to the last bit.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import numpy.typing as npt
import shapely

from gis_sw.layers.geoms import unlocated
from gis_sw.ruleset import Ruleset

CONTEXT_KINDS: tuple[str, ...] = (
    "zoning",
    "wetlands",
    "water_bodies",
    "floodplain",
    "wells",
    "septic_fields",
    "buildings",
)
"""The layers a parcel's screening reads besides the parcels themselves."""


SUBDIVIDE_MAX_VERTICES = 256
"""Polygons with more vertices are cut into pieces of at most this many before screening."""

POLYGON_KINDS = frozenset(CONTEXT_KINDS) - {"wells"}


def subdivide(
    frame: gpd.GeoDataFrame,
    *,
    max_vertices: int = SUBDIVIDE_MAX_VERTICES,
    pool: Executor | None = None,
    workers: int = 1,
) -> gpd.GeoDataFrame:
    """Cut big polygons into pieces of at most ``max_vertices`` vertices.

    Like PostGIS ``ST_Subdivide``, keeping each piece's attributes; the result has a new
    RangeIndex.

    A town's floodplain or stream polygon can have tens of thousands of vertices, and every
    parcel that meets it would pay for all of them in each ``intersection``: that makes a
    townwide overlay quadratic.  Halving along the longer side, all big polygons at once per
    level, costs ``O(V log V)`` once; the pieces tile the original exactly, so unions and
    area sums over them give the original figures.

    With a ``pool`` of ``workers`` threads, each level's intersections are shared out in
    runs of about equal vertex counts (shapely releases the GIL): the same pieces, in the
    same order, in less time.
    """
    geoms = np.asarray(frame.geometry.to_numpy(), dtype=object)
    counts = shapely.get_num_coordinates(geoms)
    if len(geoms) == 0 or counts.max() <= max_vertices:
        return frame.reset_index(drop=True)
    done_geoms, done_keys = [], []
    todo = np.flatnonzero(counts > max_vertices)
    keep = np.flatnonzero(counts <= max_vertices)
    done_geoms.append(geoms[keep])
    done_keys.append(keep)
    work, keys = geoms[todo], todo
    for _ in range(64):
        if len(work) == 0:
            break
        minx, miny, maxx, maxy = shapely.bounds(work).T
        wide = (maxx - minx) >= (maxy - miny)
        midx, midy = (minx + maxx) / 2, (miny + maxy) / 2
        first = shapely.box(minx, miny, np.where(wide, midx, maxx), np.where(wide, maxy, midy))
        second = shapely.box(np.where(wide, midx, minx), np.where(wide, miny, midy), maxx, maxy)
        halves = _intersections(
            np.concatenate([work, work]), np.concatenate([first, second]), pool, workers
        )
        half_keys = np.concatenate([keys, keys])
        parts, at = shapely.get_parts(halves, return_index=True)
        polygonal = (shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)
        parts, part_keys = parts[polygonal], half_keys[at[polygonal]]
        small = shapely.get_num_coordinates(parts) <= max_vertices
        done_geoms.append(parts[small])
        done_keys.append(part_keys[small])
        work, keys = parts[~small], part_keys[~small]
    if len(work):
        done_geoms.append(work)
        done_keys.append(keys)
    pieces = np.concatenate(done_geoms)
    piece_keys = np.concatenate(done_keys)
    order = np.argsort(piece_keys, kind="stable")
    out = frame.iloc[piece_keys[order]].reset_index(drop=True)
    return out.set_geometry(gpd.GeoSeries(pieces[order], crs=frame.crs))


def _intersections(
    geoms: npt.NDArray[np.object_],
    boxes: npt.NDArray[np.object_],
    pool: Executor | None,
    workers: int,
) -> npt.NDArray[np.object_]:
    """Return ``shapely.intersection(geoms, boxes)``, in runs on ``pool`` when there is one."""
    if pool is None or workers < 2 or len(geoms) < 2:
        return np.asarray(shapely.intersection(geoms, boxes), dtype=object)
    load = np.cumsum(shapely.get_num_coordinates(geoms))
    cuts = np.searchsorted(load, load[-1] * np.arange(1, workers) / workers, side="right")
    edges = np.unique(np.concatenate([[0], cuts, [len(geoms)]]))
    runs = [
        pool.submit(shapely.intersection, geoms[a:b], boxes[a:b])
        for a, b in itertools.pairwise(edges)
    ]
    return np.concatenate([np.asarray(run.result(), dtype=object) for run in runs])


def halo_ft(ruleset: Ruleset) -> float:
    """Return the halo a chunk needs: the widest distance any parcel figure depends on."""
    return float(
        max(ruleset.devices.largest_setback_ft, ruleset.resources.wetland_adjacent_area_ft)
    )


@dataclass(frozen=True, slots=True, eq=False)
class ChunkPlan:
    """How a parcel layer is cut into chunks.

    Attributes
    ----------
    order
        Parcel row positions in Hilbert order; chunk ``i`` is
        ``order[i * chunk_size:(i + 1) * chunk_size]``.
    chunk_size
        Parcels per chunk (the last may hold fewer).
    halo_ft
        Width of the halo around each chunk's envelope.
    bounds
        ``(n_chunks, 4)`` envelope of each chunk's parcels, grown by the halo.
    fingerprints
        One short hash per chunk of its parcel rows and envelope: a resumed run checks them.
    """

    order: npt.NDArray[np.int64]
    chunk_size: int
    halo_ft: float
    bounds: npt.NDArray[np.float64]
    fingerprints: tuple[str, ...]

    @property
    def n_chunks(self) -> int:
        """Return the number of chunks."""
        return len(self.fingerprints)

    def rows(self, chunk_id: int) -> npt.NDArray[np.int64]:
        """Parcel row positions of one chunk, in ascending row order."""
        part = self.order[chunk_id * self.chunk_size : (chunk_id + 1) * self.chunk_size]
        return np.sort(part)


def hilbert_order(geoms: npt.NDArray[np.object_]) -> npt.NDArray[np.int64]:
    """Row positions sorted along a Hilbert curve (missing and empty geometries last)."""
    n = len(geoms)
    missing = unlocated(geoms)
    key = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    if (~missing).any():
        present = gpd.GeoSeries(geoms[~missing])
        key[~missing] = present.hilbert_distance(total_bounds=present.total_bounds).to_numpy()
    return np.lexsort((np.arange(n), key)).astype(np.int64)


def plan_chunks(
    parcels: gpd.GeoSeries,
    *,
    chunk_size: int,
    halo_ft: float,
    skip: npt.NDArray[np.bool_] | None = None,
) -> ChunkPlan:
    """Cut parcels into Hilbert-ordered chunks.

    Parcels with no geometry sort last; they still belong to a chunk (and are reported).
    Rows where ``skip`` is True belong to no chunk (the repeats of an identical geometry,
    screened once: :mod:`gis_sw.batch.prepare`).

    Raises
    ------
    ValueError
        If ``chunk_size`` is below 1.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk size {chunk_size} must be 1 or more")
    geoms = np.asarray(parcels.to_numpy(), dtype=object)
    order = hilbert_order(geoms)
    if skip is not None:
        order = order[~np.asarray(skip, dtype=bool)[order]]
    env = shapely.bounds(geoms)
    n_chunks = max(1, -(-len(order) // chunk_size)) if len(order) else 0
    bounds = np.full((n_chunks, 4), np.nan)
    prints = []
    for i in range(n_chunks):
        rows = np.sort(order[i * chunk_size : (i + 1) * chunk_size])
        box = env[rows]
        if np.isfinite(box).any():
            bounds[i] = (
                np.nanmin(box[:, 0]) - halo_ft,
                np.nanmin(box[:, 1]) - halo_ft,
                np.nanmax(box[:, 2]) + halo_ft,
                np.nanmax(box[:, 3]) + halo_ft,
            )
        digest = hashlib.sha256(rows.tobytes())
        digest.update(np.nan_to_num(env[rows]).round(6).tobytes())
        prints.append(digest.hexdigest()[:16])
    return ChunkPlan(
        order=order,
        chunk_size=chunk_size,
        halo_ft=halo_ft,
        bounds=bounds,
        fingerprints=tuple(prints),
    )


@dataclass(frozen=True, slots=True, eq=False)
class Chunk:
    """One chunk's inputs: its parcels and the context features around them.

    Attributes
    ----------
    chunk_id
        Position in the plan.
    rows
        Row positions of the parcels in the whole layer (ascending).
    parcels
        Those parcels (index: row positions).
    context
        Kind to the features of that layer meeting the haloed envelope; the index holds
        each feature's row in the whole layer.
    present
        Context kinds the town provided (an absent kind is missing data, not zero).
    """

    chunk_id: int
    rows: npt.NDArray[np.int64]
    parcels: gpd.GeoDataFrame
    context: Mapping[str, gpd.GeoDataFrame]
    present: frozenset[str]


def own_geometries(geoms: npt.NDArray[np.object_]) -> npt.NDArray[np.object_]:
    """Return GEOS copies of ``geoms`` (same coordinates, SRID 0), safe to prepare.

    ``shapely.set_srid`` clones each geometry (``GEOSGeom_clone``) before it sets the SRID:
    a copy of the coordinates with no serialising, about a quarter of the cost of the WKB
    round trip this replaced, with the same result (WKB without SRID also gave SRID 0).
    Taking rows by index (``iloc``, ``take``) is not enough: that gives new references to the
    *same* GEOS objects, and preparing one prepares it for every holder.
    """
    return np.asarray(shapely.set_srid(geoms, 0), dtype=object)


def _own_geometries(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Return the frame with new geometry objects (equal coordinates), safe to prepare."""
    copies = own_geometries(np.asarray(frame.geometry.to_numpy(), dtype=object))
    return frame.set_geometry(gpd.GeoSeries(copies, index=frame.index, crs=frame.crs))


@dataclass(frozen=True, slots=True, eq=False)
class ContextIndex:
    """The context layers as chunks take them: big polygons cut, one STRtree per layer.

    It needs neither the parcels nor the chunk plan, so a run builds it while it plans
    the chunks (:func:`gis_sw.batch.run_store.run_chunks_to_store`).

    Attributes
    ----------
    layers
        Kind to the layer, big polygons cut (:func:`subdivide`), RangeIndex.
    trees
        Kind to the STRtree of that layer's geometries (built).
    """

    layers: Mapping[str, gpd.GeoDataFrame]
    trees: Mapping[str, shapely.STRtree]


def index_context(
    context: Mapping[str, gpd.GeoDataFrame | None], *, workers: int = 1
) -> ContextIndex:
    """Return the :class:`ContextIndex` of the context layers (None: a layer not given).

    ``workers`` threads share out the cutting of big polygons (:func:`subdivide`).
    """
    layers: dict[str, gpd.GeoDataFrame] = {}
    trees: dict[str, shapely.STRtree] = {}
    with ExitStack() as stack:
        pool = None
        if workers > 1:
            pool = stack.enter_context(
                ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gis-sw-cut")
            )
        for kind, frame in context.items():
            if frame is None:
                continue
            if kind in POLYGON_KINDS:
                layer = subdivide(frame, pool=pool, workers=workers)
            else:
                layer = frame.reset_index(drop=True)
            layers[kind] = layer
            tree = shapely.STRtree(np.asarray(layer.geometry.to_numpy()))
            tree.query(shapely.box(0, 0, 0, 0))  # build it here, before any thread uses it
            trees[kind] = tree
    return ContextIndex(layers=layers, trees=trees)


class ChunkSource:
    """Builds each chunk's inputs on demand from whole layers (one STRtree per layer).

    ``workers`` threads share out the cutting of big polygons (:func:`subdivide`); an
    ``index`` of the context built already (:func:`index_context`) stands for ``context``.
    """

    def __init__(
        self,
        parcels: gpd.GeoDataFrame,
        context: Mapping[str, gpd.GeoDataFrame | None],
        plan: ChunkPlan,
        *,
        workers: int = 1,
        index: ContextIndex | None = None,
    ) -> None:
        self.parcels = parcels.reset_index(drop=True)
        self.plan = plan
        built = index if index is not None else index_context(context, workers=workers)
        self._layers: dict[str, gpd.GeoDataFrame] = dict(built.layers)
        self._trees: dict[str, shapely.STRtree] = dict(built.trees)
        self._costs: npt.NDArray[np.float64] | None = None

    @property
    def present(self) -> frozenset[str]:
        """Return the context kinds the town provided."""
        return frozenset(self._layers)

    def chunk(self, chunk_id: int) -> Chunk:
        """Return the inputs of one chunk, with geometries of its own.

        Halo features belong to several chunks, which threads screen at the same time;
        GEOS prepares geometries (and builds their lazy indexes) in place, which is not
        safe from two threads at once (it crashed).  Each chunk therefore gets copies of
        its geometries (:func:`own_geometries`, about 3% of the work); its parcels too, so
        nothing a chunk's screening prepares stays attached to the whole layer after it.

        A forked worker, one chunk at a time on one thread, would be safe without copies,
        but it is slower: the copies lie together in memory and the chunk's GEOS work on
        them runs faster than the copying costs (2.5% less CPU per chunk with copies,
        measured at 100,000 parcels).
        """
        rows = self.plan.rows(chunk_id)
        parcels = _own_geometries(self.parcels.iloc[rows])
        bounds = self.plan.bounds[chunk_id]
        context: dict[str, gpd.GeoDataFrame] = {}
        for kind, frame in self._layers.items():
            if np.isfinite(bounds).all():
                hits = np.sort(self._trees[kind].query(shapely.box(*bounds)))
            else:
                hits = np.zeros(0, dtype=np.int64)
            context[kind] = _own_geometries(frame.iloc[hits])
        return Chunk(
            chunk_id=chunk_id,
            rows=rows,
            parcels=parcels,
            context=context,
            present=self.present,
        )

    def costs(self) -> npt.NDArray[np.float64]:
        """Return a rough relative cost of screening each chunk (for the order of the work).

        The coordinates of the chunk's parcels plus those of every context feature whose
        envelope meets the chunk's haloed envelope: the geometry its overlays, bands and
        siting cut through.  Only the order of the chunks follows from it, never a figure.
        Computed once (a run computes it where it builds the source, before the fork).
        """
        if self._costs is None:
            self._costs = self._count_costs()
        return self._costs.copy()

    def _count_costs(self) -> npt.NDArray[np.float64]:
        n_chunks = self.plan.n_chunks
        order, size = self.plan.order, self.plan.chunk_size
        vertices = shapely.get_num_coordinates(
            np.asarray(self.parcels.geometry.to_numpy(), dtype=object)
        )
        cost = np.zeros(n_chunks, dtype=np.float64)
        if len(order):
            cost += np.add.reduceat(vertices[order], np.arange(0, len(order), size))[:n_chunks]
        located = np.flatnonzero(np.isfinite(self.plan.bounds).all(axis=1))
        if len(located) == 0:
            return cost
        boxes = shapely.box(*self.plan.bounds[located].T)
        for kind, frame in self._layers.items():
            box_at, hits = self._trees[kind].query(boxes)
            weights = shapely.get_num_coordinates(
                np.asarray(frame.geometry.to_numpy(), dtype=object)[hits]
            )
            cost += np.bincount(located[box_at], weights=weights, minlength=n_chunks)
        return cost

    def __iter__(self) -> Iterator[Chunk]:
        """Yield every chunk in plan order."""
        for i in range(self.plan.n_chunks):
            yield self.chunk(i)
