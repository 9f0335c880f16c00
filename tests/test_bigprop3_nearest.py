"""The nearest-feature searches skip geometries sure to have a feature within the reach."""

from __future__ import annotations

import numpy as np
import shapely

from gis_sw.nearest import cell_nearest, far_box, near_mask

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


def _pairs(where: np.ndarray, rows: np.ndarray) -> set[tuple[int, int]]:
    return set(zip(where.tolist(), rows.tolist(), strict=True))


def test_cell_nearest_gives_the_searched_pairs_ties_included() -> None:
    """Where the grid settles a geometry, its nearest features are a full search's."""
    rng = np.random.default_rng(7)
    # wells on a 100-ft lattice (equidistant ties), a wetland, a large floodplain
    gx, gy = np.meshgrid(np.arange(0, 3_000, 100.0), np.arange(0, 3_000, 100.0))
    wells = shapely.points(gx.ravel(), gy.ravel())
    wetland = shapely.Polygon([(4_000, 0), (4_600, 200), (4_300, 900), (3_900, 500)])
    floodplain = shapely.box(-3_000, -3_000, -1_000, 6_000)
    x = rng.uniform(-500, 4_500, 3_000)
    y = rng.uniform(-500, 3_500, 3_000)
    geoms = shapely.box(x, y, x + 4, y + 4)
    ties = shapely.points([50.0, 150.0], [50.0, 150.0])  # equidistant from four wells
    for layer, arr in (
        (wells, np.concatenate([geoms, ties])),
        (np.array([wetland, floodplain]), geoms),
    ):
        tree = shapely.STRtree(layer)
        found = cell_nearest(arr, tree, REACH_FT)
        assert found.searched.sum() < len(arr)  # it settled some
        settled = np.flatnonzero(~found.searched)
        where, rows = tree.query_nearest(arr[settled], all_matches=True)
        assert _pairs(found.where, found.rows) == _pairs(settled[where], rows)
        exact = shapely.distance(arr[found.where], layer[found.rows])
        measured = ~np.isnan(found.dist_ft)
        np.testing.assert_array_equal(found.dist_ft[measured], exact[measured])
        # an unmeasured distance (one candidate left) lies within its bounds
        assert np.all(found.low_ft <= exact)
        assert np.all(exact <= found.high_ft)
    # the tie points each keep their four wells
    found = cell_nearest(ties, shapely.STRtree(wells), REACH_FT)
    assert not found.searched.any()
    assert np.bincount(found.where).tolist() == [4, 4]


def test_far_box_matches_the_search_of_every_geometry() -> None:
    layer = np.array([shapely.box(0, 0, 50, 50), shapely.box(2_000, 0, 2_050, 50)])
    tree = shapely.STRtree(layer)
    x = np.arange(600.0, 1_400.0, 6.0)
    far = shapely.box(x, 0, x + 4, 4)
    found = cell_nearest(far, tree, REACH_FT)
    # one candidate each but in the middle: measured only where it may set the box
    unmeasured = np.isnan(found.dist_ft)
    assert len(far) / 2 < unmeasured.sum() < len(far)
    box = far_box(far, found, layer, tree)
    (where, rows) = tree.query_nearest(far, all_matches=False)
    dist = shapely.distance(far[where], layer[rows])
    bounds = shapely.bounds(far[where])
    want = (
        (bounds[:, 0] - dist).min(),
        (bounds[:, 1] - dist).min(),
        (bounds[:, 2] + dist).max(),
        (bounds[:, 3] + dist).max(),
    )
    assert box is not None
    np.testing.assert_allclose(box, want, rtol=0, atol=1e-9)
    # the left geometries reach to x = 50 (their nearest), the right ones to x = 2,000
    assert round(box[0], 2) == 50.0
    assert round(box[2], 2) == 2_000.0
