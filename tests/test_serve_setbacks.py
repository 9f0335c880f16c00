"""The setback lines of a lot, on tiny geometries: which cross it, their labels and lengths."""

from __future__ import annotations

import math

import geopandas as gpd
import pytest
from shapely.geometry import Point, box

from gis_sw.analysis.setbacks import SETBACK_COLUMNS, setback_lines
from gis_sw.layers.build import make_layerset

CRS = "EPSG:2260"


def frame(rows):
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


@pytest.fixture
def layers():
    return make_layerset(
        CRS,
        {
            "parcels": frame([{"parcel_id": "L-1", "geometry": box(0, 0, 100, 100)}]),
            "buildings": frame(
                [
                    # a basement 30 x 30 ft in the lot's middle: its 20-ft ring lies inside
                    {
                        "building_id": "B-1",
                        "habitable_basement": True,
                        "geometry": box(35, 35, 65, 65),
                    },
                    {
                        "building_id": "B-2",
                        "habitable_basement": False,
                        "geometry": box(200, 0, 230, 30),
                    },
                ]
            ),
            "septic_fields": frame([{"septic_id": "S-1", "geometry": box(110, 40, 130, 60)}]),
            "wells": frame([{"well_id": "W-1", "geometry": Point(130, 50)}]),
            "wetlands": frame([{"wetland_id": "WL-1", "geometry": box(400, 400, 450, 450)}]),
        },
    )


def test_roof_lines(layers, ruleset):
    lot = layers.get("parcels").geometry.iloc[0]
    lines = setback_lines(lot, layers, ruleset, parcel_id="L-1", device_class="roof")
    assert tuple(lines.columns) == SETBACK_COLUMNS
    assert list(lines["rule_id"]) == ["SW205", "SW206", "SW201"]
    assert list(lines["label"]) == [
        "10 ft from the lot line",
        "20 ft from building B-1 (habitable basement)",
        "20 ft from septic field S-1 (where up-gradient)",
    ]
    assert list(lines["citation"]) == [
        "§ 183-12C(2)(c)[6]",
        "§ 183-12C(2)(c)[7]",
        "§ 183-12C(2)(c)[3]",
    ]
    by_rule = lines.set_index("rule_id").geometry
    assert by_rule["SW205"].length == pytest.approx(4 * 80.0, abs=0.01)
    # a 30-ft square grown by 20 ft: 4 x 30 ft of sides and a 20-ft circle at the corners
    assert by_rule["SW206"].length == pytest.approx(120 + 2 * math.pi * 20, rel=0.001)
    # the septic ring reaches 10 ft into the lot: a chord of the rounded end, inside x < 100
    assert by_rule["SW201"].bounds[0] == pytest.approx(90.0, abs=0.01)
    assert by_rule["SW201"].bounds[2] <= 100.0 + 1e-9


def test_vehicle_adds_wells_and_water_within_50_ft(layers, ruleset):
    lot = layers.get("parcels").geometry.iloc[0]
    lines = setback_lines(lot, layers, ruleset, parcel_id="L-1", device_class="vehicle")
    vehicle = lines[lines["rule_id"] == "SW202"]
    assert list(vehicle["label"]) == ["50 ft from well W-1"]  # the wetland is 300 ft away
    assert vehicle.geometry.iloc[0].bounds[0] == pytest.approx(80.0, abs=0.01)
    with pytest.raises(ValueError):
        setback_lines(lot, layers, ruleset, parcel_id="L-1", device_class="truck")
