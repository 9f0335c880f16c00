"""Conditions B and C for a piece of a larger plan (issue 13 item 4), messages that read as
their outcome at a threshold (item 6), streams in SW106, and every town's words in its
ruleset (issue 12 item 7)."""

from __future__ import annotations

import tomllib
from importlib import resources
from typing import Any

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import LineString, box

from gis_sw.analysis import permits
from gis_sw.analysis.context import CheckContext
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset, parse_ruleset

CRS = "EPSG:2260"
ACRE = 43_560.0
SW1_CHECKS = (
    permits.check_permit_threshold,
    permits.check_land_development,
    permits.check_post_construction,
    permits.check_exemption,
    permits.check_application,
    permits.check_mapped_resources,
    permits.check_state_floor,
)


def zoning() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {"zone": ["R-20"]}, geometry=[box(-10_000, -10_000, 10_000, 10_000)], crs=CRS
    )


def context(
    ruleset: Ruleset,
    site: Any,
    attributes: dict[str, Any],
    layers: dict[str, gpd.GeoDataFrame] | None = None,
) -> CheckContext:
    disturbance = gpd.GeoDataFrame({"proposal_id": ["P-1"]}, geometry=[site], crs=CRS)
    attrs = pd.DataFrame({"proposal_id": ["P-1"], **{k: [v] for k, v in attributes.items()}})
    return CheckContext(
        layers=make_layerset(CRS, {"zoning": zoning()} if layers is None else layers),
        proposals=make_proposals(CRS, disturbance, attributes=attrs),
        ruleset=ruleset,
    )


def conditions(ctx: CheckContext) -> dict[str, tuple[str, str]]:
    found = permits.check_post_construction(ctx)
    return {
        str(s).split(":")[-1]: (str(o), str(m))
        for s, o, m in zip(found["subject_id"], found["outcome"], found["message"], strict=True)
    }


HALF_ACRE = box(0, 0, 217.8, 100)  # 21,780 sq ft


# -- a piece of a larger common plan ----------------------------------------------------------


@pytest.mark.parametrize(
    ("plan_sqft", "b", "c"),
    [
        pytest.param(5 * ACRE, "required", "pass", id="plan-exactly-5-acres-is-B"),
        pytest.param(5 * ACRE + 0.01, "required", "pass", id="plan-5-acres-plus-0.01-sq-ft-is-B"),
        pytest.param(5 * ACRE - 0.01, "pass", "required", id="plan-5-acres-less-0.01-sq-ft-is-C"),
        pytest.param(ACRE, "pass", "required", id="plan-exactly-1-acre-is-C"),
        pytest.param(ACRE + 0.01, "pass", "required", id="plan-1-acre-plus-0.01-sq-ft-is-C"),
        pytest.param(ACRE - 0.01, "pass", "pass", id="plan-1-acre-less-0.01-sq-ft-is-neither"),
    ],
)
def test_conditions_b_and_c_count_the_larger_plan(
    ruleset: Ruleset, plan_sqft: float, b: str, c: str
) -> None:
    attrs = {
        "part_of_larger_plan": True,
        "larger_plan_acres": plan_sqft / ACRE,
        "land_use": "other",
    }
    got = conditions(context(ruleset, HALF_ACRE, attrs))
    assert (got["condition-B"][0], got["condition-C"][0]) == (b, c)
    assert "counting the whole larger common plan (larger_plan_acres = " in got["condition-B"][1]


def test_piece_of_a_larger_plan_without_its_total_is_review(ruleset: Ruleset) -> None:
    ctx = context(ruleset, HALF_ACRE, {"part_of_larger_plan": True, "land_use": "other"})
    assert permits.check_land_development(ctx).iloc[0]["outcome"] == "required"
    got = conditions(ctx)
    assert got["condition-B"][0] == "review"
    assert got["condition-C"][0] == "review"
    assert "whose total area (larger_plan_acres) is not given" in got["condition-B"][1]
    assert got["condition-B"][1].startswith(
        "Condition B: disturbance of 21,780 sq ft (0.50 acres) is below 5 acres on its own"
    )


def test_larger_plan_acres_alone_makes_it_part_of_a_plan(ruleset: Ruleset) -> None:
    ctx = context(ruleset, HALF_ACRE, {"larger_plan_acres": 3.0, "land_use": "other"})
    assert permits.check_land_development(ctx).iloc[0]["outcome"] == "required"
    got = conditions(ctx)
    assert got["condition-C"][0] == "required"
    assert got["condition-C"][1].startswith(
        "Condition C: disturbance of 130,680 sq ft (3.00 acres), counting the whole larger "
        "common plan (larger_plan_acres = 3), is within 1 to 5 acres"
    )


@pytest.mark.parametrize(
    ("plan_acres", "outcome"),
    [
        pytest.param(3.0, "required", id="no-but-a-3-acre-plan-stated-is-part-of-a-plan"),
        pytest.param(0.5, "pass", id="no-and-a-plan-no-larger-than-itself-is-not"),
    ],
)
def test_a_stated_larger_plan_outweighs_no(
    ruleset: Ruleset, plan_acres: float, outcome: str
) -> None:
    attrs = {"part_of_larger_plan": False, "larger_plan_acres": plan_acres, "land_use": "other"}
    ctx = context(ruleset, HALF_ACRE, attrs)
    assert permits.check_land_development(ctx).iloc[0]["outcome"] == outcome


def test_own_area_counts_when_the_stated_plan_is_smaller(ruleset: Ruleset) -> None:
    site = box(0, 0, 2 * ACRE / 100, 100)
    got = conditions(context(ruleset, site, {"larger_plan_acres": 0.5, "land_use": "other"}))
    assert got["condition-C"][0] == "required"
    assert got["condition-C"][1].startswith(
        "Condition C: disturbance of 87,120 sq ft (2.00 acres), counting its own area, as the "
        "larger common plan's stated total (larger_plan_acres = 0.5) is less, is within"
    )


@pytest.mark.parametrize(
    ("area_sqft", "b", "c"),
    [
        pytest.param(2 * ACRE, "review", "required", id="2-acres-plan-unknown-B-review-C-required"),
        pytest.param(HALF_ACRE.area, "review", "review", id="half-acre-plan-unknown-both-review"),
        pytest.param(5 * ACRE, "required", "pass", id="5-acres-plan-unknown-B-decided"),
    ],
)
def test_larger_plan_not_stated_never_passes(
    ruleset: Ruleset, area_sqft: float, b: str, c: str
) -> None:
    site = box(0, 0, area_sqft / 100, 100)
    got = conditions(context(ruleset, site, {"land_use": "other"}))  # part_of_larger_plan NA
    assert (got["condition-B"][0], got["condition-C"][0]) == (b, c)


# -- messages at a threshold ------------------------------------------------------------------


def test_249_99_sq_ft_reads_below_250(ruleset: Ruleset) -> None:
    found = permits.check_permit_threshold(context(ruleset, box(0, 0, 24.999, 10), {})).iloc[0]
    assert found["outcome"] == "pass"
    assert found["message"].startswith(
        "Disturbance of 249.99 sq ft in zone R-20 is below the 250.00 sq ft threshold"
    )


def test_43_559_99_sq_ft_reads_below_one_acre(ruleset: Ruleset) -> None:
    site = box(0, 0, (ACRE - 0.01) / 100, 100)
    found = permits.check_land_development(
        context(ruleset, site, {"part_of_larger_plan": False})
    ).iloc[0]
    assert found["outcome"] == "pass"
    assert found["message"].startswith(
        "Disturbance of 43,559.99 sq ft (just under 1 acre) is below 1 acre (43,560.00 sq ft)"
    )
    state = permits.check_state_floor(context(ruleset, site, {"part_of_larger_plan": False}))
    assert state.iloc[0]["message"].startswith(
        "Disturbance of 43,559.99 sq ft (just under 1 acre):"
    )


def test_217_801_sq_ft_reads_above_five_acres(ruleset: Ruleset) -> None:
    site = box(0, 0, 2178.01, 100)  # 217,801 sq ft
    got = conditions(context(ruleset, site, {"part_of_larger_plan": False, "land_use": "other"}))
    assert got["condition-B"] == (
        "required",
        (
            "Condition B: disturbance of 217,801 sq ft (5.00002 acres) reaches 5 acres: "
            "post-construction stormwater runoff controls (water quantity and quality) are "
            "required (§ 183-7B(2)(b))."
        ),
    )
    assert got["condition-C"][1].startswith(
        "Condition C: disturbance of 217,801 sq ft (5.00002 acres) reaches 5 acres, the top of"
    )


# -- streams (SW106) -------------------------------------------------------------------------


def streams(*lines: Any) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"name": ["Mill Creek"] * len(lines)}, geometry=list(lines), crs=CRS)


@pytest.mark.parametrize(
    ("line", "outcome", "measured"),
    [
        pytest.param(LineString([(50, -20), (50, 120)]), "required", 100.0, id="crossing-100-ft"),
        pytest.param(LineString([(100, -20), (100, 120)]), "required", 100.0, id="along-the-edge"),
        pytest.param(LineString([(100.01, -20), (100.01, 120)]), "pass", 0.0, id="0.01-ft-off"),
        pytest.param(LineString([(100, 100), (150, 150)]), "required", 0.0, id="touching-a-corner"),
    ],
)
def test_streams_count_as_water(ruleset: Ruleset, line: Any, outcome: str, measured: float) -> None:
    layers = {"zoning": zoning(), "streams": streams(line)}
    found = permits.check_mapped_resources(context(ruleset, box(0, 0, 100, 100), {}, layers))
    stream = found[found["subject_id"] == "P-1:streams"].iloc[0]
    assert (stream["outcome"], stream["measured"], stream["unit"]) == (outcome, measured, "ft")
    if measured:
        assert stream["message"].startswith(
            "100.00 ft of mapped stream (Mill Creek) runs through the disturbance: the plan must "
            "show it and NYSDEC protection-of-waters and other permits may apply"
        )


def test_no_streams_layer_no_streams_row(ruleset: Ruleset) -> None:
    found = permits.check_mapped_resources(context(ruleset, box(0, 0, 100, 100), {}))
    assert "P-1:streams" not in set(found["subject_id"])


# -- every town's words in its ruleset -------------------------------------------------------


def mount_pleasant_toml() -> dict[str, Any]:
    text = resources.files("gis_sw.rulesets").joinpath("mount_pleasant_ny.toml").read_text("utf-8")
    return tomllib.loads(text)


MADE_UP_WORDING = {
    "state_construction_permit": "coverage under the Ridgefield State construction general permit",
    "state_floor_applies": "Ridgefield State construction permit coverage applies alongside",
    "state_floor_not_covered": "the town permit reaches land the state permit does not",
    "wetlands_consequence": "Article 4 (Wetlands Bylaw) applies",
    "wetland_adjacent_area_consequence": "Article 4 (Wetlands Bylaw) regulates the buffer zone",
    "water_bodies_consequence": "the Rivers Protection Act may apply",
    "floodplain_consequence": "Article 9 (Floodplain District) applies",
    "impaired_waters": "a water on the state's integrated list of impaired waters",
}


def made_up_town(wording: dict[str, str] | None) -> Ruleset:
    """A made-up town in another state: Mount Pleasant's numbers, its own citations and words."""
    data = mount_pleasant_toml()
    data["ruleset"] = {
        **data["ruleset"],
        "name": "ridgefield_example",
        "municipality": "Town of Ridgefield (made up for this test)",
        "law": "General Bylaws Article 7 (made up)",
    }
    data["citations"] = {k: f"§ 7-{i + 1}" for i, k in enumerate(data["citations"])}
    data["exemptions"] = {"A": "Cemetery graves", "B": "Home gardening"}
    data.pop("wording")
    if wording is not None:
        data["wording"] = wording
    return parse_ruleset(data, source="<made-up town>")


def all_sw1_messages(ruleset: Ruleset) -> list[str]:
    layers = {
        "zoning": zoning(),
        "wetlands": gpd.GeoDataFrame(geometry=[box(90, 0, 200, 100)], crs=CRS),
        "water_bodies": gpd.GeoDataFrame(geometry=[box(0, 90, 100, 120)], crs=CRS),
        "floodplain": gpd.GeoDataFrame(geometry=[box(0, 0, 50, 50)], crs=CRS),
        "impaired_waters": gpd.GeoDataFrame(geometry=[box(0, 0, 10, 10)], crs=CRS),
        "streams": streams(LineString([(50, -20), (50, 120)])),
    }
    messages = []
    for site, attrs in (
        (box(0, 0, 435.6, 100), {"part_of_larger_plan": False, "land_use": "other"}),
        (box(0, 0, 100, 100), {"part_of_larger_plan": False, "exemption": "A"}),
        (box(0, 0, 2178.01, 100), {"land_use": "other", "construction_cost_usd": 1e6}),
    ):
        ctx = context(ruleset, site, attrs, layers)
        for check in SW1_CHECKS:
            messages += check(ctx)["message"].tolist()
    return messages


@pytest.mark.parametrize(
    "wording",
    [pytest.param(MADE_UP_WORDING, id="own-wording"), pytest.param(None, id="no-wording-section")],
)
def test_another_town_reads_no_new_york_words(wording: dict[str, str] | None) -> None:
    messages = all_sw1_messages(made_up_town(wording))
    assert len(messages) >= 30
    for banned in ("NYSDEC", "SPDES", "New York", "USACE", "Chapter 1", "183", "Mount Pleasant"):
        assert not [m for m in messages if banned in m], banned
    if wording is not None:
        assert any("Article 9 (Floodplain District) applies" in m for m in messages)
        assert any("Ridgefield State construction general permit" in m for m in messages)


def test_mount_pleasant_keeps_its_words(ruleset: Ruleset) -> None:
    messages = all_sw1_messages(ruleset)
    for words in (
        "coverage under the NYSDEC SPDES general permit for construction activity are required",
        "Chapter 111 (Freshwater Wetlands) and NYSDEC/USACE wetland permits may apply",
        "Chapter 111 (Freshwater Wetlands) regulates the adjacent area",
        "NYSDEC protection-of-waters and other permits may apply",
        "Chapter 108 (Flood Damage Prevention) applies",
        (
            "NYSDEC SPDES general permit coverage for construction activity applies alongside "
            "the town permit; the town's rules are not less restrictive than NYSDEC requirements"
        ),
    ):
        assert any(words in m for m in messages), words


def test_wording_keys_are_the_ones_the_checks_use(ruleset: Ruleset) -> None:
    # SW1xx's keys, and SW210's advisory lead (infiltration)
    assert set(mount_pleasant_toml()["wording"]) == {*permits.WORDING_DEFAULTS, "advisory_lead"}
    assert (
        ruleset.wording("floodplain_consequence") == "Chapter 108 (Flood Damage Prevention) applies"
    )


def test_wording_must_be_text_and_a_missing_key_without_default_is_named() -> None:
    from gis_sw.errors import RulesetError

    data = mount_pleasant_toml()
    data["wording"] = {**data["wording"], "floodplain_consequence": 108}
    with pytest.raises(RulesetError, match=r"\[wording\] should be a table of strings"):
        parse_ruleset(data, source="<bad wording>")
    ruleset = made_up_town(None)
    with pytest.raises(RulesetError, match=r"\[wording\] has no entry 'floodplain_consequence'"):
        ruleset.wording("floodplain_consequence")
    assert ruleset.wording("floodplain_consequence", "neutral") == "neutral"
