"""Issue 13, the device parts: up-gradient ground with ground, the proposal's own buildings,
"building" over 100 sq ft, streams as water bodies, and the maintenance obligations (SW211).

Every number is hand-built: 10-ft DEM cells, boxes whose distances are read off their
coordinates, and each boundary at the law's (or the ruleset's) number and 0.01 either side.
"""

from __future__ import annotations

import math
from typing import Any

import geopandas as gpd
import numpy as np
import pyproj
import pytest
from affine import Affine
from shapely.geometry import LineString, Point, box

from gis_sw.analysis import infiltration, maintenance
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.engine import run_rules
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.raster import RasterLayer
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
LOT = box(0, 0, 100, 100)
SEPTIC = box(40, 40, 60, 60)


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def dem(values: Any) -> RasterLayer:
    """10-ft cells, top-left corner (0, 100)."""
    arr = np.asarray(values, dtype="float64")
    crs = pyproj.CRS.from_user_input(CRS)
    return RasterLayer("dem", arr, Affine(10, 0, 0, 0, -10, 100), crs, source="test")


def context(
    ruleset: Ruleset,
    devices: list[dict[str, Any]],
    *,
    vectors: dict[str, gpd.GeoDataFrame] | None = None,
    rasters: dict[str, RasterLayer] | None = None,
    impervious: list[dict[str, Any]] | None = None,
) -> CheckContext:
    layers = {"parcels": frame([{"parcel_id": "104-22", "geometry": LOT}]), **(vectors or {})}
    rows = [{"proposal_id": "P1", **d} for d in devices]
    disturbance = frame(
        [
            {"proposal_id": "P1", "geometry": box(5, 5, 95, 95)},
            {"proposal_id": "P2", "geometry": box(5, 5, 95, 95)},
        ]
    )
    imp = frame(impervious) if impervious else None
    proposals = make_proposals(CRS, disturbance, frame(rows), impervious=imp)
    return CheckContext(make_layerset(CRS, layers, rasters or {}), proposals, ruleset)


def one(result: gpd.GeoDataFrame, subject: str = "D-7") -> Any:
    row = result[result["subject_id"] == subject]
    assert len(row) == 1, result[["subject_id", "outcome"]]
    return row.iloc[0]


# -- 1. SW201: ground with ground, flat within the DEM's resolution -------------------------


def _septic_dem(device_ground_ft: float) -> RasterLayer:
    """Ground 103.75 ft everywhere (the field's cells), the device's cell (column 7,
    row 5: x 70-80, y 40-50) at ``device_ground_ft``."""
    values = np.full((10, 10), 103.75)
    values[5, 7] = device_ground_ft
    return dem(values)


@pytest.mark.parametrize(
    "description",
    [
        pytest.param({"bottom_elevation_ft": 98.75}, id="bottom-elevation-98.75"),
        pytest.param({"depth_ft": 6.0}, id="depth-6-ft"),
        pytest.param({}, id="neither-given"),
    ],
)
def test_one_device_described_either_way_gets_one_answer(
    ruleset: Ruleset, description: dict[str, float]
) -> None:
    # the case: 15.00 ft from the field, ground 104.75 ft, field's lowest 103.75 ft
    devices = [{"device_id": "D-7", **description, "geometry": Point(75, 45)}]
    vectors = {"septic_fields": frame([{"septic_id": "S-1", "geometry": SEPTIC}])}
    ctx = context(ruleset, devices, vectors=vectors, rasters={"dem": _septic_dem(104.75)})
    row = one(infiltration.check_septic_upgradient(ctx))
    assert row["outcome"] == "fail"
    assert row["measured"] == 15.0
    assert row["message"] == (
        "Device D-7 is 15.00 ft from septic field S-1 and up-gradient of it (device ground "
        "104.75 ft above the field's lowest ground 103.75 ft), within the 20 ft setback "
        "(§ 183-12C(2)(c)[3])."
    )


@pytest.mark.parametrize(
    ("device_ground_ft", "outcome"),
    [
        pytest.param(104.09, "fail", id="0.34-ft-above-fails"),
        pytest.param(104.08, "review", id="0.33-ft-above-is-flat"),
        pytest.param(104.07, "review", id="0.32-ft-above-is-flat"),
        pytest.param(103.75, "review", id="level-is-flat"),
        pytest.param(103.43, "review", id="0.32-ft-below-is-flat"),
        pytest.param(103.42, "review", id="0.33-ft-below-is-flat"),
        pytest.param(103.41, "pass", id="0.34-ft-below-passes"),
    ],
)
def test_flat_within_the_dem_resolution_is_review(
    ruleset: Ruleset, device_ground_ft: float, outcome: str
) -> None:
    assert ruleset.devices.upgradient_flat_tolerance_ft == 0.33
    devices = [{"device_id": "D-7", "depth_ft": 4.0, "geometry": Point(75, 45)}]
    vectors = {"septic_fields": frame([{"septic_id": "S-1", "geometry": SEPTIC}])}
    ctx = context(ruleset, devices, vectors=vectors, rasters={"dem": _septic_dem(device_ground_ft)})
    row = one(infiltration.check_septic_upgradient(ctx))
    assert row["outcome"] == outcome
    assert row["measured"] == 15.0
    if outcome == "review":
        diff = abs(round(device_ground_ft - 103.75, 2))
        assert row["message"] == (
            f"Device D-7 is 15.00 ft from septic field S-1, within 20 ft; device ground "
            f"{device_ground_ft:.2f} ft and the field's lowest ground 103.75 ft differ by "
            f"{diff:.2f} ft, not more than the DEM resolves (0.33 ft), so up-gradient cannot "
            "be decided from the DEM (§ 183-12C(2)(c)[3])."
        )


def test_flat_dem_is_review_not_pass(ruleset: Ruleset) -> None:
    devices = [{"device_id": "D-7", "bottom_elevation_ft": 90.0, "geometry": Point(75, 45)}]
    vectors = {"septic_fields": frame([{"septic_id": "S-1", "geometry": SEPTIC}])}
    ctx = context(ruleset, devices, vectors=vectors, rasters={"dem": dem(np.full((10, 10), 100))})
    assert one(infiltration.check_septic_upgradient(ctx))["outcome"] == "review"


# -- 2. SW206: the proposal's own new buildings ----------------------------------------------

ROOF = box(60, 40, 80, 60)  # 400 sq ft; a device at (x, 50) left of it is 60 - x ft away


def _roof(**attrs: Any) -> list[dict[str, Any]]:
    return [{"proposal_id": "P1", "surface": "roof", "geometry": ROOF, **attrs}]


def _houses() -> dict[str, gpd.GeoDataFrame]:
    far = box(0, 95, 5, 100)  # an existing 25 sq ft shed far off: the layer is there
    return {"buildings": frame([{"building_id": "SHED", "geometry": far}])}


@pytest.mark.parametrize(
    ("x", "outcome"),
    [
        pytest.param(50.0, "review", id="10.00-ft-from-new-roof"),
        pytest.param(40.01, "review", id="19.99-ft-from-new-roof"),
        pytest.param(40.0, "pass", id="20.00-ft-from-new-roof"),
        pytest.param(39.99, "pass", id="20.01-ft-from-new-roof"),
    ],
)
def test_new_roof_without_basement_attributes_is_review(
    ruleset: Ruleset, x: float, outcome: str
) -> None:
    ctx = context(
        ruleset,
        [{"device_id": "D-7", "geometry": Point(x, 50)}],
        vectors=_houses(),
        impervious=_roof(),
    )
    row = one(infiltration.check_habitable_basement(ctx))
    assert row["outcome"] == outcome
    assert row["measured"] == pytest.approx(round(60 - x, 2), abs=1e-9)
    if outcome == "review":
        assert row["message"] == (
            f"Device D-7 is {60 - x:.2f} ft from new building 1 of P1, whose "
            "habitable_basement and below_ground_storage are not given; it must be at least "
            "20 ft away if the building has a habitable basement or below-ground storage area "
            "(§ 183-12C(2)(c)[7])."
        )
        assert row["geometry"].length == pytest.approx(60 - x)


@pytest.mark.parametrize(
    ("x", "attrs", "outcome", "has"),
    [
        pytest.param(50.0, {"habitable_basement": True}, "fail", "a habitable basement",
                     id="10.00-ft-basement"),
        pytest.param(40.01, {"habitable_basement": True}, "fail", "a habitable basement",
                     id="19.99-ft-basement"),
        pytest.param(40.0, {"habitable_basement": True}, "pass", "", id="20.00-ft-basement"),
        pytest.param(39.99, {"habitable_basement": True}, "pass", "", id="20.01-ft-basement"),
        pytest.param(40.01, {"below_ground_storage": True}, "fail",
                     "a below-ground storage area", id="19.99-ft-storage"),
        pytest.param(40.0, {"below_ground_storage": True}, "pass", "", id="20.00-ft-storage"),
        pytest.param(40.01, {"habitable_basement": False, "below_ground_storage": False},
                     "pass", "", id="19.99-ft-neither"),
    ],
)  # fmt: skip
def test_new_roof_with_basement_or_storage(
    ruleset: Ruleset, x: float, attrs: dict[str, bool], outcome: str, has: str
) -> None:
    ctx = context(
        ruleset,
        [{"device_id": "D-7", "geometry": Point(x, 50)}],
        vectors=_houses(),
        impervious=_roof(**attrs),
    )
    row = one(infiltration.check_habitable_basement(ctx))
    assert row["outcome"] == outcome
    if outcome == "fail":
        assert row["message"] == (
            f"Device D-7 is {60 - x:.2f} ft from new building 1 of P1, which has {has}, less "
            "than the 20 ft minimum (§ 183-12C(2)(c)[7])."
        )
        assert row["measured"] == pytest.approx(round(60 - x, 2), abs=1e-9)


def test_another_proposals_roof_does_not_count(ruleset: Ruleset) -> None:
    roof = [{"proposal_id": "P2", "surface": "roof", "habitable_basement": True, "geometry": ROOF}]
    ctx = context(
        ruleset,
        [{"device_id": "D-7", "geometry": Point(50, 50)}],
        vectors=_houses(),
        impervious=roof,
    )
    assert one(infiltration.check_habitable_basement(ctx))["outcome"] == "pass"


def test_new_roof_without_buildings_layer(ruleset: Ruleset) -> None:
    devices = [
        {"device_id": "D-7", "geometry": Point(50, 50)},  # 10 ft from the new roof
        {"device_id": "D-8", "geometry": Point(10, 10)},  # nothing proposed near it
    ]
    ctx = context(ruleset, devices, impervious=_roof(habitable_basement=True))
    result = infiltration.check_habitable_basement(ctx)
    assert one(result)["outcome"] == "fail"
    far = one(result, "D-8")
    assert far["outcome"] == "review"
    assert "no buildings layer was provided to check existing ones" in far["message"]


def test_town_house_without_basement_but_storage_unknown_is_review(ruleset: Ruleset) -> None:
    vectors = {
        "buildings": frame([{"building_id": "B-1", "habitable_basement": False, "geometry": ROOF}])
    }
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(45, 50)}], vectors=vectors)
    row = one(infiltration.check_habitable_basement(ctx))
    assert row["outcome"] == "review"
    assert "building B-1, whose below_ground_storage is not given" in row["message"]


def test_town_building_with_below_ground_storage_fails(ruleset: Ruleset) -> None:
    vectors = {
        "buildings": frame(
            [
                {
                    "building_id": "B-1",
                    "habitable_basement": False,
                    "below_ground_storage": True,
                    "geometry": ROOF,
                }
            ]
        )
    }
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(40.01, 50)}], vectors=vectors)
    row = one(infiltration.check_habitable_basement(ctx))
    assert row["outcome"] == "fail"
    assert "which has a below-ground storage area" in row["message"]


# -- 3. "building": more than 100 sq ft (§ 183-6) --------------------------------------------


@pytest.mark.parametrize(
    ("side_ft", "outcome"),
    [
        pytest.param(10.0, "pass", id="100.00-sq-ft-is-not-a-building"),
        pytest.param(math.sqrt(100.01), "fail", id="100.01-sq-ft-is-a-building"),
        pytest.param(math.sqrt(99.99), "pass", id="99.99-sq-ft-is-not-a-building"),
    ],
)
def test_structures_of_100_sq_ft_or_less_are_not_buildings(
    ruleset: Ruleset, side_ft: float, outcome: str
) -> None:
    assert ruleset.devices.building_min_area_sqft == 100.0
    shed = box(60, 45, 60 + side_ft, 45 + side_ft)
    vectors = {
        "buildings": frame([{"building_id": "SHED", "habitable_basement": True, "geometry": shed}])
    }
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(50, 50)}], vectors=vectors)
    assert one(infiltration.check_habitable_basement(ctx))["outcome"] == outcome


@pytest.mark.parametrize(
    ("area_sqft", "reported"),
    [(100.0, False), (100.01, True)],
    ids=["100.00-sq-ft-roof-not-reported", "100.01-sq-ft-roof-reported"],
)
def test_separation_report_skips_roofs_of_100_sq_ft(
    ruleset: Ruleset, area_sqft: float, reported: bool
) -> None:
    roofs = [
        {"proposal_id": "P1", "surface": "roof", "geometry": box(20, 20, 20 + area_sqft / 10, 30)},
        {"proposal_id": "P1", "surface": "roof", "geometry": box(60, 60, 80, 80)},
    ]
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(5, 5)}], impervious=roofs)
    result = infiltration.check_separation_report(ctx)
    subjects = set(result["subject_id"]) - {"D-7"}
    # numbering counts every roof polygon, so the big one stays "building-2" either way
    assert subjects == ({"P1:building-1", "P1:building-2"} if reported else {"P1:building-2"})


# -- 4. streams as water bodies (SW202, SW208) ------------------------------------------------


def _water(stream: bool = True) -> dict[str, gpd.GeoDataFrame]:
    out = {
        "wells": frame([{"well_id": "W-1", "geometry": Point(-500, -500)}]),
        "wetlands": frame([{"wetland_id": "WL-1", "geometry": box(500, 0, 600, 100)}]),
        "water_bodies": frame([{"water_id": "POND", "geometry": box(-600, 0, -500, 100)}]),
    }
    if stream:
        line = LineString([(100, -50), (100, 150)])  # a brook along x = 100
        out["streams"] = frame([{"stream_id": "BR-1", "name": "Sample Brook", "geometry": line}])
    return out


@pytest.mark.parametrize(
    ("x", "outcome"),
    [
        pytest.param(50.0, "pass", id="vehicle-50.00-ft-from-stream"),
        pytest.param(50.01, "fail", id="vehicle-49.99-ft-from-stream"),
        pytest.param(49.99, "pass", id="vehicle-50.01-ft-from-stream"),
    ],
)
def test_stream_counts_as_water_body_for_vehicle_devices(
    ruleset: Ruleset, x: float, outcome: str
) -> None:
    devices = [{"device_id": "D-7", "serves_vehicle_traffic": True, "geometry": Point(x, 50)}]
    row = one(infiltration.check_vehicle_traffic(context(ruleset, devices, vectors=_water())))
    assert row["outcome"] == outcome
    assert row["measured"] == pytest.approx(round(100 - x, 2), abs=1e-9)
    if outcome == "fail":
        assert row["message"] == (
            "Device D-7 serves vehicle traffic and is 49.99 ft from stream BR-1, less than the "
            "50 ft minimum (§ 183-12C(2)(c)[3])."
        )


def test_no_streams_layer_is_not_missing_data(ruleset: Ruleset) -> None:
    devices = [{"device_id": "D-7", "serves_vehicle_traffic": True, "geometry": Point(50, 50)}]
    ctx = context(ruleset, devices, vectors=_water(stream=False))
    assert one(infiltration.check_vehicle_traffic(ctx))["outcome"] == "pass"
    report = one(infiltration.check_separation_report(ctx))
    assert "stream" not in report["message"]


def test_separation_report_names_the_nearest_stream(ruleset: Ruleset) -> None:
    devices = [{"device_id": "D-7", "geometry": Point(70, 50)}]
    row = one(infiltration.check_separation_report(context(ruleset, devices, vectors=_water())))
    assert row["measured"] == pytest.approx(30.0)
    assert "nearest stream BR-1 at 30.00 ft" in row["message"]


# -- 5. SW211 maintenance obligations ---------------------------------------------------------


def test_sw211_required_once_per_proposal_listing_its_devices(ruleset: Ruleset) -> None:
    devices = [
        {"device_id": "D-8", "geometry": Point(20, 20)},
        {"device_id": "D-7", "geometry": Point(50, 50)},
        {"device_id": "D-9", "proposal_id": "P2", "geometry": Point(70, 70)},
    ]
    ctx = context(ruleset, devices)
    result = maintenance.check_maintenance_obligations(ctx).set_index("subject_id")
    assert list(result.index) == ["P1", "P2"]
    assert list(result["outcome"]) == ["required", "required"]
    assert list(result["measured"]) == [2.0, 1.0]
    message = result.loc["P1", "message"]
    assert message.startswith("P1 proposes 2 stormwater devices (D-7, D-8), which bring ")
    for section in ("§ 183-9B", "§ 183-9D", "§ 183-10B", "§ 183-10E"):
        assert section in message
    assert message.endswith("(§ 183-9B, § 183-9D, § 183-10B, § 183-10E).")
    assert result.loc["P2", "message"].startswith("P2 proposes 1 stormwater device (D-9), which ")


def test_sw211_boundary_no_device_no_finding(ruleset: Ruleset) -> None:
    findings = run_rules(
        make_layerset(CRS, {"parcels": frame([{"parcel_id": "A", "geometry": LOT}])}),
        make_proposals(CRS, frame([{"proposal_id": "P1", "geometry": box(5, 5, 95, 95)}])),
        ruleset,
        select=["SW211"],
    )
    assert len(findings) == 0


def test_maintenance_through_the_engine_carries_the_ruleset_citation(ruleset: Ruleset) -> None:
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(50, 50)}])
    findings = run_rules(ctx.layers, ctx.proposals, ruleset, select=["SW211"])
    assert len(findings) == 1
    row = findings.iloc[0]
    assert (row["rule_id"], row["subject_id"], row["outcome"]) == ("SW211", "P1", "required")
    assert row["citation"] == "§ 183-9B, § 183-9D, § 183-10B, § 183-10E"


def test_streams_layer_is_read_from_a_geopackage_and_must_be_lines(
    ruleset: Ruleset, tmp_path: Any
) -> None:
    from shapely import affinity

    from gis_sw.errors import LayerError
    from gis_sw.layers.read import read_layers

    def here(geom: Any) -> Any:  # into Westchester, where EPSG:2260 applies
        return affinity.translate(geom, 683_000, 825_000)

    town = tmp_path / "town.gpkg"
    frame([{"parcel_id": "A", "geometry": here(LOT)}]).to_file(town, layer="parcels")
    frame([{"zone": "R-20", "geometry": here(box(-10, -10, 200, 200))}]).to_file(
        town, layer="zoning"
    )
    brook = here(LineString([(120, 0), (120, 100)]))
    frame([{"stream_id": "BR", "name": "Brook", "geometry": brook}]).to_file(town, layer="streams")
    streams = read_layers(town, ruleset=ruleset).get("streams")
    assert streams is not None
    assert list(streams["stream_id"]) == ["BR"]
    assert streams.geometry.iat[0].equals(brook)
    frame([{"stream_id": "BR", "geometry": here(box(0, 0, 1, 1))}]).to_file(
        town, layer="streams", mode="w"
    )
    with pytest.raises(LayerError, match=r"streams .*Polygon, not line: stream_id BR"):
        read_layers(town, ruleset=ruleset)


def test_sw211_review_ruleset_without_obligations(
    ruleset: Ruleset,
) -> None:
    import tomllib
    from importlib import resources

    from gis_sw.ruleset import parse_ruleset

    text = resources.files("gis_sw.rulesets").joinpath("mount_pleasant_ny.toml").read_text()
    data = tomllib.loads(text)
    data["devices"]["maintenance_obligations"] = []
    bare = parse_ruleset(data, source="test")
    ctx = context(bare, [{"device_id": "D-7", "geometry": Point(50, 50)}])
    row = one(maintenance.check_maintenance_obligations(ctx), "P1")
    assert row["outcome"] == "review"
    assert "the ruleset lists no maintenance obligations" in row["message"]
