"""`gis-sw serve`'s exports of findings and of the sheet PDF, through Starlette's TestClient.

The proposal is the one of tests/test_serve_api.py: a 40 x 40 ft disturbance on parcel
0.0-1-2 of data/sample and one device 9 ft from the lot's west line (SW205 fails).  What the
exports hold is compared with what `gis-sw check`'s own path gives for the GeoPackage the
app exports of the same document: read back, screened by run_rules on the whole town.
"""

from __future__ import annotations

import io
import warnings
import zipfile
from pathlib import Path

import pandas as pd
import pyogrio
import pypdf
import pytest

from gis_sw.analysis.engine import run_rules
from gis_sw.api import read_town
from gis_sw.layers.build import make_proposals
from gis_sw.layers.read import read_proposals
from gis_sw.serve import app as serve_app
from tests.test_serve_api import WEST, document

pytest.importorskip("httpx")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


@pytest.fixture(scope="module")
def town():
    return read_town(SAMPLE / "layers.toml")


@pytest.fixture(scope="module")
def client(town):
    return TestClient(serve_app.create_app(town), base_url="http://127.0.0.1")


@pytest.fixture(scope="module")
def expected(client, town, tmp_path_factory):
    """The findings `gis-sw check` gives for the exported proposal, on the whole town."""
    body = client.post("/api/export", params={"format": "gpkg"}, json=document(WEST + 9.0))
    assert body.status_code == 200
    path = tmp_path_factory.mktemp("export") / "P-live.gpkg"
    path.write_bytes(body.content)
    proposals = read_proposals(path, ruleset=town.ruleset)
    return run_rules(town.layers, proposals, town.ruleset)


def test_findings_csv_is_the_summary_of_the_check(client, expected):
    response = client.post(
        "/api/export/findings", params={"format": "csv"}, json=document(WEST + 9.0)
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    assert 'filename="P-live-findings.csv"' in response.headers["content-disposition"]
    table = pd.read_csv(io.BytesIO(response.content), keep_default_na=False)
    assert len(table) == len(expected)
    got = list(zip(table["rule_id"], table["subject_id"], table["outcome"], strict=True))
    want = list(zip(expected["rule_id"], expected["subject_id"], expected["outcome"], strict=True))
    assert got == want
    assert list(table["message"]) == list(expected["message"])
    sw205 = table[table["rule_id"] == "SW205"].iloc[0]
    assert sw205["outcome"] == "fail"
    assert float(sw205["measured"]) == pytest.approx(9.0, abs=0.01)
    assert float(sw205["threshold"]) == 10.0


def test_findings_csv_moves_with_the_device(client):
    response = client.post(
        "/api/export/findings", params={"format": "csv"}, json=document(WEST + 10.01)
    )
    table = pd.read_csv(io.BytesIO(response.content), keep_default_na=False)
    sw205 = table[table["rule_id"] == "SW205"].iloc[0]
    assert sw205["outcome"] == "pass"
    assert float(sw205["measured"]) == pytest.approx(10.01, abs=0.01)


def test_findings_geojson_is_the_three_files_check_writes(client, expected, tmp_path):
    response = client.post(
        "/api/export/findings", params={"format": "geojson"}, json=document(WEST + 9.0)
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/zip"
    assert 'filename="P-live-findings-geojson.zip"' in response.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = sorted(archive.namelist())
        archive.extractall(tmp_path)
    assert names == ["findings.geojson", "findings_lines.geojson", "findings_points.geojson"]
    frames = [pyogrio.read_dataframe(tmp_path / n) for n in names]
    assert sum(len(f) for f in frames) == len(expected)
    lines = frames[1]
    sw205 = lines[lines["rule_id"] == "SW205"].iloc[0]
    assert sw205["outcome"] == "fail"
    assert sw205["measured"] == pytest.approx(9.0, abs=0.01)
    assert str(frames[0].crs) == "EPSG:4326"


def test_sheet_pdf_of_the_edited_proposal(client, expected):
    response = client.post("/api/export/sheet", json=document(WEST + 9.0))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/pdf"
    assert 'filename="P-live.pdf"' in response.headers["content-disposition"]
    assert response.content.startswith(b"%PDF")
    reader = pypdf.PdfReader(io.BytesIO(response.content))
    # the far SW103 geometry makes it a key map and one sheet, as `gis-sw check` draws it
    key, sheet = (page.extract_text() for page in reader.pages)
    assert "Key map, page 1 of 2" in key
    assert "Proposal: P-live" in key
    assert "Parcels: 0.0-1-2" in key
    assert "SW205 9.0 ft < 10 ft" in sheet
    counts = expected["outcome"].value_counts()
    order = ("fail", "review", "required", "info", "pass")
    tally = ", ".join(f"{counts[o]} {o}" for o in order if o in counts)
    assert counts["fail"] == 1
    assert f"Findings: {tally}" in sheet


def test_sheet_refused_beyond_the_page_limit(client, monkeypatch):
    monkeypatch.setattr(serve_app, "MAX_SHEET_PAGES", 0)
    response = client.post("/api/export/sheet", json=document(WEST + 9.0))
    assert response.status_code == 400
    message = response.json()["error"]
    assert message.startswith("the sheets of P-live would run to 2 pages; the page draws at most 0")
    assert "gis-sw-" not in message
    assert "/tmp" not in message


def test_one_sheet_at_a_time(client):
    routes = client.app.state.gis_sw
    assert routes._drawing.acquire(blocking=False)
    try:
        response = client.post("/api/export/sheet", json=document(WEST + 9.0))
    finally:
        routes._drawing.release()
    assert response.status_code == 503
    assert "another sheet is being drawn" in response.json()["error"]


def test_bad_export_requests(client):
    doc = document(WEST + 9.0)
    xlsx = client.post("/api/export/findings", params={"format": "xlsx"}, json=doc)
    assert xlsx.status_code == 400
    assert xlsx.json()["error"] == "format must be csv or geojson."
    broken = client.post("/api/export/findings", params={"format": "csv"}, content=b"{not json")
    assert broken.status_code == 400
    assert broken.json()["error"].startswith("the body is not JSON")
    doc["features"][1]["geometry"] = {"type": "Point", "coordinates": [200.0, 41.0]}
    far = client.post("/api/export/sheet", json=doc)
    assert far.status_code == 400
    assert "longitude" in far.json()["error"]
    big = client.post(
        "/api/export/sheet",
        content=b" " * (serve_app.MAX_DOCUMENT_BYTES + 1),
        headers={"Content-Type": "application/json"},
    )
    assert big.status_code == 413


@pytest.mark.parametrize("steps", [(9.99, 10.0, 10.01, 9.99)])
def test_a_drag_gives_the_findings_of_a_fresh_check(town, steps):
    """Successive re-checks of one document with the device moved (the remembered proposal
    without its devices, the remembered nearest features) give what run_rules gives on the
    whole town for the same proposal built afresh."""
    from gis_sw.analysis.findings import FINDING_COLUMNS
    from gis_sw.serve.codec import parse_document

    for d in steps:
        proposals = parse_document(document(WEST + d), town.ruleset)
        live = town.screen(proposals, siting=False).findings
        fresh = make_proposals(
            town.crs,
            proposals.disturbance.copy(),
            proposals.devices.copy(),
            proposals.attributes.reset_index(),
            source="<page>",
        )
        whole = run_rules(town.layers, fresh, town.ruleset)
        pd.testing.assert_frame_equal(live, whole[list(FINDING_COLUMNS)])
        sw205 = live[live["rule_id"] == "SW205"].iloc[0]
        assert sw205["outcome"] == ("fail" if d < 10.0 else "pass")
        assert sw205["measured"] == pytest.approx(d, abs=0.005)
