"""Subtract constraint polygons from lots, every lot at once: the siting polygons.

One STRtree query pairs the constraint pieces with the lots; then round ``j`` subtracts
the ``j``-th piece of every lot that has one, in one vectorised ``difference``.  The number
of rounds is the largest number of pieces touching one lot (a dozen in a town), not the
number of lots; on 10,000 parcels this beat a per-parcel union (``make_valid`` of a
multipolygon, ``buffer(0)`` or a ``unary_union`` of a collection) followed by one
difference by 1.5x to 3x.

The pieces of a lot are taken in an order fixed by their own geometry (envelope, then
area), not by their position in the input: a lot screened with a different set of
neighbours (a batch chunk and its halo) gets the same polygon to the last bit.
"""

from __future__ import annotations

import numpy as np
import shapely


def polygon_pieces(parts: list[np.ndarray]) -> np.ndarray:
    """Return the non-empty polygons of ``parts`` (multi-part geometries split)."""
    if not parts:
        return np.empty(0, dtype=object)
    pieces = shapely.get_parts(np.concatenate(parts))
    return pieces[(shapely.get_type_id(pieces) == 3) & ~shapely.is_empty(pieces)]


def ordered_pairs(
    inner: np.ndarray,
    pieces: np.ndarray,
    tree: shapely.STRtree | None = None,
    *,
    biggest_first: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Return the (lot, piece) pairs that intersect, by lot, then by the piece's geometry.

    The pieces of a lot come by envelope, then area; with ``biggest_first`` by area,
    largest first, then envelope (a big zone taken first leaves less for the others to
    meet: :func:`difference_rounds` then skips them).
    """
    tree = tree if tree is not None else shapely.STRtree(pieces)
    p_idx, c_idx = tree.query(inner, predicate="intersects")
    box = shapely.bounds(pieces)[c_idx]
    size = shapely.area(pieces)[c_idx]
    corners = (box[:, 3], box[:, 2], box[:, 1], box[:, 0])
    keys = (*corners, -size, p_idx) if biggest_first else (size, *corners, p_idx)
    order = np.lexsort(keys)
    return p_idx[order], c_idx[order]


def difference_rounds(
    out: np.ndarray,
    pieces: np.ndarray,
    p_idx: np.ndarray,
    c_idx: np.ndarray,
    *,
    skip_apart: bool = False,
) -> np.ndarray:
    """Subtract, in place, piece ``c_idx[k]`` from lot ``p_idx[k]`` (pairs sorted by lot).

    With ``skip_apart``, a piece that no longer meets what is left of its lot is skipped
    and one that covers it leaves it empty, without an overlay (a prepared predicate per
    pair costs a few per cent of a ``difference``).  The polygons drawn for ``gis-sw
    siting`` take every round as it comes, so they stay the same to the bit.
    """
    if len(p_idx) == 0:
        return out
    counts = np.bincount(p_idx, minlength=len(out))
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(p_idx)) - starts[p_idx]  # position of each piece within its lot
    for j in range(int(counts.max())):
        lots, cuts = p_idx[rank == j], pieces[c_idx[rank == j]]
        if skip_apart:
            shapely.prepare(out[lots])
            meets = shapely.intersects(out[lots], cuts)
            covered = meets & shapely.covered_by(out[lots], cuts)
            out[lots[covered]] = shapely.Polygon()
            lots, cuts = lots[meets & ~covered], cuts[meets & ~covered]
        out[lots] = shapely.difference(out[lots], cuts)
    return out  # overlay results of valid inputs are valid: no make_valid pass


def subtract(inner: np.ndarray, parts: list[np.ndarray]) -> np.ndarray:
    """Return ``inner`` minus every constraint part touching each lot.

    A lot whose pieces all lie strictly inside it, apart from each other, gets them as
    holes without any overlay (:func:`holes_only`, :func:`punch`).
    """
    pieces = polygon_pieces(parts)
    if len(pieces) == 0:
        return inner
    p_idx, c_idx = ordered_pairs(inner, pieces)
    if len(p_idx) == 0:
        return inner
    out = inner.copy()
    holes = holes_only(inner, pieces, p_idx, c_idx)
    if holes.any():
        out[holes] = punch(inner[holes], pieces, p_idx, c_idx, holes)
        keep = ~holes[p_idx]
        p_idx, c_idx = p_idx[keep], c_idx[keep]
    return difference_rounds(out, pieces, p_idx, c_idx)


def holes_only(
    inner: np.ndarray, pieces: np.ndarray, p_idx: np.ndarray, c_idx: np.ndarray
) -> np.ndarray:
    """Return the mask of the lots whose pieces only make holes in them.

    Their pieces all lie strictly inside them, apart from each other, with no holes of
    their own: subtracting them only adds holes, no overlay needed (most lots of a town:
    one house and its basement zone).
    """
    shapely.prepare(inner)
    fits = shapely.contains_properly(inner[p_idx], pieces[c_idx]) & (
        shapely.get_num_interior_rings(pieces[c_idx]) == 0
    )
    ok = shapely.get_type_id(inner) == 3
    ok[p_idx[~fits]] = False
    counts = np.bincount(p_idx, minlength=len(inner))
    several = np.flatnonzero(ok[p_idx] & (counts[p_idx] > 1))
    if len(several):
        owner = p_idx[several]
        mine = pieces[c_idx[several]]
        a, b = shapely.STRtree(mine).query(mine, predicate="intersects")
        clash = (a != b) & (owner[a] == owner[b])
        ok[owner[a[clash]]] = False
    ok[counts == 0] = False
    return ok


def punch(
    shells: np.ndarray,
    pieces: np.ndarray,
    p_idx: np.ndarray,
    c_idx: np.ndarray,
    holes: np.ndarray,
) -> np.ndarray:
    """Return ``shells`` (the lots where ``holes``) with their pieces' outlines as new holes."""
    position = np.cumsum(holes) - 1  # lot row -> position among the punched lots
    rings, at = shapely.get_rings(shells, return_index=True)
    mine = holes[p_idx]
    new = shapely.get_exterior_ring(pieces[c_idx[mine]])
    every = np.concatenate([rings, new])
    where = np.concatenate([at, position[p_idx[mine]]])
    order = np.argsort(where, kind="stable")  # shell first, then its holes, then the new ones
    return np.asarray(shapely.polygons(every[order], indices=where[order]), dtype=object)
