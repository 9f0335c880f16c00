"""``gis-sw validate``: the report per layer, exit 0 when clean and 2 on a layer error."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import pytest
import shapely
from click.testing import CliRunner

from gis_sw.cli import cli

X0, Y0 = 685_000.0, 830_000.0
SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"


def town(folder: Path, *, parcel_ids: tuple[str, str] = ("P-1", "P-2")) -> Path:
    gpkg = folder / "town.gpkg"
    gpd.GeoDataFrame(
        {"parcel_id": list(parcel_ids)},
        geometry=[
            shapely.box(X0, Y0, X0 + 100, Y0 + 100),
            shapely.Polygon(
                [(X0 + 100, Y0), (X0 + 200, Y0 + 100), (X0 + 200, Y0), (X0 + 100, Y0 + 100)]
            ),
        ],
        crs="EPSG:2260",
    ).to_file(gpkg, layer="parcels", engine="pyogrio")
    gpd.GeoDataFrame(
        {"road": ["Main St"]}, geometry=[shapely.box(X0, Y0, X0 + 200, Y0 + 10)], crs="EPSG:2260"
    ).to_file(gpkg, layer="roads", engine="pyogrio")
    gpd.GeoDataFrame(
        {"zone": ["R-10"]}, geometry=[shapely.box(X0, Y0, X0 + 200, Y0 + 100)], crs="EPSG:2260"
    ).to_file(gpkg, layer="zoning", engine="pyogrio")
    return gpkg


def test_clean_report(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", "--layers", str(town(tmp_path))])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Working CRS: EPSG:2260 (NAD83 / New York East (ftUS)), unit: US survey foot" in out
    assert "parcels: ok\n" in out
    assert "  features: 2\n" in out
    assert "  CRS:      EPSG:2260 (US survey foot)\n" in out
    assert (
        "  extent:   685,000.00, 830,000.00 to 685,200.00, 830,100.00 (200.00 x 100.00) "
        "US survey foot, EPSG:2260\n"
    ) in out
    assert "  repaired: 1 invalid geometries with make_valid: parcel_id P-2\n" in out
    assert "Not provided (rules that need them answer review): wetlands, floodplain" in out
    assert "Ignored (not a known layer kind): roads\n" in out
    assert out.endswith("Result: every layer is valid.\n")


def test_strict_refuses_invalid_geometry_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", "--layers", str(town(tmp_path)), "--strict"])
    assert result.exit_code == 2
    assert "parcels: 1 problem(s)\n" in result.output
    assert "  - 1 invalid geometr(ies): parcel_id P-2 (Self-intersection" in result.output
    assert "Result: 1 problem(s) in 1 layer(s)." in result.output
    assert "zoning: ok" in result.output


def test_layer_error_lists_every_problem_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["validate", "--layers", str(town(tmp_path, parcel_ids=("P-1", "P-1")))]
    )
    assert result.exit_code == 2
    assert "  - duplicate parcel_id: 'P-1' (2 times).\n" in result.output
    assert "    fix: give every feature its own parcel_id.\n" in result.output


def test_missing_source_one_line_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", "--layers", str(tmp_path / "none.toml")])
    assert result.exit_code == 2
    assert "none.toml: no such file or folder." in result.output


def test_proposals_file_validated(tmp_path: Path) -> None:
    gpkg = town(tmp_path)
    proposal = tmp_path / "deck.geojson"
    gpd.GeoDataFrame(
        {"start_date": ["2026-06-01"], "end_date": ["2026-05-01"]},
        geometry=[shapely.box(X0, Y0, X0 + 20, Y0 + 12)],
        crs="EPSG:2260",
    ).to_file(proposal, driver="GeoJSON", engine="pyogrio")
    result = CliRunner().invoke(
        cli, ["validate", "--layers", str(gpkg), "--proposals", str(proposal)]
    )
    assert result.exit_code == 2
    assert "end_date is before start_date: row 1 (2026-06-01 to 2026-05-01)." in result.output
    good = tmp_path / "patio.geojson"
    gpd.GeoDataFrame(geometry=[shapely.box(X0, Y0, X0 + 20, Y0 + 12)], crs="EPSG:2260").to_file(
        good, driver="GeoJSON", engine="pyogrio"
    )
    result = CliRunner().invoke(cli, ["validate", "--layers", str(gpkg), "--proposals", str(good)])
    assert result.exit_code == 0, result.output
    assert "  proposals: 1 (patio)\n" in result.output


@pytest.mark.skipif(not (SAMPLE / "layers.toml").is_file(), reason="data/sample not generated")
def test_sample_town_is_clean() -> None:
    result = CliRunner().invoke(
        cli,
        [
            "validate",
            "--layers",
            str(SAMPLE / "layers.toml"),
            "--proposals",
            str(SAMPLE / "proposals.gpkg"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Result: every layer is valid." in result.output
