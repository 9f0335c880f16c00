"""A waivers CSV reads back what gis_sw's own CSVs write: ``'=P1`` (escaped so a spreadsheet
does not run it, gis_sw.outputs.csvcells) is the id ``=P1``.

Before: a waiver copied from summary.csv for proposal ``=P1`` named ``'=P1`` and matched
nothing, so the finding stayed unwaived and the waiver was reported unmatched.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest
from shapely.geometry import box

from gis_sw.analysis.engine import run_rules
from gis_sw.analysis.waivers import apply_waivers
from gis_sw.layers import waivers as waivers_module
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.waivers import csv_text, load_waivers
from gis_sw.outputs.csvcells import CSV_ENCODING, FORMULA_STARTS, csv_cell, csv_frame
from gis_sw.outputs.summary import write_summary_csv
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
TODAY = dt.date(2026, 6, 1)


def findings_of(ruleset: Ruleset, pid: str) -> gpd.GeoDataFrame:
    layers = make_layerset(
        CRS,
        {
            "zoning": gpd.GeoDataFrame(
                {"zone": ["R-20"]}, geometry=[box(-1e4, -1e4, 1e4, 1e4)], crs=CRS
            )
        },
    )
    drawn = gpd.GeoDataFrame({"proposal_id": [pid]}, geometry=[box(0, 0, 20, 15)], crs=CRS)
    return run_rules(layers, make_proposals(CRS, drawn), ruleset, select=["SW101"])


def test_the_escape_characters_are_the_writers() -> None:
    assert waivers_module._FORMULA_STARTS == FORMULA_STARTS


@pytest.mark.parametrize(
    "text",
    ["=P1", "+P1", "-P1", "@P1", "\tP1", '=HYPERLINK("http://x")', "-3.5", "'ok"],
)
def test_csv_text_undoes_csv_cell(text: str) -> None:
    assert csv_text(str(csv_cell(text))) == text


@pytest.mark.parametrize("pid", ["=P1", "-12", "@lot 7", "+A"])
def test_waiver_written_by_our_csv_writer_matches_its_proposal(
    tmp_path: Path, ruleset: Ruleset, pid: str
) -> None:
    found = findings_of(ruleset, pid)
    assert found["subject_id"].tolist() == [pid]
    table = pd.DataFrame(
        {
            "rule_id": ["SW101"],
            "subject_id": [pid],
            "proposal_id": [pid],
            "reason": ["=Town Engineer letter of 2026-05-02"],
        }
    )
    path = tmp_path / "waivers.csv"
    csv_frame(table).to_csv(path, index=False, encoding=CSV_ENCODING)
    if not pid.lstrip("+-").isdigit():
        assert f",'{pid}," in path.read_text(encoding=CSV_ENCODING)  # escaped as written
    (waiver,) = load_waivers(path)
    assert (waiver.subject_id, waiver.proposal_id) == (pid, pid)
    assert waiver.reason == "=Town Engineer letter of 2026-05-02"
    out, results = apply_waivers(found, [waiver], today=TODAY)
    assert out["waived"].tolist() == [True]
    assert [r.status for r in results] == ["applied"]


def test_waiver_copied_from_summary_csv_cells_matches(tmp_path: Path, ruleset: Ruleset) -> None:
    found = findings_of(ruleset, "=P1")
    summary = write_summary_csv(tmp_path / "summary.csv", found)
    with summary.open(encoding=CSV_ENCODING, newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert (row["proposal_id"], row["subject_id"]) == ("'=P1", "'=P1")
    path = tmp_path / "waivers.csv"
    with path.open("w", encoding=CSV_ENCODING, newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["rule_id", "subject_id", "proposal_id", "reason", "expires"])
        writer.writerow(
            [row["rule_id"], row["subject_id"], row["proposal_id"], "letter", "2026-12-31"]
        )
    (waiver,) = load_waivers(path)
    assert waiver.label() == "SW101 =P1 of proposal =P1"
    out, _ = apply_waivers(found, [waiver], today=TODAY)
    assert out["waived"].tolist() == [True]


def test_toml_ids_are_read_as_written(tmp_path: Path) -> None:
    path = tmp_path / "waivers.toml"
    path.write_text(
        '[[waiver]]\nrule_id = "SW101"\nsubject_id = "\'=P1"\nreason = "r"\n', encoding="utf-8"
    )
    (waiver,) = load_waivers(path)
    assert waiver.subject_id == "'=P1"  # TOML is not a spreadsheet's CSV: nothing escaped
