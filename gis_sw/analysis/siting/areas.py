"""The areas of the siting polygons without drawing them: what the townwide batch needs.

Measured on a 10,000-parcel town of ``gis-sw sample`` (one thread, 32 segments), the
polygons cost GEOS ``difference`` 0.44 s and ``buffer`` 0.20 s of 0.86 s.  Most of the
differences are not needed for an area:

- A piece (a basement zone, a septic zone, a well's 50-ft circle) that lies strictly
  inside the lot and touches no other piece of the lot takes away exactly its own area:
  ``area(lot - pieces) = area(lot - the others) - area(piece)``, with no overlay
  (a prepared ``contains_properly`` test and one STRtree self-query decide it).  The
  polygon path (:func:`gis_sw.analysis.siting.subtract.subtract`) gets the same only when
  every piece of the lot is of that kind.
- A lot covered by one piece (a lot inside a wetland's 50-ft zone) has no room: no
  overlay either.  A lot with no roof room has no vehicle room.  The pieces of a lot are
  taken largest first, and a piece that no longer meets what is left is skipped (a
  prepared ``intersects``): 20% fewer overlays in the vehicle step.
- The vehicle class subtracts from the lot less the crossing roof pieces, not from the
  roof polygon with its holes, so its overlays see a handful of vertices instead of every
  hole's 130; roof pieces that touch a vehicle piece are subtracted there too.

The areas equal those of :func:`gis_sw.analysis.siting.siting_by_class` (same buffers,
same lots) to floating-point rounding, under 0.001 sq ft a lot (tested on every lot of a
generated town, ``tests/test_siting_speed.py``).  Pairs are taken in an order fixed by the
pieces' geometry, so a lot screened in any chunk gets the same figure to the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from gis_sw.analysis.rect_clip import clip_by_boxes
from gis_sw.analysis.siting.subtract import difference_rounds, ordered_pairs, polygon_pieces


@dataclass(frozen=True, slots=True, eq=False)
class _Pairs:
    """The (lot, piece) pairs that intersect, sorted by lot then by the piece's geometry.

    ``inside``: the piece lies strictly inside the lot; ``alone_shared`` / ``alone_all``:
    besides, it touches no other shared piece / no other piece at all of that lot.
    """

    lot: np.ndarray
    piece: np.ndarray
    vehicle: np.ndarray
    inside: np.ndarray
    alone_shared: np.ndarray
    alone_all: np.ndarray
    covers: np.ndarray


def _touching(
    pieces: np.ndarray, tree: shapely.STRtree, lot: np.ndarray, piece: np.ndarray, at: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return the pairs ``(k, b)``: piece ``b`` of the lot of pair ``at[k]`` touches its piece."""
    if len(at) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    n = len(pieces)
    a, b = tree.query(pieces[piece[at]], predicate="intersects")  # a indexes ``at``
    other = b != piece[at][a]
    a, b = a[other], b[other]
    keys = np.sort(lot.astype(np.int64) * n + piece)
    key = lot[at][a].astype(np.int64) * n + b
    found = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
    mine = keys[found] == key
    return a[mine], b[mine]


def _box_holds(outer: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """Return the mask of the rows where box ``outer`` holds box ``inner`` (edges included)."""
    return (
        (outer[:, 0] <= inner[:, 0])
        & (outer[:, 1] <= inner[:, 1])
        & (outer[:, 2] >= inner[:, 2])
        & (outer[:, 3] >= inner[:, 3])
    )


def _pairs(inner: np.ndarray, pieces: np.ndarray, is_vehicle: np.ndarray) -> _Pairs:
    """Return the pairs of ``inner`` and ``pieces`` with what decides each one's path."""
    tree = shapely.STRtree(pieces)
    lot, piece = ordered_pairs(inner, pieces, tree, biggest_first=True)
    # a shape holds another only if its box holds the other's: the exact predicates run on
    # the pairs whose boxes allow it (most pairs cross, and their boxes show it)
    lot_box, piece_box = shapely.bounds(inner)[lot], shapely.bounds(pieces)[piece]
    shapely.prepare(inner)
    inside = _box_holds(lot_box, piece_box)
    inside[inside] = shapely.contains_properly(inner[lot[inside]], pieces[piece[inside]])
    at = np.flatnonzero(inside)
    a, b = _touching(pieces, tree, lot, piece, at)
    touch_shared = np.zeros(len(lot), dtype=bool)
    touch_any = np.zeros(len(lot), dtype=bool)
    touch_any[at[a]] = True
    touch_shared[at[a[~is_vehicle[b]]]] = True
    covers = _box_holds(piece_box, lot_box)
    shapely.prepare(pieces[piece[covers]])
    covers[covers] = shapely.covers(pieces[piece[covers]], inner[lot[covers]])
    return _Pairs(
        lot=lot,
        piece=piece,
        vehicle=is_vehicle[piece],
        inside=inside,
        alone_shared=inside & ~touch_shared,
        alone_all=inside & ~touch_any,
        covers=covers,
    )


CLIP_MARGIN_FT = 1.0
"""How far beyond a lot's bounding box a piece is cut before its overlay with the lot: the
cut edge never comes near the lot, so the overlay nodes the same crossings."""

CLIP_SHARE = 0.5
"""A piece is cut only when less than this share of its bounding box lies in the lot's
(grown by the margin): a zone mostly inside the lot loses few vertices to the cut, which
then costs more than it saves (measured on the irregular 100,000-parcel town)."""

CLIP_MIN_VERTICES = 16
"""Pieces with fewer vertices than this (footprints, cells) go to the overlay whole."""


def clipped_pieces(pieces: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Return each of ``pieces`` cut to its row of ``boxes`` grown by :data:`CLIP_MARGIN_FT`.

    Inside the box the cut piece is the piece, so a lot within the box loses the same area
    to it; GEOS's overlay of the lot with the cut piece (a 50-ft circle's few vertices near
    the lot instead of its 129) costs less than the clip saves.  The rectangle clip does not
    promise a valid result: a cut piece that is not valid (or empty) is replaced by the
    whole piece, so the answer never depends on it.
    """
    out = pieces.copy()
    big = np.flatnonzero(shapely.get_num_coordinates(pieces) >= CLIP_MIN_VERTICES)
    if len(big) == 0:
        return out
    b = boxes[big] + np.array([-CLIP_MARGIN_FT, -CLIP_MARGIN_FT, CLIP_MARGIN_FT, CLIP_MARGIN_FT])
    own = shapely.bounds(pieces[big])
    width = np.minimum(own[:, 2], b[:, 2]) - np.maximum(own[:, 0], b[:, 0])
    height = np.minimum(own[:, 3], b[:, 3]) - np.maximum(own[:, 1], b[:, 1])
    kept = np.clip(width, 0.0, None) * np.clip(height, 0.0, None)
    whole = (own[:, 2] - own[:, 0]) * (own[:, 3] - own[:, 1])
    reach = kept < CLIP_SHARE * whole  # most of the piece's box lies off the lot's
    big, b = big[reach], b[reach]
    if len(big) == 0:
        return out
    cut = clip_by_boxes(pieces[big], b)
    good = shapely.is_valid(cut) & ~shapely.is_empty(cut)
    out[big[good]] = cut[good]
    return out


def _area_left(
    start: np.ndarray,
    pieces: np.ndarray,
    pairs: _Pairs,
    cut: np.ndarray,
    alone: np.ndarray,
    *,
    boxes: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Subtract the ``cut`` pairs from ``start``; return it and its area less the ``alone``.

    Each cut piece is first cut to its lot's box (``boxes``, one row per lot) by
    :func:`clipped_pieces`.
    """
    lots = pairs.lot[cut]
    cuts = clipped_pieces(pieces[pairs.piece[cut]], boxes[lots])
    out = difference_rounds(start.copy(), cuts, lots, np.arange(len(lots)), skip_apart=True)
    taken = np.bincount(
        pairs.lot[alone], weights=shapely.area(pieces[pairs.piece[alone]]), minlength=len(out)
    )
    return out, np.maximum(shapely.area(out) - taken, 0.0)


def siting_areas_of(
    inner: np.ndarray, shared: list[np.ndarray], vehicle: list[np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Return the areas of ``inner`` less the ``shared`` parts, and less ``vehicle`` too.

    Parameters
    ----------
    inner
        The lots inside their property-line setback.
    shared
        Constraint polygons of every device class.
    vehicle
        Constraint polygons of the vehicle class alone; None when it is not wanted.

    Returns
    -------
    tuple
        The roof areas and the vehicle areas (None when ``vehicle`` is None), NaN where
        ``inner`` is missing.
    """
    shared_pieces = polygon_pieces(shared)
    vehicle_pieces = polygon_pieces(vehicle or [])
    pieces = np.concatenate([shared_pieces, vehicle_pieces])
    base = shapely.area(inner)
    if len(pieces) == 0:
        return base, (None if vehicle is None else base.copy())
    is_vehicle = np.r_[np.zeros(len(shared_pieces), bool), np.ones(len(vehicle_pieces), bool)]
    pairs = _pairs(inner, pieces, is_vehicle)
    n = len(inner)
    covered_shared = np.zeros(n, dtype=bool)
    covered_shared[pairs.lot[pairs.covers & ~pairs.vehicle]] = True
    open_lot = ~covered_shared[pairs.lot]
    shared_pair = ~pairs.vehicle & open_lot
    cut_shared = shared_pair & ~pairs.alone_shared
    boxes = shapely.bounds(inner)
    roof_shape, roof = _area_left(
        inner, pieces, pairs, cut_shared, shared_pair & pairs.alone_shared, boxes=boxes
    )
    roof[covered_shared] = 0.0
    if vehicle is None:
        return roof, None
    covered_any = covered_shared.copy()
    covered_any[pairs.lot[pairs.covers]] = True
    covered_any |= roof <= 0.0
    still = ~covered_any[pairs.lot] & ~cut_shared  # what the roof step left to subtract
    alone = still & pairs.alone_all
    _, vehicle_area = _area_left(roof_shape, pieces, pairs, still & ~alone, alone, boxes=boxes)
    vehicle_area[covered_any] = 0.0
    return roof, vehicle_area
