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


def constrained_area(
    band_sqft: FloatArray, left: GeomArray | None, pieces: list[GeomArray]
) -> FloatArray:
    """Return each parcel's area in the union of the wetland band and ``pieces``.

    Parameters
    ----------
    band_sqft
        Each parcel's area inside the band (:func:`gis_sw.analysis.bands.band_left`).
    left
        What the band leaves of each parcel (empty where it covers it all), None where the
        band covers none of it; None for the whole array without a wetlands layer (then
        ``band_sqft`` is not read).
    pieces
        The parcels' parts inside the other layers (water bodies, floodplain), None where
        none; they are unioned with :func:`merge_pieces`, in this order.

    Returns
    -------
    ndarray
        The band's area plus the area of the other parts outside it, as the area of the
        union of the band's part and the others would be (to floating-point rounding), but
        with one overlay only where the others and what the band left both exist and
        cross: a parcel without band gets the area of the others' union, and one the band
        covers (or whose others lie inside it) the band's area.
    """
    first = pieces[0] if pieces else np.full(len(band_sqft), None, dtype=object)
    others: GeomArray = np.full(len(first), None, dtype=object)
    for piece in pieces:
        others = merge_pieces(others, piece)
    area: FloatArray = np.nan_to_num(shapely.area(others).astype(np.float64))
    if left is None:
        return area
    banded = left != None  # noqa: E711
    area[banded] = band_sqft[banded]
    both = np.flatnonzero(banded & (others != None))  # noqa: E711
    both = both[~shapely.is_empty(left[both])]
    if len(both) == 0:
        return area
    rest, more = left[both], others[both]
    shapely.prepare(rest)
    meets = shapely.intersects(rest, more)
    rest, more, both = rest[meets], more[meets], both[meets]
    within = shapely.covers(rest, more)  # the others all outside the band: no overlay
    outside = np.empty(len(both), dtype=np.float64)
    outside[within] = shapely.area(more[within])
    outside[~within] = shapely.area(shapely.intersection(rest[~within], more[~within]))
    area[both] += outside
    return area
