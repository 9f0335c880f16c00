"""`gis-sw siting` writes the siting sheet: the allowed area, its square footage, each setback
with its reason, on the map furniture of the other sheets."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pytest
from click.testing import CliRunner
from pypdf import PdfReader

from gis_sw.cli import cli

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
LOT = "0.0-1-2"


def test_siting_writes_pdf_and_png_sheets(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = ["siting", "--layers", str(SAMPLE / "layers.toml"), "--parcel", LOT]
    args += ["--device-class", "vehicle", "--depth-ft", "3", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == ["siting.geojson", "siting.gpkg", "siting.pdf", f"siting_{LOT}.png"]
    sited = gpd.read_file(out / "siting.gpkg", layer="siting")
    area = float(sited["area_sqft"].iloc[0])
    assert area > 0
    reader = PdfReader(out / "siting.pdf")
    assert len(reader.pages) == 1
    text = reader.pages[0].extract_text()
    assert f"Allowed area: {area:,.0f} sq ft (vehicle device, 3 ft deep)" in text
    assert f"Outcome: {sited['outcome'].iloc[0]}" in text
    assert "10 ft from the lot line (§ 183-12C(2)(c)[6])" in text
    assert "Permissible device location" in text  # the legend
    assert 'Scale 1" = ' in text  # the scale bar
    assert "Screening result, not a permit decision" in text  # the title block
    width, height = 17 * 150, 11 * 150  # ANSI B at 150 dpi
    png = (out / f"siting_{LOT}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == width
    assert int.from_bytes(png[20:24], "big") == height
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 2
    assert "already exists" in again.stderr


def test_siting_sheets_none_and_too_many(tmp_path: Path) -> None:
    out = tmp_path / "none"
    args = ["siting", "--layers", str(SAMPLE / "layers.toml"), "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--parcel", LOT, "--sheets", "none"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["siting.geojson", "siting.gpkg"]
    many = tmp_path / "many"
    result = CliRunner().invoke(cli, ["siting", "--layers", str(SAMPLE / "layers.toml"),
                                      "--out", str(many)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "no siting sheet for 323 parcels (at most 25); choose them with --parcel" in (
        result.stderr
    )
    assert sorted(p.name for p in many.iterdir()) == ["siting.geojson", "siting.gpkg"]


@pytest.mark.parametrize("choice", ["pdf", "png"])
def test_siting_sheet_choice(tmp_path: Path, choice: str) -> None:
    out = tmp_path / choice
    args = ["siting", "--layers", str(SAMPLE / "layers.toml"), "--parcel", LOT, "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--sheets", choice])
    assert result.exit_code == 0, result.output
    wanted = {"pdf": "siting.pdf", "png": f"siting_{LOT}.png"}[choice]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["siting.geojson", "siting.gpkg", wanted]
    )
