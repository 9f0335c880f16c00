"""The committed sample's P15 calculation sheet matches the hand calculation in its README.

The hand calculation is the delimited section at the end of ``data/sample/README.md``; its
table gives, for the 25-year storm, the value each sheet cell should hold, rounded as
written there.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.engine import run_rules
from gis_sw.analysis.hydrology import calculation_sheet_for
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.layers.read import read_layers, read_proposals
from gis_sw.ruleset import Ruleset

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
PID = "P15-new-house-runoff"
BEGIN = "<!-- runoff-hand-calculation: begin"
END = "<!-- runoff-hand-calculation: end -->"


def hand_table() -> list[tuple[str, str, str, str]]:
    text = (SAMPLE / "README.md").read_text(encoding="utf-8")
    section = text[text.index(BEGIN) : text.index(END)]
    rows = re.findall(
        r"^\| (pre|post|both) \| (\w+) \| (\w+) \| ([0-9.]+) \|$", section, flags=re.MULTILINE
    )
    assert len(rows) == 21
    return rows


@pytest.fixture(scope="module")
def sample(ruleset: Ruleset) -> tuple[LayerSet, Proposals]:
    layers = read_layers(SAMPLE / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=ruleset)
    return layers, proposals.subset([PID])


@pytest.fixture(scope="module")
def sheet(sample: tuple[LayerSet, Proposals], ruleset: Ruleset) -> pd.DataFrame:
    return calculation_sheet_for(*sample, ruleset)


def test_sheet_matches_readme_hand_calculation(sheet: pd.DataFrame) -> None:
    for scenario, line, column, written in hand_table():
        rows = sheet[(sheet["scenario"] == scenario) & (sheet["line"] == line)]
        if line == "storm":
            rows = rows[rows["storm_yr"] == 25]
        assert len(rows) == 1, (scenario, line)
        decimals = len(written.split(".")[1]) if "." in written else 0
        value = float(rows[column].iloc[0])
        assert round(value, decimals) == pytest.approx(float(written)), (scenario, line, column)


def test_sheet_subareas_match_readme(sheet: pd.DataFrame) -> None:
    post = sheet[(sheet["scenario"] == "post") & (sheet["line"] == "subarea")]
    areas = {(r.source, r.hsg): round(r.area_sqft, 2) for r in post.itertuples()}
    assert areas == {
        ("new driveway", "B"): 480.0,
        ("new roof", "B"): 2000.0,
        ("disturbed, not impervious", "B"): 6320.0,
        ("land cover meadow", "A"): 2259.25,
        ("land cover meadow", "B"): 7014.75,
    }


def test_engine_outcomes_match_expected_csv(
    sample: tuple[LayerSet, Proposals], ruleset: Ruleset
) -> None:
    findings = run_rules(*sample, ruleset)
    got = {
        r.rule_id: r.outcome
        for r in findings.itertuples()
        if r.rule_id in ("SW501", "SW502", "SW503", "SW504")
    }
    expected = pd.read_csv(SAMPLE / "expected.csv")
    want = expected[(expected["proposal_id"] == PID) & expected["rule_id"].str.startswith("SW5")]
    assert got == dict(zip(want["rule_id"], want["outcome"], strict=True))
    assert CheckContext(*sample, ruleset).disturbed_area_sqft.iloc[0] == pytest.approx(8800.0)
