"""Cover pieces and their soil-group areas for thousands of drainage areas at once.

:func:`~gis_sw.analysis.runoff.cover.split_cover` and
:func:`~gis_sw.analysis.runoff.cover.subarea_columns` work on one drainage area: a dozen
GEOS calls each, whose Python overhead, for 20,000 proposals, costs as much as the overlays
themselves.  Here each step runs as one vectorised call over every drainage area: the
``k``-th cover level of every area is cut from what the levels above left in that area in one
``shapely.intersection`` and one ``shapely.difference``; every piece meets its own area's
soil groups in one ``shapely.intersection``, and is freed of them letter by letter in one
``shapely.difference`` per letter.  Only what crosses an edge is overlaid: a level or piece
wholly inside the other side is taken whole, one apart from it skipped (an overlay of two
plain polygons costs tens of microseconds; these tests a few).  The figures equal the
one-area path's to float noise (``tests/test_bigprop2_bulk.py`` checks them to 0.01 sq ft
on generated lots; the sample's outputs are the same bytes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import shapely

from gis_sw.analysis.runoff.cover import (
    MIN_AREA_SQFT,
    CoverLevel,
    add_piece_sums,
    sums_to_columns,
)
from gis_sw.analysis.runoff.levels import many_small_flags
from gis_sw.analysis.runoff.params import HydrologyParams

__all__ = ["split_cover_bulk", "split_levels_bulk", "subarea_columns_bulk"]

_MIN_AREA_SQFT = MIN_AREA_SQFT


State = tuple[np.ndarray, list[list[CoverLevel]]]
"""What is left of each area, and its pieces so far, after some of its levels."""


def split_levels_bulk(
    areas: Sequence[shapely.Geometry],
    levels: Sequence[Sequence[CoverLevel]],
    *,
    start: State | None = None,
) -> State:
    """Cut each area's levels, in order, from what is left of it (no default piece).

    ``start``: the state to go on from (copied), else each whole area with no piece.
    """
    if start is not None:
        remaining = start[0].copy()
        pieces = [list(p) for p in start[1]]
    else:
        remaining = np.empty(len(areas), dtype=object)
        remaining[:] = list(areas)
        pieces = [[] for _ in range(len(areas))]
    n = len(remaining)
    depth = max((len(lv) for lv in levels), default=0)
    for k in range(depth):
        which = np.array([i for i in range(n) if len(levels[i]) > k], dtype="int64")
        level_geoms = np.empty(len(which), dtype=object)
        level_geoms[:] = [levels[i][k].geometry for i in which.tolist()]
        live = ~shapely.is_empty(level_geoms) & ~shapely.is_empty(remaining[which])
        which, level_geoms = which[live], level_geoms[live]
        if len(which) == 0:
            continue
        left = remaining[which]
        meets = shapely.intersects(left, level_geoms)  # a level apart takes nothing
        which, level_geoms, left = which[meets], level_geoms[meets], left[meets]
        cut = level_geoms.copy()  # a level wholly inside what is left is its own piece
        edge = ~shapely.contains_properly(left, level_geoms)
        cut[edge] = shapely.intersection(level_geoms[edge], left[edge])
        kept = shapely.area(cut) > _MIN_AREA_SQFT
        for i, piece in zip(which[kept].tolist(), cut[kept].tolist(), strict=True):
            level = levels[i][k]
            pieces[i].append(CoverLevel(level.source, level.cover, piece))
        remaining[which] = shapely.difference(left, level_geoms)
    return remaining, pieces


def split_cover_bulk(
    areas: Sequence[shapely.Geometry],
    levels: Sequence[Sequence[CoverLevel]],
    default: str,
    *,
    start: State | None = None,
) -> list[list[CoverLevel]]:
    """Return :func:`~gis_sw.analysis.runoff.cover.split_cover` of each area and its levels.

    Parameters
    ----------
    areas
        The drainage areas.
    levels
        Each area's cover levels, highest priority first (after those of ``start``).
    default
        The cover of the ground no level takes.
    start
        The :func:`split_levels_bulk` state of levels above these (the same pieces: each
        step is the same GEOS call on the same polygons), else none.

    Returns
    -------
    list of list of CoverLevel
        Each area's pieces, as the one-area function gives them.
    """
    remaining, pieces = split_levels_bulk(areas, levels, start=start)
    left = ~shapely.is_empty(remaining) & (shapely.area(remaining) > _MIN_AREA_SQFT)
    for i in np.flatnonzero(left).tolist():
        pieces[i].append(CoverLevel("default pervious cover", default, remaining[i]))
    return pieces


def _flat_pairs(
    pieces: Sequence[Sequence[CoverLevel]], groups: Sequence[Mapping[str, shapely.Geometry]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return every piece, the index of its area, and the number of its area's soil groups."""
    geoms = [p.geometry for ps in pieces for p in ps]
    owner = np.repeat(np.arange(len(pieces)), [len(ps) for ps in pieces])
    flat = np.asarray(geoms, dtype=object) if geoms else np.empty(0, dtype=object)
    return flat, owner, np.array([len(groups[i]) for i in owner.tolist()], dtype="int64")


def _pair_areas(
    flat: np.ndarray, pair_piece: np.ndarray, pair_group: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return each pair's area of the piece inside the group, and each piece's area outside.

    Only the pairs whose piece crosses the group's edge are overlaid (one call for all): a
    piece wholly inside a group is that group's whole (and has no ground outside every
    group), a piece apart from a group has none of it.  The ground outside is what is left
    after taking the crossing groups away in letter order.
    """
    piece_of = flat[pair_piece]
    shapely.prepare(pair_group)
    within = shapely.contains_properly(pair_group, piece_of)
    cross = shapely.intersects(pair_group, piece_of) & ~within
    inside = np.zeros(len(pair_piece))
    inside[within] = shapely.area(piece_of[within])
    inside[cross] = shapely.area(shapely.intersection(piece_of[cross], pair_group[cross]))
    swallowed = np.zeros(len(flat), dtype=bool)
    swallowed[pair_piece[within]] = True
    rank = np.arange(len(pair_piece)) - np.repeat(np.cumsum(counts) - counts, counts)
    left = flat.copy()
    for m in range(int(counts.max(initial=0))):
        sel = cross & (rank == m) & ~swallowed[pair_piece]
        j = pair_piece[sel]
        left[j] = shapely.difference(left[j], pair_group[sel])
    left_areas = shapely.area(left)
    left_areas[swallowed] = 0.0
    return inside, left_areas


Known = dict[tuple[int, int], tuple[np.ndarray, float]]
"""Areas of pieces split by soil groups, by (id of the piece, id of the groups)."""


def _known_areas(
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    keys: list[tuple[int, int]],
    known: Known,
) -> tuple[np.ndarray, np.ndarray]:
    """Return :func:`_pair_areas`, overlaying only the pieces ``known`` does not hold."""
    flat, pair_piece, pair_group, counts = pairs
    held = np.array([k in known for k in keys], dtype=bool)
    todo = np.flatnonzero(~held)
    renumber = np.cumsum(~held) - 1
    sel = ~held[pair_piece]
    inside = np.zeros(len(pair_piece))
    left_areas = np.zeros(len(flat))
    inside[sel], left_areas[todo] = _pair_areas(
        flat[todo], renumber[pair_piece[sel]], pair_group[sel], counts[todo]
    )
    starts = np.cumsum(counts) - counts
    for j in np.flatnonzero(held).tolist():
        inside[starts[j] : starts[j] + counts[j]], left_areas[j] = known[keys[j]]
    for j in todo.tolist():
        known[keys[j]] = (inside[starts[j] : starts[j] + counts[j]].copy(), float(left_areas[j]))
    return inside, left_areas


def subarea_columns_bulk(
    pieces: Sequence[Sequence[CoverLevel]],
    groups: Sequence[Mapping[str, shapely.Geometry]],
    params: HydrologyParams,
    *,
    known: Known | None = None,
) -> list[dict[str, np.ndarray] | None]:
    """Return :func:`~gis_sw.analysis.runoff.cover.subarea_columns` of each area's pieces.

    Parameters
    ----------
    pieces
        Each area's cover pieces (:func:`split_cover_bulk`).
    groups
        Each area's soil groups (:func:`~gis_sw.analysis.runoff.cover.soil_groups`).
    params
        The ruleset's hydrology parameters (curve numbers and C of each cover).
    known
        The areas of pieces already split by the same soil groups (the same piece and
        groups objects: the same figures), read from and added to.

    Returns
    -------
    list
        Each area's columns; None for an area with a piece of many small parts (summed
        part by part by the one-area function, which the caller calls for it).
    """
    owner = np.repeat(np.arange(len(pieces)), [len(ps) for ps in pieces])
    many = many_small_flags([p.geometry for ps in pieces for p in ps])
    has_many = np.bincount(owner[many], minlength=len(pieces)) > 0
    skip = [bool(g) and bool(m) for g, m in zip(groups, has_many.tolist(), strict=True)]
    mine = [[] if skip[i] else list(ps) for i, ps in enumerate(pieces)]
    flat, owner, counts = _flat_pairs(mine, groups)
    letters = [sorted(g) for g in groups]
    # every (piece, group) pair, letters in order
    pair_piece = np.repeat(np.arange(len(flat)), counts)
    pair_group = np.array(
        [groups[i][letter] for i in owner.tolist() for letter in letters[i]], dtype=object
    )
    levels = [p for ps in mine for p in ps]
    inside, left_areas = _known_areas(
        (flat, pair_piece, pair_group, counts),
        [(id(p), id(groups[i])) for p, i in zip(levels, owner.tolist(), strict=True)],
        {} if known is None else known,
    )
    out: list[dict[str, np.ndarray] | None] = []
    j = pair = 0
    for i, ps in enumerate(mine):
        if skip[i]:
            out.append(None)
            continue
        sums: dict[tuple[str, str, str | None], float] = {}
        for piece in ps:
            by_letter = [(t, float(inside[pair + m])) for m, t in enumerate(letters[i])]
            pair += len(letters[i])
            add_piece_sums(sums, piece, by_letter, float(left_areas[j]))
            j += 1
        out.append(sums_to_columns(sums, params))
    return out
