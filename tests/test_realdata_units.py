"""Issue 12 case 1: a metre working CRS gives the outcomes and figures of a foot CRS.

The sample town and its named proposals are generated in EPSG:2260 (NAD83 / New York East,
US survey feet), then written again in EPSG:32115 (the same projection in metres).  Screened
with a ruleset whose ``working_crs`` is the metre CRS, every finding must match the foot
run: same outcome, measured figure within 0.01 (ft, sq ft, acres), same threshold.
"""

from __future__ import annotations

import shutil
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import rasterio
from affine import Affine
from pyproj import CRS, Transformer

from gis_sw.analysis.engine import run_rules
from gis_sw.errors import CRSError, RulesetError
from gis_sw.layers.rasters_io import read_raster
from gis_sw.layers.read import read_layers, read_proposals
from gis_sw.ruleset import Ruleset, parse_ruleset
from gis_sw.sample import build_town, sample_proposals
from gis_sw.sample.write import write_proposals, write_town
from gis_sw.units import foot_twin

METRE_CRS = "EPSG:32115"  # NAD83 / New York East (metres): EPSG:2260's projection


def mount_pleasant(**head: Any) -> Ruleset:
    text = resources.files("gis_sw.rulesets").joinpath("mount_pleasant_ny.toml").read_text()
    data = tomllib.loads(text)
    data["ruleset"].update(head)
    return parse_ruleset(data, source="test")


def _reproject_gpkg(src: Path, dst: Path, crs: str) -> None:
    for name, _ in pyogrio.list_layers(src):
        frame = pyogrio.read_dataframe(src, layer=str(name))
        if isinstance(frame, gpd.GeoDataFrame) and frame.crs is not None:
            frame = frame.to_crs(crs)
        pyogrio.write_dataframe(frame, dst, layer=str(name))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, gpd.GeoDataFrame]:
    feet = tmp_path_factory.mktemp("feet")
    metres = tmp_path_factory.mktemp("metres")
    town = build_town(parcels=323, seed=183)
    write_town(town, feet, fmt="gpkg", overwrite=True)
    write_proposals(sample_proposals(town), feet, overwrite=True)
    _reproject_gpkg(feet / "town.gpkg", metres / "town.gpkg", METRE_CRS)
    _reproject_gpkg(feet / "proposals.gpkg", metres / "proposals.gpkg", METRE_CRS)
    for tif in feet.glob("*.tif"):  # rasters stay in EPSG:2260: their grid is rescaled
        shutil.copy(tif, metres / tif.name)
    manifest = (feet / "layers.toml").read_text(encoding="utf-8")
    (metres / "layers.toml").write_text(
        manifest.replace('crs = "EPSG:2260"', f'crs = "{METRE_CRS}"'), encoding="utf-8"
    )
    out = {}
    for key, folder, ruleset in (
        ("feet", feet, mount_pleasant()),
        ("metres", metres, mount_pleasant(working_crs=METRE_CRS, foot="us_survey")),
    ):
        layers = read_layers(folder / "layers.toml", ruleset=ruleset)
        proposals = read_proposals(folder / "proposals.gpkg", ruleset=ruleset)
        assert pyogrio.read_info(folder / "town.gpkg", layer="parcels")["crs"].endswith(
            "2260" if key == "feet" else "32115"
        )
        out[key] = run_rules(layers, proposals, ruleset).set_index(
            ["rule_id", "proposal_id", "subject_id"]
        )
    return out


def test_metre_crs_gives_the_same_outcomes(runs: dict[str, gpd.GeoDataFrame]) -> None:
    feet, metres = runs["feet"], runs["metres"]
    assert len(feet) > 300
    assert sorted(feet.index) == sorted(metres.index)
    metres = metres.loc[feet.index]
    assert (feet["outcome"] == metres["outcome"]).all()
    assert (feet["unit"] == metres["unit"]).all()
    threshold = pd.to_numeric(feet["threshold"]).to_numpy(dtype=float)
    assert np.array_equal(
        threshold, pd.to_numeric(metres["threshold"]).to_numpy(dtype=float), equal_nan=True
    )


def test_metre_crs_gives_the_same_figures_to_a_hundredth(
    runs: dict[str, gpd.GeoDataFrame],
) -> None:
    feet, metres = runs["feet"], runs["metres"].loc[runs["feet"].index]
    a = pd.to_numeric(feet["measured"]).to_numpy(dtype=float)
    b = pd.to_numeric(metres["measured"]).to_numpy(dtype=float)
    assert np.isnan(a).sum() == np.isnan(b).sum()
    both = ~np.isnan(a)
    assert both.sum() > 100
    assert np.abs(a[both] - b[both]).max() <= 0.01 + 1e-9
    # messages (every figure written in them) agree wherever the figure is the same
    same = np.isclose(a, b, atol=1e-9, rtol=0) | np.isnan(a)
    assert (feet["message"].to_numpy()[same] == metres["message"].to_numpy()[same]).all()


def test_known_sample_figures_in_metres(runs: dict[str, gpd.GeoDataFrame]) -> None:
    metres = runs["metres"]
    # P01 adds 12 x 10 ft in R-10 (data/sample/README.md); the EPSG:32115 files would give
    # 11.15 (square metres) without the conversion
    row = metres.loc[("SW101", "P01-addition-r10", "P01-addition-r10")]
    assert row["outcome"] == "required"
    assert float(row["measured"]) == pytest.approx(120.0, abs=0.01)
    row = metres.loc[("SW101", "P02-patio-240-r20", "P02-patio-240-r20")]
    assert row["outcome"] == "pass"
    assert float(row["measured"]) == pytest.approx(240.0, abs=0.01)


def test_foot_twin_is_the_same_projection_in_feet() -> None:
    twin = foot_twin(CRS(METRE_CRS), foot="us_survey")
    assert twin.axis_info[0].unit_name == "US survey foot"
    assert twin.area_of_use is not None
    lonlat = Transformer.from_crs("EPSG:4326", twin, always_xy=True)
    ny_east = Transformer.from_crs("EPSG:4326", "EPSG:2260", always_xy=True)
    x1, y1 = lonlat.transform(-73.8, 41.1)
    x2, y2 = ny_east.transform(-73.8, 41.1)
    assert abs(x1 - x2) < 1e-6
    assert abs(y1 - y2) < 1e-6
    intl = foot_twin(CRS(METRE_CRS))
    assert intl.axis_info[0].unit_conversion_factor == 0.3048
    # a foot CRS is its own twin
    assert foot_twin(CRS("EPSG:2260")).equals(CRS("EPSG:2260"))


def test_geographic_working_crs_is_refused() -> None:
    with pytest.raises(RulesetError, match=r"working_crs = 'EPSG:4326' is geographic"):
        mount_pleasant(working_crs="EPSG:4326")
    with pytest.raises(CRSError, match="not a projected CRS"):
        foot_twin(CRS("EPSG:4326"))
    with pytest.raises(RulesetError, match=r"\[ruleset\] foot = 'yard'"):
        mount_pleasant(working_crs=METRE_CRS, foot="yard")


def test_ruleset_keeps_the_crs_it_names() -> None:
    ruleset = mount_pleasant(working_crs="EPSG:26918")
    assert ruleset.crs_is_twin
    assert ruleset.crs_declared.equals(CRS("EPSG:26918"))
    assert ruleset.working_crs.axis_info[0].unit_name == "foot"
    assert not mount_pleasant().crs_is_twin


def test_metre_raster_in_a_metre_crs_reads_in_feet(tmp_path: Path) -> None:
    """A DEM stored in EPSG:32115 with values in metres: grid rescaled, values in feet."""
    values = np.array([[100.0, 101.0], [102.0, 103.5]], dtype="float32")  # metres
    transform = Affine(3.0, 0, 300_000.0, 0, -3.0, 50_003.0)  # 3 m cells
    path = tmp_path / "dem.tif"
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=2,
        height=2,
        count=1,
        dtype="float32",
        crs=METRE_CRS,
        transform=transform,
    ) as dst:
        dst.write(values, 1)
    ruleset = mount_pleasant(working_crs=METRE_CRS)
    raster, report = read_raster(path, kind="dem", working_crs=ruleset.working_crs, units="m")
    assert raster.transform.a == pytest.approx(3.0 / 0.3048, abs=1e-9)
    # the centre of the lower right cell, in international feet
    x, y = 300_004.5 / 0.3048, 49_998.5 / 0.3048
    assert raster.sample_xy(np.array([x]), np.array([y]))[0] == pytest.approx(
        103.5 / 0.3048, abs=1e-9
    )
    assert any("no resampling" in w for w in report.warnings)
    assert any("converted from metres" in w for w in report.warnings)


def test_another_foot_gets_a_twin_in_the_law_s_feet() -> None:
    """Clarke's foot (EPSG:2314) is 0.3047972654 m: not the law's foot, so it is twinned."""
    clarke = CRS("EPSG:2314")
    assert clarke.axis_info[0].unit_name == "Clarke's foot"
    twin = foot_twin(clarke)
    assert twin.axis_info[0].unit_conversion_factor == 0.3048
    to_twin = Transformer.from_crs(clarke, twin, always_xy=True)
    x, _ = to_twin.transform(1_000_000.0, 0.0)
    # the false easting is kept, so only the distance from it scales
    x0, _ = to_twin.transform(0.0, 0.0)
    assert x - x0 == pytest.approx(1_000_000.0 * 0.3047972654 / 0.3048, abs=1e-3)
