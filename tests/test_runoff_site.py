"""A hand-built lot: soils split, one building, woods, and a new driveway.

Lot P1 is 200 ft x 100 ft (20,000 sq ft), origin (X0, Y0) in EPSG:2260 feet.
- soils: west half (x < 100) group B; east half "C/D" (counted D, undrained).
- existing building 40 x 30 = 1,200 sq ft at x 20-60, y 20-50 (on B).
- land_cover: woods (woods_good) on x 150-200, the whole depth: 5,000 sq ft (on D).
- disturbance x 60-160, y 60-80 (2,000 sq ft); new driveway x 100-160, y 60-70 (600 sq ft).

Hand calculation (TR-55 Table 2-2: impervious 98, lawn good B 61 / D 80, woods good D 77):

pre:  roof B 1,200 x 98 = 117,600; lawn B 8,800 x 61 = 536,800; lawn D 5,000 x 80 = 400,000;
      woods D 5,000 x 77 = 385,000; sum 1,439,400 / 20,000 = 71.97 -> CN 72.
post: driveway D 600 x 98 = 58,800; roof B 1,200 x 98 = 117,600;
      disturbed lawn B 800 x 61 = 48,800 and D 600 x 80 = 48,000;
      woods D 4,800 x 77 = 369,600; lawn B 8,000 x 61 = 488,000; lawn D 4,000 x 80 = 320,000;
      sum 1,450,800 / 20,000 = 72.54 -> CN 73.
25-year, P = 6.0 in:
  CN 72: S = 1000/72 - 10 = 3.8889, Ia = 0.7778, Q = 5.2222^2 / 9.1111 = 2.9932 in,
         volume = 2.9932 / 12 x 20,000 = 4,988.7 cu ft.
  CN 73: S = 3.6986, Ia = 0.7397, Q = 5.2603^2 / 8.9589 = 3.0886 in, volume 5,147.7 cu ft.
WQv: post impervious 1,800 sq ft = 9.0%, Rv = 0.05 + 0.009 x 9 = 0.131,
     WQv = 1.5 x 0.131 x 20,000 / 12 = 327.5 cu ft.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import pytest
import shapely
from affine import Affine

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.hydrology import (
    calculation_sheet_for,
    check_design_calculations,
    check_peak_discharge,
    check_runoff_volume,
    check_water_quality_volume,
    runoff_results,
)
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.layers.raster import RasterLayer
from gis_sw.ruleset import Ruleset, parse_ruleset

CRS = "EPSG:2260"
X0, Y0 = 600_000.0, 900_000.0


def box(x1: float, y1: float, x2: float, y2: float) -> shapely.Polygon:
    return shapely.box(X0 + x1, Y0 + y1, X0 + x2, Y0 + y2)


def frame(rows: list[dict[str, object]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def lot_layers(*, soils: bool = True, dem: RasterLayer | None = None) -> LayerSet:
    vectors = {
        "parcels": frame([{"parcel_id": "P1", "geometry": box(0, 0, 200, 100)}]),
        "zoning": frame([{"zone": "R-20", "geometry": box(-50, -50, 250, 150)}]),
        "buildings": frame([{"building_id": "B1", "geometry": box(20, 20, 60, 50)}]),
        "land_cover": frame([{"cover": "woods", "geometry": box(150, 0, 200, 100)}]),
    }
    if soils:
        vectors["soils"] = frame(
            [
                {"hsg": "B", "geometry": box(0, 0, 100, 100)},
                {"hsg": "C/D", "geometry": box(100, 0, 200, 100)},
            ]
        )
    rasters = {"dem": dem} if dem is not None else {}
    return make_layerset(CRS, vectors, rasters)


def lot_proposal() -> Proposals:
    disturbance = frame([{"proposal_id": "LOT", "geometry": box(60, 60, 160, 80)}])
    impervious = frame(
        [{"proposal_id": "LOT", "surface": "driveway", "geometry": box(100, 60, 160, 70)}]
    )
    attrs = pd.DataFrame({"proposal_id": ["LOT"], "land_use": ["single_family"]})
    return make_proposals(CRS, disturbance, None, attrs, impervious)


def q_in(p: float, cn: float) -> float:
    s = 1000 / cn - 10
    return (p - 0.2 * s) ** 2 / (p + 0.8 * s)


@pytest.fixture
def ctx(ruleset: Ruleset) -> CheckContext:
    return CheckContext(lot_layers(), lot_proposal(), ruleset)


def test_subareas_match_hand_calculation(ctx: CheckContext) -> None:
    (result,) = runoff_results(ctx)
    assert result.drainage_id == "LOT"
    assert result.pre is not None
    assert result.post is not None
    pre = {
        (r.cover, r.hsg): r.area_sqft
        for r in result.pre.subareas.groupby(["cover", "hsg"], as_index=False)["area_sqft"]
        .sum()
        .itertuples()
    }
    assert pre == pytest.approx(
        {
            ("impervious", "B"): 1200.0,
            ("open_space_good", "B"): 8800.0,
            ("open_space_good", "D"): 5000.0,
            ("woods_good", "D"): 5000.0,
        }
    )
    post = result.post.subareas
    rows = {(r.source, r.cover, r.hsg): r.area_sqft for r in post.itertuples()}
    assert rows == pytest.approx(
        {
            ("new driveway", "impervious", "D"): 600.0,
            ("existing building", "impervious", "B"): 1200.0,
            ("disturbed, not impervious", "open_space_good", "B"): 800.0,
            ("disturbed, not impervious", "open_space_good", "D"): 600.0,
            ("land cover woods", "woods_good", "D"): 4800.0,
            ("default pervious cover", "open_space_good", "B"): 8000.0,
            ("default pervious cover", "open_space_good", "D"): 4000.0,
        }
    )
    assert result.pre.cn_weighted == pytest.approx(1_439_400 / 20_000)  # 71.97
    assert result.post.cn_weighted == pytest.approx(1_450_800 / 20_000)  # 72.54
    assert (result.pre.cn_used, result.post.cn_used) == (72, 73)


def test_runoff_and_volumes_match_hand_calculation(ctx: CheckContext) -> None:
    (result,) = runoff_results(ctx)
    assert result.pre is not None
    assert result.post is not None
    pre25, post25 = result.pre.storm(25), result.post.storm(25)
    assert pre25["q_in"] == pytest.approx(q_in(6.0, 72))
    assert round(pre25["q_in"], 4) == 2.9932
    assert round(post25["q_in"], 4) == 3.0886
    assert pre25["volume_cf"] == pytest.approx(4988.7, abs=0.1)
    assert post25["volume_cf"] == pytest.approx(5147.7, abs=0.1)
    assert pre25["ia_p"] == pytest.approx(0.2 * (1000 / 72 - 10) / 6.0)
    assert result.tc.tc_hr == 0.1
    assert result.tc.source == "default"
    # every storm of the ruleset, 1-year to 100-year
    assert list(result.post.storms["storm_yr"]) == [1, 2, 5, 10, 25, 50, 100]
    assert result.wqv_rv == pytest.approx(0.131)
    assert result.wqv_cf == pytest.approx(327.5)


def test_sw501_sw504_info_sw502_sw503_review_on_a_lot(ctx: CheckContext) -> None:
    sw501 = check_design_calculations(ctx)
    assert list(sw501["outcome"]) == ["info"]
    assert "CN 72 -> 73" in sw501["message"].iloc[0]
    sw502 = check_runoff_volume(ctx)
    assert list(sw502["outcome"]) == ["review"]  # post exceeds pre
    assert sw502["measured"].iloc[0] == pytest.approx((q_in(6.0, 73) - q_in(6.0, 72)) / 12 * 20_000)
    assert sw502["unit"].iloc[0] == "cu ft"
    sw503 = check_peak_discharge(ctx)
    assert list(sw503["outcome"]) == ["review"]
    assert sw503["measured"].iloc[0] > 0
    sw504 = check_water_quality_volume(ctx)
    assert list(sw504["outcome"]) == ["info"]
    assert sw504["measured"].iloc[0] == pytest.approx(327.5)


def test_no_new_impervious_and_same_cover_does_not_exceed(ruleset: Ruleset) -> None:
    # Disturbance wholly on existing lawn, no impervious: lawn stays lawn, post == pre.
    disturbance = frame([{"proposal_id": "LAWN", "geometry": box(60, 60, 90, 80)}])
    props = make_proposals(CRS, disturbance, None, None, None)
    ctx = CheckContext(lot_layers(), props, ruleset)
    assert list(check_runoff_volume(ctx)["outcome"]) == ["pass"]
    assert check_runoff_volume(ctx)["measured"].iloc[0] == pytest.approx(0.0)
    assert list(check_peak_discharge(ctx)["outcome"]) == ["pass"]


def test_sw501_sw502_sw503_review_without_soils(ruleset: Ruleset) -> None:
    ctx = CheckContext(lot_layers(soils=False), lot_proposal(), ruleset)
    for check in (check_design_calculations, check_runoff_volume, check_peak_discharge):
        found = check(ctx)
        assert list(found["outcome"]) == ["review"]
        assert "soils layer not provided" in found["message"].iloc[0]
    # WQv needs no soils
    assert check_water_quality_volume(ctx)["measured"].iloc[0] == pytest.approx(327.5)


def test_tc_from_dem_and_from_given_tc_min(ruleset: Ruleset) -> None:
    # DEM falling 1 ft per 100 ft eastwards (cells 10 ft): highest cell centre x 5, lowest
    # x 195, 190 ft apart, slope 0.01 -> sheet 100 ft (0.2958 x (3.6/3.5)^0.5 h with P2
    # 3.5 in) plus 90 ft shallow at 1.61 ft/s.
    cols = np.arange(20)
    values = np.tile(100.0 - cols * 0.1 - 0.05, (10, 1))
    dem = RasterLayer(
        "dem", values, Affine(10, 0, X0, 0, -10, Y0 + 100), pyproj.CRS.from_user_input(CRS)
    )
    ctx = CheckContext(lot_layers(dem=dem), lot_proposal(), ruleset)
    (result,) = runoff_results(ctx)
    sheet = 0.007 * (0.24 * 100) ** 0.8 / (3.5**0.5 * 0.01**0.4)
    shallow = 90 / (3600 * 16.1345 * 0.1)
    assert result.tc.tc_hr == pytest.approx(sheet + shallow)
    assert result.tc.source.startswith("DEM")
    das = frame(
        [
            {
                "drainage_id": "DA-1",
                "proposal_id": "LOT",
                "tc_min": 12.0,
                "geometry": box(0, 0, 200, 100),
            }
        ]
    )
    layers = lot_layers()
    layers = make_layerset(CRS, {**layers.vectors, "drainage_areas": das}, {})
    (given,) = runoff_results(CheckContext(layers, lot_proposal(), ruleset))
    assert given.drainage_id == "DA-1"
    assert given.tc.tc_hr == pytest.approx(0.2)


def test_calculation_sheet_lines(ruleset: Ruleset) -> None:
    sheet = calculation_sheet_for(lot_layers(), lot_proposal(), ruleset)
    lines = sheet.groupby(["scenario", "line"]).size().to_dict()
    assert lines[("pre", "subarea")] == 4
    assert lines[("post", "subarea")] == 7
    assert lines[("pre", "storm")] == 7
    assert lines[("post", "wqv")] == 1
    pre = sheet[(sheet["scenario"] == "pre") & (sheet["line"] == "subarea")]
    assert pre["cn_x_area_acres"].sum() == pytest.approx(1_439_400 / 43_560)
    storm = sheet[(sheet["scenario"] == "post") & (sheet["storm_yr"] == 25)].iloc[0]
    assert round(storm["q_in"], 4) == 3.0886
    assert storm["cn"] == 73


def test_unknown_land_cover_name_is_review(ruleset: Ruleset) -> None:
    layers = lot_layers()
    odd = frame([{"cover": "orchard", "geometry": box(150, 0, 200, 100)}])
    layers = make_layerset(CRS, {**layers.vectors, "land_cover": odd}, {})
    found = check_design_calculations(CheckContext(layers, lot_proposal(), ruleset))
    assert list(found["outcome"]) == ["review"]
    assert "land_cover value 'orchard' is not a cover" in found["message"].iloc[0]


def test_drained_dual_group_counts_first_letter(ruleset: Ruleset) -> None:
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in ruleset.raw.items()}
    data["hydrology"] = {**data["hydrology"], "dual_hsg": "drained"}
    drained = parse_ruleset(data)
    (result,) = runoff_results(CheckContext(lot_layers(), lot_proposal(), drained))
    assert result.pre is not None
    # east half "C/D" now counts C: lawn C 74, woods C 70 (Table 2-2).
    # 98 x 1,200 + 61 x 8,800 + 74 x 5,000 + 70 x 5,000 = 1,374,400 / 20,000 = 68.72
    assert result.pre.cn_weighted == pytest.approx(68.72)
    assert result.pre.cn_used == 69


def test_drainage_area_found_by_overlap_without_proposal_id(ruleset: Ruleset) -> None:
    das = frame(
        [
            {"drainage_id": "DA-W", "geometry": box(0, 0, 100, 100)},
            {"drainage_id": "DA-E", "geometry": box(100, 0, 200, 100)},
            {"drainage_id": "DA-FAR", "geometry": box(500, 0, 600, 100)},
        ]
    )
    layers = make_layerset(CRS, {**lot_layers().vectors, "drainage_areas": das}, {})
    results = runoff_results(CheckContext(layers, lot_proposal(), ruleset))
    assert sorted(r.drainage_id for r in results) == ["DA-E", "DA-W"]
    east = next(r for r in results if r.drainage_id == "DA-E")
    assert east.post is not None
    assert east.post.impervious_sqft == pytest.approx(600.0)  # the driveway only


def test_subject_ids_name_proposal_or_its_drainage_area(ruleset: Ruleset) -> None:
    assert list(
        check_runoff_volume(CheckContext(lot_layers(), lot_proposal(), ruleset))["subject_id"]
    ) == ["LOT"]
    das = frame([{"drainage_id": "DA-1", "proposal_id": "LOT", "geometry": box(0, 0, 200, 100)}])
    layers = make_layerset(CRS, {**lot_layers().vectors, "drainage_areas": das}, {})
    found = check_water_quality_volume(CheckContext(layers, lot_proposal(), ruleset))
    assert list(found["subject_id"]) == ["LOT:DA-1"]


def _with_tolerance(ruleset: Ruleset, volume_cf: float) -> Ruleset:
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in ruleset.raw.items()}
    data["hydrology"] = {**data["hydrology"], "compare": {"volume_tolerance_cf": volume_cf}}
    return parse_ruleset(data)


def test_volume_increase_at_tolerance_passes_just_above_is_review(ruleset: Ruleset) -> None:
    change = (q_in(6.0, 73) - q_in(6.0, 72)) / 12 * 20_000  # 158.96 cu ft on the lot
    at = check_runoff_volume(
        CheckContext(lot_layers(), lot_proposal(), _with_tolerance(ruleset, change + 1e-6))
    )
    assert list(at["outcome"]) == ["pass"]
    # issue 13 item 9: the limit is 0 and an increase within the float guard is no increase
    assert at["threshold"].iloc[0] == 0.0
    assert at["measured"].iloc[0] == 0.0
    below = check_runoff_volume(
        CheckContext(lot_layers(), lot_proposal(), _with_tolerance(ruleset, change - 0.01))
    )
    assert list(below["outcome"]) == ["review"]
    assert below["measured"].iloc[0] == pytest.approx(change)
