"""The engine: every rule over every proposal, completed rows, stable ids, --fail-on order."""

from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import box

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.engine import complete_findings, run_check, run_rules
from gis_sw.analysis.findings import FINDING_COLUMNS, Severity, make_findings, tripping
from gis_sw.analysis.registry import RULES, Rule
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def inputs() -> tuple[LayerSet, Proposals]:
    zoning = gpd.GeoDataFrame(
        {"zone": ["R-10", "R-20"]}, geometry=[box(0, 0, 100, 100), box(100, 0, 300, 100)], crs=CRS
    )
    wetlands = gpd.GeoDataFrame(geometry=[box(1000, 0, 1100, 100)], crs=CRS)
    parcels = gpd.GeoDataFrame({"parcel_id": ["A"]}, geometry=[box(0, 0, 300, 100)], crs=CRS)
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ["P-1", "P-2"]},
        geometry=[box(86.6, 0, 100, 10), box(150, 0, 160, 10)],
        crs=CRS,
    )
    attrs = pd.DataFrame({"proposal_id": ["P-1", "P-2"], "construction_cost_usd": [10_000.0, None]})
    return make_layerset(
        CRS, {"zoning": zoning, "parcels": parcels, "wetlands": wetlands}
    ), make_proposals(CRS, disturbance, attributes=attrs)


def test_run_rules_completes_rows(ruleset: Ruleset) -> None:
    layers, proposals = inputs()
    findings = run_rules(layers, proposals, ruleset, select=["SW1"], on_error="raise")
    assert list(findings.columns) == list(FINDING_COLUMNS)
    assert set(findings["rule_id"]) == {
        "SW101",
        "SW102",
        "SW103",
        "SW104",
        "SW105",
        "SW106",
        "SW107",
    }
    assert set(findings["proposal_id"]) == {"P-1", "P-2"}
    sw101 = findings[(findings["rule_id"] == "SW101")].set_index("proposal_id")
    assert sw101.loc["P-1", "outcome"] == "required"
    assert sw101.loc["P-1", "citation"] == "§ 183-12A"
    assert sw101.loc["P-1", "severity"] == "high"
    assert sw101.loc["P-2", "outcome"] == "pass"
    assert sw101.loc["P-2", "severity"] == "info"  # a pass is never high
    assert sw101.loc["P-1", "ruleset"] == "mount_pleasant_ny"
    assert sw101.loc["P-1", "ruleset_version"] == "2011-06-28"
    assert not findings["waived"].any()
    assert findings.crs.to_epsg() == 2260


def test_finding_ids_are_stable_and_unique(ruleset: Ruleset) -> None:
    layers, proposals = inputs()
    first = run_rules(layers, proposals, ruleset, select=["SW1"])
    second = run_rules(layers, proposals, ruleset, select=["SW1"])
    assert first["finding_id"].tolist() == second["finding_id"].tolist()
    assert first["finding_id"].is_unique
    assert first["finding_id"].str.fullmatch(r"[0-9a-f]{16}").all()


def test_select_and_ignore_prefixes(ruleset: Ruleset) -> None:
    layers, proposals = inputs()
    findings = run_rules(layers, proposals, ruleset, select=["SW10"], ignore=["SW106", "SW107"])
    assert sorted(set(findings["rule_id"])) == ["SW101", "SW102", "SW103", "SW104", "SW105"]


def test_sorted_by_proposal_rule_then_worst_outcome(ruleset: Ruleset) -> None:
    layers, proposals = inputs()
    findings = run_rules(layers, proposals, ruleset, select=["SW106"])
    p1 = findings[findings["proposal_id"] == "P-1"]
    assert p1["outcome"].tolist()[:2] == ["review", "review"]  # floodplain, water bodies missing
    assert p1["outcome"].tolist()[2:] == ["pass", "pass"]


def crashing(ctx: CheckContext) -> gpd.GeoDataFrame:
    raise ZeroDivisionError("division by zero")


def test_crashing_check_becomes_review(ruleset: Ruleset) -> None:
    layers, proposals = inputs()
    ctx = CheckContext(layers=layers, proposals=proposals, ruleset=ruleset)
    rule = Rule("SW101", "boom", Severity.HIGH, crashing)
    rows = run_check(rule, ctx, on_error="review")
    assert rows["outcome"].tolist() == ["review", "review"]
    assert rows["message"].iloc[0] == (
        "The SW101 check could not run (ZeroDivisionError: division by zero): "
        "review this rule by hand."
    )
    with pytest.raises(ZeroDivisionError):
        run_check(rule, ctx, on_error="raise")


def test_duplicate_subjects_refused(ruleset: Ruleset) -> None:
    rows = make_findings(
        "SW101", CRS, proposal_id=["P-1", "P-1"], subject_id="P-1", outcome="pass", message="x"
    )
    with pytest.raises(RuntimeError, match="share one"):
        complete_findings(rows, ruleset)


def test_every_rule_has_a_citation(ruleset: Ruleset) -> None:
    ids = [r.rule_id for r in RULES]
    assert len(ids) == len(set(ids))
    assert all(ruleset.citation(i).strip() for i in ids)


@pytest.mark.parametrize(
    ("fail_on", "outcomes", "trips"),
    [
        pytest.param("fail", ["review", "required", "info"], False, id="fail-ignores-review"),
        pytest.param("fail", ["fail", "pass"], True, id="fail-trips-on-fail"),
        pytest.param("review", ["review"], True, id="review-trips-on-review"),
        pytest.param("review", ["fail"], True, id="review-trips-on-fail"),
        pytest.param("review", ["required", "info", "pass"], False, id="review-ignores-required"),
        pytest.param("required", ["required"], True, id="required-trips-on-required"),
        pytest.param("required", ["info", "pass"], False, id="required-ignores-info"),
        pytest.param("never", ["fail"], False, id="never-trips"),
    ],
)
def test_fail_on_order(fail_on: str, outcomes: list[str], trips: bool) -> None:
    frame = pd.DataFrame({"outcome": outcomes, "waived": [False] * len(outcomes)})
    assert (len(tripping(frame, fail_on)) > 0) is trips


def test_waived_finding_does_not_trip() -> None:
    frame = pd.DataFrame({"outcome": ["fail", "fail"], "waived": [True, False]})
    assert len(tripping(frame, "fail")) == 1
    assert len(tripping(frame.iloc[:1], "fail")) == 0
    with pytest.raises(ValueError, match="fail_on must be one of"):
        tripping(frame, "warn")
