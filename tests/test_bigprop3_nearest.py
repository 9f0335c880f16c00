"""The nearest-feature searches skip geometries sure to have a feature within the reach."""

from __future__ import annotations

import numpy as np
import shapely

from gis_sw.around import near_mask

REACH_FT = 300.0


def _layer() -> np.ndarray:
    rng = np.random.default_rng(14)
    x = rng.uniform(0, 5_000, 40)
    y = rng.uniform(0, 5_000, 40)
    return shapely.box(x, y, x + 60, y + 35)


def _geoms() -> np.ndarray:
    rng = np.random.default_rng(183)
    x = rng.uniform(-500, 5_500, 4_000)
    y = rng.uniform(-500, 5_500, 4_000)
    side = rng.uniform(1, 40, 4_000)
    return shapely.box(x, y, x + side, y + side)


def test_near_means_a_feature_within_the_reach() -> None:
    layer, geoms = _layer(), _geoms()
    tree = shapely.STRtree(layer)
    near = near_mask(geoms, tree, REACH_FT)
    (where, _), dist = tree.query_nearest(geoms, return_distance=True, all_matches=False)
    nearest_ft = np.full(len(geoms), np.inf)
    nearest_ft[where] = dist
    # never called near with its nearest feature beyond the reach (that would lose it)
    assert not np.any(near & (nearest_ft > REACH_FT))
    # the geometries well within the reach (half of it) are all found near: the search saved
    assert np.all(near[nearest_ft <= REACH_FT / 2])
    assert 0 < near.sum() < len(geoms)


def test_near_at_the_reach_boundary() -> None:
    layer = np.array([shapely.box(0, 0, 10, 10)])
    tree = shapely.STRtree(layer)
    # a point 0.01 ft beyond the reach is never near; one well inside is
    beyond = shapely.points([10 + REACH_FT + 0.01], [5])
    inside = shapely.points([10 + 10.0], [5])
    assert not near_mask(beyond, tree, REACH_FT)[0]
    assert near_mask(inside, tree, REACH_FT)[0]


def test_empty_layer_or_geoms_are_never_near() -> None:
    empty_tree = shapely.STRtree(np.array([], dtype=object))
    assert not near_mask(_geoms()[:5], empty_tree, REACH_FT).any()
    tree = shapely.STRtree(_layer())
    assert near_mask(np.array([], dtype=object), tree, REACH_FT).shape == (0,)
