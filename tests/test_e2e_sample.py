"""End to end on data/sample: `gis-sw check` gives every SW1xx outcome expected.csv states.

expected.csv leaves ``subject_id`` blank for a finding about the whole proposal; the
checks name such a subject by the proposal id, and a part of a proposal as
``<proposal_id>:<part>`` (``P06-subdivision-1.5ac:condition-C``).
"""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gis_sw.analysis.findings import FINDING_COLUMNS
from gis_sw.cli import cli

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"

pytestmark = pytest.mark.skipif(
    not (SAMPLE / "expected.csv").exists(), reason="data/sample has not been generated"
)


def expected_rows(prefix: str) -> list[dict[str, str]]:
    with (SAMPLE / "expected.csv").open(encoding="utf-8") as handle:
        return [r for r in csv.DictReader(handle) if r["rule_id"].startswith(prefix)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    out = tmp_path_factory.mktemp("sample") / "out"
    result = CliRunner().invoke(
        cli,
        [
            "check",
            str(SAMPLE / "proposals.gpkg"),
            "--layers",
            str(SAMPLE / "layers.toml"),
            "--out",
            str(out),
        ],
        catch_exceptions=False,
    )
    return result, out


@pytest.fixture(scope="module")
def outcomes(run: tuple[Any, Path]) -> dict[tuple[str, str, str], str]:
    _, out = run
    with (out / "summary.csv").open(encoding="utf-8-sig") as handle:
        return {
            (r["proposal_id"], r["rule_id"], r["subject_id"]): r["outcome"]
            for r in csv.DictReader(handle)
        }


def test_exit_code_follows_fail_on(
    run: tuple[Any, Path], outcomes: dict[tuple[str, str, str], str]
) -> None:
    result, _ = run
    failed = any(o == "fail" for o in outcomes.values())
    assert result.exit_code == (1 if failed else 0), result.stderr


@pytest.mark.parametrize(
    "row",
    expected_rows("SW1"),
    ids=lambda r: f"{r['proposal_id']}-{r['rule_id']}-{r['subject_id'] or 'proposal'}",
)
def test_sample_case(row: dict[str, str], outcomes: dict[tuple[str, str, str], str]) -> None:
    pid, rule = row["proposal_id"], row["rule_id"]
    subject = f"{pid}:{row['subject_id']}" if row["subject_id"] else pid
    assert outcomes.get((pid, rule, subject)) == row["outcome"], row["note"]


def test_findings_geojson_is_rfc7946(run: tuple[Any, Path]) -> None:
    _, out = run
    doc = json.loads((out / "findings.geojson").read_text(encoding="utf-8"))
    assert "crs" not in doc
    assert doc["features"]
    properties = set(FINDING_COLUMNS) - {"geometry"}
    for feature in doc["features"]:
        assert set(feature["properties"]) == properties
        geometry = feature["geometry"]
        if geometry is None:
            continue
        assert geometry["type"] == "MultiPolygon"
        for polygon in geometry["coordinates"]:
            outer = polygon[0]
            for lon, lat in outer:
                assert -180.0 <= lon <= 180.0
                assert -90.0 <= lat <= 90.0
            signed = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in itertools.pairwise(outer))
            assert signed > 0  # counter-clockwise
            for hole in polygon[1:]:
                assert sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in itertools.pairwise(hole)) < 0
    for name in ("findings_lines.geojson", "findings_points.geojson"):
        other = json.loads((out / name).read_text(encoding="utf-8"))
        assert "crs" not in other
        assert all(set(f["properties"]) == properties for f in other["features"])
