"""The web map finds things: a list of applications with verdicts, search, labels, and a click
on overlapping findings lists them all, most severe first (issue: P07's fail polygon opened a
review popup)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_webmap import CHROMIUM, CHROMIUM_ARGS

from gis_sw.analysis.engine import run_rules
from gis_sw.api import Town
from gis_sw.layers.read import read_layers, read_proposals
from gis_sw.outputs.webmap import write_webmap
from gis_sw.screening import Screening

SAMPLE = Path(__file__).parent.parent / "data" / "sample"
P07 = "P07-commercial-phased-7ac"
P01 = "P01-addition-r10"


@pytest.fixture(scope="module")
def sample_map(tmp_path_factory: pytest.TempPathFactory, ruleset) -> Path:
    layers = read_layers(SAMPLE / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=ruleset)
    findings = run_rules(layers, proposals, ruleset, select=["SW1", "SW3"])
    # a review over the same ground as P07's five-acre fail, as the runoff reviews drew it
    fail = findings[(findings["rule_id"] == "SW301") & (findings["outcome"] == "fail")]
    review = fail.assign(
        rule_id="SW502", outcome="review", finding_id="review-over-the-fail", message="Review."
    )
    findings = pd.concat([findings, review], ignore_index=True)
    return write_webmap(
        tmp_path_factory.mktemp("findmap") / "webmap.html",
        Screening(Town(layers, ruleset), proposals, findings),
        proposal_ids=[P01, P07],
    )


def test_list_search_and_overlapping_click(sample_map: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    url = sample_map.resolve().as_uri()
    requests: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(url)
            page.wait_for_function("window.gisSw && window.gisSw.ready")
            rows = page.locator(".gsw-app")
            assert rows.count() == 2
            assert "Does not comply as proposed" in rows.nth(1).inner_text()
            labels = page.locator(".gsw-label").all_inner_texts()
            assert sorted(labels) == [P01, P07]
            # search by a parcel id of P07 leaves one row
            parcel = page.evaluate("window.gisSw.applications[1].parcels[0]")
            page.fill(".gsw-apps input", parcel)
            assert page.locator(".gsw-app").count() == 1
            assert P07 in page.locator(".gsw-app").inner_text()
            page.fill(".gsw-apps input", "")
            # a click on an entry zooms to it
            page.locator(".gsw-app", has_text=P01).click()
            page.wait_for_timeout(800)  # the zoom animates
            bounds = page.evaluate("window.gisSw.applications[0].bounds")
            centre = page.evaluate(
                "[window.gisSw.map.getCenter().lng, window.gisSw.map.getCenter().lat]"
            )
            assert bounds[0] <= centre[0] <= bounds[2]
            assert bounds[1] <= centre[1] <= bounds[3]
            # inside P07's five-acre fail polygon: every finding there, the fail first
            page.locator(".gsw-app", has_text=P07).click()
            page.wait_for_timeout(800)
            point = page.evaluate(
                """() => {
                  const g = window.gisSw.groups.findings_fail;
                  const layer = g.getLayers().find(l => l.feature.properties.rule_id === 'SW301');
                  const ll = layer.getCenter();
                  const p = window.gisSw.map.latLngToContainerPoint(ll);
                  const r = document.getElementById('map').getBoundingClientRect();
                  return [p.x + r.left, p.y + r.top];
                }"""
            )
            page.mouse.click(point[0], point[1])
            popup = page.wait_for_selector(".leaflet-popup-content")
            titles = [t.inner_text() for t in popup.query_selector_all(".gsw-popup-title")]
            assert titles[0].endswith("findings here, most severe first")
            assert titles[1:] == ["SW301 fail: § 183-7B(1)(d)", "SW502 review: § 183-7B(1)(d)"]
        finally:
            browser.close()
    assert errors == []
    assert requests == [url]
