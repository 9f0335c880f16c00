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

from gis_sw.layers.geoms import unlocated


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
        """Return the number of pairs."""
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
        Sorted by source, then distance, then target (ties go to the first target row).
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
    # ties at one distance go to the first target row, whatever order the tree returns
    order = np.lexsort((t_idx, dist, s_idx))
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


CHUNK_VERTICES = 16
"""Long rings and lines are cut into pieces of this many vertices before a nearest search."""


def _pieces(targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boundaries (polygons) and lines cut into short linestrings, with their target index.

    The distance from a geometry outside a polygon to the polygon is its distance to the
    polygon's boundary, so the nearest piece gives the exact distance; short pieces keep
    the tree's exact distance computations cheap (a 3,000-vertex lake otherwise costs a
    full ring scan for every candidate).
    """
    parts, owner = shapely.get_parts(targets, return_index=True)
    polygonal = np.isin(shapely.get_type_id(parts), [3])
    edges = parts.copy()
    edges[polygonal] = shapely.boundary(parts[polygonal])
    lines, line_owner = shapely.get_parts(edges, return_index=True)
    owner = owner[line_owner]
    is_line = shapely.get_type_id(lines) == 1
    points, point_owner = lines[~is_line], owner[~is_line]
    lines, owner = lines[is_line], owner[is_line]
    coords, line_idx = shapely.get_coordinates(lines, return_index=True)
    if len(coords) == 0:
        return points, point_owner
    counts = np.bincount(line_idx, minlength=len(lines))
    starts = np.cumsum(counts) - counts
    pos = np.arange(len(coords)) - starts[line_idx]
    chunk = pos // CHUNK_VERTICES
    # a vertex that starts a chunk also ends the previous one
    again = (pos % CHUNK_VERTICES == 0) & (pos > 0)
    all_coords = np.concatenate([coords, coords[again]])
    all_line = np.concatenate([line_idx, line_idx[again]])
    all_chunk = np.concatenate([chunk, chunk[again] - 1])
    all_pos = np.concatenate([pos, pos[again]])
    order = np.lexsort((all_pos, all_chunk, all_line))
    all_coords, all_line, all_chunk = all_coords[order], all_line[order], all_chunk[order]
    key = all_line.astype("int64") * (int(all_chunk.max()) + 1) + all_chunk
    first = np.r_[True, key[1:] != key[:-1]]
    piece_id = np.cumsum(first) - 1
    sizes = np.bincount(piece_id)
    keep = sizes[piece_id] >= 2
    piece_line = all_line[first]
    valid = sizes >= 2
    remap = np.cumsum(valid) - 1
    pieces = shapely.linestrings(all_coords[keep], indices=remap[piece_id[keep]])
    return (
        np.concatenate([np.asarray(pieces, dtype=object), points]),
        np.concatenate([owner[piece_line[valid]], point_owner]),
    )


TIE_FT = 1e-9
"""Distances this close are a tie, which goes to the first target row."""


def _first_of_ties(
    source: np.ndarray, target: np.ndarray, distance_ft: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return one (source, target, distance) per source: the nearest, ties to the first row.

    Distances within :data:`TIE_FT` of a source's least are ties; the lowest target index
    among them wins, so the answer never depends on the order a tree returns its matches.
    """
    if len(source) == 0:
        return source, target, distance_ft
    least = np.full(int(source.max()) + 1, np.inf)
    np.fmin.at(least, source, distance_ft)
    tied = distance_ft <= least[source] + TIE_FT
    source, target, distance_ft = source[tied], target[tied], distance_ft[tied]
    order = np.lexsort((target, source))
    source, target, distance_ft = source[order], target[order], distance_ft[order]
    first = np.r_[True, source[1:] != source[:-1]]
    return source[first], target[first], distance_ft[first]


def nearest(sources: object, targets: object) -> tuple[np.ndarray, np.ndarray]:
    """Nearest target of each source at any distance, exact.

    Sources inside or touching a polygon target are at 0.  Otherwise the nearest piece of
    every target's boundary (cut into short pieces, :func:`_pieces`) gives the distance.
    Targets at the same distance (within :data:`TIE_FT`) are a tie, which goes to the first
    target row: the answer does not depend on the tree's order.

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
    valid = ~unlocated(src) if len(src) else np.empty(0, bool)
    if len(src) == 0 or len(tgt) == 0 or not valid.any():
        return index, dist
    rows = np.flatnonzero(valid)
    pieces, owner = _pieces(tgt[~unlocated(tgt)])
    kept = np.flatnonzero(~unlocated(tgt))
    if len(pieces) == 0:
        return index, dist
    tree = shapely.STRtree(pieces)
    (s_idx, _), d = tree.query_nearest(src[rows], return_distance=True, all_matches=False)
    # every piece within a hair of the least distance is a tie: the first target row wins
    least = np.full(len(rows), np.inf)
    least[s_idx] = d
    found = np.isfinite(least)
    s_near, p_near = tree.query(
        src[rows][found], predicate="dwithin", distance=least[found] + TIE_FT
    )
    s_near = np.flatnonzero(found)[s_near]
    d_near = shapely.distance(src[rows][s_near], pieces[p_near])
    s_pick, t_pick, d_pick = _first_of_ties(s_near, kept[owner[p_near]], d_near)
    index[rows[s_pick]] = t_pick
    dist[rows[s_pick]] = d_pick
    # inside a polygon: distance 0 to it (the first such polygon row)
    polygons = np.flatnonzero(np.isin(shapely.get_type_id(tgt), [3, 6]))
    if len(polygons):
        s_in, t_in = shapely.STRtree(tgt[polygons]).query(src[rows], predicate="intersects")
        s_in, t_in, _ = _first_of_ties(s_in, polygons[t_in], np.zeros(len(s_in)))
        index[rows[s_in]] = t_in
        dist[rows[s_in]] = 0.0
    return index, dist


def round_ft(distance_ft: object) -> np.ndarray:
    """Distances rounded to 0.01 ft, the precision the law is applied at."""
    return np.round(np.asarray(distance_ft, dtype="float64"), 2)


def meets_minimum(distance_ft: object, minimum_ft: float, tolerance_ft: float) -> np.ndarray:
    """Return True where a distance, rounded to 0.01 ft, is at least ``minimum_ft``.

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
