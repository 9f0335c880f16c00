"""Siting areas on real-shaped (rotated, jittered) lots: pieces cut to the lot's box first."""

from __future__ import annotations

import numpy as np
import shapely

from gis_sw.analysis.siting.areas import CLIP_MARGIN_FT, clipped_pieces, siting_areas_of
from gis_sw.analysis.siting.offsets import buffer_like_geos


def _irregular_town(seed: int, n: int = 150) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rotated quadrilateral lots with corners moved up to 3 ft, wells and houses on them."""
    rng = np.random.default_rng(seed)
    side = 120.0
    cols = int(np.ceil(np.sqrt(n)))
    i, j = np.divmod(np.arange(n), cols)
    unit = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]) * side
    corners = unit[None, :, :] + np.stack([j * side, i * side], axis=1)[:, None, :]
    corners = corners + rng.uniform(-3.0, 3.0, corners.shape)
    angle = np.radians(23.0)
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    corners = corners @ turn.T + np.array([640_000.0, 720_000.0])
    lots = shapely.polygons(np.concatenate([corners, corners[:, :1]], axis=1))
    inner = buffer_like_geos(lots, -10.0, 32)
    centres = shapely.get_coordinates(shapely.centroid(lots))
    wells = buffer_like_geos(
        shapely.points(centres + rng.uniform(-70.0, 70.0, centres.shape)), 50.02, 32
    )
    houses = shapely.buffer(
        shapely.points(centres + rng.uniform(-30.0, 30.0, centres.shape)), 20.0, quad_segs=2
    )
    zones = buffer_like_geos(houses, 15.01, 32)
    return np.asarray(inner, dtype=object), np.asarray(zones, dtype=object), wells


def _exact(inner: np.ndarray, pieces: np.ndarray) -> np.ndarray:
    """Each lot less the union of every piece, by one plain overlay per lot (the reference)."""
    every = shapely.union_all(pieces)
    return shapely.area(shapely.difference(inner, every))


def test_areas_match_a_plain_overlay_on_rotated_jittered_lots() -> None:
    inner, zones, wells = _irregular_town(3)
    assert (shapely.get_num_coordinates(inner) == 5).all()  # four corners, none on an axis
    roof, vehicle = siting_areas_of(inner, [zones], [wells])
    assert vehicle is not None
    expected_roof = _exact(inner, zones)
    expected_vehicle = _exact(inner, np.concatenate([zones, wells]))
    assert np.abs(roof - expected_roof).max() < 1e-3
    assert np.abs(vehicle - expected_vehicle).max() < 1e-3
    # the wells really cut: most lots lose area to them, and some lose a lot of it
    lost = expected_roof - expected_vehicle
    assert (lost > 1.0).mean() > 0.5
    assert lost.max() > 3_000.0


def test_a_well_off_a_rotated_lot_corner_takes_the_same_area_as_uncut() -> None:
    # a 100-ft square turned 30 degrees, a 50-ft circle 10 ft east of its east corner:
    # most of the circle's box lies off the lot's, so the circle is cut to the lot's box
    c, s = np.cos(np.radians(30.0)), np.sin(np.radians(30.0))
    square = np.array([[0.0, 0.0], [100.0, 0.0], [100.0, 100.0], [0.0, 100.0]])
    turned = square @ np.array([[c, -s], [s, c]]).T + 1_000.0
    lot = shapely.Polygon(turned)
    well = buffer_like_geos(np.array([shapely.Point(turned[1] + [10.0, 0.0])]), 50.0, 32)
    cut = clipped_pieces(well, shapely.bounds(np.array([lot])))
    assert shapely.get_num_coordinates(cut[0]) < shapely.get_num_coordinates(well[0])
    lx, ly, ux, uy = shapely.bounds(lot)
    box = (lx - CLIP_MARGIN_FT, ly - CLIP_MARGIN_FT, ux + CLIP_MARGIN_FT, uy + CLIP_MARGIN_FT)
    own = shapely.bounds(well[0])
    got = shapely.bounds(cut[0])
    assert abs(got[0] - own[0]) < 1e-9  # the west of the circle is in the box: kept
    assert abs(got[2] - box[2]) < 1e-9  # the east is cut at the box's edge
    roof, vehicle = siting_areas_of(np.array([lot]), [np.zeros(0, dtype=object)], [well])
    assert vehicle is not None
    assert abs(roof[0] - 10_000.0) < 1e-9
    whole = shapely.area(shapely.difference(lot, well[0]))  # the uncut circle, one overlay
    assert abs(vehicle[0] - whole) < 1e-6
    # the circle takes less than the quarter it would take centred on the corner
    assert 0.05 * shapely.area(well[0]) < 10_000.0 - vehicle[0] < 0.25 * shapely.area(well[0])


def test_clipped_pieces_keep_what_lies_in_the_box() -> None:
    inner, zones, wells = _irregular_town(8, n=64)
    rng = np.random.default_rng(2)
    lots = inner[rng.integers(0, len(inner), len(wells))]
    cut = clipped_pieces(wells, shapely.bounds(lots))
    assert (shapely.get_num_coordinates(cut) <= shapely.get_num_coordinates(wells)).all()
    inside_cut = shapely.area(shapely.intersection(lots, cut))
    inside_whole = shapely.area(shapely.intersection(lots, wells))
    assert np.abs(inside_cut - inside_whole).max() < 1e-6
    # a piece inside its box, and a small one, come back as they were
    own = clipped_pieces(zones, shapely.bounds(zones))
    assert all(a is b for a, b in zip(own, zones, strict=True))


def test_a_cut_piece_is_the_rectangle_clip_when_valid_else_the_whole_piece() -> None:
    # a U-shaped piece whose arms leave the box on one side (2 arms of 10 x 39 ft and a
    # 10 x 10 ft foot lie in the box: 880 sq ft)
    u = shapely.Polygon(
        [(0, 0), (30, 0), (30, 100), (20, 100), (20, 10), (10, 10), (10, 100), (0, 100)]
    )
    u = shapely.segmentize(u, 1.0)
    box = np.array(
        [
            [
                -5.0 + CLIP_MARGIN_FT,
                -5.0 + CLIP_MARGIN_FT,
                35.0 - CLIP_MARGIN_FT,
                40.0 - CLIP_MARGIN_FT,
            ]
        ]
    )
    raw = shapely.clip_by_rect(u, -5.0, -5.0, 35.0, 40.0)
    cut = clipped_pieces(np.array([u]), box)
    if shapely.is_valid(raw):
        assert abs(shapely.area(cut[0]) - shapely.area(raw)) < 1e-9
    else:
        assert cut[0] is u
    assert (
        abs(shapely.area(shapely.intersection(cut[0], shapely.box(*box[0]))) - 880.0) < 1e-9
    )  # 2 arms of 10 x 49 and the 10 x 10 foot


def test_a_lot_gets_the_same_bits_with_any_neighbours() -> None:
    inner, zones, wells = _irregular_town(5)
    roof, vehicle = siting_areas_of(inner, [zones], [wells])
    assert vehicle is not None
    pick = np.arange(10, 60)
    near = shapely.STRtree(inner[pick])
    z = zones[np.unique(near.query(zones, predicate="intersects")[0])]
    w = wells[np.unique(near.query(wells, predicate="intersects")[0])]
    rng = np.random.default_rng(0)
    sub_roof, sub_vehicle = siting_areas_of(
        inner[pick], [z[rng.permutation(len(z))]], [w[rng.permutation(len(w))]]
    )
    assert sub_vehicle is not None
    assert np.array_equal(sub_roof, roof[pick])
    assert np.array_equal(sub_vehicle, vehicle[pick])


def test_holes_covers_and_boxes_that_only_seem_to_hold_on_a_rotated_lot() -> None:
    c, s = np.cos(np.radians(17.0)), np.sin(np.radians(17.0))
    square = np.array([[0.0, 0.0], [150.0, 0.0], [150.0, 150.0], [0.0, 150.0]])
    lot = shapely.Polygon(square @ np.array([[c, -s], [s, c]]).T + 5_000.0)
    middle = shapely.get_coordinates(shapely.centroid(lot))
    hole = buffer_like_geos(shapely.points(middle), 20.0, 32)  # strictly inside the lot
    cover = shapely.buffer(lot, 5.0)  # holds the whole lot
    # a ring round the lot: its box holds the lot's box, yet it takes only the lot's rim
    ring = shapely.difference(shapely.buffer(lot, 30.0), shapely.buffer(lot, -3.0))
    lots = np.array([lot])
    for shared, expected in (
        ([hole], 22_500.0 - shapely.area(hole[0])),
        ([np.array([cover])], 0.0),
        ([np.array([ring])], shapely.area(shapely.buffer(lot, -3.0))),
    ):
        roof, vehicle = siting_areas_of(lots, shared, None)
        assert vehicle is None
        assert abs(roof[0] - expected) < 1e-6
    assert abs(shapely.area(lot) - 22_500.0) < 1e-6
