"""SW101-SW107: permits and plans, on tiny geometries built in code."""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import pandas as pd
import pytest
import shapely
from pyproj import Transformer
from shapely.geometry import box

from gis_sw.analysis import permits
from gis_sw.analysis.context import CheckContext
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
ACRE = 43_560.0


def zoning() -> gpd.GeoDataFrame:
    """R-10 for x < 100, R-20 from x = 100 to 10,000."""
    return gpd.GeoDataFrame(
        {"zone": ["R-10", "R-20"]},
        geometry=[box(0, 0, 100, 5000), box(100, 0, 10_000, 5000)],
        crs=CRS,
    )


def context(
    ruleset: Ruleset,
    shapes: list[Any],
    attributes: dict[str, Any] | None = None,
    layers: dict[str, gpd.GeoDataFrame] | None = None,
    *,
    proposal_id: str = "P-1",
) -> CheckContext:
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": [proposal_id] * len(shapes)}, geometry=shapes, crs=CRS
    )
    attrs = pd.DataFrame(
        {"proposal_id": [proposal_id], **{k: [v] for k, v in (attributes or {}).items()}}
    )
    vectors = {"zoning": zoning()} if layers is None else layers
    return CheckContext(
        layers=make_layerset(CRS, vectors),
        proposals=make_proposals(CRS, disturbance, attributes=attrs),
        ruleset=ruleset,
    )


def row(findings: gpd.GeoDataFrame, subject: str = "P-1") -> pd.Series:
    hits = findings[findings["subject_id"] == subject]
    assert len(hits) == 1, findings[["subject_id", "outcome"]]
    return hits.iloc[0]


# -- SW101 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "outcome", "measured", "threshold"),
    [
        pytest.param(
            box(1000, 0, 1025, 10), "required", 250.0, 250.0, id="250.0-sq-ft-in-R-20-needs-permit"
        ),
        pytest.param(
            box(1000, 0, 1024.99, 10), "pass", 249.9, 250.0, id="249.9-sq-ft-in-R-20-needs-none"
        ),
        pytest.param(box(1000, 0, 1024.999, 10), "pass", 249.99, 250.0, id="249.99-sq-ft-in-R-20"),
        pytest.param(
            box(1000, 0, 1025.001, 10), "required", 250.01, 250.0, id="250.01-sq-ft-in-R-20"
        ),
        pytest.param(box(0, 0, 9.999, 10), "pass", 99.99, 250.0, id="99.99-sq-ft-in-R-10"),
        pytest.param(box(0, 0, 10.001, 10), "required", 100.01, 100.0, id="100.01-sq-ft-in-R-10"),
        pytest.param(
            box(0, 0, 10, 10), "required", 100.0, 100.0, id="100.0-sq-ft-in-R-10-needs-permit"
        ),
        pytest.param(box(0, 0, 9.99, 10), "pass", 99.9, 250.0, id="99.9-sq-ft-in-R-10-needs-none"),
        pytest.param(
            box(94, 0, 120, 10), "required", 260.0, 250.0, id="60-in-R-10-plus-200-in-R-20"
        ),
        pytest.param(box(94, 0, 110, 10), "pass", 160.0, 250.0, id="60-in-R-10-plus-100-in-R-20"),
    ],
)
def test_sw101_boundary_pass_required(
    ruleset: Ruleset, shape: Any, outcome: str, measured: float, threshold: float
) -> None:
    found = row(permits.check_permit_threshold(context(ruleset, [shape])))
    assert found["outcome"] == outcome
    assert found["measured"] == pytest.approx(measured, abs=1e-6)
    assert found["threshold"] == threshold
    assert found["unit"] == "sq ft"


def test_permit_message_reads_aloud_and_draws_the_r10_part(ruleset: Ruleset) -> None:
    found = row(permits.check_permit_threshold(context(ruleset, [box(86.6, 0, 100, 10)])))
    assert found["message"] == (
        "Disturbance of 134 sq ft inside zone R-10 reaches the 100 sq ft threshold: a stormwater "
        "management control permit is required (§ 183-12A)."
    )
    assert found["geometry"].area == pytest.approx(134.0, abs=1e-6)


def test_permit_split_named_in_message(ruleset: Ruleset) -> None:
    found = row(permits.check_permit_threshold(context(ruleset, [box(94, 0, 120, 10)])))
    assert (
        "Disturbance of 260 sq ft (R-10: 60 sq ft, R-20: 200 sq ft) reaches the 250 sq ft"
        in found["message"]
    )
    assert found["geometry"].area == pytest.approx(260.0)


def test_overlapping_disturbance_counted_once(ruleset: Ruleset) -> None:
    # two 10 x 15 polygons overlapping by 10 x 5: union 250, sum 300
    shapes = [box(1000, 0, 1010, 15), box(1000, 10, 1010, 25)]
    found = row(permits.check_permit_threshold(context(ruleset, shapes)))
    assert found["measured"] == pytest.approx(250.0)
    assert found["outcome"] == "required"
    shapes = [box(1000, 0, 1010, 15), box(1000, 5, 1010, 20)]  # union 200, sum 300
    found = row(permits.check_permit_threshold(context(ruleset, shapes)))
    assert (found["outcome"], found["measured"]) == ("pass", pytest.approx(200.0))


@pytest.mark.parametrize(
    ("width", "outcome"),
    [
        pytest.param(30.0, "required", id="300-sq-ft-no-zoning-still-needs-permit"),
        pytest.param(15.0, "review", id="150-sq-ft-no-zoning-is-review"),
        pytest.param(9.9, "pass", id="99-sq-ft-no-zoning-needs-none"),
    ],
)
def test_permit_without_zoning_layer(ruleset: Ruleset, width: float, outcome: str) -> None:
    found = row(permits.check_permit_threshold(context(ruleset, [box(0, 0, width, 10)], layers={})))
    assert found["outcome"] == outcome
    if outcome == "review":
        assert "the zoning layer was not provided" in found["message"]


def test_sw101_review_disturbance_outside_any_zone(ruleset: Ruleset) -> None:
    # 50 sq ft in R-20 and 120 sq ft west of the zoning layer: the unzoned part could be R-10
    found = row(permits.check_permit_threshold(context(ruleset, [box(-12, 0, 5, 10)])))
    assert found["outcome"] == "review"
    assert "120 sq ft lies outside any named zone" in found["message"]


def test_proposal_without_disturbance_is_review(ruleset: Ruleset) -> None:
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ["P-1"]}, geometry=[box(1000, 0, 1020, 20)], crs=CRS
    )
    attrs = pd.DataFrame({"proposal_id": ["P-1", "P-2"]})
    ctx = CheckContext(
        layers=make_layerset(CRS, {"zoning": zoning()}),
        proposals=make_proposals(CRS, disturbance, attributes=attrs),
        ruleset=ruleset,
    )
    found = row(permits.check_permit_threshold(ctx), "P-2")
    assert found["outcome"] == "review"
    assert "no disturbance polygons" in found["message"]


def test_same_areas_from_epsg_4326(ruleset: Ruleset) -> None:
    to_state_plane = Transformer.from_crs("EPSG:4326", CRS, always_xy=True)
    x0, y0 = to_state_plane.transform(-73.79, 41.11)  # Mount Pleasant, NY
    r10 = gpd.GeoDataFrame(
        {"zone": ["R-10"]}, geometry=[box(x0 - 500, y0 - 500, x0 + 500, y0 + 500)], crs=CRS
    )
    shapes = [box(x0, y0, x0 + 13.4, y0 + 10), box(x0 + 200, y0, x0 + 230.5, y0 + 33.2)]
    native = context(ruleset, shapes, layers={"zoning": r10})
    drawn = gpd.GeoDataFrame({"proposal_id": ["P-1", "P-1"]}, geometry=shapes, crs=CRS).to_crs(
        "EPSG:4326"
    )
    back = drawn.to_crs(CRS)
    reprojected = CheckContext(
        layers=make_layerset(CRS, {"zoning": r10}),
        proposals=make_proposals(CRS, back, attributes=pd.DataFrame({"proposal_id": ["P-1"]})),
        ruleset=ruleset,
    )
    a = row(permits.check_permit_threshold(native))
    b = row(permits.check_permit_threshold(reprojected))
    assert round(a["measured"]) == round(b["measured"]) == 1147  # 134 + 1012.6
    assert a["outcome"] == b["outcome"] == "required"
    assert a["message"] == b["message"]


# -- SW102 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("width", "larger_plan", "outcome"),
    [
        pytest.param(435.6, False, "required", id="exactly-1-acre-is-land-development"),
        pytest.param(435.59, False, "pass", id="43559-sq-ft-alone-is-not"),
        pytest.param(435.5999, False, "pass", id="43559.99-sq-ft-alone-is-not"),
        pytest.param(435.6001, False, "required", id="43560.01-sq-ft-is-land-development"),
        pytest.param(435.59, True, "required", id="43559-sq-ft-part-of-larger-plan"),
        pytest.param(435.59, None, "review", id="43559-sq-ft-larger-plan-unknown"),
    ],
)
def test_sw102_boundary_pass_required_review_at_one_acre(
    ruleset: Ruleset, width: float, larger_plan: bool | None, outcome: str
) -> None:
    ctx = context(ruleset, [box(1000, 0, 1000 + width, 100)], {"part_of_larger_plan": larger_plan})
    found = row(permits.check_land_development(ctx))
    assert found["outcome"] == outcome
    assert found["measured"] == pytest.approx(width * 100)
    assert found["threshold"] == ACRE


def test_land_development_message(ruleset: Ruleset) -> None:
    found = row(permits.check_land_development(context(ruleset, [box(1000, 0, 1435.6, 100)])))
    assert found["message"].startswith(
        "Disturbance of 43,560 sq ft (1.00 acres) reaches the 1 acre threshold: this is a land "
        "development activity"
    )


# -- SW103 -------------------------------------------------------------------------------------


def conditions(ctx: CheckContext) -> dict[str, str]:
    found = permits.check_post_construction(ctx)
    return {s.split(":")[-1]: o for s, o in zip(found["subject_id"], found["outcome"], strict=True)}


@pytest.mark.parametrize(
    ("area_sqft", "land_use", "expected"),
    [
        pytest.param(
            5 * ACRE,
            "other",
            {"condition-B": "required", "condition-C": "pass"},
            id="exactly-5-acres-is-B",
        ),
        pytest.param(
            5 * ACRE - 0.01,
            "other",
            {"condition-B": "pass", "condition-C": "required"},
            id="5-acres-less-0.01-sq-ft-is-C",
        ),
        pytest.param(
            5 * ACRE + 0.01,
            "other",
            {"condition-B": "required", "condition-C": "pass"},
            id="5-acres-plus-0.01-sq-ft-is-B",
        ),
        pytest.param(
            ACRE - 0.01,
            "other",
            {"condition-B": "pass", "condition-C": "pass"},
            id="1-acre-less-0.01-sq-ft-neither",
        ),
        pytest.param(
            ACRE + 0.01,
            "other",
            {"condition-B": "pass", "condition-C": "required"},
            id="1-acre-plus-0.01-sq-ft-is-C",
        ),
        pytest.param(
            5 * ACRE - 10,
            "other",
            {"condition-B": "pass", "condition-C": "required"},
            id="under-5-acres-is-C",
        ),
        pytest.param(
            ACRE,
            "other",
            {"condition-B": "pass", "condition-C": "required"},
            id="exactly-1-acre-is-C",
        ),
        pytest.param(
            ACRE - 10,
            "other",
            {"condition-B": "pass", "condition-C": "pass"},
            id="under-1-acre-neither",
        ),
        pytest.param(
            2 * ACRE, "single_family", {"condition-C": "pass"}, id="2-acres-single-family-excluded"
        ),
        pytest.param(
            2 * ACRE, "agricultural", {"condition-C": "pass"}, id="2-acres-agricultural-excluded"
        ),
        pytest.param(2 * ACRE, None, {"condition-C": "review"}, id="2-acres-land-use-unknown"),
    ],
)
def test_sw103_boundary_pass_required_review_conditions_b_and_c(
    ruleset: Ruleset, area_sqft: float, land_use: str | None, expected: dict[str, str]
) -> None:
    ctx = context(
        ruleset,
        [box(1000, 0, 1000 + area_sqft / 100, 100)],
        {"land_use": land_use, "part_of_larger_plan": False},
    )
    got = conditions(ctx)
    assert {k: got[k] for k in expected} == expected


@pytest.mark.parametrize(
    ("flag", "impaired_layer", "larger_plan", "outcome"),
    [
        pytest.param(True, False, True, "required", id="states-discharge-to-303d-water"),
        pytest.param(False, True, True, "pass", id="states-no-discharge"),
        pytest.param(None, True, True, "required", id="lies-in-mapped-TMDL-watershed"),
        pytest.param(None, False, True, "review", id="no-attribute-no-layer"),
        pytest.param(True, False, False, "pass", id="not-land-development"),
        pytest.param(True, False, None, "review", id="land-development-unknown"),
    ],
)
def test_condition_a(
    ruleset: Ruleset,
    flag: bool | None,
    impaired_layer: bool,
    larger_plan: bool | None,
    outcome: str,
) -> None:
    layers = {"zoning": zoning()}
    if impaired_layer:
        layers["impaired_waters"] = gpd.GeoDataFrame(
            {"name": ["Saw Mill River"]}, geometry=[box(990, 0, 1005, 10)], crs=CRS
        )
    ctx = context(
        ruleset,
        [box(1000, 0, 1020, 20)],
        {"discharges_to_impaired_water": flag, "part_of_larger_plan": larger_plan},
        layers,
    )
    found = row(permits.check_post_construction(ctx), "P-1:condition-A")
    assert found["outcome"] == outcome
    if flag is None and impaired_layer:
        assert found["geometry"].area == pytest.approx(50.0)  # the part inside the watershed


@pytest.mark.parametrize(
    ("listing", "outcome"),
    [
        # issue 13 item 3: outside a TMDL watershed passes (overlap is the test), but away
        # from an impaired water *body* the question is where runoff goes: no DEM, review
        pytest.param("TMDL", "pass", id="outside-mapped-TMDL-watershed-passes"),
        pytest.param(None, "review", id="away-from-impaired-water-body-without-DEM-is-review"),
    ],
)
def test_condition_a_outside_mapped_impaired_water(
    ruleset: Ruleset, listing: str | None, outcome: str
) -> None:
    layers = {
        "impaired_waters": gpd.GeoDataFrame(
            {"listing": [listing]}, geometry=[box(0, 0, 10, 10)], crs=CRS
        )
    }
    ctx = context(ruleset, [box(1000, 0, 1435.6, 100)], {}, layers)
    assert row(permits.check_post_construction(ctx), "P-1:condition-A")["outcome"] == outcome


# -- SW104 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "outcome", "text"),
    [
        pytest.param(None, "pass", "No exemption under § 183-5 is claimed", id="none-claimed"),
        pytest.param("C", "review", "Exemption § 183-5C (Routine maintenance", id="letter-C"),
        pytest.param("§ 183-5(J)", "review", "Exemption § 183-5J (Home gardening)", id="cited-J"),
        pytest.param("Cemetery graves", "review", "Exemption § 183-5G", id="text-G"),
        pytest.param("Z", "review", "is not one of § 183-5A-K", id="unknown-letter"),
    ],
)
def test_sw104_pass_review_exemption_claims(
    ruleset: Ruleset, claim: str | None, outcome: str, text: str
) -> None:
    found = row(
        permits.check_exemption(context(ruleset, [box(0, 0, 30, 30)], {"exemption": claim}))
    )
    assert found["outcome"] == outcome
    assert text in found["message"]


# -- SW105 -------------------------------------------------------------------------------------


def test_sw105_required_fees_from_construction_cost(ruleset: Ruleset) -> None:
    found = row(
        permits.check_application(
            context(ruleset, [box(0, 0, 30, 30)], {"construction_cost_usd": 250_000})
        )
    )
    assert found["outcome"] == "required"
    assert found["measured"] == 1400.0
    assert (
        "$1,250.00 (0.5% of the $250,000.00 construction cost estimate) = $1,400.00"
        in found["message"]
    )
    assert "(h) Contractor certification" in found["message"]


def test_sw105_review_fees_without_cost(ruleset: Ruleset) -> None:
    found = row(permits.check_application(context(ruleset, [box(0, 0, 30, 30)])))
    assert found["outcome"] == "review"
    assert "construction_cost_usd" in found["message"]


def test_sw105_pass_no_permit_no_fees(ruleset: Ruleset) -> None:
    found = row(
        permits.check_application(
            context(ruleset, [box(1000, 0, 1024.99, 10)], {"construction_cost_usd": 5000})
        )
    )
    assert found["outcome"] == "pass"


# -- SW106 -------------------------------------------------------------------------------------


def test_sw106_pass_required_mapped_resources_overlaps(ruleset: Ruleset) -> None:
    layers = {
        "zoning": zoning(),
        "wetlands": gpd.GeoDataFrame(
            {"name": ["Pocantico marsh"]}, geometry=[box(1090, 0, 1200, 100)], crs=CRS
        ),
        "water_bodies": gpd.GeoDataFrame(geometry=[box(5000, 0, 5100, 100)], crs=CRS),
        "floodplain": gpd.GeoDataFrame(
            {"flood_zone": ["AE"]}, geometry=[box(1000, 0, 1100, 25.5)], crs=CRS
        ),
    }
    found = permits.check_mapped_resources(context(ruleset, [box(1000, 0, 1100, 100)], {}, layers))
    wet = row(found, "P-1:wetlands")
    assert (wet["outcome"], wet["measured"]) == ("required", pytest.approx(1000.0))
    assert (
        "1,000 sq ft of the disturbance lies in mapped wetlands (Pocantico marsh)" in wet["message"]
    )
    assert wet["geometry"].equals(box(1090, 0, 1100, 100))
    adjacent = row(found, "P-1:wetland_adjacent_area")
    assert (adjacent["outcome"], adjacent["measured"]) == ("required", pytest.approx(9000.0))
    assert "(within 100 ft of a wetland)" in adjacent["message"]
    flood = row(found, "P-1:floodplain")
    assert (flood["outcome"], flood["measured"]) == ("required", pytest.approx(2550.0))
    water = row(found, "P-1:water_bodies")
    assert (water["outcome"], water["measured"]) == ("pass", 0.0)


def test_sw106_boundary_pass_required_wetland_adjacent_area_edge(ruleset: Ruleset) -> None:
    wet = gpd.GeoDataFrame(geometry=[box(1200, 0, 1300, 100)], crs=CRS)
    layers = {"wetlands": wet}
    # disturbance ends exactly 100 ft from the wetland: touches the adjacent area, no overlap
    found = permits.check_mapped_resources(context(ruleset, [box(1000, 0, 1100, 100)], {}, layers))
    assert row(found, "P-1:wetland_adjacent_area")["outcome"] == "pass"
    found = permits.check_mapped_resources(
        context(ruleset, [box(1000, 0, 1100.01, 100)], {}, layers)
    )
    assert row(found, "P-1:wetland_adjacent_area")["measured"] == pytest.approx(1.0)


def test_sw106_review_missing_resource_layers(ruleset: Ruleset) -> None:
    found = permits.check_mapped_resources(context(ruleset, [box(0, 0, 10, 10)], {}, {}))
    assert set(found["outcome"]) == {"review"}
    assert len(found) == 4
    assert (
        "The wetlands layer was not provided" in row(found, "P-1:wetland_adjacent_area")["message"]
    )


# -- SW107 -------------------------------------------------------------------------------------


def test_sw107_info_state_floor(ruleset: Ruleset) -> None:
    found = row(permits.check_state_floor(context(ruleset, [box(1000, 0, 1435.6, 100)])))
    assert found["outcome"] == "info"
    assert "NYSDEC SPDES general permit coverage" in found["message"]
    assert found["measured"] == pytest.approx(ACRE)


def test_fmt_sqft() -> None:
    assert [permits.fmt_sqft(v) for v in (134.0, 249.9, 249.94, 43_560.0)] == [
        "134",
        "249.9",
        "249.9",
        "43,560",
    ]
    assert shapely.Polygon().is_empty


def test_fees_when_permit_is_under_review(ruleset: Ruleset) -> None:
    # 150 sq ft and no zoning layer: the permit itself is review, so are its fees
    ctx = context(ruleset, [box(0, 0, 15, 10)], {"construction_cost_usd": 10_000}, layers={})
    found = row(permits.check_application(ctx))
    assert (found["outcome"], found["measured"]) == ("review", 200.0)
    assert found["message"].startswith("Whether a permit is required is under review (SW101)")


def test_permit_message_names_the_whole_when_r10_decides(ruleset: Ruleset) -> None:
    # 110 sq ft in R-10 and 50 sq ft in R-20: the R-10 test decides
    found = row(permits.check_permit_threshold(context(ruleset, [box(89, 0, 105, 10)])))
    assert found["message"] == (
        "Disturbance of 110 sq ft inside zone R-10 (of 160 sq ft in all) reaches the 100 sq ft "
        "threshold: a stormwater management control permit is required (§ 183-12A)."
    )
    found = row(permits.check_permit_threshold(context(ruleset, [box(1000, 0, 1030, 10)])))
    assert found["message"].startswith(
        "Disturbance of 300 sq ft in zone R-20 reaches the 250 sq ft"
    )
