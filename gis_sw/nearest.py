"""The nearest features of many geometries, without a search of each where a grid settles it.

:meth:`gis_sw.Town.local` keeps, for every proposal geometry, its nearest feature of each
layer at any distance (SW208), and :func:`gis_sw.around.read_around` checks that a window
holds them.  A proposal of 100,000 small polygons made that 100,000 nearest searches per
layer, three times.  Here:

* :func:`near_mask`: the geometries sure to have a feature within the reach, whose nearest
  features lie in the region box and in every window anyway (no search);
* :func:`cell_nearest`: of the others, those whose grid cell leaves few candidate features,
  measured against those candidates only;
* :func:`far_box`: the box holding every feature as near as the nearest, from both.

Each test is conservative (a geometry it cannot settle is searched as before), so the
features kept and the windows' checks are the same as a search of every geometry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from gis_sw.layers.geoms import unlocated
from gis_sw.layers.window import Bounds

__all__ = [
    "CELL_CANDIDATES",
    "EXACT_NEAR_MAX",
    "Nearest",
    "cell_nearest",
    "far_box",
    "near_mask",
    "nearest_box",
    "split_nearest",
]

NEAR_SLACK = 1e-6
"""Relative slack under the reach for :func:`near_mask` (float rounding never lets a
geometry called near have its nearest feature beyond the reach)."""


EXACT_NEAR_MAX = 256
"""Up to this many geometries, :func:`near_mask` asks the tree directly (one ``dwithin``
query: for one proposal's few geometries cheaper than the grid's nearest search)."""


def near_mask(arr: np.ndarray, tree: shapely.STRtree, reach_ft: float) -> np.ndarray:
    """Return True for each geometry of ``arr`` sure to have a feature of ``tree`` within reach.

    The nearest features of such a geometry lie within its envelope grown by the reach, so
    in a box query of the region and in any window holding that grown envelope: only the
    others need a nearest search.  Up to :data:`EXACT_NEAR_MAX` geometries, a geometry is
    near when a feature lies within the reach (less :data:`NEAR_SLACK`); for more, decided
    per cell of a grid (a quarter of the reach) in one search of the cells' centres: a
    geometry whose envelope's farthest corner from its cell's centre, plus that centre's
    distance to its nearest feature, is within the reach is near (the distance to a feature
    is at most that sum).  A conservative test: a geometry called far may be near, never
    the reverse.
    """
    near = np.zeros(len(arr), dtype=bool)
    if not len(arr) or not len(tree.geometries) or not reach_ft > 0:
        return near
    if len(arr) <= EXACT_NEAR_MAX:
        located = np.flatnonzero(~unlocated(arr))
        hit, _ = tree.query(
            arr[located], predicate="dwithin", distance=reach_ft * (1.0 - NEAR_SLACK)
        )
        near[located[hit]] = True
        return near
    centres, which, corner_ft = _cells(arr, reach_ft / 4.0)
    (hit, _), dist = tree.query_nearest(
        shapely.points(centres), return_distance=True, all_matches=False
    )
    centre_ft = np.full(len(centres), np.inf)
    centre_ft[hit] = dist
    near[:] = corner_ft + centre_ft[which] <= reach_ft * (1.0 - NEAR_SLACK)
    return near


def _cells(arr: np.ndarray, cell: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the centres of the grid cells (side ``cell``) of ``arr``'s envelopes.

    Also each geometry's cell, and the distance from its cell's centre to the farthest
    corner of its envelope (no point of the geometry is farther).
    """
    bounds = shapely.bounds(arr)
    ij = np.floor((bounds[:, :2] + bounds[:, 2:]) / 2.0 / cell).astype(np.int64)
    low = ij.min(axis=0)
    span = int(ij[:, 1].max() - low[1]) + 1
    keys, which = np.unique((ij[:, 0] - low[0]) * span + (ij[:, 1] - low[1]), return_inverse=True)
    which = which.reshape(-1)
    cells = np.column_stack([keys // span + low[0], keys % span + low[1]]).astype(float)
    centres = (cells + 0.5) * cell
    c = centres[which]
    dx = np.maximum(np.abs(bounds[:, 0] - c[:, 0]), np.abs(bounds[:, 2] - c[:, 0]))
    dy = np.maximum(np.abs(bounds[:, 1] - c[:, 1]), np.abs(bounds[:, 3] - c[:, 1]))
    return centres, which, np.hypot(dx, dy)


CELL_CANDIDATES = 16
"""Most features :func:`cell_nearest` measures per geometry (beyond: a search of each)."""


@dataclass(frozen=True, slots=True)
class Nearest:
    """The nearest features of some geometries (ties included), and those left to search.

    ``where``, ``rows``: pairs of a geometry and one of its nearest features, as
    ``STRtree.query_nearest(..., all_matches=True)`` gives; ``dist_ft``: their distance,
    NaN where not measured (a geometry with one candidate feature), then within
    ``low_ft``-``high_ft``; ``searched``: True for a geometry whose pairs are not here.
    """

    where: np.ndarray
    rows: np.ndarray
    dist_ft: np.ndarray
    low_ft: np.ndarray
    high_ft: np.ndarray
    searched: np.ndarray


def cell_nearest(arr: np.ndarray, tree: shapely.STRtree, reach_ft: float) -> Nearest:
    """Return the nearest features of the geometries of ``arr`` a grid of cells can settle.

    Per grid cell (:func:`_cells`): with ``d`` the distance from the cell's centre to its
    nearest feature and ``r`` the largest corner distance of the cell's geometries, each
    geometry's nearest features lie within ``d + 2 r`` of the centre.  Where that disc
    holds at most :data:`CELL_CANDIDATES` features, each geometry's distance to each of
    them is measured and the nearest kept (every one at the least distance); the others
    are left to search (``searched``).
    """
    empty = np.empty(0, dtype=np.intp)
    if not len(arr) or not len(tree.geometries) or not reach_ft > 0:
        none = np.empty(0)
        return Nearest(empty, empty, none, none, none, np.ones(len(arr), dtype=bool))
    centres, which, corner_ft = _cells(arr, reach_ft / 16.0)
    spread_ft = np.zeros(len(centres))
    np.maximum.at(spread_ft, which, corner_ft)
    points = np.asarray(shapely.points(centres), dtype=object)
    (hit, _), dist = tree.query_nearest(points, return_distance=True, all_matches=False)
    centre_ft = np.full(len(centres), -1.0)
    centre_ft[hit] = dist
    ok = np.flatnonzero(centre_ft >= 0)
    radius = _widened(centre_ft[ok] + 2.0 * spread_ft[ok])
    cell_of, feature = tree.query(points[ok], predicate="dwithin", distance=radius)
    cell_of = ok[cell_of]
    order = np.argsort(cell_of, kind="stable")
    cell_of, feature = cell_of[order], feature[order]
    # each candidate's distance from its cell's centre: a geometry's nearest features lie
    # within (centre's nearest + 2 x its own corner distance) of the centre
    from_centre = np.asarray(shapely.distance(points[cell_of], tree.geometries[feature]))
    count = np.bincount(cell_of, minlength=len(centres))
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    good = (count > 0) & (count <= CELL_CANDIDATES)
    mine = np.flatnonzero(good[which])
    per = count[which[mine]]
    where = np.repeat(mine, per)
    first = np.repeat(np.cumsum(per) - per, per)
    pair = np.repeat(start[which[mine]], per) + np.arange(len(where)) - first
    keep = from_centre[pair] <= _widened(centre_ft[which[where]] + 2.0 * corner_ft[where])
    where, rows, pair = where[keep], feature[pair[keep]], pair[keep]
    # one candidate left: it is the nearest, its distance within the centre's +- corner
    alone = np.bincount(where, minlength=len(arr))[where] == 1
    dist_ft = np.full(len(where), np.nan)
    dist_ft[~alone] = shapely.distance(arr[where[~alone]], tree.geometries[rows[~alone]])
    least = np.full(len(arr), np.inf)
    np.minimum.at(least, where[~alone], dist_ft[~alone])
    tie = alone | (dist_ft == least[where])
    corner = corner_ft[where]
    low = np.maximum(from_centre[pair] - corner, 0.0) * (1.0 - NEAR_SLACK) - NEAR_SLACK
    high = _widened(from_centre[pair] + corner)
    return Nearest(where[tie], rows[tie], dist_ft[tie], low[tie], high[tie], ~good[which])


def _widened(radius_ft: np.ndarray) -> np.ndarray:
    """Return ``radius_ft`` a little wider (float rounding never drops a candidate)."""
    return radius_ft * (1.0 + NEAR_SLACK) + NEAR_SLACK


def split_nearest(
    arr: np.ndarray, tree: shapely.STRtree, reach_ft: float
) -> tuple[np.ndarray, Nearest]:
    """Return the geometries with no feature within the reach, and their nearest features.

    The others have their nearest features in the region box and in every window
    (:func:`near_mask`); of these far ones, :func:`cell_nearest` finds the nearest
    features of those it can without a search of each.
    """
    far = arr[~near_mask(arr, tree, reach_ft)]
    return far, cell_nearest(far, tree, reach_ft)


def far_box(
    far: np.ndarray, found: Nearest, layer: np.ndarray, tree: shapely.STRtree
) -> Bounds | None:
    """Return the box holding every feature as near to ``far`` as its nearest (None: none).

    ``found``: :func:`cell_nearest` of ``far``; the geometries it left are searched here,
    and a distance it did not measure is measured where it may set a side of the box.
    """
    boxes: list[Bounds | None] = []
    if len(found.where):
        boxes.append(_grown_each(far[found.where], _measured(far, found, layer)))
    if found.searched.any():
        boxes.append(nearest_box(far[found.searched], layer, tree))
    if not boxes or any(b is None for b in boxes):
        return None
    every = np.array(boxes, dtype=float)
    return (
        float(every[:, 0].min()),
        float(every[:, 1].min()),
        float(every[:, 2].max()),
        float(every[:, 3].max()),
    )


def _measured(far: np.ndarray, found: Nearest, layer: np.ndarray) -> np.ndarray:
    """Return ``found``'s distances, measuring the unmeasured that may set a side of the box.

    A side is the least of ``edge - distance`` (or the most of ``edge + distance``); a pair
    whose best case cannot reach the worst case of another is left out (``-inf`` / ``inf``
    where it cannot count, so the box is the one every distance measured would give).
    """
    bounds = shapely.bounds(far[found.where])
    dist = found.dist_ft.copy()
    todo = np.isnan(dist)
    if not todo.any():
        return dist
    low = np.where(todo, found.low_ft, dist)
    high = np.where(todo, found.high_ft, dist)
    need = np.zeros(len(dist), dtype=bool)
    for side, sign in ((0, -1.0), (1, -1.0), (2, 1.0), (3, 1.0)):
        # value = edge + sign * distance; the least (sign -1) or most (sign +1) counts
        edge = sign * bounds[:, side]
        best = edge + high  # the most ``sign * value`` can be
        worst = edge + low
        need |= todo & (best >= worst.max())
    dist[need] = shapely.distance(far[found.where[need]], layer[found.rows[need]])
    # the others cannot set a side: give them a distance that cannot either
    dist[todo & ~need] = found.low_ft[todo & ~need]
    return dist


def _grown_each(geoms: np.ndarray, dist: np.ndarray) -> Bounds:
    """Return the envelope of ``geoms``, each grown by its ``dist``."""
    bounds = shapely.bounds(geoms)
    return (
        float((bounds[:, 0] - dist).min()),
        float((bounds[:, 1] - dist).min()),
        float((bounds[:, 2] + dist).max()),
        float((bounds[:, 3] + dist).max()),
    )


def _nearest_reach(geoms: np.ndarray, nearest: np.ndarray) -> Bounds:
    """Return the envelope of ``geoms`` each grown by its distance to its ``nearest``."""
    return _grown_each(geoms, shapely.distance(geoms, nearest))


def nearest_box(
    arr: np.ndarray, layer: np.ndarray, tree: shapely.STRtree | None = None
) -> Bounds | None:
    """Return the box holding every feature of ``layer`` as near to ``arr`` as its nearest.

    None when ``layer`` is empty (the nearest may be anywhere).  ``tree``: an STRtree of
    ``layer`` already built.
    """
    if not len(layer):
        return None
    tree = shapely.STRtree(layer) if tree is None else tree
    where, rows = tree.query_nearest(arr, all_matches=False)
    return _nearest_reach(arr[where], layer[rows])
