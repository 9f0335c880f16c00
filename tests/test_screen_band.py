"""The batch's wetland adjacent area by :func:`gis_sw.analysis.bands.band_inside`.

It must give, on every lot, the figures of the overlay it replaced (each parcel overlaid
with every wetland piece's :func:`adjacent_buffers`, the pieces dissolved): the batch's
``wetland_adjacent_sqft`` and ``constrained_sqft`` are tested equal to the hundredth on a
generated town, chunk by chunk, and the raw areas to floating-point rounding.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
import shapely
from shapely.geometry import box

from gis_sw.analysis.bands import adjacent_buffers, band_inside
from gis_sw.batch.areas import merge_pieces
from gis_sw.batch.chunks import ChunkSource
from gis_sw.batch.parcels import _area_inside, _geoms, _keys, screen_chunk
from gis_sw.batch.run import _context, plan_for
from gis_sw.layers.build import make_layerset
from gis_sw.ruleset import Ruleset
from gis_sw.sample.town import build_town

CRS = "EPSG:2260"
FLOAT_SQFT = 1e-6
"""How far two constructions of the same polygons may differ (floating-point rounding)."""


@pytest.fixture(scope="module")
def chunks(ruleset: Ruleset) -> list[object]:
    town = build_town(parcels=400, seed=5)
    layers = make_layerset(CRS, dict(town.vectors))
    prepared, plan = plan_for(layers, ruleset, chunk_size=150)
    return list(ChunkSource(prepared.parcels, _context(layers), plan))


def _old_band(parcels: np.ndarray, wetlands: np.ndarray, width_ft: float) -> tuple:
    """The overlay the batch used before: every buffer, dissolved per parcel."""
    return _area_inside(parcels, adjacent_buffers(wetlands, width_ft))


def test_band_inside_equals_the_dissolved_overlay_on_every_lot(
    chunks: list[object], ruleset: Ruleset
) -> None:
    width = ruleset.resources.wetland_adjacent_area_ft
    touched = 0
    for chunk in chunks:
        parcels = _geoms(chunk.parcels)  # type: ignore[attr-defined]
        wetlands = chunk.context["wetlands"]  # type: ignore[attr-defined]
        old_area, old_part = _old_band(parcels, _geoms(wetlands), width)
        area, part = band_inside(parcels, _geoms(wetlands), _keys(wetlands), width)
        assert np.abs(area - old_area).max() <= FLOAT_SQFT
        assert ((part == None) == (old_part == None)).all()  # noqa: E711
        some = part != None  # noqa: E711
        assert np.abs(shapely.area(part[some]) - shapely.area(old_part[some])).max() <= FLOAT_SQFT
        # the part is the same place, not only the same area
        gap = shapely.area(shapely.symmetric_difference(part[some], old_part[some]))
        assert gap.max() <= FLOAT_SQFT
        touched += int(some.sum())
    assert 20 <= touched <= 300  # the town has lots in the band, and lots outside it


def test_batch_rows_keep_the_old_adjacent_and_constrained_figures(
    chunks: list[object], ruleset: Ruleset
) -> None:
    width = ruleset.resources.wetland_adjacent_area_ft
    for chunk in chunks:
        rows = screen_chunk(chunk, ruleset)  # type: ignore[arg-type]
        parcels = _geoms(chunk.parcels)  # type: ignore[attr-defined]
        ctx = chunk.context  # type: ignore[attr-defined]
        wetland, _ = _area_inside(parcels, _geoms(ctx["wetlands"]))
        band, band_part = _old_band(parcels, _geoms(ctx["wetlands"]), width)
        expected = np.round(np.maximum(band - wetland, 0.0), 2)
        assert (rows["wetland_adjacent_sqft"].to_numpy() == expected).all()
        constrained = band_part
        for kind in ("water_bodies", "floodplain"):
            constrained = merge_pieces(constrained, _area_inside(parcels, _geoms(ctx[kind]))[1])
        area = np.round(np.nan_to_num(shapely.area(constrained).astype(np.float64)), 2)
        assert (rows["constrained_sqft"].to_numpy() == area).all()


def test_a_parcel_gets_the_same_band_whatever_else_is_around(
    chunks: list[object], ruleset: Ruleset
) -> None:
    width = ruleset.resources.wetland_adjacent_area_ft
    chunk = max(chunks, key=lambda c: len(c.context["wetlands"]))  # type: ignore[attr-defined]
    parcels = _geoms(chunk.parcels)  # type: ignore[attr-defined]
    wetlands = chunk.context["wetlands"]  # type: ignore[attr-defined]
    area, _ = band_inside(parcels, _geoms(wetlands), _keys(wetlands), width)
    # every parcel alone, with only the wetlands within the band width of it
    for i in np.flatnonzero(area > 0)[:25]:
        near = shapely.dwithin(_geoms(wetlands), parcels[i], width)
        alone, _ = band_inside(
            parcels[i : i + 1], _geoms(wetlands)[near], _keys(wetlands)[near], width
        )
        assert alone[0] == area[i]  # to the last bit


def _wetland() -> gpd.GeoDataFrame:
    # a 100-ft square wetland, row 7 of its layer
    return gpd.GeoDataFrame(geometry=[box(0, 0, 100, 100)], index=[7], crs=CRS)


@pytest.mark.parametrize(
    ("gap_ft", "expected_sqft"),
    [
        (50.0, 50.0 * 60.0),  # half of the parcel's 100 ft width is within the band
        (99.99, 0.01 * 60.0),  # 0.01 ft of it is
        (100.0, 0.0),  # touching the band's edge: nothing inside it
        (100.01, 0.0),  # beyond it
    ],
)
def test_band_beside_a_straight_wetland_edge(gap_ft: float, expected_sqft: float) -> None:
    # a 100 x 60 ft parcel east of a 100-ft square wetland, facing its straight east edge
    parcel = box(100 + gap_ft, 20, 200 + gap_ft, 80)
    wetland = _wetland()
    area, part = band_inside(
        np.array([parcel, None], dtype=object), _geoms(wetland), _keys(wetland), 100.0
    )
    assert area[0] == pytest.approx(expected_sqft, abs=0.005)
    assert area[1] == 0.0  # no geometry, no band
    assert part[1] is None
    assert (part[0] is None) == (expected_sqft == 0.0)


def test_a_parcel_wholly_in_the_band_counts_whole_and_the_wetland_too() -> None:
    inside_band = box(110, 10, 190, 90)  # 10 to 90 ft from the wetland's east edge
    over_wetland = box(50, 10, 150, 90)  # half on the wetland, half in the band
    wetland = _wetland()
    area, part = band_inside(
        np.array([inside_band, over_wetland], dtype=object), _geoms(wetland), _keys(wetland), 100.0
    )
    assert area[0] == pytest.approx(80 * 80, abs=1e-9)
    assert area[1] == pytest.approx(100 * 80, abs=1e-9)  # the band's part holds the wetland
    assert shapely.equals(part[0], inside_band)


def test_no_wetlands_gives_zero_and_no_part() -> None:
    area, part = band_inside(
        np.array([box(0, 0, 10, 10)], dtype=object),
        np.zeros(0, dtype=object),
        np.zeros(0, dtype=np.int64),
        100.0,
    )
    assert area.tolist() == [0.0]
    assert part.tolist() == [None]
