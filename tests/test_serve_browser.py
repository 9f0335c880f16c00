"""`gis-sw serve` end to end in real headless Chromium (Playwright, Debian's /usr/bin/chromium).

Start the server on a free port with the sample town, choose a lot by search, draw the
limits of disturbance, place a device 9 ft from the lot line (SW205 fail shown), drag it to
11 ft (pass shown while the mouse is still down), give it a hostile id, export the
GeoPackage, the findings CSV and the sheet PDF, and `gis-sw check` the exported file: the
same findings, and the page's CSV is its summary.csv.  No request leaves
127.0.0.1 and the hostile id never runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyogrio
import pypdf
import pytest
from pyproj import Transformer
from test_webmap import CHROMIUM, CHROMIUM_ARGS

from gis_sw.api import read_proposals

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
LOT = "0.0-1-2"  # x 683122.5 to 683220.42, y 825025 to 825225 (EPSG:2260, ft)
WEST, MID_Y = 683122.5, 825125.0
EVIL = '<img src=x onerror="window.__pwned=1">'
TO_GEO = Transformer.from_crs("EPSG:2260", "EPSG:4326", always_xy=True)
GIS_SW = Path(sys.executable).with_name("gis-sw")

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [str(GIS_SW), "serve", "--layers", str(SAMPLE / "layers.toml"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    url = None
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        found = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if found:
            url = found.group(1)
            break
    if url is None:
        proc.kill()
        pytest.fail(f"gis-sw serve did not start: {proc.stderr.read() if proc.stderr else ''}")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def at(page, x_ft: float, y_ft: float) -> tuple[float, float]:
    lon, lat = TO_GEO.transform(x_ft, y_ft)
    x, y = page.evaluate("([lat, lon]) => window.gswApp.toPage(lat, lon)", [lat, lon])
    return x, y


def wait_check(page, before: int) -> dict:
    page.wait_for_function(
        "n => window.gswApp.checks > n && !window.gswApp.pending", arg=before, timeout=15000
    )
    return page.evaluate("window.gswApp.lastCheck")


def sw205(check: dict) -> dict:
    (row,) = [f for f in check["findings"] if f["rule_id"] == "SW205"]
    return row


def test_live_placement_in_chromium(server, tmp_path):
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            # Playwright's waits evaluate their predicates in the page, which the page's CSP
            # (no eval) forbids; the policy itself is asserted in test_serve_api.py, and here the
            # hostile id must stay text without its help.
            context = browser.new_context(viewport={"width": 1400, "height": 900}, bypass_csp=True)
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(server)
            page.wait_for_function("() => window.gswApp && window.gswApp.ready")

            # choose the lot by search
            page.fill("#search", LOT)
            page.press("#search", "Enter")
            page.click(f"button.result[data-parcel='{LOT}']")
            page.wait_for_function(
                "id => window.gswApp.lastSiting && window.gswApp.lastSiting.parcel_id === id",
                arg=LOT,
            )
            siting = page.evaluate("window.gswApp.lastSiting")
            assert siting["area_sqft"] > 0
            assert "sq ft" in page.inner_text("#siting")
            assert "10 ft from the lot line (§ 183-12C(2)(c)[6])" in page.inner_text("#setbacks")
            page.wait_for_timeout(300)  # the map settles on the lot

            # draw the limits of disturbance: four corners, then the first again
            page.click("#draw-disturbance")
            # the device goes inside it, as devices do: the click must place it, not select
            corners = [(5, -30), (60, -30), (60, 30), (5, 30), (5, -30)]
            for dx, dy in corners:
                page.mouse.click(*at(page, WEST + dx, MID_Y + dy))
                page.wait_for_timeout(80)
            checks = page.evaluate("window.gswApp.checks")

            # place a device 9 ft from the west lot line: SW205 fails
            page.click("#place-device")
            page.mouse.click(*at(page, WEST + 9.0, MID_Y))
            check = wait_check(page, checks)
            kinds = sorted(f["properties"]["layer"] for f in check_document(page)["features"])
            assert kinds == ["devices", "disturbance"]
            row = sw205(check)
            assert row["outcome"] == "fail"
            assert row["measured"] == pytest.approx(9.0, abs=0.5)
            page.wait_for_selector("#findings tr[data-rule='SW205'][data-outcome='fail']")
            assert "less than the 10 ft minimum" in page.inner_text("#findings")

            # drag it to 11 ft: pass is shown while the mouse is still down
            checks = page.evaluate("window.gswApp.checks")
            page.mouse.move(*at(page, WEST + 9.0, MID_Y))
            page.mouse.down()
            page.mouse.move(*at(page, WEST + 11.0, MID_Y), steps=8)
            page.wait_for_selector(
                "#findings tr[data-rule='SW205'][data-outcome='pass']", timeout=15000
            )
            page.mouse.up()
            check = wait_check(page, checks)
            row = sw205(check)
            assert row["outcome"] == "pass"
            assert row["measured"] == pytest.approx(11.0, abs=0.5)

            # a hostile id is shown as text and never runs
            checks = page.evaluate("window.gswApp.checks")
            page.fill("#feature-form input[data-field='device_id']", EVIL)
            page.press("#feature-form input[data-field='device_id']", "Tab")
            check = wait_check(page, checks)
            assert sw205(check)["subject_id"] == EVIL
            assert f"Device {EVIL} is" in page.inner_text("#findings")
            assert page.evaluate("window.__pwned === undefined")
            assert page.evaluate("document.querySelectorAll('img').length") == 0

            # export the GeoPackage
            with page.expect_download() as download:
                page.click("#export-gpkg")
            exported = tmp_path / "exported.gpkg"
            download.value.save_as(exported)
            final = page.evaluate("window.gswApp.lastCheck")

            # the findings as CSV and the sheet PDF, from the page's buttons
            with page.expect_download() as download:
                page.click("#export-findings-csv")
            findings_csv = tmp_path / download.value.suggested_filename
            download.value.save_as(findings_csv)
            with page.expect_download(timeout=60000) as download:
                page.click("#export-sheet")
            sheet_pdf = tmp_path / download.value.suggested_filename
            download.value.save_as(sheet_pdf)

            # open the sample proposals file and pick one of its proposals
            page.set_input_files("#upload", str(SAMPLE / "proposals.gpkg"))
            page.wait_for_selector("#documents-label:not([hidden])")
            in_file = read_proposals(SAMPLE / "proposals.gpkg").ids
            assert page.locator("#documents option").count() == len(in_file)
            checks = page.evaluate("window.gswApp.checks")
            value = page.evaluate(
                """() => [...document.querySelectorAll('#documents option')]
                      .find(o => o.textContent.startsWith('P09-lot-line-devices')).value"""
            )
            page.select_option("#documents", value=value)
            opened = wait_check(page, checks)
            assert opened["proposal_id"] == "P09-lot-line-devices"
            assert {"pass", "fail"} <= {
                f["outcome"] for f in opened["findings"] if f["rule_id"] == "SW205"
            }
        finally:
            browser.close()

    # `gis-sw check` of the exported file gives the findings the page showed
    out = tmp_path / "out"
    result = subprocess.run(
        [
            str(GIS_SW),
            "check",
            str(exported),
            "--layers",
            str(SAMPLE / "layers.toml"),
            "--out",
            str(out),
            "--map",
            "none",
            "--fail-on",
            "never",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    written = pyogrio.read_dataframe(out / "findings.gpkg", layer="findings", read_geometry=False)
    cli = [
        (r.rule_id, r.subject_id, r.outcome, r.message)
        for r in written.sort_values(["rule_id", "subject_id"], kind="stable").itertuples()
    ]
    page_rows = sorted(
        ((f["rule_id"], f["subject_id"], f["outcome"], f["message"]) for f in final["findings"]),
        key=lambda r: (r[0], r[1]),
    )
    assert sorted(cli, key=lambda r: (r[0], r[1])) == page_rows
    assert ("SW205", EVIL, "pass") in {(r[0], r[1], r[2]) for r in cli}
    # the page's findings CSV is `gis-sw check`'s summary.csv of the exported file
    assert findings_csv.name.endswith("-findings.csv")
    assert findings_csv.read_bytes() == (out / "summary.csv").read_bytes()
    assert sheet_pdf.suffix == ".pdf"
    sheet_text = "\n".join(p.extract_text() for p in pypdf.PdfReader(sheet_pdf).pages)
    assert f"Parcels: {LOT}" in sheet_text
    assert "STORMWATER SCREENING MAP" in sheet_text

    assert errors == []
    assert dialogs == []
    assert requests
    for url in requests:
        assert url.startswith((server, "blob:" + server.rstrip("/"), "data:")), url


def check_document(page) -> dict:
    return page.evaluate("window.gswApp.documentBody()")
