"""Audit of SW102, SW103 and SW105 on attribute values that are given but are no figure.

``larger_plan_acres = -1`` or ``inf`` says a larger common plan exists without its size;
before, it was read as "not given" and ``part_of_larger_plan = false`` passed SW102 and
Conditions B and C.  A negative or infinite ``construction_cost_usd`` gave a negative or
infinite inspection fee.  Now each is ``review`` naming the value.
"""

from __future__ import annotations

import math
from typing import Any

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import box

from gis_sw.analysis import permits
from gis_sw.analysis.context import CheckContext
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def context(ruleset: Ruleset, **attrs: Any) -> CheckContext:
    """300 sq ft disturbed in zone R-20: a town permit, below one acre."""
    zoning = gpd.GeoDataFrame({"zone": ["R-20"]}, geometry=[box(-500, -500, 500, 500)], crs=CRS)
    dist = gpd.GeoDataFrame({"proposal_id": ["P-1"]}, geometry=[box(0, 0, 30, 10)], crs=CRS)
    row = {"proposal_id": "P-1", "land_use": "other", "part_of_larger_plan": False, **attrs}
    proposals = make_proposals(CRS, dist, attributes=pd.DataFrame([row]))
    layers = make_layerset(CRS, {"zoning": zoning})
    return CheckContext(layers=layers, proposals=proposals, ruleset=ruleset)


def one(found: gpd.GeoDataFrame, subject: str = "P-1") -> Any:
    hit = found[found["subject_id"] == subject]
    assert len(hit) == 1
    return hit.iloc[0]


def test_control_not_part_of_a_plan_passes(ruleset: Ruleset) -> None:
    ctx = context(ruleset)
    assert one(permits.check_land_development(ctx))["outcome"] == "pass"
    assert one(permits.check_post_construction(ctx), "P-1:condition-B")["outcome"] == "pass"


@pytest.mark.parametrize("acres", [-1.0, math.inf, -math.inf])
def test_larger_plan_acres_not_an_area_is_review(ruleset: Ruleset, acres: float) -> None:
    ctx = context(ruleset, larger_plan_acres=acres)
    sw102 = one(permits.check_land_development(ctx))
    assert sw102["outcome"] == "review"
    assert f"its larger_plan_acres is {acres!r}, not an area in acres" in sw102["message"]
    assert sw102["message"].endswith("(§ 183-6, § 183-7A).")
    for cond in ("B", "C"):
        found = one(permits.check_post_construction(ctx), f"P-1:condition-{cond}")
        assert found["outcome"] == "review", cond
        assert "not an area in acres" in found["message"]


def test_larger_plan_acres_zero_is_an_area(ruleset: Ruleset) -> None:
    # 0 acres is a stated (if odd) total: the proposal's own 300 sq ft counts
    ctx = context(ruleset, larger_plan_acres=0.0)
    assert one(permits.check_land_development(ctx))["outcome"] == "pass"


@pytest.mark.parametrize("cost", [-5000.0, math.inf])
def test_sw105_cost_that_is_no_estimate_is_review(ruleset: Ruleset, cost: float) -> None:
    found = one(permits.check_application(context(ruleset, construction_cost_usd=cost)))
    assert (found["outcome"], found["measured"]) == ("review", 150.0)
    assert "construction cost estimate, which is not given" in found["message"]


def test_sw105_cost_zero_gives_the_application_fee(ruleset: Ruleset) -> None:
    found = one(permits.check_application(context(ruleset, construction_cost_usd=0.0)))
    assert (found["outcome"], found["measured"]) == ("required", 150.0)
