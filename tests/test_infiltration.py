"""SW201-SW210: every setback of § 183-12C(2)(c) on tiny hand-built lots and rasters."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import pytest
import shapely
from affine import Affine
from shapely.geometry import LineString, Point, box

from gis_sw.analysis import infiltration
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.engine import run_rules
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.raster import RasterLayer, RasterMode
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
LOT = box(0, 0, 100, 100)


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def raster(kind: str, values: Any, *, mode: RasterMode = RasterMode.ELEVATION) -> RasterLayer:
    """A raster of 10-ft cells whose top-left corner is (0, 100)."""
    arr = np.asarray(values, dtype="float64")
    return RasterLayer(
        kind, arr, Affine(10, 0, 0, 0, -10, 100), shapely_crs(), mode=mode, source="test"
    )


def shapely_crs() -> Any:
    return pyproj.CRS.from_user_input(CRS)


def context(
    ruleset: Ruleset,
    devices: list[dict[str, Any]],
    *,
    vectors: dict[str, gpd.GeoDataFrame] | None = None,
    rasters: dict[str, RasterLayer] | None = None,
) -> CheckContext:
    layers = {"parcels": frame([{"parcel_id": "104-22", "geometry": LOT}])}
    layers.update(vectors or {})
    layerset = make_layerset(CRS, layers, rasters or {})
    rows = [{"proposal_id": "P1", **d} for d in devices]
    disturbance = frame([{"proposal_id": "P1", "geometry": box(5, 5, 95, 95)}])
    proposals = make_proposals(CRS, disturbance, frame(rows))
    return CheckContext(layers=layerset, proposals=proposals, ruleset=ruleset)


def one(result: gpd.GeoDataFrame, device_id: str = "D-7") -> Any:
    row = result[result["subject_id"] == device_id]
    assert len(row) == 1
    return row.iloc[0]


# -- SW205 property line -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "outcome", "measured"),
    [
        pytest.param(10.0, "pass", 10.0, id="10.00-ft-from-lot-line"),
        pytest.param(9.99, "fail", 9.99, id="9.99-ft-from-lot-line"),
        pytest.param(10.01, "pass", 10.01, id="10.01-ft-from-lot-line"),
        pytest.param(9.996, "pass", 10.0, id="9.996-ft-rounds-to-10.00"),
        pytest.param(50.0, "pass", 50.0, id="mid-lot"),
    ],
)
def test_sw205_boundary_pass_fail_at_10_ft(
    ruleset: Ruleset, x: float, outcome: str, measured: float
) -> None:
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(x, 50)}])
    row = one(infiltration.check_property_line(ctx))
    assert row["outcome"] == outcome
    assert row["measured"] == pytest.approx(measured, abs=0.005)
    assert row["threshold"] == 10.0
    assert row["unit"] == "ft"
    if outcome == "fail":
        assert row["message"] == (
            "Device D-7 is 9.99 ft from the line of parcel 104-22, less than the 10 ft "
            "minimum (§ 183-12C(2)(c)[6])."
        )
        assert row["geometry"].equals_exact(LineString([(9.99, 50), (0, 50)]), 1e-9)


def test_property_line_device_crossing_onto_neighbour_fails(ruleset: Ruleset) -> None:
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": box(95, 40, 110, 60)}])
    row = one(infiltration.check_property_line(ctx))
    assert row["outcome"] == "fail"
    assert row["measured"] == 0.0
    assert "onto a neighbouring lot" in row["message"]
    assert row["geometry"].area == pytest.approx(10 * 20)  # the part on the neighbour


def test_sw205_review_device_on_no_parcel(ruleset: Ruleset) -> None:
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(500, 500)}])
    assert one(infiltration.check_property_line(ctx))["outcome"] == "review"


# -- SW206 habitable basement ----------------------------------------------------------------


def _house(basement: Any) -> dict[str, gpd.GeoDataFrame]:
    return {
        "buildings": frame(
            [
                {
                    "building_id": "B-1",
                    "habitable_basement": basement,
                    # a house recorded without a basement is recorded without storage too
                    # (one "no" alone is review: tests/test_lawdev_devices.py)
                    "below_ground_storage": False if basement is False else None,
                    "geometry": box(60, 40, 80, 60),
                }
            ]
        )
    }


@pytest.mark.parametrize(
    ("x", "basement", "outcome"),
    [
        pytest.param(40.0, True, "pass", id="20.00-ft-from-basement"),
        pytest.param(40.01, True, "fail", id="19.99-ft-from-basement"),
        pytest.param(39.99, True, "pass", id="20.01-ft-from-basement"),
        pytest.param(45.0, False, "pass", id="15-ft-from-house-without-basement"),
        pytest.param(45.0, None, "review", id="basement-unknown-within-20-ft"),
        pytest.param(30.0, None, "pass", id="basement-unknown-beyond-20-ft"),
    ],
)
def test_sw206_boundary_pass_fail_review_at_20_ft(
    ruleset: Ruleset, x: float, basement: Any, outcome: str
) -> None:
    ctx = context(
        ruleset, [{"device_id": "D-7", "geometry": Point(x, 50)}], vectors=_house(basement)
    )
    row = one(infiltration.check_habitable_basement(ctx))
    assert row["outcome"] == outcome
    if outcome == "fail":
        assert row["measured"] == pytest.approx(19.99, abs=1e-9)
        assert row["geometry"].length == pytest.approx(19.99)
        assert "Device D-7 is 19.99 ft from building B-1" in row["message"]


def test_habitable_basement_without_buildings_layer_is_review(ruleset: Ruleset) -> None:
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(50, 50)}])
    row = one(infiltration.check_habitable_basement(ctx))
    assert row["outcome"] == "review"
    assert "no buildings layer" in row["message"]


# -- SW202 vehicle traffic and SW210 state advisory -----------------------------------------


def _resources(well_xy: tuple[float, float] = (50, 0)) -> dict[str, gpd.GeoDataFrame]:
    return {
        "wells": frame([{"well_id": "W-1", "geometry": Point(*well_xy)}]),
        "wetlands": frame([{"wetland_id": "WL-1", "geometry": box(200, 0, 300, 100)}]),
        "water_bodies": frame([{"water_id": "POND", "geometry": box(-300, 0, -200, 100)}]),
    }


@pytest.mark.parametrize(
    ("y", "vehicle", "outcome", "advisory"),
    [
        pytest.param(50.0, True, "pass", "review", id="vehicle-50.00-ft-from-well"),
        pytest.param(49.99, True, "fail", "review", id="vehicle-49.99-ft-from-well"),
        pytest.param(50.01, True, "pass", "review", id="vehicle-50.01-ft-from-well"),
        pytest.param(99.99, True, "pass", "review", id="vehicle-99.99-ft-from-well"),
        pytest.param(100.01, True, "pass", "pass", id="vehicle-100.01-ft-from-well"),
        pytest.param(100.0, True, "pass", "pass", id="vehicle-100.00-ft-from-well"),
        pytest.param(30.0, False, "pass", "pass", id="roof-device-30-ft-from-well"),
        pytest.param(30.0, None, "review", "review", id="vehicle-use-unknown"),
    ],
)
def test_sw202_sw210_boundary_pass_fail_review(
    ruleset: Ruleset, y: float, vehicle: Any, outcome: str, advisory: str
) -> None:
    devices = [{"device_id": "D-7", "serves_vehicle_traffic": vehicle, "geometry": Point(50, y)}]
    ctx = context(ruleset, devices, vectors=_resources())
    row = one(infiltration.check_vehicle_traffic(ctx))
    assert row["outcome"] == outcome
    state = one(infiltration.check_state_well_advisory(ctx))
    assert state["outcome"] == advisory
    assert state["message"].startswith("Advisory, not Chapter 183")
    assert state["message"].endswith(
        "(10 NYCRR Appendix 5-B, Table 1 (NYS DOH; advisory, not Chapter 183))."
    )
    if outcome == "fail":
        assert row["measured"] == pytest.approx(49.99)
        assert row["message"] == (
            "Device D-7 serves vehicle traffic and is 49.99 ft from well W-1, less than the "
            "50 ft minimum (§ 183-12C(2)(c)[3])."
        )
        assert row["geometry"].equals_exact(LineString([(50, 49.99), (50, 0)]), 1e-9)


def test_vehicle_device_near_wetland_off_the_parcel_fails(ruleset: Ruleset) -> None:
    devices = [{"device_id": "D-7", "serves_vehicle_traffic": True, "geometry": Point(90, 50)}]
    vectors = _resources(well_xy=(-500, -500))
    vectors["wetlands"] = frame([{"wetland_id": "WL-1", "geometry": box(130, 0, 200, 100)}])
    ctx = context(ruleset, devices, vectors=vectors)
    row = one(infiltration.check_vehicle_traffic(ctx))
    assert row["outcome"] == "fail"
    assert row["measured"] == pytest.approx(40.0)
    assert "is 40.00 ft from wetland WL-1" in row["message"]


def test_vehicle_traffic_missing_layer_is_review_naming_it(ruleset: Ruleset) -> None:
    vectors = _resources()
    del vectors["wetlands"]
    devices = [{"device_id": "D-7", "serves_vehicle_traffic": True, "geometry": Point(50, 80)}]
    row = one(infiltration.check_vehicle_traffic(context(ruleset, devices, vectors=vectors)))
    assert row["outcome"] == "review"
    assert "no wetlands layer" in row["message"]


# -- SW201 septic up-gradient -----------------------------------------------------------------


def _septic() -> dict[str, gpd.GeoDataFrame]:
    # field along x 40..60, y 40..60
    return {"septic_fields": frame([{"septic_id": "S-1", "geometry": box(40, 40, 60, 60)}])}


def _slope_dem() -> RasterLayer:
    """Ground rises 1 ft per 10-ft column to the east: column c has elevation 100 + c."""
    return raster("dem", np.tile(100.0 + np.arange(10), (10, 1)))


@pytest.mark.parametrize(
    ("x", "outcome"),
    [
        pytest.param(75.0, "fail", id="up-gradient-15-ft"),
        pytest.param(80.0, "pass", id="up-gradient-20.00-ft"),
        pytest.param(79.99, "fail", id="up-gradient-19.99-ft"),
        pytest.param(80.01, "pass", id="up-gradient-20.01-ft"),
        pytest.param(25.0, "pass", id="down-gradient-15-ft"),
    ],
)
def test_sw201_boundary_pass_fail_at_20_ft(ruleset: Ruleset, x: float, outcome: str) -> None:
    ctx = context(
        ruleset,
        [{"device_id": "D-7", "geometry": Point(x, 50)}],
        vectors=_septic(),
        rasters={"dem": _slope_dem()},
    )
    row = one(infiltration.check_septic_upgradient(ctx))
    assert row["outcome"] == outcome
    if x == 75.0:
        # device on cell column 7 (107 ft); the field within 20 ft of it is x 55..60: column 5
        assert row["message"] == (
            "Device D-7 is 15.00 ft from septic field S-1 and up-gradient of it (device ground "
            "107.00 ft above the field's lowest ground 105.00 ft), within the 20 ft setback "
            "(§ 183-12C(2)(c)[3])."
        )
        assert row["geometry"].length == pytest.approx(15.0)
    if x == 25.0:
        assert row["message"] == (
            "Device D-7 is 15.00 ft from septic field S-1 but not up-gradient of it: device "
            "ground 102.00 ft is not above the field's lowest ground 104.00 ft "
            "(§ 183-12C(2)(c)[3])."
        )
        assert row["measured"] == 15.0


@pytest.mark.parametrize(
    "description",
    [{"bottom_elevation_ft": 103.5}, {"depth_ft": 3.5}],
    ids=["bottom-elevation-below-the-field", "depth"],
)
def test_septic_bottom_does_not_change_the_ground_comparison(
    ruleset: Ruleset, description: dict[str, float]
) -> None:
    # issue 13 item 1: up-gradient compares ground with ground (107 ft against 105 ft), so a
    # bottom below the field's ground no longer passes, and both descriptions agree
    devices = [{"device_id": "D-7", **description, "geometry": Point(75, 50)}]
    ctx = context(ruleset, devices, vectors=_septic(), rasters={"dem": _slope_dem()})
    assert one(infiltration.check_septic_upgradient(ctx))["outcome"] == "fail"


def test_sw201_review_without_dem(ruleset: Ruleset) -> None:
    devices = [
        {"device_id": "D-7", "geometry": Point(75, 50)},
        {"device_id": "D-8", "geometry": Point(90, 90)},
    ]
    result = infiltration.check_septic_upgradient(context(ruleset, devices, vectors=_septic()))
    assert one(result)["outcome"] == "review"
    assert "no DEM" in one(result)["message"]
    assert one(result, "D-8")["outcome"] == "pass"  # 42.43 ft away: distance alone decides
    assert one(result, "D-8")["measured"] == pytest.approx(42.43)


def test_septic_without_layer_is_review(ruleset: Ruleset) -> None:
    ctx = context(ruleset, [{"device_id": "D-7", "geometry": Point(75, 50)}])
    row = one(infiltration.check_septic_upgradient(ctx))
    assert row["outcome"] == "review"
    assert "no septic_fields layer" in row["message"]


# -- SW203 / SW204 vertical separation ---------------------------------------------------------


def _flat(kind: str, value: float, mode: RasterMode = RasterMode.ELEVATION) -> RasterLayer:
    return raster(kind, np.full((10, 10), value), mode=mode)


@pytest.mark.parametrize(
    ("device", "rasters", "outcome", "measured"),
    [
        pytest.param(
            {"bottom_elevation_ft": 92.0},
            {"seasonal_high_groundwater": _flat("seasonal_high_groundwater", 90.0)},
            "pass",
            2.0,
            id="bottom-2.00-ft-above-groundwater-elevation",
        ),
        pytest.param(
            {"bottom_elevation_ft": 91.99},
            {"seasonal_high_groundwater": _flat("seasonal_high_groundwater", 90.0)},
            "fail",
            1.99,
            id="bottom-1.99-ft-above-groundwater-elevation",
        ),
        pytest.param(
            {"bottom_elevation_ft": 92.01},
            {"seasonal_high_groundwater": _flat("seasonal_high_groundwater", 90.0)},
            "pass",
            2.01,
            id="bottom-2.01-ft-above-groundwater-elevation",
        ),
        pytest.param(
            {"depth_ft": 6.0},
            {
                "seasonal_high_groundwater": _flat(
                    "seasonal_high_groundwater", 8.0, RasterMode.DEPTH
                )
            },
            "pass",
            2.0,
            id="depth-6-ft-groundwater-depth-8-ft-no-dem-needed",
        ),
        pytest.param(
            {"depth_ft": 6.5},
            {
                "seasonal_high_groundwater": _flat("seasonal_high_groundwater", 95.0),
                "dem": _flat("dem", 103.0),
            },
            "fail",
            1.5,
            id="depth-from-dem-against-groundwater-elevation",
        ),
        pytest.param(
            {"bottom_elevation_ft": 97.0},
            {
                "seasonal_high_groundwater": _flat(
                    "seasonal_high_groundwater", 5.0, RasterMode.DEPTH
                ),
                "dem": _flat("dem", 100.0),
            },
            "pass",
            2.0,
            id="bottom-elevation-against-groundwater-depth",
        ),
        pytest.param(
            {"bottom_elevation_ft": 97.0},
            {
                "seasonal_high_groundwater": _flat(
                    "seasonal_high_groundwater", 5.0, RasterMode.DEPTH
                )
            },
            "review",
            float("nan"),
            id="groundwater-depth-without-dem",
        ),
        pytest.param({"bottom_elevation_ft": 97.0}, {}, "review", float("nan"), id="no-raster"),
        pytest.param(
            {"bottom_elevation_ft": 97.0, "test_hole_groundwater_elevation_ft": 95.5},
            {},
            "fail",
            1.5,
            id="test-hole-data-without-raster",
        ),
        pytest.param(
            {},
            {"seasonal_high_groundwater": _flat("seasonal_high_groundwater", 90.0)},
            "review",
            float("nan"),
            id="bottom-not-given",
        ),
    ],
)
def test_sw203_boundary_pass_fail_review_at_2_ft(
    ruleset: Ruleset,
    device: dict[str, Any],
    rasters: dict[str, RasterLayer],
    outcome: str,
    measured: float,
) -> None:
    ctx = context(
        ruleset, [{"device_id": "D-7", "geometry": Point(50, 50), **device}], rasters=rasters
    )
    row = one(infiltration.check_groundwater_separation(ctx))
    assert row["outcome"] == outcome
    if np.isnan(measured):
        assert np.isnan(row["measured"])
    else:
        assert row["measured"] == pytest.approx(measured, abs=1e-9)


def test_sw204_fail_at_the_worst_cell_under_the_footprint(ruleset: Ruleset) -> None:
    depth = np.full((10, 10), 10.0)
    depth[5, 5] = 7.5  # one shallow cell (x 50..60, y 40..50) under the trench
    rasters = {"bedrock": raster("bedrock", depth, mode=RasterMode.DEPTH)}
    device = {"device_id": "D-7", "depth_ft": 6.0, "geometry": box(42, 42, 58, 48)}
    row = one(infiltration.check_bedrock_separation(context(ruleset, [device], rasters=rasters)))
    assert row["outcome"] == "fail"
    assert row["measured"] == pytest.approx(1.5)
    assert row["message"] == (
        "Device D-7's bottom is 1.50 ft above bedrock (worst place, from the bedrock raster "
        "(depth)), less than the 2 ft minimum (§ 183-12C(2)(c)[4])."
    )


# -- SW207, SW209, SW208 -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "outcome"),
    [(True, "pass"), (False, "fail"), (None, "review")],
    ids=["has-sedimentation-device", "no-sedimentation-device", "sedimentation-unknown"],
)
def test_sw207_pass_fail_review_sedimentation_device(
    ruleset: Ruleset, value: Any, outcome: str
) -> None:
    devices = [{"device_id": "D-7", "has_sedimentation_device": value, "geometry": Point(50, 50)}]
    row = one(infiltration.check_sedimentation_device(context(ruleset, devices)))
    assert row["outcome"] == outcome


@pytest.mark.parametrize(
    ("value", "outcome"),
    [(True, "pass"), (False, "review"), (None, "review")],
    ids=["test-hole-logged", "test-hole-not-logged", "test-hole-unknown"],
)
def test_sw209_pass_review_test_holes_logged(ruleset: Ruleset, value: Any, outcome: str) -> None:
    devices = [{"device_id": "D-7", "test_hole_logged": value, "geometry": Point(50, 50)}]
    row = one(infiltration.check_test_holes(context(ruleset, devices)))
    assert row["outcome"] == outcome
    assert row["message"].endswith("(§ 183-12C(2)(c)[4]).")


def test_sw208_info_separation_report(ruleset: Ruleset) -> None:
    devices = [{"device_id": "D-7", "geometry": Point(50, 30)}]
    row = one(infiltration.check_separation_report(context(ruleset, devices, vectors=_resources())))
    assert row["outcome"] == "info"
    assert row["measured"] == pytest.approx(30.0)
    assert row["message"] == (
        "Device D-7: nearest well W-1 at 30.00 ft; nearest water body POND at 250.00 ft; "
        "nearest wetland WL-1 at 150.00 ft (§ 183-12C(2)(c)[5])."
    )


def test_separation_report_covers_new_buildings(ruleset: Ruleset) -> None:
    layerset = make_layerset(
        CRS, {"parcels": frame([{"parcel_id": "104-22", "geometry": LOT}]), **_resources()}
    )
    disturbance = frame([{"proposal_id": "P1", "geometry": box(5, 5, 95, 95)}])
    impervious = frame(
        [
            {"proposal_id": "P1", "surface": "roof", "geometry": box(40, 20, 60, 40)},
            {"proposal_id": "P1", "surface": "driveway", "geometry": box(0, 40, 10, 90)},
        ]
    )
    proposals = make_proposals(CRS, disturbance, impervious=impervious)
    ctx = CheckContext(layers=layerset, proposals=proposals, ruleset=ruleset)
    result = infiltration.check_separation_report(ctx)
    assert list(result["subject_id"]) == ["P1:building-1"]  # the driveway is not a building
    row = result.iloc[0]
    assert row["outcome"] == "info"
    assert row["measured"] == pytest.approx(20.0)  # roof edge y=20 to well W-1 at (50, 0)
    assert row["message"] == (
        "New building 1 of P1: nearest well W-1 at 20.00 ft; nearest water body POND at "
        "240.00 ft; nearest wetland WL-1 at 140.00 ft (§ 183-12C(2)(c)[5])."
    )
    assert row["geometry"].length == pytest.approx(20.0)


def test_run_rules_gives_one_row_per_rule_and_device(ruleset: Ruleset) -> None:
    devices = [
        {"device_id": "D-7", "geometry": Point(50, 30)},
        {"device_id": "D-8", "geometry": Point(20, 80)},
    ]
    ctx = context(ruleset, devices, vectors=_resources())
    findings = run_rules(ctx.layers, ctx.proposals, ruleset, select=["SW2"])
    assert len(findings) == 20 + 1  # ten rules per device, SW211 once for the proposal
    assert not findings.duplicated(["rule_id", "proposal_id", "subject_id"]).any()
    assert set(findings["rule_id"]) == {f"SW2{i:02d}" for i in range(1, 12)}
    assert shapely.is_valid(findings.geometry.to_numpy()).all()


# -- the sample town ----------------------------------------------------------------------------

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


@pytest.mark.skipif(not (SAMPLE / "expected.csv").exists(), reason="no data/sample yet")
def test_sample_device_cases_come_out_as_the_law_says(ruleset: Ruleset) -> None:
    from gis_sw.layers.read import read_layers, read_proposals

    layers = read_layers(SAMPLE / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=ruleset)
    findings = run_rules(layers, proposals, ruleset, select=["SW2"])
    expected = pd.read_csv(SAMPLE / "expected.csv", dtype=str)
    expected = expected[expected["rule_id"].str.startswith("SW2")]
    assert len(expected) >= 8
    got = findings.set_index(["proposal_id", "rule_id", "subject_id"])["outcome"]
    for row in expected.itertuples(index=False):
        key = (row.proposal_id, row.rule_id, row.subject_id)
        assert got.loc[key] == row.outcome, (key, row.note)
    d09 = findings[(findings["subject_id"] == "D09-9ft") & (findings["rule_id"] == "SW205")]
    assert d09["measured"].iat[0] == pytest.approx(9.0, abs=0.005)
    assert d09["geometry"].iat[0].length == pytest.approx(9.0, abs=0.005)


def test_passing_distance_rules_report_the_nearest_distance(ruleset: Ruleset) -> None:
    devices = [{"device_id": "D-7", "serves_vehicle_traffic": True, "geometry": Point(30, 70)}]
    vectors = {**_resources(), **_house(basement=True)}
    ctx = context(ruleset, devices, vectors=vectors)
    vehicle = one(infiltration.check_vehicle_traffic(ctx))
    assert vehicle["outcome"] == "pass"
    assert vehicle["measured"] == pytest.approx(math.hypot(20, 70), abs=0.005)  # well W-1
    basement = one(infiltration.check_habitable_basement(ctx))
    assert basement["outcome"] == "pass"
    assert basement["measured"] == pytest.approx(math.hypot(30, 10), abs=0.005)


def test_proposals_without_devices_give_no_device_rows(ruleset: Ruleset) -> None:
    layers = make_layerset(CRS, {"parcels": frame([{"parcel_id": "104-22", "geometry": LOT}])})
    disturbance = frame([{"proposal_id": "P1", "geometry": box(5, 5, 95, 95)}])
    proposals = make_proposals(CRS, disturbance)
    findings = run_rules(layers, proposals, ruleset, select=["SW2"])
    assert len(findings) == 0


def test_cells_touched_for_many_devices_at_once() -> None:
    from gis_sw.analysis.devices import cells_touched

    values = np.arange(100, dtype="float64").reshape(10, 10)  # row r, col c -> 10 r + c
    values[0, 0] = np.nan
    grid_layer = raster("dem", values)
    geoms = np.array(
        [
            Point(55, 45),  # row 5, col 5
            box(40, 40, 60, 60),  # on cell edges: exactly the 4 cells inside
            box(42, 42, 48, 48),  # inside one cell (row 5, col 4)
            LineString([(1, 95), (25, 95)]),  # row 0, cols 0-2; col 0 is nodata
            Point(500, 500),  # off the raster
        ],
        dtype=object,
    )
    owner, got, xs, ys = cells_touched(grid_layer, geoms)
    by_device = {i: sorted(got[owner == i].tolist()) for i in range(len(geoms))}
    assert by_device == {0: [55.0], 1: [44.0, 45.0, 54.0, 55.0], 2: [54.0], 3: [1.0, 2.0], 4: []}
    assert (xs[owner == 0][0], ys[owner == 0][0]) == (55.0, 45.0)
