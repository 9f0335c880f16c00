"""Buffers built in numpy (gis_sw.analysis.siting.offsets) equal GEOS's, shape by shape."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from shapely.geometry import Polygon, box

from gis_sw.analysis.siting.offsets import SAFETY, SIMPLIFY_FACTOR, buffer_like_geos

SAME_SQFT = 1e-6


def _same_as_geos(geoms: np.ndarray, distance: float, quad_segs: int) -> np.ndarray:
    """Assert the numpy buffers equal GEOS's; return them."""
    ours = buffer_like_geos(geoms, distance, quad_segs)
    geos = shapely.buffer(geoms, distance, quad_segs=quad_segs)
    assert len(ours) == len(geos)
    present = ~shapely.is_missing(geos)
    assert (shapely.is_missing(ours) == ~present).all()
    assert np.abs(shapely.area(ours[present]) - shapely.area(geos[present])).max() <= SAME_SQFT
    gap = shapely.area(shapely.symmetric_difference(ours[present], geos[present]))
    assert gap.max() <= SAME_SQFT
    assert shapely.is_valid(ours[present]).all()
    return ours


def _town_shapes(n: int, seed: int) -> np.ndarray:
    """Rotated rectangles and random convex polygons, as footprints and lots come."""
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 50_000, (2, n))
    w, h = rng.uniform(8, 160, (2, n))
    rects = shapely.box(x, y, x + w, y + h)
    angle = rng.uniform(0, 180, n)
    rotated = np.array([shapely.affinity.rotate(r, a) for r, a in zip(rects, angle, strict=True)])
    hulls = np.array(
        [
            shapely.convex_hull(
                shapely.multipoints(rng.uniform(0, 120, (k, 2)) + np.array([cx, cy]))
            )
            for k, cx, cy in zip(rng.integers(5, 30, n), x, y, strict=True)
        ]
    )
    return np.concatenate([rects, rotated, hulls])


@pytest.mark.parametrize("quad_segs", [8, 32, 128])
@pytest.mark.parametrize("distance", [20.03, 50.06, -10.05])
def test_convex_polygons_and_points_equal_geos(quad_segs: int, distance: float) -> None:
    shapes = _town_shapes(150, seed=quad_segs)
    ours = _same_as_geos(shapes, distance, quad_segs)
    if distance > 0:
        # built here, not by GEOS: the same number of vertices GEOS gives
        geos = shapely.buffer(shapes, distance, quad_segs=quad_segs)
        rects = slice(0, 300)
        assert (
            shapely.get_num_coordinates(ours[rects]) == shapely.get_num_coordinates(geos[rects])
        ).all()
        points = shapely.points(np.random.default_rng(3).uniform(0, 1000, (200, 2)))
        circles = _same_as_geos(points, distance, quad_segs)
        assert (shapely.get_num_coordinates(circles) == 4 * quad_segs + 1).all()


def test_what_numpy_cannot_build_goes_to_geos_unchanged() -> None:
    courtyard = Polygon(box(0, 0, 300, 300).exterior, [box(120, 120, 180, 180).exterior.coords])
    ell = Polygon([(0, 0), (100, 0), (100, 40), (40, 40), (40, 100), (0, 100)])
    two = shapely.MultiPolygon([box(0, 0, 10, 10), box(50, 0, 60, 10)])
    narrow = box(0, 0, 19.99, 100)  # no room inside a 10.05-ft inward buffer
    triangle = Polygon([(0, 0), (30, 0), (15, 2)])  # its short edges vanish inward
    odd = np.array([courtyard, ell, two, None, Polygon()], dtype=object)
    shrunk = np.array([narrow, triangle], dtype=object)  # convex, but they do not hold inward
    for shapes, distances in ((odd, (20.03, -10.05)), (shrunk, (-10.05,))):
        for distance in distances:
            ours = buffer_like_geos(shapes, distance, 32)
            geos = shapely.buffer(shapes, distance, quad_segs=32)
            for mine, theirs in zip(ours, geos, strict=True):
                assert (mine is None and theirs is None) or shapely.equals_exact(mine, theirs, 0.0)
    _same_as_geos(shrunk, 20.03, 32)
    assert shapely.is_empty(buffer_like_geos(np.array([narrow]), -10.05, 32)[0])


@pytest.mark.parametrize("step", [-0.01, 0.0, 0.01])
def test_nearly_straight_corner_at_the_simplify_margin(step: float) -> None:
    """A vertex this close to its neighbours' chord is left to GEOS, which may drop it."""
    distance = 20.03
    margin = SAFETY * SIMPLIFY_FACTOR * distance  # 0.8012 ft off the chord
    bulge = margin + step
    lot = Polygon([(0, 0), (50, -bulge), (100, 0), (100, 80), (0, 80)])
    _same_as_geos(np.array([lot]), distance, 32)
    _same_as_geos(np.array([lot]), -distance, 32)


def test_rectangle_buffer_area_to_the_sq_ft() -> None:
    """A 40 x 20 rectangle grown 20 ft: itself, four side strips and a 128-gon of radius 20."""
    ours = buffer_like_geos(np.array([box(0, 0, 40, 20)]), 20.0, 32)[0]
    polygon_128 = 0.5 * 128 * 20.0**2 * np.sin(2 * np.pi / 128)
    assert shapely.area(ours) == pytest.approx(800 + 2 * 40 * 20 + 2 * 20 * 20 + polygon_128)
    inner = buffer_like_geos(np.array([box(0, 0, 40, 30)]), -10.0, 32)[0]
    assert shapely.area(inner) == pytest.approx(20 * 10, abs=1e-9)
