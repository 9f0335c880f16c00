"""Findings outputs: RFC 7946 GeoJSON split by geometry family, GeoPackage, summary."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path
from typing import Any

import geopandas as gpd
import pyogrio
import pytest
import shapely
from pyproj import Transformer
from shapely.geometry import LineString, Point, Polygon, box

from gis_sw.analysis.engine import complete_findings
from gis_sw.analysis.findings import FINDING_COLUMNS, make_findings
from gis_sw.api import Town
from gis_sw.errors import OutputError
from gis_sw.outputs.geojson import write_findings_geojson
from gis_sw.outputs.geopackage import write_findings_geopackage
from gis_sw.outputs.summary import SUMMARY_COLUMNS, format_table, write_summary_csv
from gis_sw.ruleset import Ruleset
from gis_sw.screening import Screening

CRS = "EPSG:2260"
X0, Y0 = Transformer.from_crs("EPSG:4326", CRS, always_xy=True).transform(-73.79, 41.11)


def sample_findings(ruleset: Ruleset) -> gpd.GeoDataFrame:
    clockwise = Polygon([(X0, Y0), (X0, Y0 + 20), (X0 + 13.4, Y0 + 20), (X0 + 13.4, Y0)])
    assert not clockwise.exterior.is_ccw
    collection = shapely.GeometryCollection(
        [box(X0 + 50, Y0, X0 + 60, Y0 + 10), LineString([(X0, Y0), (X0 + 1, Y0 + 1)])]
    )
    rows = make_findings(
        "SW106",
        CRS,
        proposal_id="P-1",
        subject_id=["polygon", "line", "point", "none", "collection"],
        outcome=["required", "fail", "review", "info", "pass"],
        message=["m1", "m2", "m3", "m4", "m5"],
        measured=[268.0, 9.99, float("nan"), 1.5, 100.0],
        threshold=[0.0, 10.0, 2.0, float("nan"), 0.0],
        unit="sq ft",
        geometry=[
            clockwise,
            LineString([(X0, Y0), (X0 + 9.99, Y0)]),
            Point(X0, Y0),
            None,
            collection,
        ],
    )
    return complete_findings(rows, ruleset)


def ring_area(ring: list[list[float]]) -> float:
    """Shoelace: positive for counter-clockwise."""
    return sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in itertools.pairwise(ring)) / 2


def coordinates(geometry: dict[str, Any]) -> list[list[float]]:
    flat: list[list[float]] = []

    def walk(value: Any) -> None:
        if isinstance(value[0], int | float):
            flat.append(value)
        else:
            for item in value:
                walk(item)

    walk(geometry["coordinates"])
    return flat


def test_geojson_is_rfc7946_and_split_by_family(tmp_path: Path, ruleset: Ruleset) -> None:
    written = write_findings_geojson(tmp_path, sample_findings(ruleset))
    assert [p.name for p in written] == [
        "findings.geojson",
        "findings_lines.geojson",
        "findings_points.geojson",
    ]
    docs = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in written}
    types = {
        name: {f["geometry"]["type"] if f["geometry"] else None for f in doc["features"]}
        for name, doc in docs.items()
    }
    assert types == {
        "findings.geojson": {"MultiPolygon", None},
        "findings_lines.geojson": {"MultiLineString"},
        "findings_points.geojson": {"MultiPoint"},
    }
    subjects = {
        name: sorted(f["properties"]["subject_id"] for f in doc["features"])
        for name, doc in docs.items()
    }
    assert subjects["findings.geojson"] == ["collection", "none", "polygon"]
    for doc in docs.values():
        assert "crs" not in doc
        for feature in doc["features"]:
            assert set(feature["properties"]) == set(FINDING_COLUMNS) - {"geometry"}
            if feature["geometry"] is None:
                continue
            for lon, lat in coordinates(feature["geometry"]):
                assert -74.0 < lon < -73.5
                assert 40.9 < lat < 41.3
                assert len(repr(lon).split(".")[1]) <= 7
            if feature["geometry"]["type"] == "MultiPolygon":
                for polygon in feature["geometry"]["coordinates"]:
                    assert ring_area(polygon[0]) > 0  # outer ring counter-clockwise
    polygon = next(
        f
        for f in docs["findings.geojson"]["features"]
        if f["properties"]["subject_id"] == "polygon"
    )
    assert polygon["properties"]["measured"] == 268.0
    assert polygon["properties"]["waived"] is False
    assert polygon["properties"]["citation"] == "§ 183-12C(3)(a)[5], § 183-7D"
    point = docs["findings_points.geojson"]["features"][0]
    assert point["properties"]["measured"] is None


def test_geojson_refuses_to_overwrite(tmp_path: Path, ruleset: Ruleset) -> None:
    found = sample_findings(ruleset)
    (tmp_path / "findings_points.geojson").write_text("keep me", encoding="utf-8")
    with pytest.raises(OutputError, match="already exists"):
        write_findings_geojson(tmp_path, found)
    assert not (tmp_path / "findings.geojson").exists()  # nothing half-written
    assert (tmp_path / "findings_points.geojson").read_text(encoding="utf-8") == "keep me"
    write_findings_geojson(tmp_path, found, overwrite=True)
    assert json.loads((tmp_path / "findings_points.geojson").read_text(encoding="utf-8"))[
        "features"
    ]


def test_geopackage_layers_in_working_crs(tmp_path: Path, ruleset: Ruleset) -> None:
    path = write_findings_geopackage(tmp_path / "findings.gpkg", sample_findings(ruleset))
    layers = dict(pyogrio.list_layers(path))
    assert layers == {
        "findings": None,
        "findings_polygons": "MultiPolygon",
        "findings_lines": "MultiLineString",
        "findings_points": "MultiPoint",
    }
    table = pyogrio.read_dataframe(path, layer="findings")
    assert len(table) == 5
    polygons = gpd.read_file(path, layer="findings_polygons")
    assert polygons.crs.to_epsg() == 2260
    assert sorted(polygons["subject_id"]) == ["collection", "polygon"]
    area = polygons.set_index("subject_id").geometry.area
    assert area["polygon"] == pytest.approx(268.0)
    assert area["collection"] == pytest.approx(100.0)  # the sliver line dropped, the polygon kept
    assert set(FINDING_COLUMNS) - {"geometry"} <= set(polygons.columns)


def test_summary_csv_and_table(tmp_path: Path, ruleset: Ruleset) -> None:
    found = sample_findings(ruleset)
    path = write_summary_csv(tmp_path / "summary.csv", found)
    with path.open(encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == list(SUMMARY_COLUMNS)
    assert [r["outcome"] for r in rows] == ["fail", "review", "required", "info", "pass"]
    table = format_table(found)
    lines = table.splitlines()
    assert lines[0].split() == [
        "RULE",
        "PROPOSAL",
        "SUBJECT",
        "OUTCOME",
        "MEASURED",
        "LIMIT",
        "CITATION",
    ]
    line = next(x for x in lines if " line " in x)
    assert "§ 183-12C(3)(a)[5]" in line
    assert line.split()[3:8] == ["fail", "9.99", "sq", "ft", "10"]  # never rounded up to the limit
    assert lines[-1] == "5 findings: 1 fail, 1 review, 1 required, 1 info, 1 pass."


def test_check_outputs_refuse_before_writing_anything(tmp_path: Path, ruleset: Ruleset) -> None:
    from gis_sw.layers.build import make_layerset, make_proposals
    from gis_sw.outputs.report import write_check_outputs

    found = sample_findings(ruleset)
    proposals = make_proposals(
        CRS, gpd.GeoDataFrame({"proposal_id": ["P-1"]}, geometry=[box(0, 0, 1, 1)], crs=CRS)
    )
    layers = make_layerset(CRS, {})
    (tmp_path / "summary.csv").write_text("old", encoding="utf-8")
    screening = Screening(Town(layers, ruleset), proposals, found)
    with pytest.raises(OutputError, match=r"summary\.csv already exists"):
        write_check_outputs(tmp_path, screening)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.csv"]
    written = write_check_outputs(tmp_path, screening, overwrite=True)
    assert [p.name for p in written] == [
        "findings.geojson",
        "findings_lines.geojson",
        "findings_points.geojson",
        "findings.gpkg",
        "summary.csv",
        "summary.xlsx",  # the same findings for Excel, a sheet per application
        "calcsheet.csv",  # the runoff rules' sheet: here every line says what data is missing
    ]
    assert (
        (tmp_path / "summary.csv").read_text(encoding="utf-8-sig").startswith("proposal_id,rule_id")
    )
    # a UTF-8 byte-order mark first, so Excel shows "§" as "§" and not "Â§"
    assert (tmp_path / "summary.csv").read_bytes().startswith(b"\xef\xbb\xbfproposal_id,")
    assert not list(tmp_path.glob(".*tmp*"))  # no temporary file left behind
