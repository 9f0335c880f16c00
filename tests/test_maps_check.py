"""``gis-sw check --map``: the sheets and webmap.html next to the findings."""

from __future__ import annotations

from pathlib import Path

import pypdf
import pytest
from click.testing import CliRunner
from maps_town import proposals, town

from gis_sw.cli import cli


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    layers = tmp_path / "town.gpkg"
    for kind, frame in town().vectors.items():
        frame.to_file(layers, layer=kind, driver="GPKG")
    props = proposals()
    path = tmp_path / "proposals.gpkg"
    keep = ["P-1"]
    disturbance = props.disturbance[props.disturbance["proposal_id"].isin(keep)]
    disturbance[["proposal_id", "phase", "geometry"]].to_file(path, layer="disturbance")
    devices = props.devices[props.devices["proposal_id"].isin(keep)]
    devices[["device_id", "proposal_id", "serves_vehicle_traffic", "geometry"]].to_file(
        path, layer="devices"
    )
    return layers, path


def _check(layers: Path, path: Path, out: Path, *extra: str) -> object:
    args = ["check", str(path), "--layers", str(layers), "--out", str(out), "--fail-on", "never"]
    return CliRunner().invoke(cli, [*args, *extra])


def test_check_writes_sheets_and_webmap(inputs, tmp_path):
    layers, path = inputs
    out = tmp_path / "out"
    result = _check(layers, path, out, "--map", "pdf")
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert {"summary.csv", "findings.gpkg", "P-1", "webmap.html"} <= names
    assert "P-1.pdf" in {p.name for p in (out / "P-1").iterdir()}
    assert not (out / "P-1" / "P-1.png").exists()
    text = pypdf.PdfReader(out / "P-1" / "P-1.pdf").pages[0].extract_text()
    assert "Proposal: P-1" in text
    assert "Screening result, not a permit decision" in text


def test_check_map_none_writes_no_map(inputs, tmp_path):
    layers, path = inputs
    out = tmp_path / "out"
    result = _check(layers, path, out, "--map", "none")
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert "summary.csv" in names
    # no sheet and no web map (index.html lists the applications' reports, not a map)
    assert not [n for n in names if n.endswith((".pdf", ".png")) or n == "webmap.html"]
