"""`gis-sw serve`'s endpoints through Starlette's TestClient, on the sample town.

The lot used throughout is parcel 0.0-1-2 of data/sample: a rectangle from x 683122.5 to
683220.42 and y 825025 to 825225 (EPSG:2260, ft).  A device at x = 683122.5 + d, y = 825125
is d ft from its west line and farther from the others.
"""

from __future__ import annotations

import io
import json
import re
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pytest
import shapely
from pyproj import Transformer

from gis_sw.analysis.engine import run_rules
from gis_sw.analysis.siting import siting_polygons
from gis_sw.api import read_town
from gis_sw.layers.read import read_proposals
from gis_sw.serve import app as serve_app

pytest.importorskip("httpx")
with warnings.catch_warnings():  # starlette suggests httpx2; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
LOT = "0.0-1-2"
WEST, SOUTH, EAST, NORTH = 683122.5, 825025.0, 683220.42, 825225.0
MID_Y = 825125.0
TO_GEO = Transformer.from_crs("EPSG:2260", "EPSG:4326", always_xy=True)


@pytest.fixture(scope="module")
def town():
    return read_town(SAMPLE / "layers.toml")


@pytest.fixture(scope="module")
def client(town):
    return TestClient(serve_app.create_app(town), base_url="http://127.0.0.1")


def lonlat(x: float, y: float) -> list[float]:
    lon, lat = TO_GEO.transform(x, y)
    return [lon, lat]


def ring(x0: float, y0: float, x1: float, y1: float) -> list[list[float]]:
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
    return [lonlat(x, y) for x, y in corners]


def document(device_x: float, **device: object) -> dict:
    """One proposal on the lot: a 40 x 40 ft disturbance and one point device."""
    props = {"layer": "devices", "device_id": "D-1", "depth_ft": 3.0, **device}
    return {
        "type": "FeatureCollection",
        "proposal": {"proposal_id": "P-live", "land_use": "single_family"},
        "features": [
            {
                "type": "Feature",
                "properties": {"layer": "disturbance", "disturbance_id": "P-live-d1"},
                "geometry": {
                    "type": "Polygon",
                    "coordinates": [ring(WEST + 5, MID_Y - 20, WEST + 45, MID_Y + 20)],
                },
            },
            {
                "type": "Feature",
                "properties": props,
                "geometry": {"type": "Point", "coordinates": lonlat(device_x, MID_Y)},
            },
        ],
    }


def finding(body: dict, rule_id: str) -> dict:
    rows = [f for f in body["findings"] if f["rule_id"] == rule_id]
    assert len(rows) == 1, rows
    return rows[0]


# -- page and assets ---------------------------------------------------------------------------


def test_page_and_assets_are_served_with_a_strict_policy(client):
    page = client.get("/")
    assert page.status_code == 200
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert 'src="/static/leaflet.js"' in page.text
    for name, marker in (
        ("app.js", "textContent"),
        ("leaflet.js", "Leaflet 1.9.4"),
        ("geoman.js", "pm"),
        ("geoman.css", ".leaflet-pm"),
    ):
        response = client.get(f"/static/{name}")
        assert response.status_code == 200, name
        assert marker in response.text
    for name in ("../api.py", "..%2F..%2Fapi.py", "/etc/passwd", "index.html.bak"):
        assert client.get(f"/static/{name}").status_code == 404
    app_js = client.get("/static/app.js").text
    assert "innerHTML" not in app_js  # attribute text goes in as text only


def test_town_info(client, town):
    body = client.get("/api/town").json()
    west, south, east, north = body["bounds"]
    lon, lat = lonlat(WEST, MID_Y)
    assert west < lon < east
    assert south < lat < north
    assert body["land_uses"] == ["single_family", "agricultural", "other"]
    assert body["max_upload_bytes"] == serve_app.MAX_UPLOAD_BYTES == 20 * 1024 * 1024
    assert body["documents"] == []
    assert body["exemptions"]["J"] == "Home gardening"


# -- parcels -----------------------------------------------------------------------------------


def test_parcel_search_by_id_and_address(client, town):
    hits = client.get("/api/parcels/search", params={"q": LOT}).json()["features"]
    assert hits[0]["properties"]["parcel_id"] == LOT
    hits = client.get("/api/parcels/search", params={"q": "44 bedford"}).json()["features"]
    parcels = town.layers.get("parcels")
    holding = parcels["address"].str.lower().str.contains("44 bedford", regex=False)
    assert [h["properties"]["parcel_id"] for h in hits] == list(parcels.loc[holding, "parcel_id"])
    assert "44 Bedford Road" in [h["properties"]["address"] for h in hits]
    assert client.get("/api/parcels/search", params={"q": "no such"}).json()["features"] == []


def test_parcel_at_a_point_and_in_a_box(client):
    lon, lat = lonlat(WEST + 30, MID_Y)
    hits = client.get("/api/parcels/at", params={"lon": lon, "lat": lat}).json()["features"]
    assert [h["properties"]["parcel_id"] for h in hits] == [LOT]
    lon, lat = lonlat(WEST - 5000, MID_Y - 5000)  # far outside the town
    assert client.get("/api/parcels/at", params={"lon": lon, "lat": lat}).json()["features"] == []
    assert client.get("/api/parcels/at", params={"lon": "x", "lat": 1}).status_code == 400
    # a box in degrees is a slightly turned box in feet: stay 10 ft inside the lot
    w, s = lonlat(WEST + 10, SOUTH + 10)
    e, n = lonlat(EAST - 10, NORTH - 10)
    box = client.get("/api/parcels", params={"bbox": f"{w},{s},{e},{n}"}).json()
    assert [f["properties"]["parcel_id"] for f in box["features"]] == [LOT]
    assert client.get("/api/parcels", params={"bbox": "1,2,3"}).status_code == 400


def test_lot_with_its_neighbourhood(client, town):
    body = client.get(f"/api/lot/{LOT}").json()
    assert body["parcel"]["features"][0]["properties"]["parcel_id"] == LOT
    lot = town.parcel(LOT).geometry.iloc[0]
    reach = lot.buffer(town.ruleset.devices.largest_setback_ft)
    buildings = town.layers.get("buildings")
    expected = sorted(buildings.loc[buildings.intersects(reach), "building_id"].astype(str))
    got = sorted(f["properties"]["building_id"] for f in body["context"]["buildings"]["features"])
    assert got == expected
    assert got
    missing = client.get("/api/lot/no-such-lot")
    assert missing.status_code == 404
    assert "no parcel with parcel_id 'no-such-lot'" in missing.json()["error"]


# -- siting --------------------------------------------------------------------------------------


@pytest.mark.parametrize("device_class", ["roof", "vehicle"])
def test_siting_matches_the_whole_town(client, town, device_class):
    body = client.get(
        "/api/siting", params={"parcel_id": LOT, "device_class": device_class, "depth_ft": 3}
    ).json()
    whole = siting_polygons(
        town.layers, town.ruleset, parcel_ids=[LOT], device_class=device_class, depth_ft=3.0
    )
    assert body["area_sqft"] == pytest.approx(float(whole["area_sqft"].iloc[0]), abs=0.05)
    assert body["outcome"] == whole["outcome"].iloc[0]
    assert body["reason"] == whole["reason"].iloc[0]
    # the lot less its 10-ft setback is 77.92 x 180 ft: the siting area can be no larger
    assert 0 < body["area_sqft"] <= (EAST - WEST - 20) * (NORTH - SOUTH - 20)
    lines = body["setbacks"]["features"]
    lot_line = [f for f in lines if f["properties"]["rule_id"] == "SW205"]
    assert lot_line[0]["properties"]["label"] == "10 ft from the lot line"
    assert lot_line[0]["properties"]["citation"] == "§ 183-12C(2)(c)[6]"


def test_setback_line_geometry_in_feet(town):
    from gis_sw.api import setback_lines

    lines = setback_lines(town, LOT, "roof")
    inner = lines[lines["rule_id"] == "SW205"].geometry.iloc[0]
    # the 10-ft line of a 97.92 x 200 ft rectangle: 2 x (77.92 + 180) ft long
    assert inner.length == pytest.approx(2 * ((EAST - WEST - 20) + (NORTH - SOUTH - 20)), abs=0.01)
    assert list(lines.loc[lines["rule_id"] == "SW206", "subject"]) == []  # B0.0-1-2: none
    assert set(lines["rule_id"]) <= {"SW205", "SW206", "SW201"}  # no vehicle rings for roof


def test_setback_lines_around_basements(town):
    from gis_sw.api import setback_lines

    buildings = town.layers.get("buildings")
    parcels = town.layers.get("parcels")
    basement = buildings[buildings["habitable_basement"].fillna(value=True).astype(bool)]
    lot_id = str(parcels.loc[parcels.intersects(basement.geometry.iloc[0]), "parcel_id"].iloc[0])
    lot = town.parcel(lot_id).geometry.iloc[0]
    lines = setback_lines(town, lot_id, "roof")
    rows = lines[lines["rule_id"] == "SW206"]
    near = basement[basement.distance(lot) <= 20.0]
    expected = sorted(near.loc[near.buffer(20.0).boundary.intersects(lot), "building_id"])
    assert sorted(rows["subject"]) == expected
    assert expected
    first = rows.iloc[0]
    assert first["label"] == f"20 ft from building {first['subject']} (habitable basement)"
    assert first["citation"] == "§ 183-12C(2)(c)[7]"
    assert rows.geometry.within(lot.buffer(0.01)).all()


def test_siting_bad_queries(client):
    assert (
        client.get("/api/siting", params={"parcel_id": LOT, "device_class": "x"}).status_code == 400
    )
    assert client.get("/api/siting", params={"parcel_id": LOT, "depth_ft": "-1"}).status_code == 400
    assert client.get("/api/siting", params={"parcel_id": "nope"}).status_code == 404


# -- check -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("offset_ft", "outcome"),
    [(9.0, "fail"), (9.99, "fail"), (10.0, "pass"), (10.01, "pass"), (11.0, "pass")],
    ids=["9-ft-from-lot-line", "9.99-ft", "10.00-ft", "10.01-ft", "11-ft"],
)
def test_check_sw205_flips_at_10_ft(client, offset_ft, outcome):
    response = client.post("/api/check", json=document(WEST + offset_ft))
    assert response.status_code == 200, response.text
    body = response.json()
    sw205 = finding(body, "SW205")
    assert sw205["outcome"] == outcome
    assert sw205["measured"] == pytest.approx(offset_ft, abs=0.005)
    assert sw205["threshold"] == 10.0
    assert sw205["unit"] == "ft"
    assert sw205["citation"] == "§ 183-12C(2)(c)[6]"
    assert f"is {offset_ft:.2f} ft from the line of parcel {LOT}" in sw205["message"]
    assert "server-timing" in response.headers
    lines = [f for f in body["geometries"]["features"] if f["properties"]["rule_id"] == "SW205"]
    if outcome == "fail":  # the shortest line to the lot line, drawn in red on the page
        (line,) = lines
        assert line["geometry"]["type"] == "LineString"
        assert line["properties"]["outcome"] == "fail"
    else:
        assert lines == []  # a pass has the device itself as geometry: not drawn twice


def test_check_gives_the_findings_of_the_whole_town(client, town, tmp_path):
    body = client.post("/api/check", json=document(WEST + 9.0)).json()
    exported = client.post("/api/export", params={"format": "gpkg"}, json=document(WEST + 9.0))
    assert exported.status_code == 200
    assert 'filename="P-live.gpkg"' in exported.headers["content-disposition"]
    path = tmp_path / "P-live.gpkg"
    path.write_bytes(exported.content)
    proposals = read_proposals(path, ruleset=town.ruleset)
    whole = run_rules(town.layers, proposals, town.ruleset)
    got = [(f["rule_id"], f["subject_id"], f["outcome"], f["measured"]) for f in body["findings"]]
    want = [
        (r.rule_id, r.subject_id, r.outcome, None if np.isnan(r.measured) else round(r.measured, 2))
        for r in whole.itertuples()
    ]
    assert got == want
    assert [f["message"] for f in body["findings"]] == list(whole["message"])


def test_export_geojson_is_the_disturbance_check_reads(client, town, tmp_path):
    response = client.post("/api/export", params={"format": "geojson"}, json=document(WEST + 9.0))
    assert response.status_code == 200
    path = tmp_path / "P-live.geojson"
    path.write_bytes(response.content)
    proposals = read_proposals(path, ruleset=town.ruleset)
    assert proposals.ids == ["P-live"]
    assert proposals.attributes.loc["P-live", "land_use"] == "single_family"
    assert float(proposals.disturbance.area.iloc[0]) == pytest.approx(1600.0, abs=0.01)
    assert client.post("/api/export", params={"format": "shp"}, json=document(1)).status_code == 400


def test_hostile_text_comes_back_as_text(client):
    evil = '<img src=x onerror="window.__pwned=1">'
    body = client.post("/api/check", json=document(WEST + 9.0, device_id=evil)).json()
    sw205 = finding(body, "SW205")
    assert sw205["subject_id"] == evil
    assert sw205["message"].startswith(f"Device {evil} is 9.00 ft")


def bad(client, body, status=400, **kw):
    response = (
        client.post("/api/check", content=body, **kw)
        if isinstance(body, bytes)
        else (client.post("/api/check", json=body, **kw))
    )
    assert response.status_code == status, response.text
    return response.json()["error"]


def test_malformed_bodies_get_400_with_the_reason(client):
    assert "not JSON" in bad(client, b"{nope")
    assert "not a GeoJSON FeatureCollection" in bad(client, [1, 2])
    doc = document(WEST + 9)
    doc["proposal"] = {}
    assert "proposal_id" in bad(client, doc)
    doc = document(WEST + 9)
    doc["features"][1]["properties"]["layer"] = "wells"
    assert "feature 2 (D-1): properties.layer is 'wells'" in bad(client, doc)
    doc = document(WEST + 9)
    doc["features"][0]["geometry"]["coordinates"] = [[[0, 0], [1, 1]]]
    assert "feature 1 (P-live-d1): the geometry is not valid GeoJSON" in bad(client, doc)
    doc = document(WEST + 9)
    doc["features"][1]["geometry"] = {"type": "Point", "coordinates": [500.0, 41.0]}
    assert "longitude" in bad(client, doc)
    doc = document(WEST + 9)
    doc["features"][1]["geometry"] = {"type": "Point", "coordinates": ["a", "b"]}
    assert "feature 2 (D-1)" in bad(client, doc)
    doc = document(WEST + 9)
    doc["features"][0]["geometry"] = {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}
    assert "a LineString geometry cannot be a disturbance feature" in bad(client, doc)
    doc = document(WEST + 9)
    doc["features"][1]["properties"]["depth_ft"] = "deep"
    assert "depth_ft" in bad(client, doc)
    far = document(WEST + 9)
    for f in far["features"]:  # the same shapes moved 60 miles east
        f["geometry"]["coordinates"] = json.loads(
            json.dumps(f["geometry"]["coordinates"]).replace("-73.", "-72.")
        )
    assert "outside the town's layers" in bad(client, far)
    assert "limit" in bad(client, b" " * (serve_app.MAX_DOCUMENT_BYTES + 1), status=413)
    assert client.get("/api/town").status_code == 200  # still serving


# -- upload --------------------------------------------------------------------------------------


def upload(client, name: str, data: bytes):
    return client.post("/api/upload", params={"filename": name}, content=data)


def test_upload_the_sample_proposals(client, town):
    response = upload(client, "proposals.gpkg", (SAMPLE / "proposals.gpkg").read_bytes())
    assert response.status_code == 200, response.text
    docs = response.json()["documents"]
    in_file = read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset).ids
    assert [d["proposal"]["proposal_id"] for d in docs] == in_file
    p09 = next(d for d in docs if d["proposal"]["proposal_id"] == "P09-lot-line-devices")
    layers = sorted({f["properties"]["layer"] for f in p09["features"]})
    assert layers == ["devices", "disturbance"]
    check = client.post("/api/check", json=p09).json()
    # the document round trip (to degrees and back) changes no finding of the file
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset)
    whole = run_rules(town.layers, proposals.subset(["P09-lot-line-devices"]), town.ruleset)
    got = [(f["rule_id"], f["subject_id"], f["outcome"], f["message"]) for f in check["findings"]]
    assert got == list(
        zip(whole.rule_id, whole.subject_id, whole.outcome, whole.message, strict=True)
    )
    assert ("SW205", "fail") in {(f["rule_id"], f["outcome"]) for f in check["findings"]}


def no_server_path(message: str) -> None:
    assert "/tmp" not in message
    assert "gis-sw-upload" not in message
    assert not re.search(r"upload\.(gpkg|geojson)", message)


def test_bad_uploads_get_one_clear_message(client, tmp_path):
    text = upload(client, "plans.gpkg", b"this is not a geopackage").json()["error"]
    assert text.startswith("plans.gpkg")
    no_server_path(text)
    text = upload(client, "notes.txt", b"hello").json()["error"]
    assert "a .txt file cannot be read as proposals" in text
    text = upload(client, "../../etc/passwd.gpkg", b"x").json()["error"]
    assert "passwd.gpkg" in text
    assert "/etc" not in text
    no_server_path(text)
    assert "empty" in upload(client, "empty.gpkg", b"").json()["error"]
    # no CRS
    frame = gpd.GeoDataFrame(
        {"proposal_id": ["P-x"]},
        geometry=[shapely.box(WEST + 5, SOUTH + 5, WEST + 40, SOUTH + 40)],
        crs=None,
    )
    nocrs = tmp_path / "nocrs.gpkg"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "crs was not provided": the point
        pyogrio.write_dataframe(frame, nocrs, layer="disturbance", driver="GPKG")
    response = upload(client, "nocrs.gpkg", nocrs.read_bytes())
    assert response.status_code == 400
    text = response.json()["error"]
    assert "CRS" in text
    assert "nocrs.gpkg" in text
    no_server_path(text)
    # outside the town: the right CRS, far away
    outside = frame.set_crs("EPSG:2260").translate(xoff=40_000)
    buffer = io.BytesIO()
    gpd.GeoDataFrame({"proposal_id": ["P-far"]}, geometry=outside, crs="EPSG:2260").to_file(
        buffer, driver="GeoJSON"
    )
    response = upload(client, "far.geojson", buffer.getvalue())
    assert response.status_code == 400
    assert "far.geojson lies outside the town's layers" in response.json()["error"]
    # over the limit
    response = upload(client, "huge.gpkg", b"\0" * (serve_app.MAX_UPLOAD_BYTES + 1))
    assert response.status_code == 413
    assert f"{serve_app.MAX_UPLOAD_BYTES:,} bytes" in response.json()["error"]
    assert client.get("/api/town").status_code == 200  # the town is still loaded


# -- the command -------------------------------------------------------------------------------


def test_serve_command_binds_locally_and_warns_for_the_network(monkeypatch):
    """The command's choices, without opening a port (uvicorn's run is replaced)."""
    import uvicorn
    from click.testing import CliRunner

    from gis_sw.cli import cli

    bound: list[tuple[str, int]] = []
    monkeypatch.setattr(
        uvicorn.Server, "run", lambda self: bound.append((self.config.host, self.config.port))
    )
    layers = str(SAMPLE / "layers.toml")
    result = CliRunner().invoke(cli, ["serve", "--layers", layers])
    assert result.exit_code == 0, result.output
    assert bound == [("127.0.0.1", 8765)]
    assert "warning" not in result.stderr
    result = CliRunner().invoke(
        cli, ["serve", "--layers", layers, "--host", "0.0.0.0", "--port", "9000"]
    )
    assert result.exit_code == 0, result.output
    assert bound[-1] == ("0.0.0.0", 9000)
    assert "warning: listening on 0.0.0.0: anyone who can reach this machine" in result.stderr
    result = CliRunner().invoke(cli, ["serve", "--layers", "no/such/layers.toml"])
    assert result.exit_code == 2
    assert "no/such/layers.toml" in result.stderr


def test_proposals_given_at_start_are_in_the_page(town):
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset)
    client = TestClient(
        serve_app.create_app(town, proposals=proposals.subset(["P09-lot-line-devices"])),
        base_url="http://127.0.0.1",
    )
    (doc,) = client.get("/api/town").json()["documents"]
    assert doc["proposal"]["proposal_id"] == "P09-lot-line-devices"
    devices = [f for f in doc["features"] if f["properties"]["layer"] == "devices"]
    assert sorted(f["properties"]["device_id"] for f in devices) == sorted(
        proposals.subset(["P09-lot-line-devices"]).devices["device_id"]
    )


def test_a_repeated_bad_document_is_refused_each_time(client):
    """Validated layers are remembered by their text: a bad one stays bad."""
    doc = document(WEST + 9.0)
    twin = json.loads(json.dumps(doc["features"][1]))
    twin["geometry"]["coordinates"] = lonlat(WEST + 30.0, MID_Y)
    doc["features"].append(twin)  # two devices named D-1
    for _ in range(2):
        assert "D-1" in bad(client, doc)
    doc["features"][2]["properties"]["device_id"] = "D-2"
    body = client.post("/api/check", json=doc).json()
    assert sorted(f["subject_id"] for f in body["findings"] if f["rule_id"] == "SW205") == [
        "D-1",
        "D-2",
    ]


def test_other_host_names_are_refused(client, town):
    """DNS rebinding: a page whose own name points at 127.0.0.1 gets nothing."""
    response = client.get("/api/town", headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert "bounds" not in response.text
    assert client.get("/api/town", headers={"Host": "localhost:8765"}).status_code == 200
    shared = TestClient(serve_app.create_app(town, allowed_hosts=["*"]), base_url="http://box")
    assert shared.get("/api/town").status_code == 200
