"""The Screening holds what the outputs draw, computed only when an output asks for it
(issue 15 items 1-2; issue 14: no per-proposal drawing for ``--map none``), and docs/api.md's
examples run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gis_sw
from gis_sw.analysis.phasing import proposal_timeline
from gis_sw.outputs.report import write_check_outputs

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
P07 = "P07-commercial-phased-7ac"
P09 = "P09-lot-line-devices"


@pytest.fixture(scope="module")
def town() -> gis_sw.Town:
    return gis_sw.read_town(SAMPLE / "layers.toml")


@pytest.fixture(scope="module")
def proposals(town: gis_sw.Town):
    return gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset)


def test_check_without_maps_computes_no_drawing(town, proposals, tmp_path: Path) -> None:
    screening = town.screen(proposals.subset([P07, P09]))
    assert screening.computed == frozenset()  # screening computes the findings only
    written = write_check_outputs(tmp_path, screening)
    names = sorted(str(p.relative_to(tmp_path)) for p in written)
    assert names == [
        "calcsheet.csv",
        "findings.geojson",
        "findings.gpkg",
        "findings_lines.geojson",
        "findings_points.geojson",
        "summary.csv",
        "summary.xlsx",
    ]
    assert screening.computed == {"calc_sheet"}  # no timeline, no siting, for --map none


def test_maps_draw_what_the_screening_holds(town, proposals, tmp_path: Path) -> None:
    screening = town.screen(proposals.subset([P07]))
    written = write_check_outputs(tmp_path, screening, maps=("png",))
    assert tmp_path / P07 / f"timeline_{P07}.png" in written
    assert tmp_path / "webmap.html" in written
    assert {"timeline", "device_siting", "calc_sheet"} <= screening.computed
    # the chart's timeline is the phasing analysis of the same proposal
    expected = proposal_timeline(proposals, P07)
    assert expected is not None
    assert screening.timeline(P07) is screening.timeline(P07)  # computed once, kept
    assert screening.timeline(P07).days == expected.days
    assert round(max(screening.timeline(P07).acres), 2) == 5.50
    assert set(screening.timelines) == {P07}


def test_siting_is_computed_when_first_read(town, proposals) -> None:
    screening = town.screen(proposals.subset([P09]))
    assert "siting" not in screening.computed
    roof = screening.siting["roof"]
    assert "siting" in screening.computed
    assert list(roof["parcel_id"]) == town.parcels_under(
        proposals.subset([P09]).devices.geometry.to_numpy()
    )
    assert town.screen(proposals.subset([P09]), siting=False).siting == {}
    assert town.screen(proposals.subset([P09]), siting=False).device_siting() is None


def test_the_screening_is_frozen_and_of_its_own_town(town, proposals, tmp_path: Path) -> None:
    screening = town.screen(proposals.subset([P09]), select=["SW205"])
    with pytest.raises(AttributeError):
        screening.findings = None  # type: ignore[misc]
    other = gis_sw.Town(town.layers, town.ruleset)
    with pytest.raises(ValueError, match="another town"):
        write_check_outputs(tmp_path, screening, town=other)
    assert list(tmp_path.iterdir()) == []


def test_every_docs_api_example_runs(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    # the first example is ```python (tests/test_api.py runs it alone), the second ```py
    blocks = re.findall(r"```py(?:thon)?\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == 2
    monkeypatch.chdir(ROOT)
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f"docs/api.md block {number}", "exec"), {})
    out = capsys.readouterr().out
    assert "peak disturbed area 5.50 acres" in out
