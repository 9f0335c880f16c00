"""Siting polygons: a hand-built lot whose legal area is computed by hand, to 1 sq ft."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pyproj
import pytest
import rasterio
import shapely
from affine import Affine
from click.testing import CliRunner
from shapely.geometry import Point, box

from gis_sw.analysis import infiltration
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.distances import meets_minimum
from gis_sw.analysis.siting import siting_polygons
from gis_sw.cli import cli
from gis_sw.errors import LayerError
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.raster import RasterLayer, RasterMode
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
LOT = box(0, 0, 300, 100)
HOUSE = box(40, 35, 60, 55)  # habitable basement; its 20-ft zone lies inside the setback
SEPTIC = box(242, 42, 258, 58)  # centred on x = 250
WELL = Point(135, 50)

# Hand-computed areas, sq ft.
INNER = 280 * 80  # lot less its 10-ft setback
HOUSE_ZONE = 20 * 20 + 4 * 20 * 20 + math.pi * 20**2  # 3256.64
SEPTIC_ZONE = 16 * 16 + 4 * 16 * 20 + math.pi * 20**2  # 2792.64
# DEM falls 1 ft per 10-ft column eastward; the field's lowest cell is column 25 (x 250-260,
# 175 ft), so everything west of x = 250 within 20 ft of the field is up-gradient, and the
# low cell's own column is flat within the DEM's resolution (0.00 ft <= 0.33 ft: SW201
# review, issue 13 item 1), so it goes too: the zone less its part east of x = 260 (an
# 18 x 16 strip and two quarter discs of radius 20 beyond 2 ft from their centres).
QUARTER_BEYOND_2 = math.pi * 100 - (math.sqrt(396) + 200 * math.asin(0.1))  # 274.23
SEPTIC_CUT = SEPTIC_ZONE - (18 * 16 + 2 * QUARTER_BEYOND_2)  # 1956.19
CAP = 50**2 * math.acos(40 / 50) - 40 * 30  # circle segment beyond y = 10 or y = 90
WELL_ZONE = math.pi * 50**2 - 2 * CAP  # 7036.48
ROOF_AREA = INNER - HOUSE_ZONE - SEPTIC_CUT  # 17619.05
VEHICLE_AREA = ROOF_AREA - WELL_ZONE  # 10582.57


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def grid(kind: str, values: Any, mode: RasterMode = RasterMode.ELEVATION) -> RasterLayer:
    crs = pyproj.CRS.from_user_input(CRS)
    arr = np.asarray(values, dtype="float64")
    return RasterLayer(kind, arr, Affine(10, 0, 0, 0, -10, 100), crs, mode=mode, source="test")


def lot_layers(*, drop: tuple[str, ...] = ()) -> LayerSet:
    vectors = {
        "parcels": frame([{"parcel_id": "104-22", "geometry": LOT}]),
        "buildings": frame([{"building_id": "B-1", "habitable_basement": True, "geometry": HOUSE}]),
        "septic_fields": frame([{"septic_id": "S-1", "geometry": SEPTIC}]),
        "wells": frame([{"well_id": "W-1", "geometry": WELL}]),
        "wetlands": frame([{"wetland_id": "WL-1", "geometry": box(400, 0, 500, 100)}]),
        "water_bodies": frame([{"water_id": "POND", "geometry": box(0, 400, 100, 500)}]),
    }
    rasters = {
        "dem": grid("dem", np.tile(200.0 - np.arange(30), (10, 1))),
        "seasonal_high_groundwater": grid(
            "seasonal_high_groundwater", np.full((10, 30), 20.0), RasterMode.DEPTH
        ),
        "bedrock": grid("bedrock", np.full((10, 30), 30.0), RasterMode.DEPTH),
    }
    return make_layerset(
        CRS,
        {k: v for k, v in vectors.items() if k not in drop},
        {k: v for k, v in rasters.items() if k not in drop},
    )


@pytest.mark.parametrize(
    ("device_class", "expected"),
    [("roof", ROOF_AREA), ("vehicle", VEHICLE_AREA)],
    ids=["roof-device", "vehicle-device"],
)
def test_hand_built_lot_area(ruleset: Ruleset, device_class: str, expected: float) -> None:
    result = siting_polygons(
        lot_layers(), ruleset, parcel_ids=["104-22"], device_class=device_class, depth_ft=5.0
    )
    row = result.iloc[0]
    assert row["parcel_id"] == "104-22"
    assert row["outcome"] == "pass"
    assert row["area_sqft"] == pytest.approx(expected, abs=1.0)
    assert row["geometry"].area == pytest.approx(expected, abs=1.0)
    assert row["device_class"] == device_class
    assert row["depth_ft"] == 5.0


def _probe_points(polygon: shapely.Geometry) -> np.ndarray:
    """Every vertex and every edge midpoint of a polygon's rings."""
    coords = []
    for ring in shapely.get_rings(shapely.get_parts(polygon)):
        xy = shapely.get_coordinates(ring)
        coords += [xy, (xy[:-1] + xy[1:]) / 2]
    return shapely.points(np.concatenate(coords))


def test_no_allowed_point_is_closer_than_any_setback(ruleset: Ruleset) -> None:
    allowed = siting_polygons(lot_layers(), ruleset, device_class="vehicle", depth_ft=5.0)
    probes = _probe_points(allowed.geometry.iat[0])
    assert len(probes) > 500
    tol = ruleset.devices.distance_tolerance_ft
    for feature, minimum in ((LOT.boundary, 10.0), (HOUSE, 20.0), (WELL, 50.0)):
        assert meets_minimum(shapely.distance(probes, feature), minimum, tol).all()


def test_every_allowed_vertex_passes_the_device_checks(ruleset: Ruleset) -> None:
    layers = lot_layers()
    allowed = siting_polygons(layers, ruleset, device_class="vehicle", depth_ft=5.0)
    probes = _probe_points(allowed.geometry.iat[0])[::7]
    devices = frame(
        [
            {
                "device_id": f"D-{i}",
                "proposal_id": "P1",
                "serves_vehicle_traffic": True,
                "depth_ft": 5.0,
                "geometry": p,
            }
            for i, p in enumerate(probes)
        ]
    )
    disturbance = frame([{"proposal_id": "P1", "geometry": LOT}])
    ctx = CheckContext(layers, make_proposals(CRS, disturbance, devices), ruleset)
    for check in (
        infiltration.check_property_line,
        infiltration.check_habitable_basement,
        infiltration.check_vehicle_traffic,
        infiltration.check_septic_upgradient,
        infiltration.check_groundwater_separation,
        infiltration.check_bedrock_separation,
    ):
        outcomes = set(check(ctx)["outcome"])
        assert outcomes == {"pass"}, check.__name__


def test_point_just_west_of_the_septic_low_line_is_excluded(ruleset: Ruleset) -> None:
    allowed = siting_polygons(lot_layers(), ruleset, depth_ft=5.0).geometry.iat[0]
    assert not allowed.contains(Point(249.9, 50))  # 7.9 ft from the field, up-gradient
    assert allowed.contains(Point(262, 50))  # 4 ft east of the field, down-gradient
    assert allowed.contains(Point(220, 50))  # 22 ft west: outside the 20-ft zone


@pytest.mark.parametrize(
    ("drop", "class_", "depth", "needle"),
    [
        (("septic_fields",), "roof", 5.0, "no septic_fields layer"),
        (("wetlands",), "vehicle", 5.0, "no wetlands layer"),
        (("buildings",), "roof", 5.0, "no buildings layer"),
        (("bedrock",), "roof", 5.0, "no bedrock raster"),
        ((), "roof", None, "no device depth given"),
    ],
    ids=["no-septic-layer", "no-wetlands", "no-buildings", "no-bedrock", "no-depth"],
)
def test_missing_data_gives_review(
    ruleset: Ruleset, drop: tuple[str, ...], class_: str, depth: float | None, needle: str
) -> None:
    row = siting_polygons(lot_layers(drop=drop), ruleset, device_class=class_, depth_ft=depth).iloc[
        0
    ]
    assert row["outcome"] == "review"
    assert needle in row["reason"]


def test_septic_without_dem_removes_the_whole_zone(ruleset: Ruleset) -> None:
    row = siting_polygons(lot_layers(drop=("dem",)), ruleset, depth_ft=5.0).iloc[0]
    assert row["outcome"] == "review"
    assert "no DEM" in row["reason"]
    assert row["area_sqft"] == pytest.approx(INNER - HOUSE_ZONE - SEPTIC_ZONE, abs=1.0)


def test_groundwater_cells_at_2_00_ft_stay_and_1_99_ft_go(ruleset: Ruleset) -> None:
    depth = np.full((10, 30), 8.0)
    depth[2:4, 2:4] = 6.5  # x 20-40, y 60-80: 1.5 ft of separation: out
    depth[7, 7] = 6.99  # x 70-80, y 20-30: 1.99 ft: out
    depth[7, 5] = 7.0  # x 50-60, y 20-30: 2.00 ft: stays
    layers = make_layerset(
        CRS,
        {"parcels": frame([{"parcel_id": "A", "geometry": box(0, 0, 100, 100)}])},
        {"seasonal_high_groundwater": grid("seasonal_high_groundwater", depth, RasterMode.DEPTH)},
    )
    row = siting_polygons(layers, ruleset, depth_ft=5.0).iloc[0]
    assert row["area_sqft"] == pytest.approx(80 * 80 - 400 - 100, abs=1.0)
    assert row["outcome"] == "review"  # no bedrock, buildings or septic layers
    assert row["geometry"].contains(Point(55, 25))
    assert not row["geometry"].contains(Point(75, 25))


def test_groundwater_elevation_uses_the_dem(ruleset: Ruleset) -> None:
    # ground 100; groundwater elevation 93 except one cell at 94: a 5-ft device keeps
    # 2 ft over 93 but only 1 ft over 94.
    gw = np.full((10, 30), 93.0)
    gw[5, 5] = 94.0  # x 50-60, y 40-50
    layers = make_layerset(
        CRS,
        {"parcels": frame([{"parcel_id": "A", "geometry": box(0, 0, 100, 100)}])},
        {
            "dem": grid("dem", np.full((10, 30), 100.0)),
            "seasonal_high_groundwater": grid("seasonal_high_groundwater", gw),
        },
    )
    row = siting_polygons(layers, ruleset, depth_ft=5.0).iloc[0]
    assert row["area_sqft"] == pytest.approx(80 * 80 - 100, abs=1.0)


def test_tiny_lot_has_no_place(ruleset: Ruleset) -> None:
    layers = make_layerset(
        CRS, {"parcels": frame([{"parcel_id": "T", "geometry": box(0, 0, 20, 60)}])}
    )
    row = siting_polygons(layers, ruleset).iloc[0]
    assert row["outcome"] == "fail"
    assert row["area_sqft"] == 0
    assert "no point of the lot is 10 ft from every lot line" in row["reason"]


def test_fail_names_what_covers_the_lot(ruleset: Ruleset) -> None:
    vectors = {
        "parcels": frame([{"parcel_id": "T", "geometry": box(0, 0, 60, 60)}]),
        "buildings": frame(
            [{"building_id": "B", "habitable_basement": True, "geometry": box(22, 22, 38, 38)}]
        ),
        "septic_fields": frame([{"septic_id": "S", "geometry": box(500, 500, 510, 510)}]),
    }
    row = siting_polygons(make_layerset(CRS, vectors), ruleset).iloc[0]
    assert row["outcome"] == "fail"
    assert row["reason"].startswith(
        "no place on the parcel meets every setback: inside its 10-ft lot-line setback the "
        "rest is within 20 ft of a habitable basement or below-ground storage, a building "
        "footprint"
    )


def test_every_parcel_in_one_pass_matches_one_at_a_time(ruleset: Ruleset) -> None:
    lots = [box(x, y, x + 100, y + 80) for x in range(0, 1000, 100) for y in range(0, 800, 80)]
    houses = [box(x + 30, y + 30, x + 50, y + 50) for x in range(0, 1000, 100) for y in (0, 400)]
    layers = make_layerset(
        CRS,
        {
            "parcels": frame([{"parcel_id": f"L{i}", "geometry": g} for i, g in enumerate(lots)]),
            "buildings": frame(
                [
                    {"building_id": f"B{i}", "habitable_basement": i % 2 == 0, "geometry": g}
                    for i, g in enumerate(houses)
                ]
            ),
        },
    )
    everything = siting_polygons(layers, ruleset)
    assert len(everything) == 100
    single = siting_polygons(layers, ruleset, parcel_ids=["L0"]).iloc[0]
    assert everything.iloc[0]["area_sqft"] == pytest.approx(single["area_sqft"], abs=1e-6)
    # L0 holds a basement house (box 30-50): inner 80 x 60 less the 20-ft zone, clipped
    zone = shapely.buffer(houses[0], 20, quad_segs=256)
    expected = box(10, 10, 90, 70).difference(zone).area
    assert single["area_sqft"] == pytest.approx(expected, abs=1.0)


def test_bad_requests_raise(ruleset: Ruleset) -> None:
    with pytest.raises(LayerError, match="no parcel with parcel_id 999"):
        siting_polygons(lot_layers(), ruleset, parcel_ids=["999"])
    with pytest.raises(ValueError, match="'boat' is not a valid DeviceClass"):
        siting_polygons(lot_layers(), ruleset, device_class="boat")


TOWN_ORIGIN = (683_000.0, 826_000.0)  # inside Mount Pleasant, in EPSG:2260 feet


def _write_town(folder: Path) -> Path:
    """The hand-built lot as a GeoPackage with GeoTIFFs beside it, as a town would send it."""
    layers = lot_layers()
    gpkg = folder / "town.gpkg"
    for kind, layer in layers.vectors.items():
        moved = layer.set_geometry(layer.geometry.translate(*TOWN_ORIGIN))
        moved.to_file(gpkg, layer=kind, driver="GPKG")
    zoning = frame([{"zone": "R-20", "geometry": box(-1000, -1000, 1000, 1000)}])
    zoning.set_geometry(zoning.geometry.translate(*TOWN_ORIGIN)).to_file(
        gpkg, layer="zoning", driver="GPKG"
    )
    for kind, grid_layer in layers.rasters.items():
        with rasterio.open(
            folder / f"{kind}.tif",
            "w",
            driver="GTiff",
            height=grid_layer.shape[0],
            width=grid_layer.shape[1],
            count=1,
            dtype="float64",
            crs=CRS,
            transform=Affine.translation(*TOWN_ORIGIN) @ grid_layer.transform,
        ) as dst:
            dst.write(grid_layer.values, 1)
            dst.update_tags(GIS_SW_MODE=str(grid_layer.mode))
    return gpkg


def test_cli_writes_geojson_and_geopackage(tmp_path: Path, ruleset: Ruleset) -> None:
    gpkg = _write_town(tmp_path)
    out = tmp_path / "out"
    args = ["siting", "--layers", str(gpkg), "--parcel", "104-22", "--device-class", "vehicle"]
    args += ["--depth-ft", "5", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    # 10,150: the septic low cell's column is flat, so out (VEHICLE_AREA above)
    assert "104-22: pass, 10,150 sq ft for a vehicle device" in result.stdout
    package = gpd.read_file(out / "siting.gpkg", layer="siting")
    assert package.crs.equals(pyproj.CRS.from_user_input(CRS))
    assert package["area_sqft"].iat[0] == pytest.approx(VEHICLE_AREA, abs=1.0)
    assert package.geometry.iat[0].area == pytest.approx(VEHICLE_AREA, abs=1.0)
    geojson = json.loads((out / "siting.geojson").read_text())
    assert "crs" not in geojson  # RFC 7946: WGS84 longitude/latitude only
    feature = geojson["features"][0]
    assert feature["geometry"]["type"] == "MultiPolygon"
    assert feature["properties"]["outcome"] == "pass"
    lonlat = np.concatenate(
        [np.array(ring) for poly in feature["geometry"]["coordinates"] for ring in poly]
    )
    to_feet = pyproj.Transformer.from_crs("EPSG:4326", CRS, always_xy=True)
    x, y = to_feet.transform(lonlat[:, 0], lonlat[:, 1])
    x0, y0 = TOWN_ORIGIN
    assert (x.min() - x0, y.min() - y0, x.max() - x0, y.max() - y0) == pytest.approx(
        (10, 10, 290, 90), abs=0.05
    )
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 2
    assert "already exists" in again.stderr
    assert CliRunner().invoke(cli, [*args, "--overwrite"]).exit_code == 0


def test_cli_unknown_parcel_exits_2(tmp_path: Path) -> None:
    gpkg = _write_town(tmp_path)
    args = ["siting", "--layers", str(gpkg), "--parcel", "NOPE", "--out", str(tmp_path / "o")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "no parcel with parcel_id NOPE" in result.stderr


def test_review_reasons_are_per_parcel(ruleset: Ruleset) -> None:
    lots = [box(0, 0, 100, 100), box(100, 0, 200, 100), box(600, 0, 700, 100)]
    layers = lot_layers()
    vectors = dict(layers.vectors)
    vectors["parcels"] = frame([{"parcel_id": f"L{i}", "geometry": g} for i, g in enumerate(lots)])
    vectors["buildings"] = frame(
        [{"building_id": "B-9", "habitable_basement": None, "geometry": box(40, 40, 60, 60)}]
    )
    vectors["septic_fields"] = frame([{"septic_id": "S-9", "geometry": box(640, 40, 660, 60)}])
    dem = np.full((10, 30), np.nan)  # no ground data anywhere near the field
    rasters = {**layers.rasters, "dem": grid("dem", dem)}
    result = siting_polygons(make_layerset(CRS, vectors, rasters), ruleset, depth_ft=5.0)
    assert result["outcome"].tolist() == ["review", "pass", "review"]
    assert "no habitable_basement value" in result["reason"].iat[0]
    assert result["reason"].iat[1] == "every setback applied"
    # L2 lies outside the groundwater rasters (x 0-300): nothing there can be screened, and
    # that is missing data, not a lot where the law leaves no room
    assert result["area_sqft"].iat[2] == 0
    assert "the DEM does not cover it" in result["reason"].iat[2]
    assert "no seasonal_high_groundwater data" in result["reason"].iat[2]


def test_septic_field_over_dem_nodata_removes_its_whole_zone(ruleset: Ruleset) -> None:
    layers = lot_layers()
    dem = layers.rasters["dem"].values.copy()
    dem[4:6, 24:26] = np.nan  # the cells under the field
    rasters = {**layers.rasters, "dem": grid("dem", dem)}
    row = siting_polygons(make_layerset(CRS, dict(layers.vectors), rasters), ruleset, depth_ft=5.0)
    assert row["outcome"].iat[0] == "review"
    assert "the DEM has no data under the field" in row["reason"].iat[0]
    assert row["area_sqft"].iat[0] == pytest.approx(INNER - HOUSE_ZONE - SEPTIC_ZONE, abs=1.0)
