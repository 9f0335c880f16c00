"""The band's area without its part (band_left) and the constrained share from what it left.

:func:`gis_sw.analysis.bands.band_left` gives the band's area as the subject's area less
what the buffers left of it, and :func:`gis_sw.batch.areas.constrained_area` adds the water
body and floodplain parts outside the band to it: both must give the figures of the
overlays they replace (the part inside the band by one more ``difference``, the union of
the parts), on every lot of a generated town and on its irregular copy, to the hundredth
the batch prints.  The hand-built cases are a square wetland with lots and water pieces
beside its straight east edge, where the band's edge is the straight line x = 200 and every
figure is a product of whole feet.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import shapely
from shapely.geometry import box

from gis_sw.analysis.bands import band_inside, band_left
from gis_sw.batch.areas import constrained_area, merge_pieces
from gis_sw.batch.chunks import ChunkSource
from gis_sw.batch.parcels import _area_inside, _geoms, _keys, screen_chunk
from gis_sw.batch.run import _context, plan_for
from gis_sw.layers.build import make_layerset
from gis_sw.ruleset import Ruleset
from gis_sw.sample.town import build_town

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from irregular_town import irregular_parcels

CRS = "EPSG:2260"
WIDTH_FT = 100.0
FLOAT_SQFT = 1e-6
"""How far two constructions of the same area may differ (floating-point rounding)."""

WETLAND = box(0, 0, 100, 100)  # its band's east edge is the line x = 200
KEYS = np.array([7], dtype=np.int64)


def _chunks(irregular: bool, ruleset: Ruleset) -> list[object]:
    town = build_town(parcels=300, seed=11)
    vectors = dict(town.vectors)
    if irregular:
        vectors["parcels"] = irregular_parcels(vectors["parcels"], 3.0)
    layers = make_layerset(CRS, vectors)
    prepared, plan = plan_for(layers, ruleset, chunk_size=120)
    return list(ChunkSource(prepared.parcels, _context(layers), plan))


@pytest.fixture(scope="module", params=[False, True], ids=["rectangle-lots", "irregular-lots"])
def chunks(request: pytest.FixtureRequest, ruleset: Ruleset) -> list[object]:
    return _chunks(bool(request.param), ruleset)


def test_band_left_area_and_constrained_equal_the_overlays_on_every_lot(
    chunks: list[object], ruleset: Ruleset
) -> None:
    width = ruleset.resources.wetland_adjacent_area_ft
    touched = crossing = 0
    for chunk in chunks:
        parcels = _geoms(chunk.parcels)  # type: ignore[attr-defined]
        ctx = chunk.context  # type: ignore[attr-defined]
        wetlands = ctx["wetlands"]
        old_area, part = band_inside(parcels, _geoms(wetlands), _keys(wetlands), width)
        area, left = band_left(parcels, _geoms(wetlands), _keys(wetlands), width)
        assert np.abs(area - old_area).max() <= FLOAT_SQFT
        assert (np.round(area, 2) == np.round(old_area, 2)).all()
        assert ((left == None) == (part == None)).all()  # noqa: E711
        some = left != None  # noqa: E711
        # what is left and the part inside tile the lot
        tiled = shapely.union(left[some], part[some])
        gap = shapely.area(shapely.symmetric_difference(tiled, parcels[some]))
        assert gap.max(initial=0.0) <= FLOAT_SQFT
        overlap = shapely.area(shapely.intersection(left[some], part[some]))
        assert overlap.max(initial=0.0) <= FLOAT_SQFT
        pieces = [_area_inside(parcels, _geoms(ctx[k]))[1] for k in ("water_bodies", "floodplain")]
        union = part
        for piece in pieces:
            union = merge_pieces(union, piece)
        old = np.nan_to_num(shapely.area(union).astype(np.float64))
        new = constrained_area(area, left, pieces)
        assert np.abs(new - old).max() <= FLOAT_SQFT
        assert (np.round(new, 2) == np.round(old, 2)).all()
        touched += int(some.sum())
        others = merge_pieces(pieces[0], pieces[1])
        crossing += int((some & (others != None)).sum())  # noqa: E711
    assert touched >= 20  # the town has lots in the band
    assert crossing >= 5  # and lots with the band and water or floodplain both


def test_screen_rows_keep_the_figures_of_the_part_and_the_union(
    chunks: list[object], ruleset: Ruleset
) -> None:
    # the batch's rows, against the construction they replaced (band_inside's part, then
    # the union of the parts), to the printed hundredth on every lot
    width = ruleset.resources.wetland_adjacent_area_ft
    for chunk in chunks:
        rows = screen_chunk(chunk, ruleset)  # type: ignore[arg-type]
        parcels = _geoms(chunk.parcels)  # type: ignore[attr-defined]
        ctx = chunk.context  # type: ignore[attr-defined]
        wetland, _ = _area_inside(parcels, _geoms(ctx["wetlands"]))
        band, part = band_inside(parcels, _geoms(ctx["wetlands"]), _keys(ctx["wetlands"]), width)
        adjacent = np.round(np.maximum(band - wetland, 0.0), 2)
        assert (rows["wetland_adjacent_sqft"].to_numpy() == adjacent).all()
        union = part
        for kind in ("water_bodies", "floodplain"):
            union = merge_pieces(union, _area_inside(parcels, _geoms(ctx[kind]))[1])
        constrained = np.nan_to_num(shapely.area(union).astype(np.float64))
        assert (rows["constrained_sqft"].to_numpy() == np.round(constrained, 2)).all()
        fraction = np.round(constrained / shapely.area(parcels), 4)
        assert (rows["constrained_fraction"].to_numpy() == fraction).all()


def _left(parcels: list[shapely.Geometry | None]) -> tuple[np.ndarray, np.ndarray]:
    return band_left(np.array(parcels, dtype=object), np.array([WETLAND]), KEYS, WIDTH_FT)


@pytest.mark.parametrize(
    ("gap_ft", "band_sqft"),
    [
        (50.0, 50.0 * 60.0),  # half of the lot's 100 ft width is within the band
        (99.99, 0.01 * 60.0),  # 0.01 ft of it is
        (100.0, 0.0),  # touching the band's edge: nothing inside it
        (100.01, 0.0),  # beyond it
    ],
    ids=["half-in-band", "0.01-ft-in-band", "touching-band-edge", "0.01-ft-beyond"],
)
def test_band_left_beside_a_straight_wetland_edge(gap_ft: float, band_sqft: float) -> None:
    # a 100 x 60 ft lot east of the wetland, facing its straight east edge
    lot = box(100 + gap_ft, 20, 200 + gap_ft, 80)
    area, left = _left([lot, None])
    assert area[0] == pytest.approx(band_sqft, abs=0.005)
    assert area[1] == 0.0  # no geometry, no band
    assert left[1] is None
    if band_sqft == 0.0:
        assert left[0] is None
    else:
        assert shapely.area(left[0]) == pytest.approx(6000.0 - band_sqft, abs=0.005)
        assert shapely.bounds(left[0])[0] == pytest.approx(200.0, abs=1e-9)


def test_a_lot_wholly_in_the_band_leaves_an_empty_polygon() -> None:
    lot = box(110, 10, 190, 90)  # 10 to 90 ft from the wetland's east edge
    area, left = _left([lot])
    assert area[0] == 80.0 * 80.0  # the lot's own area, to the bit
    assert shapely.is_empty(left[0])


LOT = box(150, 20, 250, 80)  # 50 ft of its 100 ft width in the band: 3,000 sq ft


@pytest.mark.parametrize(
    ("water", "constrained_sqft"),
    [
        (box(180, 30, 220, 50), 3000.0 + 20.0 * 20.0),  # crossing the band's edge
        (box(210, 30, 240, 50), 3000.0 + 30.0 * 20.0),  # wholly outside the band
        (box(200, 30, 230, 50), 3000.0 + 30.0 * 20.0),  # touching its edge from outside
        (box(199.99, 30, 230, 50), 3000.0 + 30.0 * 20.0),  # 0.01 ft of it in the band
        (box(160, 30, 190, 50), 3000.0),  # wholly inside the band
        (None, 3000.0),  # no water on the lot
    ],
    ids=["crossing", "outside", "touching", "0.01-ft-inside", "inside", "none"],
)
def test_constrained_is_the_band_plus_the_water_outside_it(
    water: shapely.Geometry | None, constrained_sqft: float
) -> None:
    area, left = _left([LOT])
    assert area[0] == pytest.approx(3000.0, abs=1e-9)
    pieces = [np.array([water], dtype=object)]
    got = constrained_area(area, left, pieces)
    assert got[0] == pytest.approx(constrained_sqft, abs=1e-6)


def test_constrained_with_water_and_floodplain_counts_their_overlap_once() -> None:
    area, left = _left([LOT])
    water = np.array([box(180, 30, 230, 50)], dtype=object)  # 30 x 20 ft outside the band
    flood = np.array([box(220, 40, 240, 70)], dtype=object)  # 20 x 30 ft, 10 x 10 on water
    got = constrained_area(area, left, [water, flood])
    assert got[0] == pytest.approx(3000.0 + 600.0 + 600.0 - 100.0, abs=1e-6)


def test_a_lot_the_band_covers_is_the_band_whatever_the_water() -> None:
    lot = box(110, 10, 190, 90)
    area, left = _left([lot])
    got = constrained_area(area, left, [np.array([box(120, 20, 150, 40)], dtype=object)])
    assert got[0] == 6400.0


def test_without_band_the_constrained_share_is_the_union_of_the_others() -> None:
    far = box(400, 20, 500, 80)  # 300 ft east of the wetland: no band
    area, left = _left([far])
    assert left[0] is None
    water = np.array([box(400, 20, 450, 80)], dtype=object)  # 50 x 60
    flood = np.array([box(440, 20, 500, 40)], dtype=object)  # 60 x 20, 10 x 20 on water
    got = constrained_area(area, left, [water, flood])
    assert got[0] == pytest.approx(3000.0 + 1200.0 - 200.0, abs=1e-9)
    # no wetlands layer at all: the band's figure is not read
    nan_band = np.full(1, np.nan)
    assert constrained_area(nan_band, None, [water, flood])[0] == got[0]
    assert constrained_area(nan_band, None, [])[0] == 0.0
