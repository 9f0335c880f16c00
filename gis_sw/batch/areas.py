"""Whole-array area measures of one layer on many parcels, without a per-parcel loop.

Every function takes parcel geometries and layer geometries as numpy arrays of shapely
objects, and answers one figure per parcel.  The work is the shape DESIGN.md measured fast:

* one ``STRtree.query(predicate="intersects")`` for every (parcel, feature) candidate pair;
* a prepared ``contains_properly`` test answers the parcels that lie wholly inside one
  feature without computing an intersection (most of a town, for zoning);
* vectorised ``shapely.intersection`` on the remaining pairs only;
* where several features meet one parcel, their pieces are merged in *rounds*: round ``k``
  unions the ``k``-th piece of every parcel at once (one vectorised call per round, the
  number of rounds is the largest number of features on one parcel), so overlapping
  features are counted once.

Pairs are always ordered by (parcel, feature key), where the key is the feature's row in
the whole layer, so a parcel gets the same figure whichever chunk it is screened in.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import shapely

GeomArray = npt.NDArray[np.object_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def candidate_pairs(
    parcels: GeomArray,
    features: GeomArray,
    keys: IntArray,
    *,
    distance: float | None = None,
) -> tuple[IntArray, IntArray]:
    """(parcel, feature) positions that intersect, ordered by parcel then feature key.

    Parameters
    ----------
    parcels, features
        Geometry arrays; ``None`` and empty geometries never match.
    keys
        One integer per feature, its row in the whole layer (the tie-break order).
    distance
        When given, pairs within this exact distance (``dwithin``) instead.
    """
    if len(parcels) == 0 or len(features) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    tree = shapely.STRtree(features)
    if distance is None:
        pairs = tree.query(parcels, predicate="intersects")
    else:
        pairs = tree.query(parcels, predicate="dwithin", distance=distance)
    parcel_pos = pairs[0].astype(np.int64)
    feature_pos = pairs[1].astype(np.int64)
    order = np.lexsort((keys[feature_pos], parcel_pos))
    return parcel_pos[order], feature_pos[order]


def union_by_parcel(n_parcels: int, parcel_pos: IntArray, pieces: GeomArray) -> GeomArray:
    """Union of the pieces of each parcel, in rounds (``None`` where a parcel has none).

    ``parcel_pos`` must be sorted (as :func:`candidate_pairs` returns it).
    """
    merged: GeomArray = np.full(n_parcels, None, dtype=object)
    if len(parcel_pos) == 0:
        return merged
    starts = np.r_[0, np.flatnonzero(np.diff(parcel_pos)) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(parcel_pos)]))
    rank = np.arange(len(parcel_pos)) - group_start
    for k in range(int(rank.max()) + 1):
        sel = rank == k
        where = parcel_pos[sel]
        if k == 0:
            merged[where] = pieces[sel]
        else:
            merged[where] = shapely.union(merged[where], pieces[sel])
    return merged


def count_within(
    parcels: GeomArray,
    features: GeomArray,
    keys: IntArray,
    *,
    distance_ft: float,
) -> IntArray:
    """Number of features on each parcel or within ``distance_ft`` of it (exact distance)."""
    counts = np.zeros(len(parcels), dtype=np.int64)
    parcel_pos, _ = candidate_pairs(parcels, features, keys, distance=distance_ft)
    if len(parcel_pos):
        counts += np.bincount(parcel_pos, minlength=len(parcels))
    return counts


def obstacles_by_region(
    regions: GeomArray,
    obstacles: GeomArray,
    keys: IntArray,
) -> GeomArray:
    """Union of the obstacle pieces inside each region (``None`` where none meets it).

    Each obstacle is clipped to the region first (an obstacle wholly inside is its own
    piece), then the pieces are unioned in rounds: clipping first keeps the unions small
    when obstacles are big (a wetland's 50-ft zone), measured 2x faster on the sample town
    than unioning whole obstacles and clipping once.
    """
    parcel_pos, feature_pos = candidate_pairs(regions, obstacles, keys)
    pieces = obstacles[feature_pos].copy()
    shapely.prepare(regions)
    crossing = ~shapely.contains_properly(regions[parcel_pos], pieces)
    pieces[crossing] = shapely.intersection(regions[parcel_pos[crossing]], pieces[crossing])
    return union_by_parcel(len(regions), parcel_pos, pieces)


def merge_pieces(first: GeomArray, second: GeomArray) -> GeomArray:
    """Elementwise union of two arrays of optional geometries."""
    both: GeomArray = first.copy()
    only_second = (first == None) & (second != None)  # noqa: E711
    both[only_second] = second[only_second]
    two = (first != None) & (second != None)  # noqa: E711
    if two.any():
        both[two] = shapely.union(first[two], second[two])
    return both


def free_area(regions: GeomArray, blocked: GeomArray) -> FloatArray:
    """Area of each region outside ``blocked`` (pieces already clipped to the region)."""
    area = np.nan_to_num(shapely.area(regions).astype(np.float64))
    has = blocked != None  # noqa: E711
    if has.any():
        area[has] = area[has] - shapely.area(blocked[has])
    return np.maximum(area, 0.0)
