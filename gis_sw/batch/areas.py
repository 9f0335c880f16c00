"""Whole-array helpers of the batch: candidate pairs, nearby counts, merging pieces.

Every function takes parcel geometries and layer geometries as numpy arrays of shapely
objects, and answers one figure per parcel, without a per-parcel loop: one
``STRtree.query`` for every (parcel, feature) candidate pair, then vectorised calls on the
pairs.  Resource areas are :func:`gis_sw.analysis.overlay.area_by_key`; the siting areas
are the siting polygons of :func:`gis_sw.analysis.siting.siting_by_class` (one
implementation for ``gis-sw siting`` and the batch).

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


def count_within(
    parcels: GeomArray,
    features: GeomArray,
    keys: IntArray,
    *,
    distance_ft: float,
) -> IntArray:
    """Return how many features are on each parcel or within ``distance_ft`` (exact distance)."""
    counts = np.zeros(len(parcels), dtype=np.int64)
    parcel_pos, _ = candidate_pairs(parcels, features, keys, distance=distance_ft)
    if len(parcel_pos):
        counts += np.bincount(parcel_pos, minlength=len(parcels))
    return counts


def merge_pieces(first: GeomArray, second: GeomArray) -> GeomArray:
    """Elementwise union of two arrays of optional geometries."""
    both: GeomArray = first.copy()
    only_second = (first == None) & (second != None)  # noqa: E711
    both[only_second] = second[only_second]
    two = (first != None) & (second != None)  # noqa: E711
    if two.any():
        both[two] = shapely.union(first[two], second[two])
    return both
