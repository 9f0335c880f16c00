"""``gis-sw calendar``: end to end from a proposal file and a rainfall CSV."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from click.testing import CliRunner

from gis_sw.cli import cli
from gis_sw.layers.rainfall import RainfallError, read_rainfall

X0, Y0 = 683_000.0, 825_000.0
RAIN_CSV = "date,inches\n2026-04-07,0.2\n2026-04-08,0.75\n2026-04-20,0.5\n2026-04-21,1.2\n"


@pytest.fixture
def proposal_file(tmp_path: Path) -> Path:
    frame = gpd.GeoDataFrame(
        {
            "proposal_id": ["SITE-1", "SITE-1", "SITE-2"],
            "disturbance_id": ["a", "b", "c"],
            "phase": ["1", "2", "1"],
            "start_date": ["2026-04-01", "2026-04-15", None],
            "end_date": ["2026-04-20", "2026-04-30", None],
        },
        geometry=[  # in Mount Pleasant (inside EPSG:2260's area of use)
            shapely.box(X0, Y0, X0 + 400, Y0 + 400),
            shapely.box(X0 + 1000, Y0, X0 + 1400, Y0 + 400),
            shapely.box(X0 + 5000, Y0, X0 + 5100, Y0 + 100),
        ],
        crs="EPSG:2260",
    )
    path = tmp_path / "proposal.geojson"
    frame.to_file(path, driver="GeoJSON")
    return path


def write_rain(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rain.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_calendar_writes_csv_ics_and_timeline(proposal_file: Path, tmp_path: Path) -> None:
    rain = write_rain(tmp_path, RAIN_CSV)
    out = tmp_path / "out"
    args = ["calendar", str(proposal_file), "--rain", str(rain), "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "SITE-1: 2026-04-01 to 2026-04-30 (disturbance dates)" in result.output
    assert "4 weekly and 3 storm inspection report(s)" in result.output
    assert "SITE-2: no construction period" in result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "calendar_SITE-1.csv",
        "calendar_SITE-1.ics",
        "timeline_SITE-1.png",
    ]
    with (out / "calendar_SITE-1.csv").open(encoding="utf-8-sig") as handle:
        rows = [(r["date"], r["kind"]) for r in csv.DictReader(handle) if r["date"]]
    assert rows == [
        ("2026-03-30", "notice"),
        ("2026-04-08", "weekly_inspection"),
        ("2026-04-09", "storm_inspection"),
        ("2026-04-15", "weekly_inspection"),
        ("2026-04-21", "storm_inspection"),
        ("2026-04-22", "weekly+storm_inspection"),
        ("2026-04-29", "weekly_inspection"),
    ]
    assert (out / "calendar_SITE-1.ics").read_bytes().count(b"BEGIN:VEVENT") == 7

    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 2
    assert "--overwrite" in again.output
    replaced = CliRunner().invoke(cli, [*args, "--overwrite"])
    assert replaced.exit_code == 0, replaced.output


def test_proposal_id_selects_and_unknown_id_is_an_error(
    proposal_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    base = ["calendar", str(proposal_file), "--out", str(out)]
    result = CliRunner().invoke(cli, [*base, "--proposal-id", "SITE-1"])
    assert result.exit_code == 0, result.output
    assert "SITE-2" not in result.output
    assert "4 weekly and 0 storm" in result.output
    unknown = CliRunner().invoke(cli, [*base, "--proposal-id", "NOPE"])
    assert unknown.exit_code == 2
    assert "no proposal 'NOPE'" in unknown.output
    undated = CliRunner().invoke(cli, [*base, "--proposal-id", "SITE-2"])
    assert undated.exit_code == 2
    assert "no proposal has a construction period" in undated.output


def test_rain_days_missing_warning(proposal_file: Path, tmp_path: Path) -> None:
    rain = write_rain(tmp_path, RAIN_CSV)
    out = tmp_path / "out"
    args = ["calendar", str(proposal_file), "--rain", str(rain), "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    assert "no value for 26 day(s)" in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("date,inches\n2026-04-01,0.1\n2026-04-02,lots\n", "row 2 (2026-04-02): inches 'lots'"),
        ("date,inches\n2026-04-01,-0.1\n", "row 1 (2026-04-01): inches '-0.1'"),
        ("date,inches\n2026-04-01,\n", "row 1 (2026-04-01): inches ''"),
        ("date,inches\n2026-04-01,0\n04/02/2026,0.3\n", "row 2: date '04/02/2026'"),
        ("date,inches\n2026-04-01,0\n2026-04-01,0.3\n", "row 2: 2026-04-01 is given twice"),
        ("day,rain\n2026-04-01,0\n", "needs 'date' and 'inches'"),
        ("date,inches\n2026-04-01,0\n2026-04-02,0,75\n", "row 2 (2026-04-02): more values"),
    ],
    ids=[
        "not-a-number",
        "negative",
        "empty",
        "bad-date",
        "duplicate-day",
        "wrong-header",
        "decimal-comma",
    ],
)
def test_bad_rainfall_rows_are_named(tmp_path: Path, text: str, message: str) -> None:
    path = write_rain(tmp_path, text)
    with pytest.raises(RainfallError) as info:
        read_rainfall(path)
    assert message in str(info.value)


def test_bad_rainfall_exits_2(proposal_file: Path, tmp_path: Path) -> None:
    rain = write_rain(tmp_path, "date,inches\n2026-04-01,NaN\n")
    result = CliRunner().invoke(
        cli, ["calendar", str(proposal_file), "--rain", str(rain), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "row 1 (2026-04-01): inches 'NaN'" in result.output
    assert not (tmp_path / "o").exists()


def test_read_rainfall_values(tmp_path: Path) -> None:
    rain = read_rainfall(write_rain(tmp_path, "Date, Inches\n2026-04-08 , 0.75\n"))
    assert list(rain.items()) == [(date(2026, 4, 8), 0.75)]
