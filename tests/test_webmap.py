"""The offline web map: escaping, inlined Leaflet, and a real page in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from maps_town import EVIL, X0, Y0, findings, proposals, town
from pyproj import Transformer

from gis_sw.api import Town
from gis_sw.errors import OutputError
from gis_sw.outputs.webmap import build_layers, write_webmap
from gis_sw.screening import Screening

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def webmap(tmp_path_factory: pytest.TempPathFactory, ruleset) -> Path:
    out = tmp_path_factory.mktemp("webmap") / "webmap.html"
    return write_webmap(
        out,
        Screening(Town(town(), ruleset), proposals(), findings(ruleset)),
        proposal_ids=["P-1"],
    )


def test_html_is_self_contained_and_escaped(webmap):
    text = webmap.read_text(encoding="utf-8")
    # the only <script> tags are ours: the data block, Leaflet and the app
    assert len(re.findall(r"<script\b", text)) == 3
    assert "window.__pwned" in text  # the evil owner's name is there, as data
    assert "<script>window.__pwned" not in text
    assert "\\u003cscript\\u003ewindow.__pwned" in text
    assert "<title>Stormwater screening: P-1 (&lt;script&gt;window.__pwned" in text
    assert "sourceMappingURL" not in text
    assert "images/" not in text  # Leaflet's images became data URIs
    markup = re.sub(r"<script\b.*?</script>", "", text, flags=re.DOTALL)
    assert not re.search(r"(src|href)=", markup)
    assert "Copyright (c) 2010-2023, Volodymyr Agafonkin" in text  # the licence travels
    assert "default-src 'none'" in text


def test_layer_feature_counts(ruleset):
    web_layers, bounds = build_layers(
        Screening(Town(town(), ruleset), proposals(), findings(ruleset)),
        proposal_ids=["P-1"],
    )
    counts = {w.key: len(w.features["features"]) for w in web_layers}
    assert counts["parcels"] == 20  # the sixth column of lots lies beyond the 300 ft pad
    assert counts["zoning"] == 2
    assert counts["devices"] == 2
    assert counts["disturbance"] == 2
    # DW-1: 10 ft and 20 ft rings; DW-2 (vehicle traffic): 10, 20 and 50 ft
    assert counts["rings"] == 5
    assert counts["findings_fail"] == 2  # SW207 has no geometry
    assert counts["findings_review"] == 1
    assert counts["findings_other"] == 1
    assert -73.81 < bounds[0] < bounds[2] < -73.79
    fail = next(w for w in web_layers if w.key == "findings_fail")
    props = fail.features["features"][0]["properties"]
    assert props["citation"] == "§ 183-12C(2)(c)[6]"
    assert props["message"].startswith("Device DW-1 is 9.0 ft")


def test_refuses_to_overwrite(webmap, ruleset):
    with pytest.raises(OutputError, match="already exists"):
        write_webmap(
            webmap,
            Screening(Town(town(), ruleset), proposals(), findings(ruleset)),
        )


@pytest.mark.browser
def test_page_in_headless_chromium(webmap):
    if not Path(CHROMIUM).exists():
        pytest.skip(
            "Debian chromium is not installed (apt-get install chromium; .ci/system-deps.sh)"
        )
    sync_api = pytest.importorskip("playwright.sync_api")
    url = webmap.resolve().as_uri()
    errors: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(url)
            page.wait_for_function("window.gisSw && window.gisSw.ready")
            counts = page.evaluate("window.gisSw.counts")
            assert counts["parcels"] == 20  # the sixth column of lots lies beyond the 300 ft pad
            assert counts["findings_fail"] == 2
            assert counts["rings"] == 5
            # every visible feature is an SVG path (circle markers too)
            drawn = page.evaluate("document.querySelectorAll('path.leaflet-interactive').length")
            visible = sum(counts[k] for k in counts if k != "findings_other")
            assert drawn == visible
            # click the SW205 finding's line where Leaflet drew it
            point = page.evaluate(
                """() => {
                  const g = window.gisSw.groups.findings_fail;
                  const layer = g.getLayers().find(l => l.feature.properties.rule_id === 'SW205');
                  const ll = layer.getCenter();
                  const p = window.gisSw.map.latLngToContainerPoint(ll);
                  const r = document.getElementById('map').getBoundingClientRect();
                  return [p.x + r.left, p.y + r.top];
                }"""
            )
            page.mouse.click(point[0], point[1])
            popup = page.wait_for_selector(".leaflet-popup-content")
            text = popup.inner_text()
            assert "Device DW-1 is 9.0 ft from the property line" in text
            assert "§ 183-12C(2)(c)[6]" in text
            # the evil name shows as text and never ran
            assert EVIL in page.title()
            assert page.evaluate("window.__pwned === undefined")
            # click-to-measure between two lot corners 100 ft apart on the ground
            page.click(".gsw-measure a")
            to_geo = Transformer.from_crs("EPSG:2260", "EPSG:4326", always_xy=True)
            for x_ft in (X0 + 100, X0 + 200):
                lon, lat = to_geo.transform(x_ft, Y0 + 100)
                px, py = page.evaluate(
                    """([lat, lon]) => {
                      const p = window.gisSw.map.latLngToContainerPoint([lat, lon]);
                      const r = document.getElementById('map').getBoundingClientRect();
                      return [p.x + r.left, p.y + r.top];
                    }""",
                    [lat, lon],
                )
                page.mouse.click(px, py)
            feet = page.evaluate("window.gisSw.measuredFeet()")
            assert feet == pytest.approx(100.0, rel=0.01)
            assert "ft (great-circle)" in page.inner_text(".gsw-readout")
        finally:
            browser.close()
    assert errors == []
    assert dialogs == []
    assert requests == [url]
    json.dumps(counts)  # counts came back as plain data
