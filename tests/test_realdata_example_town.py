"""The second example ruleset (a made-up Massachusetts town, EPSG:26986 metres) on a
generated town placed in that metre CRS.

The sample generator's town and named proposals (EPSG:2260) are moved into EPSG:26986 by
an exact map (x_m = (x_ft - x0) * 0.3048 + E, the same for y) to a place inside the
Massachusetts Mainland zone, rasters with them and their values written in metres
(``units = "m"``).  The ruleset's foot is the international foot, so every distance and
area measured in its foot twin is the generated figure itself; the outcomes below are the
example ruleset's numbers applied by hand to data/sample/README.md's cases.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import rasterio
import shapely
from affine import Affine
from pyproj import Transformer

from gis_sw.analysis.engine import run_rules
from gis_sw.layers.read import read_layers, read_proposals
from gis_sw.ruleset import load_ruleset
from gis_sw.sample import build_town, sample_proposals
from gis_sw.sample.write import write_proposals, write_town

M_PER_FT = 0.3048
MA = "EPSG:26986"


def _mover(x0: float, y0: float) -> tuple[Callable[[np.ndarray], np.ndarray], float, float]:
    to_ma = Transformer.from_crs("EPSG:4326", MA, always_xy=True)
    east, north = (round(v) for v in to_ma.transform(-71.8, 42.27))  # central Massachusetts

    def move(xy: np.ndarray) -> np.ndarray:
        return np.column_stack(
            [(xy[:, 0] - x0) * M_PER_FT + east, (xy[:, 1] - y0) * M_PER_FT + north]
        )

    return move, float(east), float(north)


def _move_gpkg(src: Path, dst: Path, move: Callable[[np.ndarray], np.ndarray]) -> None:
    for name, _ in pyogrio.list_layers(src):
        frame = pyogrio.read_dataframe(src, layer=str(name))
        if isinstance(frame, gpd.GeoDataFrame) and frame.crs is not None:
            moved = shapely.transform(np.asarray(frame.geometry.values, dtype=object), move)
            frame = gpd.GeoDataFrame(
                frame.drop(columns=frame.geometry.name), geometry=list(moved), crs=MA
            )
        pyogrio.write_dataframe(frame, dst, layer=str(name))


def _move_raster(src: Path, dst: Path, x0: float, y0: float, east: float, north: float) -> None:
    with rasterio.open(src) as raster:
        values = raster.read(1).astype("float64") * M_PER_FT  # feet to metres
        t = raster.transform
        profile = raster.profile
        tags = raster.tags()
    profile.update(
        crs=MA,
        dtype="float64",
        transform=Affine(
            t.a * M_PER_FT,
            0.0,
            (t.c - x0) * M_PER_FT + east,
            0.0,
            t.e * M_PER_FT,
            (t.f - y0) * M_PER_FT + north,
        ),
    )
    with rasterio.open(dst, "w", **profile) as out:
        out.write(values, 1)
        out.update_tags(GIS_SW_MODE=tags["GIS_SW_MODE"])


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    feet = tmp_path_factory.mktemp("generated")
    metres = tmp_path_factory.mktemp("example_town")
    town = build_town(parcels=323, seed=183)
    write_town(town, feet, fmt="gpkg", overwrite=True)
    cases = sample_proposals(town)
    # the sample claims one exemption by Mount Pleasant's heading (P21, § 183-5K); the
    # example town lists its own exemptions, so that claim means nothing there
    claims = cases.attributes["exemption"].astype("string")
    cases.attributes.loc[claims.str.len().fillna(0) > 1, "exemption"] = pd.NA
    write_proposals(cases, feet, overwrite=True)
    x0, y0 = (float(v) for v in town.vectors["parcels"].total_bounds[:2])
    move, east, north = _mover(x0, y0)
    _move_gpkg(feet / "town.gpkg", metres / "town.gpkg", move)
    _move_gpkg(feet / "proposals.gpkg", metres / "proposals.gpkg", move)
    for tif in feet.glob("*.tif"):
        _move_raster(tif, metres / tif.name, x0, y0, east, north)
    manifest = (feet / "layers.toml").read_text(encoding="utf-8")
    manifest = manifest.replace('crs = "EPSG:2260"', f'crs = "{MA}"')
    for name in ("dem.tif", "seasonal_high_groundwater.tif", "bedrock.tif"):
        manifest = manifest.replace(f'path = "{name}"\n', f'path = "{name}"\nunits = "m"\n')
    (metres / "layers.toml").write_text(manifest, encoding="utf-8")
    ruleset = load_ruleset("example_town_ma")
    layers = read_layers(metres / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(metres / "proposals.gpkg", ruleset=ruleset)
    assert pyogrio.read_info(metres / "town.gpkg", layer="parcels")["crs"] == MA
    return run_rules(layers, proposals, ruleset).set_index(["rule_id", "subject_id"])


def test_example_ruleset_loads_as_a_made_up_town_in_metres() -> None:
    ruleset = load_ruleset("example_town_ma")
    assert "made up" in ruleset.title
    assert ruleset.crs_is_twin
    assert ruleset.crs_declared.to_epsg() == 26986
    assert ruleset.working_crs.axis_info[0].unit_conversion_factor == M_PER_FT


def test_every_rule_runs(findings: pd.DataFrame) -> None:
    assert len(findings) > 300
    assert not findings["message"].str.contains("could not run").any()
    assert set(findings.index.get_level_values("rule_id")) >= {
        "SW101",
        "SW201",
        "SW203",
        "SW205",
        "SW206",
        "SW301",
        "SW501",
    }


@pytest.mark.parametrize(
    ("rule_id", "subject_id", "outcome", "measured", "threshold"),
    [
        # 120 sq ft, all in R-10: under the 150 sq ft R-10 test and the 500 sq ft test
        ("SW101", "P01-addition-r10", "pass", 120.0, 500.0),
        # 300 sq ft in R-20: under 500 sq ft
        ("SW101", "P03-patio-300-r20", "pass", 300.0, 500.0),
        ("SW101", "P15-new-house-runoff", "required", 8_800.0, 500.0),
        # 11.00 ft from the lot line: under the example's 12 ft
        ("SW205", "D09-11ft", "fail", 11.0, 12.0),
        ("SW205", "D09-9ft", "fail", 9.0, 12.0),
        # 15.00 ft from a habitable basement: exactly the example's 15 ft passes
        ("SW206", "D13-basement", "pass", 15.0, 15.0),
        # 45.00 ft from a well: beyond the example's 40 ft
        ("SW202", "D10-parking", "pass", 45.0, 40.0),
        # up-gradient 15.00 ft from a septic field: within 25 ft
        ("SW201", "D11-up", "fail", 15.0, 25.0),
        # groundwater 1.03 ft below the bottom (raster read from metres): under 2 ft
        ("SW203", "D12-shallow", "fail", 1.03, 2.0),
    ],
    ids=[
        "120-sqft-in-R-10-under-150",
        "300-sqft-under-500",
        "8800-sqft-requires",
        "11.00-ft-from-lot-line-under-12",
        "9.00-ft-from-lot-line",
        "15.00-ft-from-basement-at-15",
        "45.00-ft-from-well-beyond-40",
        "up-gradient-15.00-ft-within-25",
        "1.03-ft-above-groundwater",
    ],
)
def test_example_numbers_decide(
    findings: pd.DataFrame,
    rule_id: str,
    subject_id: str,
    outcome: str,
    measured: float,
    threshold: float,
) -> None:
    row = findings.loc[(rule_id, subject_id)]
    assert row["outcome"] == outcome, row["message"]
    assert float(row["measured"]) == pytest.approx(measured, abs=0.005)
    assert float(row["threshold"]) == pytest.approx(threshold, abs=1e-9)
    assert row["citation"].startswith("Bylaw 12-")


def test_phasing_peak_under_the_example_six_acres(findings: pd.DataFrame) -> None:
    rows = findings.loc["SW301"]
    row = rows[rows["proposal_id"] == "P07-commercial-phased-7ac"].iloc[0]
    assert row["outcome"] == "pass", row["message"]
    assert float(row["measured"]) == pytest.approx(5.50, abs=0.005)


def test_low_zone_threshold_is_the_example_150_sqft(findings: pd.DataFrame) -> None:
    message = findings.loc[("SW101", "P01-addition-r10"), "message"]
    assert "150" in message
    assert "120" in message


def test_validate_states_the_metre_crs_and_its_foot_twin(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gis_sw.cli import cli

    move, _, _ = _mover(0.0, 0.0)
    lot = shapely.transform(shapely.box(0, 0, 100, 100), move)  # 100 x 100 ft, in metres
    gpd.GeoDataFrame({"parcel_id": ["1"]}, geometry=[lot], crs=MA).to_file(
        tmp_path / "town.gpkg", layer="parcels"
    )
    gpd.GeoDataFrame({"zone": ["R-10"]}, geometry=[lot], crs=MA).to_file(
        tmp_path / "town.gpkg", layer="zoning"
    )
    result = CliRunner().invoke(
        cli, ["validate", "--layers", str(tmp_path / "town.gpkg"), "--ruleset", "example_town_ma"]
    )
    assert result.exit_code == 0, result.output
    assert (
        "Working CRS: NAD83 / Massachusetts Mainland (in international feet) "
        "(NAD83 / Massachusetts Mainland (in international feet)), unit: foot"
    ) in result.output
    assert "the ruleset names EPSG:26986 (metre)" in result.output
    # the extent is printed in feet: the lot is 100.00 x 100.00
    assert "(100.00 x 100.00) foot" in result.output


def test_no_message_names_new_york_law(findings: pd.DataFrame) -> None:
    """Every town's words come from its ruleset: the example town's findings name no New
    York agency or programme and no Mount Pleasant chapter."""
    text = [*findings["message"].astype(str), *findings["title"].astype(str)]
    for word in ("NYSDEC", "SPDES", "NYS DOH", "Chapter 1", "§ 183", "New York"):
        assert [t for t in text if word in t] == [], word
