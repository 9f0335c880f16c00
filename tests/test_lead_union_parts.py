"""Unions of many parts join only the parts that meet (issue 14: one proposal of 100,000
small polygons spanning two zone features).  Same ground as GEOS's full union; below
``MANY_PARTS`` exactly GEOS's union, so ordinary checks write the same bytes."""

from __future__ import annotations

import numpy as np
import shapely

from gis_sw.analysis.overlay import MANY_PARTS, _unions, polygonal_part, union_of_parts


def squares(n: int, x0: float, *, side: float = 4.0, gap: float = 2.0) -> shapely.Geometry:
    """Return a multipolygon of ``n`` squares in a row from ``x0`` (``gap`` ft apart)."""
    x = x0 + np.arange(n) * (side + gap)
    return shapely.multipolygons(shapely.box(x, 0.0, x + side, side))


def test_many_parts_union_is_the_same_ground_as_geos_union() -> None:
    # two halves of a disturbance cut at a zone line: the square at the line is split in two
    left = shapely.intersection(squares(400, 0.0), shapely.box(-1, -1, 1_201.0, 10))
    right = shapely.intersection(squares(400, 0.0), shapely.box(1_201.0, -1, 3_000, 10))
    assert shapely.get_num_geometries(left) + shapely.get_num_geometries(right) > MANY_PARTS
    (ours,) = _unions(np.array([left], dtype=object), np.array([right], dtype=object))
    geos = shapely.union(left, right)
    assert shapely.get_num_geometries(ours) == shapely.get_num_geometries(geos) == 400
    assert round(shapely.area(ours), 6) == round(shapely.area(geos), 6) == 400 * 16.0
    assert shapely.area(shapely.symmetric_difference(ours, geos)) < 1e-9


def test_overlapping_many_parts_are_still_unioned() -> None:
    a, b = squares(300, 0.0), squares(300, 1.0)  # every square overlaps its shifted twin
    ours = union_of_parts([a, b])
    assert round(shapely.area(ours), 6) == round(shapely.area(shapely.union(a, b)), 6)
    assert round(shapely.area(ours), 6) == 300 * 20.0  # 4 x 5 ft each: overlap counted once


def test_few_parts_are_exactly_geos_union() -> None:
    a, b = squares(3, 0.0), squares(3, 1.0)
    (ours,) = _unions(np.array([a], dtype=object), np.array([b], dtype=object))
    assert shapely.to_wkb(ours) == shapely.to_wkb(shapely.union(a, b))
    assert shapely.to_wkb(union_of_parts([a, b])) == shapely.to_wkb(shapely.union_all([a, b]))


def test_polygonal_part_of_a_big_collection_drops_lines_and_keeps_the_area() -> None:
    collection = shapely.GeometryCollection(
        [*shapely.get_parts(squares(300, 0.0)), shapely.LineString([(0, 0), (5, 5)])]
    )
    part = polygonal_part(collection)
    assert shapely.get_type_id(part) == 6  # MultiPolygon
    assert round(shapely.area(part), 6) == 300 * 16.0
