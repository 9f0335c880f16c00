"""The sample town generator: determinism, lot sizes, zoning, the named cases' geometry,
the files it writes, and the committed data/sample."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pyogrio
import pytest
import rasterio
import shapely
from click.testing import CliRunner

from gis_sw.cli import cli
from gis_sw.sample import SAMPLE_PARCELS, SAMPLE_SEED, build_town, generate_town
from gis_sw.sample.cases import SampleProposals, build_cases
from gis_sw.sample.town import CASE_LOTS, SampleTown
from gis_sw.sample.write import RASTER_FILES

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "data" / "sample"
LAYER_NAMES = (
    "parcels",
    "zoning",
    "buildings",
    "wells",
    "septic_fields",
    "water_bodies",
    "wetlands",
    "floodplain",
    "impaired_waters",
    "soils",
    "land_cover",
    "pavement",
)


@pytest.fixture(scope="module")
def town() -> SampleTown:
    return build_town(parcels=SAMPLE_PARCELS, seed=SAMPLE_SEED)


@pytest.fixture(scope="module")
def cases(town: SampleTown) -> SampleProposals:
    return build_cases(town)


def _geoms(cases: SampleProposals, layer: str, prefix: str) -> list[shapely.Geometry]:
    frame = getattr(cases, layer)
    return list(frame.geometry[frame["proposal_id"].str.startswith(prefix)])


def _device(cases: SampleProposals, device_id: str) -> shapely.Geometry:
    devices = cases.devices.set_index("device_id")
    return devices.geometry[device_id]


def _zone_areas(town: SampleTown, geometry: shapely.Geometry) -> dict[str, float]:
    zoning = town.vectors["zoning"]
    out: dict[str, float] = {}
    for zone, shape in zip(zoning["zone"], zoning.geometry, strict=True):
        area = shapely.area(shapely.intersection(geometry, shape))
        if area > 0:
            out[zone] = out.get(zone, 0.0) + area
    return out


# -- determinism ----------------------------------------------------------------------------


def test_same_seed_gives_identical_features_and_rasters(town: SampleTown) -> None:
    again = build_town(parcels=SAMPLE_PARCELS, seed=SAMPLE_SEED)
    assert list(again.vectors) == list(town.vectors)
    for kind, frame in town.vectors.items():
        other = again.vectors[kind]
        pd.testing.assert_frame_equal(
            frame.drop(columns="geometry"), other.drop(columns="geometry")
        )
        assert np.array_equal(
            shapely.to_wkb(frame.geometry.values), shapely.to_wkb(other.geometry.values)
        ), kind
    for kind, raster in town.rasters.items():
        assert np.array_equal(raster.values, again.rasters[kind].values), kind
        assert raster.transform == again.rasters[kind].transform


def test_another_seed_gives_another_town(town: SampleTown) -> None:
    other = build_town(parcels=SAMPLE_PARCELS, seed=SAMPLE_SEED + 1)
    assert len(other.vectors["parcels"]) == SAMPLE_PARCELS
    same_parcels = shapely.equals(
        town.vectors["parcels"].geometry.values, other.vectors["parcels"].geometry.values
    )
    assert not same_parcels.all()
    assert not np.array_equal(town.rasters["dem"].values, other.rasters["dem"].values)
    assert list(town.vectors["parcels"]["owner"]) != list(other.vectors["parcels"]["owner"])


@pytest.mark.parametrize("parcels", [1, 57, 323, 1000])
def test_exactly_the_parcels_asked_for(parcels: int) -> None:
    generated = build_town(parcels=parcels, seed=7)
    frame = generated.vectors["parcels"]
    assert len(frame) == parcels
    assert frame["parcel_id"].is_unique
    assert shapely.is_valid(frame.geometry.values).all()


# -- the town -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("zone", "low_sqft", "high_sqft"),
    [
        ("R-10", 8_000, 12_000),
        ("R-20", 16_000, 24_000),
        ("R-40", 32_000, 48_000),
        ("CB", 16_000, 24_000),
    ],
)
def test_lot_sizes_by_zone(town: SampleTown, zone: str, low_sqft: float, high_sqft: float) -> None:
    lots = town.layout.lots
    ids = lots.loc[(lots["zone"] == zone) & (lots["kind"] == "lot"), "parcel_id"]
    parcels = town.vectors["parcels"].set_index("parcel_id")
    areas = parcels.loc[ids].area
    assert len(areas) >= 40
    assert areas.min() >= low_sqft
    assert areas.max() <= high_sqft
    assert abs(areas.mean() - (low_sqft + high_sqft) / 2) < 0.05 * high_sqft


def test_zoning_tiles_the_town(town: SampleTown) -> None:
    layout = town.layout
    extent = shapely.box(layout.x_min, layout.y_min, layout.x_max, layout.y_max)
    zones = town.vectors["zoning"].geometry.values
    union = shapely.union_all(zones)
    assert abs(union.area - extent.area) < 1.0
    assert abs(shapely.area(zones).sum() - extent.area) < 1.0  # no overlaps
    assert shapely.symmetric_difference(union, extent).area < 1.0
    assert set(town.vectors["zoning"]["zone"]) == {"CB", "R-10", "R-20", "R-40"}


def test_only_the_split_zoned_lots_straddle_a_zone_line(town: SampleTown) -> None:
    parcels = town.vectors["parcels"]
    straddling = [
        pid
        for pid, geom in zip(parcels["parcel_id"], parcels.geometry, strict=True)
        if len([a for a in _zone_areas(town, geom).values() if a > 0.01]) > 1
    ]
    assert sorted(straddling) == sorted(f"2.1-2-{lot}" for lot in range(1, 11))


def test_town_sits_in_mount_pleasant(town: SampleTown) -> None:
    from pyproj import Transformer

    to_lonlat = Transformer.from_crs("EPSG:2260", "EPSG:4326", always_xy=True)
    layout = town.layout
    lon, lat = to_lonlat.transform(
        (layout.x_min + layout.x_max) / 2, (layout.y_min + layout.y_max) / 2
    )
    assert abs(lon - -73.80) < 0.01
    assert abs(lat - 41.10) < 0.01


def test_wells_and_septic_fields_only_on_unsewered_lots(town: SampleTown) -> None:
    lots = town.layout.lots.set_index("parcel_id")
    for layer in ("wells", "septic_fields"):
        zones = set(lots.loc[town.vectors[layer]["parcel_id"], "zone"])
        assert zones == {"R-40", "R-20"}, layer
        assert not lots.loc[town.vectors[layer]["parcel_id"], "sewered"].any()


def test_buildings_with_and_without_basements(town: SampleTown) -> None:
    basement = town.vectors["buildings"]["habitable_basement"]
    assert basement.sum() > 50
    assert (basement == False).sum() > 50  # noqa: E712
    assert 1 <= basement.isna().sum() <= 40


def test_dem_slopes_towards_the_stream_and_groundwater_is_shallow_there(town: SampleTown) -> None:
    stream = town.vectors["water_bodies"].set_index("water_id").geometry["S1"]
    dem = town.rasters["dem"]
    gw = town.rasters["seasonal_high_groundwater"]
    x = np.full(5, stream.centroid.x)
    y = stream.centroid.y + np.array([0.0, 200.0, 400.0, 800.0, 1100.0])
    assert np.all(np.diff(dem.sample_xy(x, y)) > 0)
    assert np.all(np.diff(dem.sample_xy(x, stream.centroid.y - (y - stream.centroid.y))) > 0)
    near, far = gw.sample_xy(x[[0, 4]], y[[0, 4]])
    assert near < 3.5 < 15.0 < far
    assert str(gw.mode) == "depth"
    assert str(dem.mode) == "elevation"


def test_a_bigger_town_repeats_the_bands_with_a_brook_each_time() -> None:
    big = build_town(parcels=2_000, seed=11)
    layout = big.layout
    streams = len(big.streams.mid_y)
    assert layout.columns == 7
    assert streams == 2  # 803 parcels a cycle: the third stops before its brook
    water_ids = set(big.vectors["water_bodies"]["water_id"])
    assert {"S1", "S2"} <= water_ids
    assert len(big.vectors["wetlands"]) == 2 * layout.columns * streams
    zones = big.vectors["zoning"].geometry.values
    extent = shapely.box(layout.x_min, layout.y_min, layout.x_max, layout.y_max)
    assert abs(shapely.area(zones).sum() - extent.area) < 1.0
    assert shapely.symmetric_difference(shapely.union_all(zones), extent).area < 1.0
    # ground rises from each brook towards the ridge half-way to the next
    dem = big.rasters["dem"]
    x = np.full(3, (layout.x_min + layout.x_max) / 2)
    mid = big.streams.mid_y
    between = dem.sample_xy(x, np.array([mid[0] + 30.0, (mid[0] + mid[1]) / 2, mid[1] - 30.0]))
    assert between[1] > between[0] + 40.0
    assert between[1] > between[2] + 40.0


# -- the named cases ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "zones"),
    [
        ("P01", {"R-10": 120.0}),
        ("P02", {"R-20": 240.0}),
        ("P03", {"R-20": 300.0}),
        ("P04", {"R-10": 60.0, "R-20": 200.0}),
        ("P05", {"R-10": 110.0, "R-20": 50.0}),
        ("P06", {"R-40": 65_340.0}),
        ("P07", {"CB": 304_920.0}),
        ("P08", {"R-40": 87_120.0}),
    ],
    ids=[
        "120-sqft-addition-in-R-10",
        "240-sqft-patio-in-R-20",
        "300-sqft-patio-in-R-20",
        "60-in-R-10-plus-200-in-R-20",
        "110-in-R-10-plus-50-in-R-20",
        "1.5-acre-subdivision",
        "7-acre-commercial-site",
        "2-acre-farm-field",
    ],
)
def test_disturbance_areas_by_zone(
    town: SampleTown, cases: SampleProposals, prefix: str, zones: dict[str, float]
) -> None:
    union = shapely.union_all(_geoms(cases, "disturbance", prefix))
    measured = _zone_areas(town, union)
    assert measured.keys() == zones.keys()
    for zone, area in zones.items():
        assert measured[zone] == pytest.approx(area, abs=0.01), zone


def test_commercial_phases_overlap_to_a_5_5_acre_peak(cases: SampleProposals) -> None:
    phases = cases.disturbance[cases.disturbance["proposal_id"].str.startswith("P07")]
    assert list(phases.area.round(2)) == [130_680.0, 108_900.0, 65_340.0]

    def open_on(day: date) -> float:
        stamp = pd.Timestamp(day)
        active = phases[
            (pd.to_datetime(phases["start_date"]) <= stamp)
            & (pd.to_datetime(phases["end_date"]) >= stamp)
        ]
        return float(shapely.union_all(active.geometry.values).area) / 43_560.0

    assert open_on(date(2027, 7, 31)) == pytest.approx(3.0)
    assert open_on(date(2027, 8, 1)) == pytest.approx(5.5)
    assert open_on(date(2027, 10, 31)) == pytest.approx(5.5)
    assert open_on(date(2027, 11, 1)) == pytest.approx(2.5)
    assert open_on(date(2028, 4, 20)) == pytest.approx(1.5)


@pytest.mark.parametrize(
    ("device_id", "distance_ft"),
    [("D09-9ft", 9.00), ("D09-11ft", 11.00)],
    ids=["9.00-ft-from-lot-line", "11.00-ft-from-lot-line"],
)
def test_lot_line_devices(
    town: SampleTown, cases: SampleProposals, device_id: str, distance_ft: float
) -> None:
    lines = shapely.union_all(town.vectors["parcels"].boundary.values)
    assert round(shapely.distance(_device(cases, device_id), lines), 2) == distance_ft


def test_parking_device_is_45_ft_from_a_well(town: SampleTown, cases: SampleProposals) -> None:
    device = _device(cases, "D10-parking")
    wells = town.vectors["wells"]
    distances = shapely.distance(device, wells.geometry.values)
    assert round(float(distances.min()), 2) == 45.00
    assert wells["well_id"].iloc[int(distances.argmin())] == "WL" + CASE_LOTS["P10"]
    assert np.sort(distances)[1] > 100.0  # the only well inside 100 ft
    assert bool(cases.devices.set_index("device_id").loc["D10-parking", "serves_vehicle_traffic"])
    for layer in ("wetlands", "water_bodies"):
        assert shapely.distance(device, town.vectors[layer].geometry.values).min() > 50.0


def test_septic_devices_are_15_ft_up_and_down_gradient(
    town: SampleTown, cases: SampleProposals
) -> None:
    septic = town.vectors["septic_fields"].set_index("septic_id").geometry["SF" + CASE_LOTS["P11"]]
    dem = town.rasters["dem"]
    field_cells = dem.cells_under(septic)
    up, down = _device(cases, "D11-up"), _device(cases, "D11-down")
    assert round(shapely.distance(up, septic), 2) == 15.00
    assert round(shapely.distance(down, septic), 2) == 15.00
    assert dem.cells_under(up)[0] > field_cells.max() + 0.2
    assert dem.cells_under(down)[0] < field_cells.min() - 0.2


def test_groundwater_device_is_1_ft_above_seasonal_high(
    town: SampleTown, cases: SampleProposals
) -> None:
    device = _device(cases, "D12-shallow")
    depth_ft = float(cases.devices.set_index("device_id").loc["D12-shallow", "depth_ft"])
    gw_ft = town.rasters["seasonal_high_groundwater"].cells_under(device)[0]
    assert 0.9 <= gw_ft - depth_ft <= 1.1
    assert town.rasters["bedrock"].cells_under(device)[0] - depth_ft > 2.0


def test_basement_device_is_15_ft_from_the_house(town: SampleTown, cases: SampleProposals) -> None:
    buildings = town.vectors["buildings"]
    distances = shapely.distance(_device(cases, "D13-basement"), buildings.geometry.values)
    nearest = int(distances.argmin())
    assert round(float(distances[nearest]), 2) == 15.00
    assert bool(buildings["habitable_basement"].iloc[nearest])
    assert np.sort(distances)[1] > 20.0


def test_missing_data_device_sits_beside_a_house_of_unknown_basement(
    town: SampleTown, cases: SampleProposals
) -> None:
    buildings = town.vectors["buildings"]
    distances = shapely.distance(_device(cases, "D16-unknown"), buildings.geometry.values)
    nearest = int(distances.argmin())
    assert round(float(distances[nearest]), 2) == 12.00
    assert pd.isna(buildings["habitable_basement"].iloc[nearest])
    device = cases.devices.set_index("device_id").loc["D16-unknown"]
    assert np.isnan(device["depth_ft"])
    assert np.isnan(device["bottom_elevation_ft"])
    assert not device["has_sedimentation_device"]
    assert not device["test_hole_logged"]


def test_every_other_device_keeps_every_other_setback(
    town: SampleTown, cases: SampleProposals
) -> None:
    buildings = town.vectors["buildings"].geometry.values
    lines = shapely.union_all(town.vectors["parcels"].boundary.values)
    gw, rock = town.rasters["seasonal_high_groundwater"], town.rasters["bedrock"]
    checked = 0
    for row in cases.devices.itertuples():
        geom = row.geometry
        if row.device_id != "D09-9ft":
            assert shapely.distance(geom, lines) >= 10.0, row.device_id
        if row.device_id == "D16-unknown":
            continue
        if row.device_id != "D13-basement":
            assert shapely.distance(geom, buildings).min() > 20.0, row.device_id
        depth_ft = row.depth_ft
        if np.isnan(depth_ft):  # given by its bottom elevation (P17)
            depth_ft = town.rasters["dem"].cells_under(geom).max() - row.bottom_elevation_ft
        if row.device_id != "D12-shallow":
            assert gw.cells_under(geom).min() - depth_ft >= 2.0, row.device_id
        assert rock.cells_under(geom).min() - depth_ft >= 2.0, row.device_id
        assert row.has_sedimentation_device
        assert row.test_hole_logged
        checked += 1
    assert checked == 13


def test_wetland_case_touches_wetland_adjacent_area_and_floodplain(
    town: SampleTown, cases: SampleProposals
) -> None:
    (regrade,) = _geoms(cases, "disturbance", "P14")
    wetlands = shapely.union_all(town.vectors["wetlands"].geometry.values)
    floodplain = shapely.union_all(town.vectors["floodplain"].geometry.values)
    in_wetland = shapely.intersection(regrade, wetlands).area
    assert 100.0 < in_wetland < regrade.area / 2
    assert shapely.intersection(regrade, floodplain).area == pytest.approx(regrade.area)
    assert (
        shapely.intersection(
            regrade, shapely.union_all(town.vectors["water_bodies"].geometry.values)
        ).area
        == 0.0
    )
    rows = cases.expected[cases.expected["proposal_id"].str.startswith("P14")].set_index(
        "subject_id"
    )
    assert rows.loc["wetlands", "note"].startswith(f"{in_wetland:,.1f} sq ft")


def test_runoff_case_has_roof_and_driveway_on_a_vacant_lot(
    town: SampleTown, cases: SampleProposals
) -> None:
    surfaces = cases.impervious[cases.impervious["proposal_id"].str.startswith("P15")]
    assert dict(zip(surfaces["surface"], surfaces.area.round(2), strict=True)) == {
        "roof": 2000.0,
        "driveway": 480.0,
    }
    assert "B" + CASE_LOTS["P15"] not in set(town.vectors["buildings"]["building_id"])


def test_expected_outcomes_cover_every_case(cases: SampleProposals) -> None:
    expected = cases.expected
    assert set(expected["outcome"]) <= {"pass", "fail", "required", "review", "info"}
    assert set(expected["proposal_id"]) == set(cases.attributes["proposal_id"])
    assert not expected.duplicated(["proposal_id", "rule_id", "subject_id"]).any()
    device_rows = expected[expected["rule_id"].str.match(r"SW2\d\d")]
    assert set(device_rows["subject_id"]) <= set(cases.devices["device_id"])


# -- files ----------------------------------------------------------------------------------


def _assert_same_layers(left: Path, right: Path, layers: list[str]) -> None:
    for layer in layers:
        a = pyogrio.read_dataframe(left, layer=layer, use_arrow=True)
        b = pyogrio.read_dataframe(right, layer=layer, use_arrow=True)
        pd.testing.assert_frame_equal(
            pd.DataFrame(a).drop(columns="geometry", errors="ignore"),
            pd.DataFrame(b).drop(columns="geometry", errors="ignore"),
        )
        if "geometry" in a:
            assert np.array_equal(
                shapely.to_wkb(a.geometry.values), shapely.to_wkb(b.geometry.values)
            ), layer


def test_committed_sample_equals_a_fresh_generation(tmp_path: Path) -> None:
    generate_town(tmp_path, command="gis-sw sample --out DIR --parcels 323 --seed 183")
    _assert_same_layers(SAMPLE_DIR / "town.gpkg", tmp_path / "town.gpkg", list(LAYER_NAMES))
    _assert_same_layers(
        SAMPLE_DIR / "proposals.gpkg",
        tmp_path / "proposals.gpkg",
        ["disturbance", "devices", "impervious", "proposals"],
    )
    for name in RASTER_FILES.values():
        with rasterio.open(SAMPLE_DIR / name) as committed, rasterio.open(tmp_path / name) as fresh:
            assert np.array_equal(committed.read(1), fresh.read(1)), name
            assert committed.transform == fresh.transform
            assert committed.tags()["GIS_SW_MODE"] == fresh.tags()["GIS_SW_MODE"]
    for name in ("expected.csv", "layers.toml"):
        assert (SAMPLE_DIR / name).read_text() == (tmp_path / name).read_text(), name


def test_committed_sample_is_small() -> None:
    total = sum(p.stat().st_size for p in SAMPLE_DIR.iterdir() if p.is_file())
    assert total < 5_000_000


def test_raster_files_carry_crs_and_mode(town: SampleTown) -> None:
    for kind, name in RASTER_FILES.items():
        with rasterio.open(SAMPLE_DIR / name) as src:
            assert src.crs.to_epsg() == 2260
            assert src.tags()["GIS_SW_MODE"] == str(town.rasters[kind].mode)
            assert src.res == (10.0, 10.0)
            assert np.array_equal(src.read(1).astype("float64"), town.rasters[kind].values)


def test_read_layers_loads_the_committed_sample(ruleset: object) -> None:
    from gis_sw.layers.read import read_layers, read_proposals

    layers = read_layers(SAMPLE_DIR / "layers.toml", ruleset=ruleset)  # type: ignore[arg-type]
    assert set(LAYER_NAMES) <= set(layers.vectors)
    assert len(layers.vectors["parcels"]) == SAMPLE_PARCELS
    assert {k: str(r.mode) for k, r in layers.rasters.items()} == {
        "dem": "elevation",
        "seasonal_high_groundwater": "depth",
        "bedrock": "depth",
    }
    proposals = read_proposals(SAMPLE_DIR / "proposals.gpkg", ruleset=ruleset)  # type: ignore[arg-type]
    named = set(pd.read_csv(SAMPLE_DIR / "expected.csv")["proposal_id"])
    assert len(proposals.ids) == len(named) == 21  # P01-P21
    assert proposals.attributes.loc["P08-farm-exempt", "exemption"] == "A"
    assert proposals.devices.set_index("device_id").loc["D12-shallow", "depth_ft"] > 0


def test_cli_writes_a_small_town_and_refuses_to_overwrite(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["sample", "--out", str(tmp_path), "--parcels", "40", "--seed", "5"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert len(pyogrio.read_dataframe(tmp_path / "town.gpkg", layer="parcels")) == 40
    assert not (tmp_path / "proposals.gpkg").exists()  # too small for the named cases
    assert 'mode = "depth"' in (tmp_path / "layers.toml").read_text()
    again = runner.invoke(cli, args)
    assert again.exit_code == 2
    assert "--overwrite" in again.output


def test_cli_parquet_format_reads_back(tmp_path: Path, ruleset: object) -> None:
    result = CliRunner().invoke(
        cli, ["sample", "--out", str(tmp_path), "--parcels", "60", "--format", "parquet"]
    )
    assert result.exit_code == 0, result.output
    assert 'path = "zoning.parquet"' in (tmp_path / "layers.toml").read_text()
    from gis_sw.layers.read import read_layers

    layers = read_layers(tmp_path / "layers.toml", ruleset=ruleset)  # type: ignore[arg-type]
    assert len(layers.vectors["parcels"]) == 60
    assert set(LAYER_NAMES) <= set(layers.vectors)
    assert set(layers.rasters) == set(RASTER_FILES)
