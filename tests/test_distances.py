"""Exact distance helpers: candidate pairs from the tree, exact distances, the 0.01-ft rule."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Point, box

from gis_sw.analysis.distances import (
    grown_radius,
    meets_minimum,
    nearest,
    nearest_within,
    pairs_within,
    shortest_lines,
)

DEVICES = np.array([Point(0, 0), Point(100, 0), Point(0, 300)], dtype=object)
WELLS = np.array([Point(50, 0), Point(0, 49.99), Point(1000, 1000)], dtype=object)


def test_pairs_within_keeps_the_pair_exactly_at_the_limit() -> None:
    pairs = pairs_within(DEVICES, WELLS, 50.0)
    got = sorted(
        zip(pairs.source.tolist(), pairs.target.tolist(), pairs.distance_ft.tolist(), strict=True)
    )
    assert got == [(0, 0, 50.0), (0, 1, pytest.approx(49.99)), (1, 0, 50.0)]


def test_pairs_are_sorted_by_source_then_distance() -> None:
    pairs = pairs_within(DEVICES, WELLS, 60.0)
    assert pairs.source.tolist() == [0, 0, 1]
    assert pairs.target.tolist() == [1, 0, 0]


def test_nearest_within_and_nearest() -> None:
    idx, dist = nearest_within(DEVICES, WELLS, 50.0)
    assert idx.tolist() == [1, 0, -1]
    assert dist[:2] == pytest.approx([49.99, 50.0])
    assert np.isnan(dist[2])
    idx, dist = nearest(DEVICES, WELLS)
    assert idx.tolist() == [1, 0, 1]
    assert dist == pytest.approx([49.99, 50.0, 250.01])


def test_empty_inputs_give_no_pairs() -> None:
    assert len(pairs_within(DEVICES, np.array([], dtype=object), 10)) == 0
    idx, dist = nearest(DEVICES, [])
    assert idx.tolist() == [-1, -1, -1]
    assert np.isnan(dist).all()


@pytest.mark.parametrize(
    ("distance_ft", "expected"),
    [
        pytest.param(10.0, True, id="10.00-ft-passes"),
        pytest.param(9.99, False, id="9.99-ft-fails"),
        pytest.param(9.996, True, id="9.996-ft-rounds-to-10.00"),
        pytest.param(9.994, False, id="9.994-ft-rounds-to-9.99"),
        pytest.param(float("nan"), False, id="nothing-measured"),
    ],
)
def test_meets_minimum(distance_ft: float, expected: bool) -> None:
    assert bool(meets_minimum(distance_ft, 10.0, 0.005)) is expected


def test_shortest_lines_run_from_source_to_target() -> None:
    lines = shortest_lines([Point(0, 0)], [box(10, -5, 20, 5)])
    assert lines[0].equals_exact(LineString([(0, 0), (10, 0)]), 1e-12)


@pytest.mark.parametrize("quad_segs", [4, 16, 64])
def test_grown_buffer_never_lets_a_closer_point_through(quad_segs: int) -> None:
    radius = 50.0
    disc = shapely.buffer(Point(0, 0), grown_radius(radius, quad_segs), quad_segs=quad_segs)
    ring = shapely.get_coordinates(disc.exterior)
    mids = (ring[:-1] + ring[1:]) / 2  # chord midpoints: the closest points of each chord
    assert np.hypot(mids[:, 0], mids[:, 1]).min() >= radius - 1e-9
    plain = shapely.buffer(Point(0, 0), radius, quad_segs=quad_segs)
    plain_ring = shapely.get_coordinates(plain.exterior)
    plain_mids = (plain_ring[:-1] + plain_ring[1:]) / 2
    assert np.hypot(plain_mids[:, 0], plain_mids[:, 1]).min() < radius - 1e-3


def test_nearest_to_long_rings_matches_plain_distance() -> None:
    lake = shapely.Point(0, 0).buffer(500, quad_segs=400)  # 1,600 vertices
    lake = lake.difference(shapely.Point(100, 0).buffer(50))  # an island (a hole)
    road = LineString([(x, 700 + (x % 7)) for x in range(-600, 600, 3)])
    targets = np.array([lake, road, Point(2000, 0)], dtype=object)
    sources = np.array(
        [Point(0, 0), Point(100, 0), Point(0, 650), Point(600, 0), box(-10, 495, 10, 520)],
        dtype=object,
    )
    idx, dist = nearest(sources, targets)
    plain = shapely.distance(sources[:, None], targets[None, :])
    assert idx.tolist() == plain.argmin(axis=1).tolist()
    assert dist == pytest.approx(plain.min(axis=1), abs=1e-9)
    assert dist[0] == 0.0  # inside the lake
    assert dist[1] == pytest.approx(50.0, abs=0.1)  # on the island, ~50 ft from its shore
