"""File names from proposal ids are unique by construction (gis_sw/outputs/names.py).

Expected hashes are computed here with hashlib (SHA-256 of the id's UTF-8, first 10 hex
digits), not by the code under test.
"""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import geopandas as gpd
import pypdf
import pytest
import shapely
from click.testing import CliRunner
from corpus import CRS, box, proposal_frames, write_town

from gis_sw.api import Town
from gis_sw.cli import cli
from gis_sw.outputs.names import MAX_STEM, file_stems, files_by_id, sanitise
from gis_sw.outputs.timeline import timeline_path
from gis_sw.ruleset import load_ruleset
from gis_sw.screening import Screening


def hashed(stem: str, proposal_id: str) -> str:
    return f"{stem}-{hashlib.sha256(proposal_id.encode()).hexdigest()[:10]}"


def test_safe_ids_keep_their_names() -> None:
    ids = ["P-1", "P-2", "SITE_12.b", "proposal"]
    assert file_stems(ids) == {i: i for i in ids}


def test_ids_that_sanitise_to_one_name_get_distinct_stable_names() -> None:
    stems = file_stems(["Lot 7/A", "Lot 7 A", "Lot_7_A"])
    assert stems == {
        "Lot 7/A": hashed("Lot_7_A", "Lot 7/A"),
        "Lot 7 A": hashed("Lot_7_A", "Lot 7 A"),
        "Lot_7_A": "Lot_7_A",  # already safe: the changed ids carry a hash, so no clash
    }
    # stable: an id's name does not depend on the other ids of the run
    assert file_stems(["Lot 7/A"])["Lot 7/A"] == stems["Lot 7/A"]


def test_non_latin_ids_get_distinct_names() -> None:
    stems = file_stems(["東京-1", "東京-2", "Škoda"])
    assert stems["東京-1"] == hashed("1", "東京-1")
    assert stems["東京-2"] == hashed("2", "東京-2")
    assert stems["Škoda"] == hashed("koda", "Škoda")
    only_letters = file_stems(["東京", "大阪"])
    assert only_letters == {"東京": hashed("proposal", "東京"), "大阪": hashed("proposal", "大阪")}


@pytest.mark.parametrize(
    "proposal_id",
    [
        "calcsheet",
        "findings",
        "Findings",
        "summary",
        "webmap",
        "index",
        "parcels",
        "timeline_P-1",
        "calendar_P-1",
        "P-1_key",
        "P-1_sheet-2",
        "CON",
        "nul.txt",
        "X-0123456789",
    ],
)
def test_ids_that_could_be_taken_for_another_file_are_hashed(proposal_id: str) -> None:
    stems = file_stems(["P-1", proposal_id])
    assert stems["P-1"] == "P-1"
    assert stems[proposal_id] == hashed(proposal_id, proposal_id)


def test_ids_equal_but_for_case_are_both_hashed() -> None:
    assert file_stems(["Lot7", "lot7", "P-1"]) == {
        "Lot7": hashed("Lot7", "Lot7"),
        "lot7": hashed("lot7", "lot7"),
        "P-1": "P-1",
    }


def test_long_ids_are_cut_and_hashed() -> None:
    long_id = "A" * 300
    stem = file_stems([long_id])[long_id]
    assert stem == hashed("A" * MAX_STEM, long_id)
    assert len(stem) == MAX_STEM + 11
    assert sanitise("..hidden..") == "hidden"


def test_timeline_and_page_files_map_back_to_their_ids(tmp_path: Path) -> None:
    stems = file_stems(["Lot 7/A", "P-1"])
    paths = [
        tmp_path / f"{stems['Lot 7/A']}.pdf",
        tmp_path / f"{stems['Lot 7/A']}_key.png",
        tmp_path / f"{stems['Lot 7/A']}_sheet-3.png",
        timeline_path(tmp_path, "Lot 7/A", stems=stems),
        tmp_path / "P-1.png",
        tmp_path / "findings.gpkg",
        tmp_path / "webmap.html",
    ]
    assert files_by_id(stems, paths) == {
        "Lot 7/A": [p.name for p in paths[:4]],
        "P-1": ["P-1.png"],
    }


def test_check_writes_one_sheet_per_proposal_and_an_index(tmp_path: Path) -> None:
    """`Lot 7/A` and `Lot 7 A` no longer write one sheet over the other, and a proposal
    named `calcsheet` no longer replaces the calculation sheet."""
    frames = proposal_frames()
    ids = ["Lot 7/A", "Lot 7 A", "calcsheet"]
    disturbance = gpd.GeoDataFrame(
        {
            "proposal_id": ids,
            "disturbance_id": ["L-1", "L-2", "L-3"],
            "start_date": ["2026-05-01"] * 3,
            "end_date": ["2026-08-01"] * 3,
        },
        geometry=[box(10, 10, 20, 10), box(40, 40, 20, 10), box(150, 40, 20, 10)],
        crs=CRS,
    )
    devices = frames["devices"].assign(proposal_id=["Lot 7/A"])
    attributes = gpd.GeoDataFrame(
        frames["proposals"].iloc[[0, 0, 1]].assign(proposal_id=ids).reset_index(drop=True),
        geometry=gpd.GeoSeries([None] * 3, crs=CRS),
    )
    inputs = write_town(
        tmp_path,
        proposals={"disturbance": disturbance, "devices": devices, "proposals": attributes},
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        [
            *("check", str(inputs.proposals), "--layers", str(inputs.layers)),
            *("--out", str(out), "--map", "pdf", "--select", "SW101"),
        ],
    )
    assert result.exit_code == 0, result.output
    stems = {pid: hashed(sanitise(pid), pid) for pid in ids}
    assert len(set(stems.values())) == 3
    names = {p.name for p in out.iterdir()}
    for stem in stems.values():  # each application's files in a folder named by its stem
        assert stem in names
        assert {f"{stem}.pdf", f"timeline_{stem}.png"} <= {p.name for p in (out / stem).iterdir()}
    assert "calcsheet.csv" in names
    with (out / "index.csv").open(encoding="utf-8-sig") as handle:
        index = {row["proposal_id"]: row for row in csv.DictReader(handle)}
    assert set(index) == set(ids)
    for pid, stem in stems.items():
        assert index[pid]["file_stem"] == stem
        assert index[pid]["files"] == f"{stem}/{stem}.pdf;{stem}/timeline_{stem}.png"
    pages = [str(p.relative_to(out)) for p in out.rglob("*.pdf")]
    assert sorted(pages) == sorted(
        [f"{s}/{s}.pdf" for s in stems.values()]
        + [f"{s}/report.pdf" for s in stems.values()]
        + ["calcsheet.pdf"]
    )
    calc = pypdf.PdfReader(out / "calcsheet.pdf")
    assert len(calc.pages) == 3  # one page per proposal, none of them a map sheet
    assert "Runoff calculation sheet: proposal calcsheet" in calc.pages[2].extract_text()


def test_sheet_names_of_non_latin_ids_do_not_clash(tmp_path: Path) -> None:
    from gis_sw.layers.build import make_proposals
    from gis_sw.outputs.maps.sheets import sheet_paths

    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ["東京", "大阪"]},
        geometry=[shapely.box(0, 0, 50, 50), shapely.box(500, 0, 550, 50)],
        crs=CRS,
    )
    proposals = make_proposals(CRS, disturbance)
    findings = gpd.GeoDataFrame({"proposal_id": []}, geometry=[], crs=CRS)
    from gis_sw.layers.build import make_layerset

    town = Town(make_layerset(CRS, {}), load_ruleset())
    paths = sheet_paths(tmp_path, Screening(town, proposals, findings), formats=("pdf",))
    assert sorted(p.name for p in paths) == sorted(
        [hashed("proposal", "東京") + ".pdf", hashed("proposal", "大阪") + ".pdf"]
    )
