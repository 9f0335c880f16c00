"""Exact horizontal distances between feature sets, without buffers.

Every helper here follows one pattern: an STRtree over the targets answers
``query(predicate="dwithin")`` for candidate pairs, and ``shapely.distance`` is then computed
exactly on those pairs only.  Nothing reads a distance off a polygonised buffer.

Distances are compared with the law's limits after rounding to 0.01 ft
(:func:`meets_minimum`), so a device exactly 10.00 ft away passes a 10 ft minimum and one
9.99 ft away fails it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely


@dataclass(frozen=True, slots=True)
class Pairs:
    """Source/target index pairs with their exact distance, ft.

    Attributes
    ----------
    source, target
        Positional indexes into the source and target arrays.
    distance_ft
        Exact ``shapely.distance`` of each pair.
    """

    source: np.ndarray
    target: np.ndarray
    distance_ft: np.ndarray

    def __len__(self) -> int:
        return len(self.source)


def _geoms(values: object) -> np.ndarray:
    return np.asarray(values, dtype=object).reshape(-1) if values is not None else np.empty(0)


def pairs_within(sources: object, targets: object, distance_ft: float) -> Pairs:
    """Every (source, target) pair no farther apart than ``distance_ft``, with exact distances.

    Parameters
    ----------
    sources, targets
        Arrays (or GeoSeries) of shapely geometries; ``None`` and empty geometries never pair.
    distance_ft
        Search distance; pairs exactly at this distance are included.

    Returns
    -------
    Pairs
        Sorted by source, then distance.
    """
    src = _geoms(sources)
    tgt = _geoms(targets)
    if len(src) == 0 or len(tgt) == 0:
        empty = np.empty(0, dtype="int64")
        return Pairs(empty, empty, np.empty(0))
    tree = shapely.STRtree(tgt)
    # A hair of slack so that a pair exactly at the limit is never lost to rounding in GEOS.
    s_idx, t_idx = tree.query(src, predicate="dwithin", distance=distance_ft + 1e-9)
    dist = shapely.distance(src[s_idx], tgt[t_idx])
    order = np.lexsort((dist, s_idx))
    return Pairs(s_idx[order].astype("int64"), t_idx[order].astype("int64"), dist[order])


def nearest_within(
    sources: object, targets: object, distance_ft: float
) -> tuple[np.ndarray, np.ndarray]:
    """Nearest target within ``distance_ft`` of each source.

    Returns
    -------
    (index, distance_ft)
        Per source: positional index of the nearest target (-1 when none is that close) and
        its exact distance (``nan`` when none).
    """
    src = _geoms(sources)
    pairs = pairs_within(src, targets, distance_ft)
    index = np.full(len(src), -1, dtype="int64")
    dist = np.full(len(src), np.nan)
    if len(pairs):
        # pairs are sorted by source then distance: the first row of each source is nearest
        first = np.r_[True, pairs.source[1:] != pairs.source[:-1]]
        index[pairs.source[first]] = pairs.target[first]
        dist[pairs.source[first]] = pairs.distance_ft[first]
    return index, dist


def nearest(sources: object, targets: object) -> tuple[np.ndarray, np.ndarray]:
    """Nearest target of each source at any distance (exact; the tree prunes by bounds).

    Returns
    -------
    (index, distance_ft)
        Per source: positional index of the nearest target (-1 when there are no targets
        or the source is empty) and its exact distance (``nan`` when none).
    """
    src = _geoms(sources)
    tgt = _geoms(targets)
    index = np.full(len(src), -1, dtype="int64")
    dist = np.full(len(src), np.nan)
    valid = ~(shapely.is_missing(src) | shapely.is_empty(src)) if len(src) else np.empty(0, bool)
    if len(src) == 0 or len(tgt) == 0 or not valid.any():
        return index, dist
    tree = shapely.STRtree(tgt)
    (s_idx, t_idx), d = tree.query_nearest(src[valid], return_distance=True, all_matches=False)
    rows = np.flatnonzero(valid)[s_idx]
    index[rows] = t_idx
    dist[rows] = d
    return index, dist


def round_ft(distance_ft: object) -> np.ndarray:
    """Distances rounded to 0.01 ft, the precision the law is applied at."""
    return np.round(np.asarray(distance_ft, dtype="float64"), 2)


def meets_minimum(distance_ft: object, minimum_ft: float, tolerance_ft: float) -> np.ndarray:
    """True where a distance, rounded to 0.01 ft, is at least ``minimum_ft``.

    ``nan`` (nothing measured) is reported as False; callers decide what an absent
    measurement means.
    """
    rounded = round_ft(distance_ft)
    with np.errstate(invalid="ignore"):
        return np.asarray(rounded >= minimum_ft - tolerance_ft)


def shortest_lines(sources: object, targets: object) -> np.ndarray:
    """Shortest line from each source to its paired target (element-wise)."""
    return np.asarray(shapely.shortest_line(_geoms(sources), _geoms(targets)), dtype=object)


def grown_radius(radius_ft: float, quad_segs: int) -> float:
    """Buffer radius whose chords never come closer than ``radius_ft`` to the centre.

    A buffer approximates each quarter circle with ``quad_segs`` chords whose vertices lie on
    the circle; the middle of a chord is ``r * cos(pi / (4 * quad_segs))`` from the centre.
    Growing the radius by ``1 / cos`` puts every chord outside the true circle, so the
    difference with such a buffer never lets a point closer than ``radius_ft`` through.
    """
    if radius_ft <= 0:
        return radius_ft
    return radius_ft / float(np.cos(np.pi / (4 * quad_segs)))
