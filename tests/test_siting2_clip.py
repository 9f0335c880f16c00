"""clip_to_subjects cuts every big feature to its box in one GEOS call, as one call each did."""

from __future__ import annotations

import numpy as np
import shapely

from gis_sw.analysis.overlay import CLIP_VERTICES, clip_to_subjects


def test_one_call_equals_one_clip_per_pair_to_the_byte() -> None:
    rng = np.random.default_rng(5)
    centres = rng.uniform(0, 5_000, (400, 2))
    big = shapely.buffer(shapely.points(centres), 120.0, quad_segs=200)  # 801 vertices
    small = shapely.buffer(shapely.points(centres), 40.0, quad_segs=8)
    features = np.concatenate([big, small])
    assert (shapely.get_num_coordinates(big) > CLIP_VERTICES).all()
    lots = shapely.box(*(centres + rng.uniform(-150, 150, (400, 2))).T, *(centres + 60).T)
    subjects = np.concatenate([lots, lots])
    cut = clip_to_subjects(features, subjects)
    for k in range(400):
        one = shapely.clip_by_rect(big[k], *shapely.bounds(lots[k]))
        expected = one if shapely.is_valid(one) else big[k]
        assert shapely.to_wkb(cut[k]) == shapely.to_wkb(expected)
    assert all(cut[400 + k] is small[k] for k in range(400))  # small ones are not cut
    # what lies inside each subject's box is the whole feature's
    inside = shapely.area(shapely.intersection(cut[:400], lots))
    whole = shapely.area(shapely.intersection(big, lots))
    assert np.abs(inside - whole).max() <= 1e-6
    assert (whole > 0).sum() > 100
