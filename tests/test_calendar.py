"""Inspection calendar (§ 183-9A(2)), notices (§ 183-10A(1)), SW401-SW403, CSV and .ics."""

from __future__ import annotations

import csv
import hashlib
import io
from datetime import UTC, date, datetime
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
import shapely

from gis_sw.analysis.calendar import (
    InspectionDue,
    build_calendar,
    inspection_schedule,
    notice_schedule,
    weekly_due_dates,
)
from gis_sw.analysis.construction import (
    check_inspections,
    check_notices,
    check_sediment_cleanout,
    construction_period,
)
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import empty_findings
from gis_sw.analysis.phasing import proposal_timeline
from gis_sw.api import Town
from gis_sw.errors import OutputError
from gis_sw.layers.build import assemble_proposals, make_layerset, make_proposals
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.calendar import (
    calendar_rows,
    escape_text,
    fold_line,
    ics_bytes,
    write_calendar,
)
from gis_sw.outputs.timeline import write_timeline, write_timelines
from gis_sw.ruleset import Ruleset
from gis_sw.screening import Screening

APRIL_1, APRIL_30 = date(2026, 4, 1), date(2026, 4, 30)

# A hand-made April: storms on a weekly inspection day (04-08), the day before one (04-14),
# exactly at the threshold and then again the next day (04-20, 04-21), just below it
# (04-25), on the last day (04-30), and before construction starts (03-30).
RAIN = {
    date(2026, 3, 30): 2.00,
    date(2026, 4, 2): 0.10,
    date(2026, 4, 8): 0.75,
    date(2026, 4, 14): 0.60,
    date(2026, 4, 20): 0.50,
    date(2026, 4, 21): 1.20,
    date(2026, 4, 25): 0.49,
    date(2026, 4, 30): 0.80,
}


def d(text: str) -> date:
    return date.fromisoformat(text)


def test_weekly_reports_every_7_days_from_the_start() -> None:
    assert weekly_due_dates(APRIL_1, APRIL_30) == [
        d("2026-04-08"),
        d("2026-04-15"),
        d("2026-04-22"),
        d("2026-04-29"),
    ]
    # A due date on the last day is kept; a period shorter than 7 days has none.
    assert weekly_due_dates(APRIL_1, d("2026-04-08")) == [d("2026-04-08")]
    assert weekly_due_dates(APRIL_1, d("2026-04-07")) == []


def test_end_before_start_raises() -> None:
    with pytest.raises(ValueError, match="before its start"):
        weekly_due_dates(APRIL_30, APRIL_1)


def test_calendar_against_hand_made_rainfall() -> None:
    schedule = inspection_schedule(APRIL_1, APRIL_30, rainfall=RAIN)
    assert schedule == (
        # weekly on 04-08; the 0.75 in storm that day gets its own report by 04-09
        InspectionDue(d("2026-04-08"), weekly=True),
        InspectionDue(
            d("2026-04-09"), weekly=False, storm_days=(d("2026-04-08"),), rain_in=(0.75,)
        ),
        # storm report due on a weekly day: one inspection covers both
        InspectionDue(d("2026-04-15"), weekly=True, storm_days=(d("2026-04-14"),), rain_in=(0.6,)),
        # two storm days in a row: one report after each (04-21, then 04-22 with the weekly)
        InspectionDue(d("2026-04-21"), weekly=False, storm_days=(d("2026-04-20"),), rain_in=(0.5,)),
        InspectionDue(d("2026-04-22"), weekly=True, storm_days=(d("2026-04-21"),), rain_in=(1.2,)),
        # 0.49 in on 04-25 is below the threshold: nothing
        InspectionDue(d("2026-04-29"), weekly=True),
        # a storm on the last day still needs its report, the day after the period
        InspectionDue(d("2026-05-01"), weekly=False, storm_days=(d("2026-04-30"),), rain_in=(0.8,)),
    )
    assert [s.kind for s in schedule] == [
        "weekly",
        "storm",
        "weekly+storm",
        "storm",
        "weekly+storm",
        "weekly",
        "storm",
    ]


def test_without_rainfall_only_weekly_reports() -> None:
    schedule = inspection_schedule(APRIL_1, APRIL_30)
    assert [s.due for s in schedule] == weekly_due_dates(APRIL_1, APRIL_30)
    assert all(s.kind == "weekly" for s in schedule)


def test_build_calendar_counts_and_missing_rain_days(ruleset: Ruleset) -> None:
    cal = build_calendar(APRIL_1, APRIL_30, construction=ruleset.construction, rainfall=RAIN)
    assert cal.weekly_count == 4
    assert cal.storm_count == 5
    assert len(cal.inspections) == 7
    assert cal.rain_days_missing == 30 - 7  # 7 of the 8 rain rows fall inside April
    no_rain = build_calendar(APRIL_1, APRIL_30, construction=ruleset.construction)
    assert not no_rain.rainfall_given
    assert no_rain.rain_days_missing == 0


def test_notices_48_hours_before_the_start(ruleset: Ruleset) -> None:
    notices = notice_schedule(
        ruleset.construction.notice_milestones, construction_start=APRIL_1, notice_hours=48
    )
    assert len(notices) == len(ruleset.construction.notice_milestones) == 8
    assert notices[0].milestone == "(a) The start of construction"
    assert notices[0].due == d("2026-03-30")
    assert notices[0].milestone_date == APRIL_1
    assert all(n.due is None for n in notices[1:])
    assert notice_schedule(["x"], construction_start=APRIL_1, notice_hours=49)[0].due == d(
        "2026-03-29"
    )


# -- construction period and SW401-SW403 --------------------------------------------------


def make(
    ruleset: Ruleset,
    dates: list[tuple[str | None, str | None]],
    attributes: dict[str, object] | None = None,
) -> Proposals:
    frame = gpd.GeoDataFrame(
        {
            "proposal_id": ["P1"] * len(dates),
            "start_date": [s for s, _ in dates],
            "end_date": [e for _, e in dates],
        },
        geometry=[shapely.box(i * 500, 0, i * 500 + 400, 400) for i in range(len(dates))],
        crs=ruleset.working_crs,
    )
    attrs = pd.DataFrame([{"proposal_id": "P1", **(attributes or {})}])
    return make_proposals(ruleset.working_crs, frame, attributes=attrs)


def test_period_from_attributes_wins(ruleset: Ruleset) -> None:
    proposals = make(
        ruleset,
        [("2026-04-10", "2026-05-10")],
        {"construction_start": "2026-04-01", "construction_end": "2026-06-30"},
    )
    period = construction_period(proposals, "P1")
    assert period is not None
    assert (period.start, period.end, period.source) == (APRIL_1, d("2026-06-30"), "attributes")


def test_period_from_disturbance_dates(ruleset: Ruleset) -> None:
    proposals = make(ruleset, [("2026-04-10", "2026-05-10"), ("2026-05-01", "2026-07-15")])
    period = construction_period(proposals, "P1")
    assert period is not None
    assert (period.start, period.end) == (d("2026-04-10"), d("2026-07-15"))
    assert period.source == "disturbance dates"


def test_period_mixed_sources(ruleset: Ruleset) -> None:
    proposals = make(ruleset, [("2026-04-10", "2026-05-10")], {"construction_start": "2026-04-01"})
    period = construction_period(proposals, "P1")
    assert period is not None
    assert (period.start, period.end) == (APRIL_1, d("2026-05-10"))
    assert period.source == "attributes and disturbance dates"


def test_no_period(ruleset: Ruleset) -> None:
    assert construction_period(make(ruleset, [(None, None)]), "P1") is None


def ctx_for(ruleset: Ruleset, proposals: Proposals) -> CheckContext:
    return CheckContext(make_layerset(ruleset.working_crs, {}), proposals, ruleset)


def test_sw401_required_with_dates(ruleset: Ruleset) -> None:
    ctx = ctx_for(ruleset, make(ruleset, [("2026-04-01", "2026-04-30")]))
    row = check_inspections(ctx).iloc[0]
    assert row["outcome"] == "required"
    assert row["measured"] == 4
    assert row["threshold"] == 7
    assert "first due 2026-04-08" in row["message"]
    assert "2026-04-01 to 2026-04-30" in row["message"]


def test_sw401_review_without_dates(ruleset: Ruleset) -> None:
    ctx = ctx_for(ruleset, make(ruleset, [(None, None)]))
    row = check_inspections(ctx).iloc[0]
    assert row["outcome"] == "review"
    assert "no valid construction period" in row["message"]


def test_sw402_lists_milestones_and_first_due_date(ruleset: Ruleset) -> None:
    ctx = ctx_for(ruleset, make(ruleset, [("2026-04-01", "2026-04-30")]))
    row = check_notices(ctx).iloc[0]
    assert row["outcome"] == "required"
    assert row["threshold"] == 48
    assert "(f) The close of the construction season" in row["message"]
    assert "first notice is due by 2026-03-30" in row["message"]


def test_sw403_required_at_50_percent(ruleset: Ruleset) -> None:
    ctx = ctx_for(ruleset, make(ruleset, [(None, None)]))
    row = check_sediment_cleanout(ctx).iloc[0]
    assert row["outcome"] == "required"
    assert row["threshold"] == 50
    assert "reduced by 50%" in row["message"]


def test_construction_checks_give_no_rows_without_disturbance(ruleset: Ruleset) -> None:
    empty = gpd.GeoDataFrame(
        {"proposal_id": pd.Series(dtype="object")},
        geometry=gpd.GeoSeries([], crs=ruleset.working_crs),
        crs=ruleset.working_crs,
    )
    # built as a reader would: make_proposals itself refuses a disturbance with no features
    ctx = ctx_for(ruleset, assemble_proposals(ruleset.working_crs, empty))
    for check in (check_inspections, check_notices, check_sediment_cleanout):
        assert len(check(ctx)) == 0


# -- CSV and iCalendar -----------------------------------------------------------------------


def test_fold_line_at_75_octets_without_splitting_characters() -> None:
    line = "DESCRIPTION:" + "é" * 80  # 12 + 160 octets
    folded = fold_line(line)
    assert folded.endswith(b"\r\n")
    pieces = folded[:-2].split(b"\r\n")
    assert all(len(p) <= 75 for p in pieces)
    assert all(p.startswith(b" ") for p in pieces[1:])
    for piece in pieces:
        piece.decode("utf-8")  # each physical line is whole UTF-8
    assert b"".join([pieces[0], *(p[1:] for p in pieces[1:])]).decode("utf-8") == line
    assert fold_line("SHORT:x") == b"SHORT:x\r\n"
    assert len(fold_line("X:" + "a" * 73)) == 75 + 2  # exactly 75 octets: not folded


def test_escape_text() -> None:
    assert escape_text("a;b,c\\d\ne") == "a\\;b\\,c\\\\d\\ne"


def unfold(data: bytes) -> list[str]:
    text = data.decode("utf-8")
    assert "\n" not in text.replace("\r\n", "")  # every line ends in CRLF
    return text.replace("\r\n ", "").split("\r\n")[:-1]


def test_ics_events_are_all_day_with_stable_uids(ruleset: Ruleset) -> None:
    cal = build_calendar(APRIL_1, APRIL_30, construction=ruleset.construction, rainfall=RAIN)
    rows = calendar_rows(cal, proposal_id="P1")
    stamp = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    data = ics_bytes(rows, name="P1 duties", generated=stamp)
    assert all(len(line) <= 75 for line in data.split(b"\r\n"))
    lines = unfold(data)
    assert lines[0] == "BEGIN:VCALENDAR"
    assert lines[-1] == "END:VCALENDAR"
    assert "VERSION:2.0" in lines
    assert lines.count("BEGIN:VEVENT") == 8  # 7 inspections + the dated notice
    assert "DTSTART;VALUE=DATE:20260330" in lines  # the notice before the start
    assert "DTEND;VALUE=DATE:20260331" in lines
    assert "DTSTART;VALUE=DATE:20260501" in lines  # storm on the last day
    assert "DTSTAMP:20260301T120000Z" in lines
    uids = [line for line in lines if line.startswith("UID:")]
    assert len(set(uids)) == 8
    again = unfold(ics_bytes(calendar_rows(cal, proposal_id="P1"), name="P1 duties"))
    assert [line for line in again if line.startswith("UID:")] == uids
    notice = next(line for line in lines if line.startswith("DESCRIPTION:Last day"))
    assert "(b) The installation of sediment and erosion control measures" in notice


def test_csv_rows(ruleset: Ruleset) -> None:
    cal = build_calendar(APRIL_1, APRIL_30, construction=ruleset.construction, rainfall=RAIN)
    rows = calendar_rows(cal, proposal_id="P1")
    dated = [(r.day.isoformat(), r.kind) for r in rows if r.day]
    assert dated == [
        ("2026-03-30", "notice"),
        ("2026-04-08", "weekly_inspection"),
        ("2026-04-09", "storm_inspection"),
        ("2026-04-15", "weekly+storm_inspection"),
        ("2026-04-21", "storm_inspection"),
        ("2026-04-22", "weekly+storm_inspection"),
        ("2026-04-29", "weekly_inspection"),
        ("2026-05-01", "storm_inspection"),
    ]
    assert sum(1 for r in rows if r.day is None) == 7


def test_write_calendar_atomic_and_refuses_to_overwrite(ruleset: Ruleset, tmp_path: Path) -> None:
    cal = build_calendar(APRIL_1, APRIL_30, construction=ruleset.construction, rainfall=RAIN)
    csv_path, ics_path = write_calendar(tmp_path, cal, proposal_id="P 1")
    # the id was sanitised (space), so its name carries the id's hash: "P_1" can't clash
    stem = "P_1-" + hashlib.sha256(b"P 1").hexdigest()[:10]
    assert csv_path.name == f"calendar_{stem}.csv"
    assert ics_path.read_bytes().startswith(b"BEGIN:VCALENDAR\r\n")
    table = list(csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8-sig"))))
    assert table[0]["date"] == "2026-03-30"
    assert table[3]["description"].startswith("7-day erosion")
    with pytest.raises(OutputError, match="--overwrite"):
        write_calendar(tmp_path, cal, proposal_id="P 1")
    write_calendar(tmp_path, cal, proposal_id="P 1", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"calendar_{stem}.csv",
        f"calendar_{stem}.ics",
    ]


def test_timeline_png(ruleset: Ruleset, tmp_path: Path) -> None:
    proposals = make(ruleset, [("2026-04-01", "2026-06-30"), ("2026-05-01", "2026-08-31")])
    path = write_timeline(
        tmp_path / "timeline.png",
        proposal_timeline(proposals, "P1"),
        ruleset=ruleset,
        proposal_id="P1",
    )
    assert path is not None
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    undated = make(ruleset, [(None, None)])
    none = write_timeline(
        tmp_path / "none.png", proposal_timeline(undated, "P1"), ruleset=ruleset, proposal_id="P1"
    )
    assert none is None
    assert not (tmp_path / "none.png").exists()


def test_write_timelines_only_for_dated_proposals(ruleset: Ruleset, tmp_path: Path) -> None:
    frame = gpd.GeoDataFrame(
        {
            "proposal_id": ["A/1", "B"],
            "start_date": ["2026-04-01", None],
            "end_date": ["2026-04-30", None],
        },
        geometry=[shapely.box(0, 0, 100, 100), shapely.box(500, 0, 600, 100)],
        crs=ruleset.working_crs,
    )
    proposals = make_proposals(ruleset.working_crs, frame)
    town = Town(make_layerset(ruleset.working_crs, {}), ruleset)
    screening = Screening(town, proposals, empty_findings(ruleset.working_crs))
    written = write_timelines(tmp_path, screening)
    name = "timeline_A_1-" + hashlib.sha256(b"A/1").hexdigest()[:10] + ".png"
    assert [p.name for p in written] == [name]
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def patio(ruleset: Ruleset, larger_plan: object) -> Proposals:
    frame = gpd.GeoDataFrame(
        {"proposal_id": ["P1"], "start_date": ["2026-04-01"], "end_date": ["2026-04-30"]},
        geometry=[shapely.box(0, 0, 20, 12)],  # 240 sq ft
        crs=ruleset.working_crs,
    )
    attrs = pd.DataFrame([{"proposal_id": "P1", "part_of_larger_plan": larger_plan}])
    return make_proposals(ruleset.working_crs, frame, attributes=attrs)


def test_duties_do_not_attach_below_the_permit_threshold(ruleset: Ruleset) -> None:
    zoning = gpd.GeoDataFrame(
        {"zone": ["R-20"]}, geometry=[shapely.box(-100, -100, 100, 100)], crs=ruleset.working_crs
    )
    layers = make_layerset(ruleset.working_crs, {"zoning": zoning})
    ctx = CheckContext(layers, patio(ruleset, larger_plan=False), ruleset)
    for check in (check_inspections, check_notices, check_sediment_cleanout):
        row = check(ctx).iloc[0]
        assert row["outcome"] == "pass", check.__name__
        assert row["message"].startswith("Does not attach")


def test_duties_review_when_the_permit_question_is_open(ruleset: Ruleset) -> None:
    # 240 sq ft with no zoning layer: whether 100 sq ft lie in R-10 is unknown.
    ctx = ctx_for(ruleset, patio(ruleset, larger_plan=False))
    for check in (check_inspections, check_notices, check_sediment_cleanout):
        row = check(ctx).iloc[0]
        assert row["outcome"] == "review", check.__name__
        assert "undetermined" in row["message"]


def test_duties_bind_a_larger_common_plan_below_the_threshold(ruleset: Ruleset) -> None:
    ctx = ctx_for(ruleset, patio(ruleset, larger_plan=True))
    assert check_inspections(ctx).iloc[0]["outcome"] == "required"
