"""Repair invalid polygons ring by ring, so a cut-out stays cut out.

GEOS ``make_valid(method="structure")`` fills the inside of every exterior ring: a parcel
whose ring touches itself to enclose a cut-out (an "inverted" ring, as ESRI tools draw
lots around a neighbour's corner) comes back *with the cut-out filled*, so the property
line around it vanishes and a siting polygon covered it (issue 14: 375 sq ft of a 400 sq ft
cut-out).  ``method="linework"`` keeps such cut-outs, but applied to a whole polygon it
turns overlapping parts into holes.

:func:`repair_polygons` takes the best of both: each ring on its own is repaired with
``linework`` (an inverted ring gives its shell with the cut-out as a hole, a bow-tie its two
lobes, a spike collapses), then the polygon is the union of its repaired exterior rings
less the union of its repaired holes, as ``structure`` does.  Only invalid geometries are
touched; valid ones are returned as they are.
"""

from __future__ import annotations

import numpy as np
import shapely

from gis_sw.layers.geoms import unlocated


def _polygonal(geom: shapely.Geometry) -> shapely.Geometry:
    """Return the polygonal parts of a geometry (an empty polygon when it has none)."""
    parts = [p for p in shapely.get_parts(geom) if p.geom_type == "Polygon" and not p.is_empty]
    if not parts:
        return shapely.Polygon()
    return parts[0] if len(parts) == 1 else shapely.MultiPolygon(parts)


def _ring_fill(rings: np.ndarray) -> shapely.Geometry:
    """Union of the areas the rings enclose, each ring repaired with ``linework``."""
    if len(rings) == 0:
        return shapely.Polygon()
    filled = np.asarray(shapely.make_valid(shapely.polygons(rings), method="linework"))
    return shapely.union_all([_polygonal(g) for g in filled])


def repair_polygon(geom: shapely.Geometry) -> shapely.Geometry:
    """One (Multi)Polygon made valid ring by ring (see the module docstring).

    Returns a Polygon, a MultiPolygon, or an empty Polygon when nothing of area is left.
    """
    if geom is None or shapely.is_empty(geom) or shapely.is_valid(geom):
        return geom
    polygons = [p for p in shapely.get_parts(geom) if p.geom_type == "Polygon"]
    if not polygons:
        return _polygonal(shapely.make_valid(geom))
    shells = np.array([shapely.get_exterior_ring(p) for p in polygons], dtype=object)
    holes = np.array([r for p in polygons for r in p.interiors], dtype=object)
    area = shapely.difference(_ring_fill(shells), _ring_fill(holes))
    return _polygonal(shapely.make_valid(area))


def repair_polygons(geoms: np.ndarray) -> np.ndarray:
    """:func:`repair_polygon` for each geometry; valid ones are passed through."""
    arr = np.asarray(geoms, dtype=object)
    out = arr.copy()
    if len(arr) == 0:
        return out
    present = ~unlocated(arr)
    valid = np.asarray(shapely.is_valid(arr))  # None and empty count as valid here
    bad = np.flatnonzero(present & ~valid)
    for i in bad:  # invalid geometries are few: one small overlay each
        out[i] = repair_polygon(arr[i])
    return out
