"""`gis-sw check` and `gis-sw rules` end to end on a tiny town written to GeoPackages."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import geopandas as gpd
import pytest
from click.testing import CliRunner
from pyproj import Transformer
from shapely.geometry import box

from gis_sw.cli import cli

CRS = "EPSG:2260"
X0, Y0 = Transformer.from_crs("EPSG:4326", CRS, always_xy=True).transform(-73.79, 41.11)


def write_town(folder: Path) -> Path:
    town = folder / "town.gpkg"
    lots = [box(X0, Y0, X0 + 100, Y0 + 100), box(X0 + 100, Y0, X0 + 300, Y0 + 100)]
    gpd.GeoDataFrame({"parcel_id": ["A", "B"]}, geometry=lots, crs=CRS).to_file(
        town, layer="parcels"
    )
    gpd.GeoDataFrame({"zone": ["R-10", "R-20"]}, geometry=lots, crs=CRS).to_file(
        town, layer="zoning"
    )
    for kind in ("wetlands", "water_bodies", "floodplain"):
        far = box(X0 + 5000, Y0, X0 + 5100, Y0 + 100)
        gpd.GeoDataFrame({"name": [kind]}, geometry=[far], crs=CRS).to_file(town, layer=kind)
    return town


def write_proposals(folder: Path, *, crs: str = CRS, name: str = "proposals.gpkg") -> Path:
    path = folder / name
    shapes = [box(X0 + 86.6, Y0, X0 + 100, Y0 + 10), box(X0 + 150, Y0, X0 + 170, Y0 + 10)]
    disturbance = gpd.GeoDataFrame({"proposal_id": ["P-1", "P-2"]}, geometry=shapes, crs=CRS)
    disturbance.to_crs(crs).to_file(path, layer="disturbance")
    attributes = gpd.GeoDataFrame(
        {
            "proposal_id": ["P-1", "P-2"],
            "land_use": ["single_family", "single_family"],
            "part_of_larger_plan": ["no", "no"],
            "discharges_to_impaired_water": ["no", "no"],
            "construction_cost_usd": [20_000.0, 5_000.0],
        },
        geometry=gpd.GeoSeries([None, None], crs=CRS),
    )
    attributes.to_file(path, layer="proposals")
    return path


@pytest.fixture(scope="module")
def town(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("town")
    return write_town(folder), write_proposals(folder)


def run(*args: str) -> object:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def summary(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with (out / "summary.csv").open(encoding="utf-8-sig") as handle:
        return {(r["rule_id"], r["subject_id"]): r for r in csv.DictReader(handle)}


def test_check_writes_outputs_and_exits_0(town: tuple[Path, Path], tmp_path: Path) -> None:
    layers, proposals = town
    out = tmp_path / "out"
    result = run(
        "check",
        *(str(proposals), "--layers", str(layers), "--out", str(out), "--select", "SW1"),
        "--details",
    )
    assert result.exit_code == 0, result.output
    # --map defaults to both: a PDF and a PNG sheet per proposal and the web map; --report
    # too: a folder per application with its report.pdf, and index.html
    # every per-application file in the application's own folder
    assert sorted(p.name for p in (out / "P-1").iterdir()) == ["P-1.pdf", "P-1.png", "report.pdf"]
    assert sorted(p.name for p in out.iterdir()) == [
        "P-1",
        "P-2",
        "calcsheet.csv",
        "calcsheet.pdf",
        "findings.geojson",
        "findings.gpkg",
        "findings_lines.geojson",
        "findings_points.geojson",
        "index.csv",  # proposal id to its files (outputs/names.py)
        "index.html",  # one row per application, linking its report
        "summary.csv",
        "summary.xlsx",
        "webmap.html",
    ]
    rows = summary(out)
    assert rows["SW101", "P-1"]["outcome"] == "required"
    assert float(rows["SW101", "P-1"]["measured"]) == 134.0
    assert rows["SW101", "P-2"]["outcome"] == "pass"
    assert float(rows["SW105", "P-1"]["measured"]) == 250.0  # $150 + 0.5% of $20,000
    assert rows["SW106", "P-1:wetlands"]["outcome"] == "pass"
    line = next(x for x in result.stdout.splitlines() if x.startswith("SW101  P-1 "))
    assert line.split() == [
        "SW101",
        "P-1",
        "(proposal)",
        "required",
        "134",
        "sq",
        "ft",
        "100",
        "sq",
        "ft",
        "§",
        "183-12A",
    ]
    assert "Disturbance" not in result.stderr
    assert (
        "SW101 P-1 required: Disturbance of 134 sq ft inside zone R-10 reaches the 100 sq ft "
        "threshold: a stormwater management control permit is required (§ 183-12A)."
    ) in result.stdout.splitlines()

    again = run("check", str(proposals), "--layers", str(layers), "--out", str(out))
    assert again.exit_code == 2
    assert again.stderr.strip().splitlines() == [
        (
            f"gis-sw: error: output {out / 'findings.geojson'} already exists. Fix: pass "
            "--overwrite to replace it, or choose another --out folder."
        )
    ]
    replaced = run(
        "check",
        str(proposals),
        "--layers",
        str(layers),
        "--out",
        str(out),
        "--overwrite",
        "--select",
        "SW1",
    )
    assert replaced.exit_code == 0


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [
        pytest.param("fail", 0, id="fail-none-failed"),
        pytest.param("review", 0, id="review-nothing-under-review"),
        pytest.param("required", 1, id="required-permit-is-required"),
        pytest.param("never", 0, id="never"),
    ],
)
def test_fail_on(town: tuple[Path, Path], fail_on: str, code: int) -> None:
    layers, proposals = town
    result = run(
        "check", str(proposals), "--layers", str(layers), "--select", "SW101", "--fail-on", fail_on
    )
    assert result.exit_code == code, result.output
    if code:
        assert "1 finding(s) reach --fail-on required" in result.stderr


def test_waiver_clears_fail_on_and_stays_visible(town: tuple[Path, Path], tmp_path: Path) -> None:
    layers, proposals = town
    waivers = tmp_path / "waivers.toml"
    waivers.write_text(
        '[[waiver]]\nrule_id = "SW101"\nsubject_id = "P-1"\nreason = "Permit SW-2026-14 issued"\n\n'
        '[[waiver]]\nrule_id = "SW101"\nsubject_id = "P-2"\nreason = "old"\nexpires = 2020-01-01\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = [
        "check",
        str(proposals),
        "--layers",
        str(layers),
        "--select",
        "SW101",
        "--fail-on",
        "required",
    ]
    result = run(*args, "--waivers", str(waivers), "--out", str(out))
    assert result.exit_code == 0, result.output
    rows = summary(out)
    assert (rows["SW101", "P-1"]["waived"], rows["SW101", "P-1"]["waiver_reason"]) == (
        "True",
        "Permit SW-2026-14 issued",
    )
    assert "REQUIRED SW101 (waived): 134 sq ft against 100 sq ft" in result.stdout
    features = json.loads((out / "findings.geojson").read_text(encoding="utf-8"))["features"]
    waived = {f["properties"]["subject_id"]: f["properties"]["waived"] for f in features}
    assert waived == {"P-1": True, "P-2": False}
    gpkg = gpd.read_file(out / "findings.gpkg", layer="findings_polygons")
    assert gpkg.set_index("subject_id").loc["P-1", "waiver_reason"] == "Permit SW-2026-14 issued"
    assert "expired on 2020-01-01 and was not applied" in result.stderr
    with (out / "waivers.csv").open(encoding="utf-8-sig") as handle:
        assert [r["status"] for r in csv.DictReader(handle)] == ["applied", "expired"]


def test_same_answer_from_epsg_4326_file(town: tuple[Path, Path], tmp_path: Path) -> None:
    layers, _ = town
    lonlat = write_proposals(tmp_path, crs="EPSG:4326", name="lonlat.gpkg")
    out = tmp_path / "out"
    result = run(
        "check", str(lonlat), "--layers", str(layers), "--out", str(out), "--select", "SW101"
    )
    assert result.exit_code == 0, result.output
    rows = summary(out)
    assert round(float(rows["SW101", "P-1"]["measured"])) == 134
    assert round(float(rows["SW101", "P-2"]["measured"])) == 200


@pytest.mark.parametrize(
    ("args", "text"),
    [
        pytest.param(["missing.gpkg"], "no such proposals file", id="missing-proposals"),
        pytest.param(["--select", "SW999"], "'SW999' matches no rule id", id="unknown-rule"),
        pytest.param(
            ["--ruleset", "nowhere"], "is neither a packaged ruleset", id="unknown-ruleset"
        ),
    ],
)
def test_bad_input_exits_2(town: tuple[Path, Path], args: list[str], text: str) -> None:
    layers, proposals = town
    target = args[0] if args[0].endswith(".gpkg") else str(proposals)
    extra = args[1:] if args[0].endswith(".gpkg") else args
    result = run("check", target, "--layers", str(layers), *extra)
    assert result.exit_code == 2
    assert text in result.stderr
    assert "Traceback" not in result.stderr


def test_rules_table_and_markdown() -> None:
    plain = run("rules")
    assert plain.exit_code == 0
    lines = plain.stdout.splitlines()
    assert lines[0].split() == ["ID", "CITATION", "TITLE"]
    assert lines[1].startswith("SW101  § 183-12A")
    assert "[not town law]" in next(x for x in lines if x.startswith("SW210"))
    markdown = run("rules", "--markdown")
    assert markdown.stdout.splitlines()[:3] == [
        "| id | citation | title |",
        "|---|---|---|",
        "| SW101 | § 183-12A | Town stormwater management control permit threshold |",
    ]


def test_an_existing_later_output_stops_the_run_before_anything_is_written(
    town: tuple[Path, Path], tmp_path: Path
) -> None:
    layers, proposals = town
    out = tmp_path / "out"
    out.mkdir()
    (out / "calcsheet.csv").write_text("an engineer's edited copy\n")
    result = run("check", str(proposals), "--layers", str(layers), "--out", str(out))
    assert result.exit_code == 2
    assert "calcsheet.csv already exists" in result.output
    assert [p.name for p in out.iterdir()] == ["calcsheet.csv"]
    assert (out / "calcsheet.csv").read_text() == "an engineer's edited copy\n"
