"""``gis-sw map`` end to end on the committed sample town."""

from __future__ import annotations

from pathlib import Path

import pypdf
import pytest
from click.testing import CliRunner

from gis_sw.cli import cli

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


@pytest.mark.skipif(not (SAMPLE / "layers.toml").exists(), reason="data/sample not present")
def test_map_command_on_the_lot_line_devices_case(tmp_path):
    runner = CliRunner()
    args = [
        "map",
        str(SAMPLE / "proposals.gpkg"),
        "--layers",
        str(SAMPLE / "layers.toml"),
        "--out",
        str(tmp_path),
        "--id",
        "P09-lot-line-devices",
        "--format",
        "pdf",
    ]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    pdf = tmp_path / "P09-lot-line-devices" / "P09-lot-line-devices.pdf"
    assert pdf.exists()
    assert (tmp_path / "webmap.html").exists()
    assert not (tmp_path / "P09-lot-line-devices" / "P09-lot-line-devices.png").exists()
    text = pypdf.PdfReader(pdf).pages[0].extract_text()
    # the device 9 ft from its lot line fails SW205 and is labelled; the 11 ft one passes
    assert "SW205 9.0 ft < 10 ft" in text
    assert "SW205 11" not in text
    assert "Scale 1\" = 20'" in text
    assert "Screening result, not a permit decision" in text
    # the siting polygon of the devices' parcel is drawn and in the legend
    assert "Permissible device location" in text
    html = (tmp_path / "webmap.html").read_text(encoding="utf-8")
    assert '"key":"siting"' in html
    # a second run without --overwrite refuses and leaves the file alone (exit 2)
    before = pdf.read_bytes()
    again = runner.invoke(cli, args)
    assert again.exit_code == 2
    assert "already exists" in again.output
    assert pdf.read_bytes() == before
    _open_in_chromium(tmp_path / "webmap.html")


def _open_in_chromium(page_path: Path) -> None:
    """The sample's web map loads with no error and no request but the file."""
    from test_webmap import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        return  # test_webmap.py skips with the reason
    sync_api = pytest.importorskip("playwright.sync_api")
    url = page_path.resolve().as_uri()
    errors: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url)
            page.wait_for_function("window.gisSw && window.gisSw.ready")
            counts = page.evaluate("window.gisSw.counts")
        finally:
            browser.close()
    assert errors == []
    assert requests == [url]
    assert counts["devices"] == 2
    assert counts["findings_fail"] >= 1
    assert counts["siting"] >= 1


def test_unknown_proposal_id_is_exit_2(tmp_path):
    if not (SAMPLE / "layers.toml").exists():
        pytest.skip("data/sample not present")
    result = CliRunner().invoke(
        cli,
        [
            "map",
            str(SAMPLE / "proposals.gpkg"),
            "--layers",
            str(SAMPLE / "layers.toml"),
            "--out",
            str(tmp_path),
            "--id",
            "NOPE",
        ],
    )
    assert result.exit_code == 2
    assert "no proposal 'NOPE'" in result.output


@pytest.mark.skipif(not (SAMPLE / "dem.tif").exists(), reason="data/sample not present")
def test_sheet_shows_dem_contours(tmp_path):
    result = CliRunner().invoke(
        cli,
        [
            "map",
            str(SAMPLE / "proposals.gpkg"),
            "--layers",
            str(SAMPLE / "layers.toml"),
            "--out",
            str(tmp_path),
            "--id",
            "P11-septic-gradient",
            "--format",
            "pdf",
            "--no-webmap",
        ],
    )
    assert result.exit_code == 0, result.output
    sheet = tmp_path / "P11-septic-gradient" / "P11-septic-gradient.pdf"
    text = pypdf.PdfReader(sheet).pages[0].extract_text()
    assert "Existing ground contour (1 ft; DEM)" in text
    assert "315" in text  # an index contour's label
    assert "SW201 15.0 ft < 20 ft" in text
    assert not (tmp_path / "webmap.html").exists()
