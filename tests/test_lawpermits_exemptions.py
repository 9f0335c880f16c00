"""§ 183-5 exemptions (issue 13 item 5): one parser for the reader and SW104, and the
exemptions' own conditions (C under five acres, K with an existing structure, A without new
structures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import box

from gis_sw.analysis import permits
from gis_sw.analysis.context import CheckContext
from gis_sw.errors import LayerError
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.exemptions import parse_exemption, section_number
from gis_sw.layers.read import read_proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
ACRE = 43_560.0

pytestmark = pytest.mark.filterwarnings("ignore:'crs' was not provided:UserWarning")


@pytest.mark.parametrize(
    ("claim", "letter"),
    [
        pytest.param("C", "C", id="letter"),
        pytest.param("c", "C", id="lower-case-letter"),
        pytest.param("(c)", "C", id="letter-in-parentheses"),
        pytest.param("C.", "C", id="letter-with-full-stop"),
        pytest.param("183-5C", "C", id="citation-183-5C"),
        pytest.param("§ 183-5 C", "C", id="citation-section-sign-spaced"),
        pytest.param("§183-5(c)", "C", id="citation-parenthesised"),
        pytest.param("Section 183-5G", "G", id="citation-section-word"),
        pytest.param("§ 183-5(J) home gardening", "J", id="citation-then-heading"),
        pytest.param("C. Routine maintenance", "C", id="letter-then-heading"),
        pytest.param("Cemetery graves", "G", id="heading"),
        pytest.param("  cemetery GRAVES ", "G", id="heading-any-case"),
        pytest.param("Routine maintenance", "C", id="heading-beginning"),
        pytest.param("Home gardening for my family", "J", id="claim-starting-with-heading"),
        pytest.param("A new house", None, id="unmarked-letter-before-text-is-not-a-letter"),
        pytest.param("Z", None, id="unknown-letter"),
        pytest.param("183-7C", None, id="another-section"),
        pytest.param("permit", None, id="a-word-inside-a-heading-is-not-its-beginning"),
        pytest.param("", None, id="blank"),
        pytest.param(None, None, id="none"),
    ],
)
def test_parse_exemption(ruleset: Ruleset, claim: Any, letter: str | None) -> None:
    got = parse_exemption(claim, ruleset.exemptions, citation=ruleset.exemptions_citation)
    assert got == letter


def test_section_number_from_citation() -> None:
    assert section_number("§ 183-5") == "183-5"
    assert section_number("") == ""


def test_headings_come_from_the_ruleset(ruleset: Ruleset) -> None:
    # another town letters its list differently: the parser follows the table it is given
    headings = {"A": "Cemetery graves", "B": "Home gardening"}
    assert parse_exemption("Cemetery graves", headings, citation="§ 7-2") == "A"
    assert parse_exemption("7-2B", headings, citation="§ 7-2") == "B"
    assert parse_exemption("183-5B", headings, citation="§ 7-2") is None
    two = {"A": "Home gardening", "B": "Home repairs"}
    assert parse_exemption("Home", two) is None  # fits two headings: names neither
    assert parse_exemption("Home repairs", two) == "B"


def _gpkg(folder: Path, claims: list[str | None]) -> Path:
    path = folder / "proposals.gpkg"
    ids = [f"P{i}" for i in range(len(claims))]
    gpd.GeoDataFrame(
        {"proposal_id": ids},
        geometry=[
            box(685_000 + 100 * i, 830_000, 685_020 + 100 * i, 830_020) for i in range(len(ids))
        ],
        crs=CRS,
    ).to_file(path, layer="disturbance", engine="pyogrio")
    plan_acres = [5.0] + [None] * (len(ids) - 1)
    gpd.GeoDataFrame(
        {"proposal_id": ids, "exemption": claims, "larger_plan_acres": plan_acres},
        geometry=[None] * len(ids),
    ).to_file(path, layer="proposals", engine="pyogrio")
    return path


def test_reader_accepts_letter_citation_and_heading(tmp_path: Path, ruleset: Ruleset) -> None:
    claims = ["Cemetery graves", "183-5C", "§ 183-5 K", "j", None]
    proposals = read_proposals(_gpkg(tmp_path, claims), ruleset=ruleset)
    assert proposals.attributes["exemption"].tolist()[:4] == claims[:4]  # kept as written
    assert proposals.attributes["larger_plan_acres"].tolist()[:2] == [
        5.0,
        pytest.approx(float("nan"), nan_ok=True),
    ]
    found = permits.check_exemption(
        CheckContext(make_layerset(CRS, {}), proposals, ruleset)
    ).set_index("proposal_id")
    assert found.loc["P0", "message"].startswith("Exemption § 183-5G (Cemetery graves) is claimed")
    assert found.loc["P4", "outcome"] == "pass"


def test_reader_refuses_what_names_no_exemption(tmp_path: Path, ruleset: Ruleset) -> None:
    with pytest.raises(LayerError) as info:
        read_proposals(_gpkg(tmp_path, ["Cemetery", "183-7C"]), ruleset=ruleset)
    (problem,) = info.value.problems
    assert problem.message == (
        "exemption is not a letter of the ruleset's exemptions: proposal_id P1 = '183-7C'."
    )
    assert "its citation (183-5A or § 183-5 A) or its heading" in problem.fix


# -- the exemptions' own conditions -----------------------------------------------------------


def context(
    ruleset: Ruleset,
    site: Any,
    attributes: dict[str, Any],
    layers: dict[str, gpd.GeoDataFrame] | None = None,
    impervious: gpd.GeoDataFrame | None = None,
) -> CheckContext:
    disturbance = gpd.GeoDataFrame({"proposal_id": ["P-1"]}, geometry=[site], crs=CRS)
    attrs = pd.DataFrame({"proposal_id": ["P-1"], **{k: [v] for k, v in attributes.items()}})
    return CheckContext(
        # an empty layer here is the town's whole layer, holding none: declared so
        layers=make_layerset(
            CRS, layers or {}, none=[k for k, f in (layers or {}).items() if not len(f)]
        ),
        proposals=make_proposals(CRS, disturbance, attributes=attrs, impervious=impervious),
        ruleset=ruleset,
    )


def sw104(ctx: CheckContext) -> pd.Series:
    return permits.check_exemption(ctx).iloc[0]


@pytest.mark.parametrize(
    ("area_sqft", "outcome", "figure"),
    [
        pytest.param(
            5 * ACRE, "fail", "217,800 sq ft (5.00 acres) reaches 5 acres", id="5.00-acres",
        ),
        pytest.param(
            5 * ACRE + 0.01, "fail", "217,800.01 sq ft (just over 5 acres) reaches 5 acres",
            id="5-acres-plus-0.01-sq-ft",
        ),
        pytest.param(
            5 * ACRE - 0.01, "review",
            "217,799.99 sq ft (just under 5 acres) of disturbance (less than 5 acres",
            id="5-acres-less-0.01-sq-ft",
        ),
    ],
)  # fmt: skip
def test_sw104_boundary_fail_review_routine_maintenance_at_five_acres(
    ruleset: Ruleset, area_sqft: float, outcome: str, figure: str
) -> None:
    site = box(0, 0, area_sqft / 400.0, 400.0)
    found = sw104(context(ruleset, site, {"exemption": "183-5C"}))
    assert found["outcome"] == outcome
    assert figure in found["message"]
    assert (found["measured"], found["threshold"]) == (round(area_sqft, 2), 5 * ACRE)
    if outcome == "fail":
        assert "so it is not exempt; every rule applies" in found["message"]


def test_routine_maintenance_counts_the_larger_plan(ruleset: Ruleset) -> None:
    found = sw104(
        context(ruleset, box(0, 0, 100, 100), {"exemption": "C", "larger_plan_acres": 5.0})
    )
    assert found["outcome"] == "fail"
    assert (
        "the disturbance of 217,800 sq ft (5.00 acres), counting the whole larger common plan "
        "(larger_plan_acres = 5), reaches 5 acres"
    ) in found["message"]


def lots() -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {"parcel_id": ["L-1", "L-2"]},
        geometry=[box(0, 0, 100, 200), box(100, 0, 200, 200)],
        crs=CRS,
    )


def houses(*footprints: Any) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(
        {"building_id": [f"B-{i}" for i in range(len(footprints))]},
        geometry=list(footprints),
        crs=CRS,
    )


LAWN = box(10, 100, 90, 190)  # on lot L-1, touching no other lot


@pytest.mark.parametrize(
    ("layers", "outcome", "text"),
    [
        pytest.param({"parcels": lots()}, "review", "the buildings layer was not provided",
                     id="no-buildings-layer-is-review"),
        pytest.param({"parcels": lots(), "buildings": houses()}, "fail",
                     "no building stands on lot L-1 (buildings layer)", id="no-building-is-fail"),
        pytest.param({"parcels": lots(), "buildings": houses(box(120, 20, 160, 60))}, "fail",
                     "no building stands on lot L-1", id="building-on-the-next-lot-only-is-fail"),
        pytest.param({"parcels": lots(), "buildings": houses(box(20, 20, 60, 60))}, "review",
                     "building B-0 stands on lot L-1", id="house-on-the-lot-is-review"),
    ],
)  # fmt: skip
def test_landscaping_needs_an_existing_structure(
    ruleset: Ruleset, layers: dict[str, gpd.GeoDataFrame], outcome: str, text: str
) -> None:
    found = sw104(context(ruleset, LAWN, {"exemption": "Landscaping"}, layers))
    assert found["outcome"] == outcome
    assert text in found["message"]
    if outcome == "fail":
        assert "so it is not exempt" in found["message"]


def test_agricultural_exemption_does_not_cover_new_structures(ruleset: Ruleset) -> None:
    field = box(0, 0, 400, 217.8)
    barn = gpd.GeoDataFrame(
        {"proposal_id": ["P-1", "P-1"], "surface": ["roof", "driveway"]},
        geometry=[box(10, 10, 70, 50), box(70, 10, 90, 50)],
        crs=CRS,
    )
    found = sw104(context(ruleset, field, {"exemption": "A"}, impervious=barn))
    assert found["outcome"] == "review"
    assert "the proposal draws 1 new structure(s) (roof: 2,400 sq ft)" in found["message"]
    assert "does not include the construction of new structures" in found["message"]
    plain = sw104(context(ruleset, field, {"exemption": "A"}))
    assert plain["outcome"] == "review"
    assert "new structure" not in plain["message"]
