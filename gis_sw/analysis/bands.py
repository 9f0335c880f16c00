"""The wetland adjacent area: one construction of the band, exact to 0.01 sq ft.

The adjacent area (``ruleset.resources.wetland_adjacent_area_ft``, 100 ft in Mount
Pleasant) is the land within the band width of a wetland and outside every wetland.  Its
outer edge is made of straight offsets of the wetland's edges and circular arcs of radius
``width`` around its convex corners.  GEOS draws an arc as chords with vertices on the
circle, so a buffer lies inside the exact band and under-counts areas near the arcs: at
32 segments per quarter circle a 100 ft band loses 12.6 sq ft over a full turn (on real
data 6.29 sq ft counted against an exact 6.66).

How many segments: a chord spanning ``theta = pi / (2 n)`` (``n`` segments per quarter)
leaves out a circular segment of area ``r**2 / 2 * (theta - sin(theta))``; its sagitta, the
largest distance error, is ``r * (1 - cos(theta / 2))`` = ``r (1 - cos(pi / (4 n)))``.  Over
a full turn of arcs (``4 n`` chords; a convex wetland's arcs turn exactly once) the area lost
is ``pi r**2 - 2 n r**2 sin(pi / (2 n))``.  GEOS splits the arc of each corner into a
whole number of chords, rounding ``angle / theta`` to the nearest, so a chord can span up to
1.5 ``theta`` and lose up to 1.5**2 = 2.25 times as much per unit of angle (a 256-gon pond
at 1,608 segments loses 0.00505 sq ft, not 0.0050).  :func:`band_quad_segs` takes the
smallest ``n`` whose full-turn loss times 2.25 is at or under :data:`AREA_TOLERANCE_SQFT`
(0.005 sq ft, so every area rounds to the right hundredth): 2,412 segments per quarter for
100 ft (sagitta 5.3e-6 ft).  Any
piece of the band, whatever the disturbance, misses at most that much per full turn of
arc it contains; a wiggly wetland whose corners add up to several turns can miss a multiple
of it, but only where a disturbance covers arcs of several turns, which no site-sized
disturbance does.

Locality: for a point of a disturbance, whether it is in the band depends only on the
wetlands within the band width of that point, so :func:`adjacent_band_near` builds the band
from those wetlands alone (an STRtree ``dwithin`` query) and gives the same areas as the band
of the whole town, at the cost of a few wetlands instead of all of them.

The batch's ``wetland_adjacent_sqft`` needs only each parcel's area inside the band
(:func:`band_left`): the wetland pieces within the band width of some parcel are buffered
(the same buffers as :func:`adjacent_buffers`, one per piece), each cut to its parcel's
bounding box, and subtracted from the parcel one round at a time; the area inside the band
is the parcel's area less the area of what is left (:func:`band_inside` also builds the
part inside, the parcel less what is left: one more overlay per parcel the band cuts).  The
two areas differ by floating-point rounding only: at most 2.6e-8 sq ft on every parcel of a
generated 100,000-parcel town with irregular lots, none rounding to another hundredth.  What
is left also gives the constrained share without a union of parts
(:func:`gis_sw.batch.areas.constrained_area`).  On that town the band and the constrained
share took 0.85x the CPU of the part and the union (0.90x on the same town's rectangular
lots), measured chunk by chunk, alternated; the rest is the buffers (each built once per
chunk, 11,600 vertices for a 213-vertex wetland), the cuts (each linear in its buffer's
vertices) and the difference rounds.

Every user draws the band from here: SW106 (:mod:`gis_sw.analysis.permits`), the batch's
``wetland_adjacent_sqft``, the site map and the web map (which draw
:func:`adjacent_outlines`, the same buffers simplified to :data:`DRAW_TOLERANCE_FT`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import shapely

from gis_sw.analysis.overlay import clip_to_subjects
from gis_sw.analysis.siting.subtract import difference_rounds
from gis_sw.layers.geoms import unlocated

__all__ = [
    "AREA_TOLERANCE_SQFT",
    "adjacent_band",
    "adjacent_band_near",
    "adjacent_buffers",
    "adjacent_outlines",
    "arc_area_error_sqft",
    "band_inside",
    "band_left",
    "band_quad_segs",
    "wetlands_near",
]

AREA_TOLERANCE_SQFT = 0.005
"""Largest area a full turn of the band's arcs may miss (half of 0.01 sq ft)."""

DRAW_TOLERANCE_FT = 0.05
"""How far a drawn outline may stray from the band it was built from (maps only): far under
a pixel of any sheet, and about 100 vertices a circle instead of 9,648 (a web map of the
sample would otherwise carry 1.7 MB of band outline)."""

_MAX_QUAD_SEGS = 1 << 16
_ROUNDING_FACTOR = 2.25
"""Worst growth of the loss per unit angle from GEOS rounding a corner's chord count."""


def arc_area_error_sqft(width_ft: float, quad_segs: int) -> float:
    """Area a full circle of radius ``width_ft`` loses when drawn with ``4 * quad_segs`` chords."""
    r, n = float(width_ft), int(quad_segs)
    return math.pi * r * r - 2.0 * n * r * r * math.sin(math.pi / (2.0 * n))


def band_quad_segs(width_ft: float, tolerance_sqft: float = AREA_TOLERANCE_SQFT) -> int:
    """Return the fewest segments per quarter circle whose area loss is within tolerance.

    The full-turn loss allows for GEOS's rounding of each corner's chord count (the module
    docstring).

    Raises
    ------
    ValueError
        If the tolerance is not positive.
    """
    if not tolerance_sqft > 0:
        raise ValueError(f"band area tolerance must be above 0, got {tolerance_sqft}")
    r = abs(float(width_ft))
    if r == 0:
        return 1
    budget = tolerance_sqft / _ROUNDING_FACTOR
    # pi r^2 theta^2 / 6 <= budget, theta = pi / (2 n): a first guess, then the exact formula
    n = max(1, math.ceil(math.pi / (2.0 * math.sqrt(6.0 * budget / math.pi) / r)) - 2)
    while arc_area_error_sqft(r, n) > budget and n < _MAX_QUAD_SEGS:
        n += 1
    return n


def _array(geoms: Sequence[Any] | np.ndarray) -> np.ndarray:
    return np.asarray(list(geoms) if not isinstance(geoms, np.ndarray) else geoms, dtype=object)


def adjacent_buffers(wetlands: Sequence[Any] | np.ndarray, width_ft: float) -> np.ndarray:
    """Each wetland grown by the band width, with :func:`band_quad_segs` segments.

    The outline the maps draw, and the batch's overlay (its area inside a parcel less the
    wetland's is the parcel's adjacent area).
    """
    geoms = _array(wetlands)
    if len(geoms) == 0:
        return np.zeros(0, dtype=object)
    out = shapely.buffer(geoms, float(width_ft), quad_segs=band_quad_segs(width_ft))
    return np.asarray(out, dtype=object)


def adjacent_outlines(
    wetlands: Sequence[Any] | np.ndarray,
    width_ft: float,
    *,
    tolerance_ft: float = DRAW_TOLERANCE_FT,
) -> np.ndarray:
    """:func:`adjacent_buffers` simplified to ``tolerance_ft`` for drawing (site and web map).

    The same construction as the rule's band, only with fewer vertices: every point of a
    drawn outline is within ``tolerance_ft`` of the band's edge.
    """
    buffers = adjacent_buffers(wetlands, width_ft)
    if len(buffers) == 0:
        return buffers
    return np.asarray(shapely.simplify(buffers, tolerance_ft, preserve_topology=True), dtype=object)


def adjacent_band(wetlands: Sequence[Any] | np.ndarray, width_ft: float) -> shapely.Geometry:
    """Return the wetlands' adjacent area: within ``width_ft`` of one, outside all of them."""
    geoms = _array(wetlands)
    if len(geoms) == 0:
        return shapely.Polygon()
    return shapely.difference(
        shapely.union_all(adjacent_buffers(geoms, width_ft)), shapely.union_all(geoms)
    )


def wetlands_near(
    wetlands: Sequence[Any] | np.ndarray, subjects: Sequence[Any] | np.ndarray, width_ft: float
) -> np.ndarray:
    """Positions (sorted) of the wetlands within ``width_ft`` of any subject."""
    geoms, targets = _array(wetlands), _array(subjects)
    targets = targets[~unlocated(targets)]
    if len(geoms) == 0 or len(targets) == 0:
        return np.zeros(0, dtype=np.int64)
    tree = shapely.STRtree(geoms)
    _, hits = tree.query(targets, predicate="dwithin", distance=float(width_ft))
    return np.unique(hits).astype(np.int64)


def adjacent_band_near(
    wetlands: Sequence[Any] | np.ndarray, subjects: Sequence[Any] | np.ndarray, width_ft: float
) -> shapely.Geometry:
    """Return the band from the wetlands within ``width_ft`` of the subjects only.

    Inside the subjects it is the band of all the wetlands (see the module docstring).
    """
    geoms = _array(wetlands)
    return adjacent_band(geoms[wetlands_near(geoms, subjects, width_ft)], width_ft)


def _band_rounds(
    subjects: np.ndarray, wetlands: np.ndarray, keys: np.ndarray, width_ft: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return the subjects some buffer cut, and what the buffers left of each of them.

    The rounds of :func:`band_inside` (its docstring): the positions of the subjects a
    buffer cut (sorted) and, one per such subject, the subject less the union of the
    buffers (an empty polygon where they cover it).
    """
    none = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    geoms = _array(wetlands)
    if len(subjects) == 0 or len(geoms) == 0:
        return none
    lot, hit = shapely.STRtree(geoms).query(subjects, predicate="dwithin", distance=width_ft)
    if len(lot) == 0:
        return none
    order = np.lexsort((np.asarray(keys)[hit], lot))
    lot, hit = lot[order], hit[order]
    used, at = np.unique(hit, return_inverse=True)
    cuts = clip_to_subjects(adjacent_buffers(geoms[used], width_ft)[at], subjects[lot])
    left = difference_rounds(subjects.copy(), cuts, lot, np.arange(len(lot)), skip_apart=True)
    touched = np.unique(lot)
    cut = np.fromiter(
        (a is not b for a, b in zip(left[touched], subjects[touched], strict=True)),
        dtype=bool,
        count=len(touched),
    )
    touched = touched[cut]  # the others met no buffer
    return touched.astype(np.int64), left[touched]


def _at_subjects(
    n: int, touched: np.ndarray, inside_area: np.ndarray, pieces: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return the band areas above 0 and their pieces at the subjects' positions.

    One entry per subject (``n``): 0 and None where ``touched`` holds none with an area.
    """
    area = np.zeros(n, dtype=np.float64)
    out = np.full(n, None, dtype=object)
    met = inside_area > 0.0
    area[touched[met]] = inside_area[met]
    out[touched[met]] = pieces[met]
    return area, out


def band_left(
    subjects: np.ndarray, wetlands: np.ndarray, keys: np.ndarray, width_ft: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return each subject's area inside the band, and what the band leaves of it.

    The area of :func:`band_inside` without building the part inside: the subject's area
    less the area of what the buffers left of it (the part inside and the part left tile
    the subject, so the two areas add up to the subject's, to floating-point rounding: a
    few 1e-9 sq ft on a town's lots, where the figures are rounded to 0.01).  One overlay
    per touched subject fewer than :func:`band_inside`.

    Parameters
    ----------
    subjects, wetlands, keys, width_ft
        As for :func:`band_inside`.

    Returns
    -------
    tuple
        The area inside the band (0 where none), and per subject what is left of it
        outside the band where the band covers some of it (an empty polygon where the band
        covers all of it), None where the band covers none of it.
    """
    touched, rest = _band_rounds(subjects, wetlands, keys, width_ft)
    inside_area = shapely.area(subjects[touched]) - shapely.area(rest)
    return _at_subjects(len(subjects), touched, inside_area, rest)


def band_inside(
    subjects: np.ndarray, wetlands: np.ndarray, keys: np.ndarray, width_ft: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return each subject's area inside the union of :func:`adjacent_buffers`, and that part.

    The same area as overlaying every subject with every buffer and dissolving the pieces
    (to floating-point rounding), at the cost of the buffers that reach a subject: a wetland
    with no subject within ``width_ft`` is not buffered, each buffer is cut to its
    subject's bounding box, and a buffer that no longer meets what is left of the subject
    (or covers it) costs no overlay (:func:`gis_sw.analysis.siting.subtract.difference_rounds`).
    The part inside is the subject less what is left (one more overlay per subject the band
    cuts; :func:`band_left` gives the area without it).

    Parameters
    ----------
    subjects
        Polygons (parcels), None where there is none.
    wetlands
        The wetland polygons (or the pieces of them: the band is the union of the pieces'
        buffers).
    keys
        One integer per wetland, its row in the whole layer: the pieces of a subject are
        taken in that order, so a subject gets the same figure whatever else is around.
    width_ft
        The band width.

    Returns
    -------
    tuple
        The area inside the band (0 where none) and the part of the subject inside it (None
        where none), one per subject.
    """
    touched, left = _band_rounds(subjects, wetlands, keys, width_ft)
    if len(touched) == 0:
        return _at_subjects(len(subjects), touched, np.zeros(0), left)
    inside = subjects[touched].copy()
    some_left = ~shapely.is_empty(left)
    inside[some_left] = shapely.difference(inside[some_left], left[some_left])
    return _at_subjects(len(subjects), touched, shapely.area(inside), inside)
