"""A state-plane GeoJSON without a ``crs`` member: GDAL says EPSG:4326, the error says what
the numbers are and how to give their CRS, and ``--crs`` reads it (issue: real town data)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from click.testing import CliRunner

from gis_sw.cli import cli

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def _file(tmp_path: Path) -> Path:
    ring = [
        [684100, 826100],
        [684180, 826100],
        [684180, 826160],
        [684100, 826160],
        [684100, 826100],
    ]
    feature = {
        "type": "Feature",
        "properties": {"proposal_id": "A-1"},
        "geometry": {"type": "Polygon", "coordinates": [ring]},
    }
    path = tmp_path / "house.geojson"  # no "crs" member, as most exporters write
    path.write_text(json.dumps({"type": "FeatureCollection", "features": [feature]}), "utf-8")
    return path


def test_projected_numbers_claimed_as_degrees_name_the_fix(tmp_path: Path) -> None:
    args = ["check", str(_file(tmp_path)), "--layers", str(SAMPLE / "layers.toml")]
    result = CliRunner().invoke(cli, [*args, "--map", "none"])
    assert result.exit_code == 2
    assert "its coordinates (684,100, 826,100) are not longitudes and latitudes" in result.stderr
    assert "--crs EPSG:2260" in result.stderr


def test_crs_option_reads_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["check", str(_file(tmp_path)), "--layers", str(SAMPLE / "layers.toml")]
    result = CliRunner().invoke(
        cli, [*args, "--crs", "EPSG:2260", "--map", "none", "--out", str(out), "--fail-on", "never"]
    )
    assert result.exit_code == 0, result.output
    with (out / "summary.csv").open(encoding="utf-8-sig") as handle:
        rows = {r["rule_id"]: r for r in csv.DictReader(handle) if r["subject_id"] == "A-1"}
    assert float(rows["SW101"]["measured"]) == 4800.0  # 80 x 60 ft
    assert rows["SW101"]["outcome"] == "required"
