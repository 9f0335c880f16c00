"""Audit: ties in the nearest-feature helpers go to the first target row, in any tree order."""

from __future__ import annotations

import numpy as np
import pytest
from shapely.geometry import Point, box

from gis_sw.analysis.distances import nearest, nearest_within, pairs_within


@pytest.mark.parametrize("n_targets", [2, 5, 40])
def test_nearest_tie_goes_to_first_row_at_any_distance(n_targets: int) -> None:
    # targets on a circle of radius 25 ft round the device: every one is 25.00 ft away
    angles = np.linspace(0.0, 2 * np.pi, n_targets, endpoint=False)
    wells = [Point(25.0 * np.cos(a), 25.0 * np.sin(a)) for a in angles]
    for order in (np.arange(n_targets), np.arange(n_targets)[::-1]):
        targets = np.array([wells[k] for k in order], dtype=object)
        idx, dist = nearest(np.array([Point(0, 0)], dtype=object), targets)
        assert idx.tolist() == [0]
        assert dist[0] == pytest.approx(25.0, abs=1e-9)


def test_nearest_tie_between_two_lots_sharing_the_edge_goes_to_first_row() -> None:
    # a point 3 ft outside two mirror-image squares, equidistant from both
    left, right = box(-20, 10, -3, 30), box(3, 10, 20, 30)
    src = np.array([Point(0, 7)], dtype=object)
    for targets, first in (([left, right], 0), ([right, left], 0)):
        idx, dist = nearest(src, np.array(targets, dtype=object))
        assert idx.tolist() == [first]
        assert dist[0] == pytest.approx(np.hypot(3.0, 3.0), abs=1e-9)


def test_nearest_inside_two_overlapping_polygons_is_first_row() -> None:
    big, small = box(0, 0, 100, 100), box(40, 40, 60, 60)
    src = np.array([Point(50, 50)], dtype=object)
    for targets in ([big, small], [small, big]):
        idx, dist = nearest(src, np.array(targets, dtype=object))
        assert (idx.tolist(), dist.tolist()) == ([0], [0.0])


def test_pairs_within_and_nearest_within_break_ties_by_target_row() -> None:
    src = np.array([Point(0, 0)], dtype=object)
    targets = np.array([Point(0, 30), Point(30, 0), Point(0, -30), Point(-30, 0)], dtype=object)
    pairs = pairs_within(src, targets, 30.0)
    assert pairs.target.tolist() == [0, 1, 2, 3]
    assert pairs.distance_ft.tolist() == [30.0, 30.0, 30.0, 30.0]
    idx, dist = nearest_within(src, targets[::-1], 30.0)
    assert (idx.tolist(), dist.tolist()) == ([0], [30.0])
