"""Buffers of points and convex polygons built with numpy, as GEOS would build them.

Siting buffers every well (a point), every building footprint and septic field (most are
rectangles) and shrinks every lot by its property-line setback (most town lots are
convex quadrilaterals).  GEOS ``buffer`` costs 20 to 60 microseconds a geometry whatever
its size (on a 10,000-parcel town, a quarter of the batch's siting); for these shapes the
buffer is plain geometry, computed here for all of them at once:

- a point's buffer is the circle GEOS draws: ``4 * quad_segs`` vertices at equal angles,
  the first on the +x axis;
- a convex polygon's outward buffer is its edges moved out by the distance, joined at
  each corner by an arc of ``round(turn / (pi / 2 / quad_segs))`` equal steps (GEOS's
  round join, the same count and spacing);
- a convex polygon's inward buffer is its edges moved in by the distance, each corner
  the meeting point of the two moved edges, so long as every edge keeps a length and its
  direction (otherwise GEOS).

GEOS first drops input vertices closer than 1% of the distance to the line through
their neighbours (``BufferInputLineSimplifier``); a polygon with such a vertex (nearly
straight there), a hole, several parts, or too many vertices goes to GEOS, so each
geometry built here is GEOS's to floating-point rounding (areas within 1e-6 sq ft,
tested).  Everything else is ``shapely.buffer``.
"""

from __future__ import annotations

import numpy as np
import shapely

MAX_VERTICES = 64
"""Polygons with more vertices than this are left to GEOS (rare among convex shapes)."""

SIMPLIFY_FACTOR = 0.01
"""GEOS's ``BufferParameters`` simplify factor: input vertices within this times the
distance of their neighbours' chord are dropped before buffering."""

SAFETY = 4.0
"""A vertex is built here only when it stands this many times GEOS's simplify tolerance
off its neighbours' chord, so GEOS would have kept it too."""


def buffer_like_geos(geoms: np.ndarray, distance: float, quad_segs: int) -> np.ndarray:
    """Return ``shapely.buffer(geoms, distance, quad_segs=quad_segs)``, faster.

    Points and convex polygons are built in numpy (see the module docstring), the rest
    by GEOS.

    Parameters
    ----------
    geoms
        Geometries (None and empty ones go to GEOS, which gives what it gives).
    distance
        Buffer distance; negative shrinks polygons.
    quad_segs
        Segments per quarter circle.
    """
    geoms = np.asarray(geoms, dtype=object)
    out = np.empty(len(geoms), dtype=object)
    done = np.zeros(len(geoms), dtype=bool)
    if distance > 0:
        at = np.flatnonzero((shapely.get_type_id(geoms) == 0) & ~shapely.is_empty(geoms))
        out[at] = _circles(shapely.get_coordinates(geoms[at]), distance, quad_segs)
        done[at] = True
    polygons = np.flatnonzero(
        (shapely.get_type_id(geoms) == 3)
        & ~shapely.is_empty(geoms)
        & (shapely.get_num_interior_rings(geoms) == 0)
    )
    rings = shapely.get_exterior_ring(geoms[polygons])
    counts = shapely.get_num_coordinates(rings) - 1  # closing vertex left out
    for n in np.unique(counts[(counts >= 3) & (counts <= MAX_VERTICES)]):
        at = polygons[counts == n]
        corners = shapely.get_coordinates(rings[counts == n]).reshape(len(at), n + 1, 2)[:, :n]
        built, ok = _convex_buffers(corners, distance, quad_segs)
        out[at[ok]] = built
        done[at[ok]] = True
    rest = ~done
    if rest.any():
        out[rest] = shapely.buffer(geoms[rest], distance, quad_segs=quad_segs)
    return out


def _circles(centres: np.ndarray, radius: float, quad_segs: int) -> np.ndarray:
    """Return GEOS's buffer circles around ``centres`` (an ``(m, 2)`` array)."""
    steps = 4 * quad_segs
    angles = -np.arange(steps) * (2.0 * np.pi / steps)
    ring = radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    coords = (centres[:, None, :] + ring[None, :, :]).reshape(-1, 2)
    return _polygons(coords, np.full(len(centres), steps))


def _convex_buffers(
    corners: np.ndarray, distance: float, quad_segs: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return the buffers of the strictly convex rings among ``corners`` and their mask.

    ``corners`` is ``(m, n, 2)``: each ring's vertices without the closing one.
    """
    signed = np.sum(
        corners[:, :, 0] * np.roll(corners[:, :, 1], -1, axis=1)
        - np.roll(corners[:, :, 0], -1, axis=1) * corners[:, :, 1],
        axis=1,
    )
    corners = np.where((signed < 0)[:, None, None], corners[:, ::-1], corners)  # counter-clockwise
    edges = np.roll(corners, -1, axis=1) - corners  # edge k runs from vertex k to k + 1
    length = np.hypot(edges[:, :, 0], edges[:, :, 1])
    safe = np.where(length > 0, length, 1.0)
    unit = edges / safe[:, :, None]
    before = np.roll(unit, 1, axis=1)  # the edge arriving at each vertex
    cross = before[:, :, 0] * unit[:, :, 1] - before[:, :, 1] * unit[:, :, 0]
    back = np.roll(corners, 1, axis=1)
    chord = np.roll(corners, -1, axis=1) - back
    chord_len = np.hypot(chord[:, :, 0], chord[:, :, 1])
    rel = corners - back
    off = np.abs(chord[:, :, 0] * rel[:, :, 1] - chord[:, :, 1] * rel[:, :, 0])
    deep = off > SAFETY * SIMPLIFY_FACTOR * abs(distance) * np.maximum(chord_len, 1e-300)
    ok = (length > 0).all(axis=1) & (cross > 0).all(axis=1) & deep.all(axis=1)
    ok &= np.isfinite(corners).all(axis=(1, 2))
    if distance > 0:
        built = _outward(corners[ok], before[ok], unit[ok], distance, quad_segs)
        return built, ok
    inner, kept = _inward(corners[ok], before[ok], unit[ok], -distance)
    ok[np.flatnonzero(ok)[~kept]] = False
    return inner, ok


def _outward(
    corners: np.ndarray, before: np.ndarray, unit: np.ndarray, distance: float, quad_segs: int
) -> np.ndarray:
    """Return the round-joined outward buffers of counter-clockwise convex rings.

    Corners with the same number of arc steps (every corner of a rectangle) are built
    together, as one unit arc turned and scaled.
    """
    m, n, _ = corners.shape
    start = np.arctan2(-before[:, :, 0], before[:, :, 1]).ravel()  # the arriving edge's normal
    turn = np.arctan2(
        before[:, :, 0] * unit[:, :, 1] - before[:, :, 1] * unit[:, :, 0],
        before[:, :, 0] * unit[:, :, 0] + before[:, :, 1] * unit[:, :, 1],
    ).ravel()
    quantum = np.pi / 2.0 / quad_segs
    steps = np.maximum((turn / quantum + 0.5).astype(np.int64), 1)
    first = np.cumsum(steps + 1) - (steps + 1)  # both ends of each arc and the steps between
    coords = np.empty((int((steps + 1).sum()), 2))
    centres = corners.reshape(-1, 2)
    for count in np.unique(steps):
        at = np.flatnonzero(steps == count)
        angle = start[at, None] + turn[at, None] * (np.arange(count + 1) / count)[None, :]
        where = (first[at, None] + np.arange(count + 1)[None, :]).ravel()
        coords[where, 0] = (centres[at, 0, None] + distance * np.cos(angle)).ravel()
        coords[where, 1] = (centres[at, 1, None] + distance * np.sin(angle)).ravel()
    return _polygons(coords, (steps + 1).reshape(m, n).sum(axis=1))


def _inward(
    corners: np.ndarray, before: np.ndarray, unit: np.ndarray, distance: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return the inward buffers of counter-clockwise convex rings, and which ones held.

    A ring holds when every moved edge keeps a positive length and its direction.
    """
    left_before = np.stack([-before[:, :, 1], before[:, :, 0]], axis=2)
    left = np.stack([-unit[:, :, 1], unit[:, :, 0]], axis=2)
    dot = np.sum(left_before * left, axis=2)
    moved = corners + distance * (left_before + left) / (1.0 + dot)[:, :, None]
    edges = np.roll(moved, -1, axis=1) - moved
    along = np.sum(edges * unit, axis=2)
    kept = (along > 1e-9 * (1.0 + np.abs(moved).max(axis=2))).all(axis=1)
    inner = _polygons(moved[kept].reshape(-1, 2), np.full(int(kept.sum()), moved.shape[1]))
    return inner, kept


def _polygons(coords: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Return one polygon per ring: ``sizes[i]`` consecutive ``coords``, closed here."""
    ends = np.cumsum(sizes)
    ring = np.repeat(np.arange(len(sizes)), sizes)
    closed = np.empty((len(coords) + len(sizes), 2))
    closed[np.arange(len(coords)) + ring] = coords
    closed[ends + np.arange(len(sizes))] = coords[ends - sizes]
    offsets = (np.r_[0, np.cumsum(sizes + 1)], np.arange(len(sizes) + 1))
    built = shapely.from_ragged_array(shapely.GeometryType.POLYGON, closed, offsets)
    return np.asarray(built, dtype=object)
