"""A storm is not a day (issue 13 item 7): storm events over consecutive wet days, SW401/SW402.

§ 183-9A(2) and § 183-12C(4)(a)[4]: a report within 24 hours of any storm event producing
0.5 inch or more.  Consecutive wet days are one event; the report is dated from the day the
event's running total reaches 0.5 in.
"""

from __future__ import annotations

import csv
import tomllib
from datetime import date, timedelta
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely

from gis_sw.analysis.calendar import build_calendar, inspection_schedule, storm_events
from gis_sw.analysis.construction import check_inspections, check_notices
from gis_sw.analysis.context import CheckContext
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.outputs.calendar import calendar_rows
from gis_sw.ruleset import Ruleset

START, END = date(2026, 4, 1), date(2026, 4, 30)
TOML = Path(__file__).parents[1] / "gis_sw" / "rulesets" / "mount_pleasant_ny.toml"


def d(text: str) -> date:
    return date.fromisoformat(text)


def storm_dues(rain: dict[date, float]) -> list[date]:
    """Due dates of the storm reports (weekly-only entries left out)."""
    return [i.due for i in inspection_schedule(START, END, rainfall=rain) if i.storm_days]


def test_two_wet_days_of_030_are_one_storm_dated_the_second_day() -> None:
    rain = {d("2026-04-06"): 0.30, d("2026-04-07"): 0.30}
    schedule = inspection_schedule(START, END, rainfall=rain)
    storms = [i for i in schedule if i.storm_days]
    assert len(storms) == 1
    (storm,) = storms
    assert storm.due == d("2026-04-08")  # 24 hours after 04-07, when the total reached 0.60
    assert storm.weekly  # 04-08 is also the first weekly due date: one inspection
    assert storm.storm_days == (d("2026-04-07"),)
    assert storm.storm_began == (d("2026-04-06"),)
    assert storm.rain_in == (pytest.approx(0.60),)
    assert "0.60 in storm of 2026-04-06 to 2026-04-07" in storm.describe()


@pytest.mark.parametrize(
    ("second_in", "reports"),
    [(0.24, 0), (0.25, 1), (0.26, 1)],
    ids=["total-0.49", "total-0.50", "total-0.51"],
)
def test_two_day_total_at_the_threshold(second_in: float, reports: int) -> None:
    rain = {d("2026-04-13"): 0.25, d("2026-04-14"): second_in}
    assert storm_dues(rain) == [d("2026-04-15")] * reports


@pytest.mark.parametrize(
    ("rain_in", "reports"), [(0.49, 0), (0.50, 1), (0.51, 1)], ids=["0.49", "0.50", "0.51"]
)
def test_one_day_at_the_threshold(rain_in: float, reports: int) -> None:
    assert storm_dues({d("2026-04-10"): rain_in}) == [d("2026-04-11")] * reports


def test_a_dry_day_ends_the_storm() -> None:
    # 0.30, a day under 0.01 in, 0.30: two storms of 0.30 in, neither reaches 0.5 in
    rain = {d("2026-04-10"): 0.30, d("2026-04-11"): 0.005, d("2026-04-12"): 0.30}
    assert storm_dues(rain) == []
    # a missing day is a dry day too
    assert storm_dues({d("2026-04-10"): 0.30, d("2026-04-12"): 0.30}) == []
    # 0.01 in is a wet day: the three days are one 0.61 in storm, reached on 04-12
    rain[d("2026-04-11")] = 0.01
    assert storm_dues(rain) == [d("2026-04-13")]


def test_longer_dry_gap_setting_joins_storms_and_counts_small_rain() -> None:
    rain = {d("2026-04-10"): 0.30, d("2026-04-11"): 0.005, d("2026-04-12"): 0.195}
    events = storm_events(rain, START, END, threshold_in=0.5, dry_gap_days=2)
    assert [(e.began, e.reached) for e in events] == [(d("2026-04-10"), d("2026-04-12"))]
    assert events[0].rain_in == pytest.approx(0.50)
    assert storm_events(rain, START, END, threshold_in=0.5, dry_gap_days=1) == []
    with pytest.raises(ValueError, match="dry gap"):
        storm_events(rain, START, END, threshold_in=0.5, dry_gap_days=0)


def test_a_long_storm_gets_a_report_for_each_further_half_inch() -> None:
    # 0.30 0.30 | 0.30 0.30 | 0.10: reports when the rain since the last one reaches 0.5 in
    days = [d("2026-04-20") + timedelta(days=k) for k in range(5)]
    rain = dict(zip(days, [0.30, 0.30, 0.30, 0.30, 0.10], strict=True))
    events = storm_events(rain, START, END, threshold_in=0.5)
    assert [(e.began, e.reached) for e in events] == [
        (d("2026-04-20"), d("2026-04-21")),
        (d("2026-04-22"), d("2026-04-23")),
    ]
    assert [e.rain_in for e in events] == [pytest.approx(0.6), pytest.approx(0.6)]


def test_storm_begun_before_the_start_counts_its_earlier_rain() -> None:
    rain = {d("2026-03-31"): 0.30, d("2026-04-01"): 0.30}
    events = storm_events(rain, START, END, threshold_in=0.5)
    assert [(e.began, e.reached) for e in events] == [(d("2026-03-31"), d("2026-04-01"))]
    # a storm that reached 0.5 in before the start is not a report of this period
    assert storm_events({d("2026-03-31"): 0.6}, START, END, threshold_in=0.5) == []


def test_ruleset_holds_the_storm_event_rule_and_recipients(ruleset: Ruleset) -> None:
    raw = tomllib.loads(TOML.read_text(encoding="utf-8"))["construction"]
    params = ruleset.construction
    assert params.storm_wet_day_in == raw["storm_wet_day_in"] == 0.01
    assert params.storm_dry_gap_days == raw["storm_dry_gap_days"] == 1
    assert any("Engineering Department" in r for r in params.report_recipients)
    assert any("§ 183-12C(4)(a)[4]" in r for r in params.report_recipients)
    assert ruleset.citation("SW402") == "§ 183-10A(1), § 183-12C(4)(b)[2]"


def test_build_calendar_uses_the_ruleset_rule(ruleset: Ruleset) -> None:
    rain = {d("2026-04-06"): 0.30, d("2026-04-07"): 0.30}
    cal = build_calendar(START, END, construction=ruleset.construction, rainfall=rain)
    assert cal.storm_count == 1
    rows = calendar_rows(cal, proposal_id="P1")
    storm_rows = [r for r in rows if "storm" in r.kind]
    assert [(r.day, r.kind) for r in storm_rows] == [(d("2026-04-08"), "weekly+storm_inspection")]
    assert "0.60 in storm of 2026-04-06 to 2026-04-07" in storm_rows[0].description


def _ctx(ruleset: Ruleset) -> CheckContext:
    frame = gpd.GeoDataFrame(
        {"proposal_id": ["P1"], "start_date": ["2026-04-01"], "end_date": ["2026-04-30"]},
        geometry=[shapely.box(0, 0, 400, 400)],
        crs=ruleset.working_crs,
    )
    proposals = make_proposals(
        ruleset.working_crs, frame, attributes=pd.DataFrame([{"proposal_id": "P1"}])
    )
    return CheckContext(make_layerset(ruleset.working_crs, {}), proposals, ruleset)


def test_sw401_names_recipients_and_the_storm_event_rule(ruleset: Ruleset) -> None:
    row = check_inspections(_ctx(ruleset)).iloc[0]
    assert row["outcome"] == "required"
    message = row["message"]
    assert "the Town of Mount Pleasant Engineering Department (§ 183-12C(4)(a)[4])" in message
    assert "Stormwater Management Officer" in message
    assert "storm event of 0.5 in or more" in message
    assert "consecutive wet days of 0.01 in or more, ended by a dry day" in message


def test_sw402_cites_both_sections_and_names_the_town_engineer(ruleset: Ruleset) -> None:
    row = check_notices(_ctx(ruleset)).iloc[0]
    assert row["outcome"] == "required"
    assert row["message"].startswith("Notify the Town Engineer (§ 183-12C(4)(b)[2])")


def test_calendar_csv_of_cli_dates_the_two_day_storm(tmp_path: Path, ruleset: Ruleset) -> None:
    from click.testing import CliRunner

    from gis_sw.cli import cli

    frame = gpd.GeoDataFrame(
        {"proposal_id": ["S1"], "start_date": ["2026-04-01"], "end_date": ["2026-04-30"]},
        geometry=[shapely.box(683_000.0, 825_000.0, 683_400.0, 825_400.0)],
        crs="EPSG:2260",
    )
    proposal = tmp_path / "p.geojson"
    frame.to_file(proposal, driver="GeoJSON")
    rain = tmp_path / "rain.csv"
    rain.write_text("date,inches\n2026-04-13,0.30\n2026-04-14,0.30\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["calendar", str(proposal), "--rain", str(rain), "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    with (out / "calendar_S1.csv").open(encoding="utf-8-sig") as handle:
        rows = [(r["date"], r["kind"]) for r in csv.DictReader(handle) if "storm" in r["kind"]]
    assert rows == [("2026-04-15", "weekly+storm_inspection")]


def test_ruleset_refuses_a_dry_gap_of_zero_days(ruleset: Ruleset) -> None:
    from gis_sw.errors import RulesetError
    from gis_sw.ruleset import parse_ruleset

    data = {k: dict(v) if isinstance(v, dict) else v for k, v in ruleset.raw.items()}
    data["construction"] = {**data["construction"], "storm_dry_gap_days": 0}
    with pytest.raises(RulesetError, match="storm_dry_gap_days should be 1 or more"):
        parse_ruleset(data)
