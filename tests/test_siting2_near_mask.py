"""siting's near_mask: features on a lot or within the distance of one, to the hundredth."""

from __future__ import annotations

import numpy as np
import shapely
from shapely.geometry import Point, box

from gis_sw.analysis.siting.constraints import near_mask


def test_near_mask_keeps_features_on_a_lot_and_within_the_distance_to_the_hundredth() -> None:
    lots = shapely.STRtree(np.array([box(0, 0, 100, 100), box(300, 0, 400, 100)], dtype=object))
    features = np.array(
        [
            box(40, 40, 60, 60),  # on the first lot
            box(120.0, 40, 130, 60),  # 20 ft off its right edge: exactly the distance
            box(119.99, 40, 130, 60),  # 0.01 ft inside it
            box(120.01, 40, 130, 60),  # 0.01 ft beyond it
            Point(200, 50),  # 100 ft from both lots
            Point(280.01, 50),  # 19.99 ft from the second lot
            None,
        ],
        dtype=object,
    )
    mask = near_mask(features, lots, 20.0)
    assert mask.tolist() == [True, True, True, False, False, True, False]
    assert near_mask(np.zeros(0, dtype=object), lots, 20.0).tolist() == []
