"""Hypothesis strategies: tiny generated towns screened by the real engine.

A town is a row of rectangular parcels split between zones R-10 and R-20, one well, one
wetland, one water body, one 303(d)-impaired water, one septic field, one house (habitable
basement) and a shed, a sloped DEM, a constant seasonal-high-groundwater depth raster, and
one or two proposals with disturbance
rectangles and infiltration devices.  It sits inside EPSG:2260's area of use, around Mount
Pleasant (x ~ 684,000, y ~ 826,000 ftUS).

Every vector coordinate lies on a 1/4 ft grid (disturbance on the same grid moved by 1/8
ft), exact in binary, so no generated distance or area lies at a rounding boundary of the
0.01 ft / 0.01 sq ft comparisons (9.995 ft, 249.995 sq ft); raster cell edges are offset by
0.3 ft from that grid, so no polygon edge lies on a cell edge (where "all touched" would
hang on the last bit of a float).  The boundary cases the law cares about (10.00 ft,
9.99 ft, 250.00 sq ft, 249.90 sq ft) are given as explicit
``@example`` cases in ``test_properties.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pyproj
import rasterio
import shapely
from affine import Affine
from hypothesis import strategies as st
from shapely import affinity
from shapely.geometry import Point, box

from gis_sw.analysis.engine import run_rules
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.layers.raster import RasterLayer, RasterMode
from gis_sw.layers.vector import to_working_crs
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
WORKING = pyproj.CRS.from_user_input(CRS)
X0, Y0 = 684_000.0, 826_000.0
"""Lower-left corner of every generated town (Mount Pleasant, NAD83 / New York East ftUS)."""
CELL_FT = 5.0
RASTER_MARGIN_FT = 600.0
RASTER_OFFSET_FT = 0.3  # cell edges never on the 1/4 ft grid of the vectors


def quarter(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Multiples of 1/4 ft in [lo, hi]."""
    return st.integers(math.ceil(lo * 4), math.floor(hi * 4)).map(lambda n: n / 4)


@dataclass(frozen=True)
class Town:
    """Everything a run needs, in EPSG:2260, as plain frames (cheap to transform)."""

    vectors: dict[str, gpd.GeoDataFrame]
    dem_slope: tuple[float, float, float]  # z0, dz/dx, dz/dy (per ft, local coordinates)
    groundwater_depth_ft: float
    disturbance: gpd.GeoDataFrame
    devices: gpd.GeoDataFrame
    attributes: pd.DataFrame
    raster_origin: tuple[float, float] = (X0, Y0)  # where local (0, 0) of the rasters is
    extent: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # local w, h of town
    notes: dict[str, Any] = field(default_factory=dict)

    # -- building the inputs -------------------------------------------------------------

    def rasters(self) -> dict[str, RasterLayer]:
        width, height = self.extent[2], self.extent[3]
        ox, oy = self.raster_origin
        left = ox - RASTER_MARGIN_FT - RASTER_OFFSET_FT
        top = oy + height + RASTER_MARGIN_FT + RASTER_OFFSET_FT
        ncols = math.ceil((width + 2 * RASTER_MARGIN_FT) / CELL_FT) + 1
        nrows = math.ceil((height + 2 * RASTER_MARGIN_FT) / CELL_FT) + 1
        transform = Affine(CELL_FT, 0.0, left, 0.0, -CELL_FT, top)
        cols, rows = np.meshgrid(np.arange(ncols) + 0.5, np.arange(nrows) + 0.5)
        # the plane is defined on raster cell positions, so a shifted raster carries it along
        lx = cols * CELL_FT - RASTER_MARGIN_FT - RASTER_OFFSET_FT
        ly = height + RASTER_MARGIN_FT + RASTER_OFFSET_FT - rows * CELL_FT
        z0, gx, gy = self.dem_slope
        dem = z0 + gx * lx + gy * ly
        depth = np.full(dem.shape, self.groundwater_depth_ft)
        return {
            "dem": RasterLayer("dem", dem, transform, WORKING, source="generated"),
            "seasonal_high_groundwater": RasterLayer(
                "seasonal_high_groundwater",
                depth,
                transform,
                WORKING,
                mode=RasterMode.DEPTH,
                source="generated",
            ),
        }

    def layerset(self) -> LayerSet:
        return make_layerset(CRS, self.vectors, self.rasters())

    def proposals(self) -> Proposals:
        return make_proposals(CRS, self.disturbance, self.devices, self.attributes)

    def screen(self, ruleset: Ruleset, *, select: list[str] | None = None) -> gpd.GeoDataFrame:
        """The findings of :func:`run_rules`; a crashing check raises (no silent review)."""
        return run_rules(
            self.layerset(), self.proposals(), ruleset, select=select, on_error="raise"
        )

    # -- transforming every layer together -------------------------------------------------

    def map_geometries(self, fn: Callable[[gpd.GeoSeries], gpd.GeoSeries]) -> Town:
        """The town with ``fn`` applied to the geometries of every vector layer."""

        def apply(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
            out = frame.copy()
            out[out.geometry.name] = fn(out.geometry)
            return gpd.GeoDataFrame(out, geometry=out.geometry.name, crs=frame.crs)

        return replace(
            self,
            vectors={k: apply(v) for k, v in self.vectors.items()},
            disturbance=apply(self.disturbance),
            devices=apply(self.devices),
        )

    def translated(self, dx: float, dy: float) -> Town:
        """Every layer moved by (dx, dy) ft, rasters included (their transform shifts)."""
        moved = self.map_geometries(lambda g: g.translate(dx, dy))
        ox, oy = self.raster_origin
        return replace(moved, raster_origin=(ox + dx, oy + dy))

    def rotated(self, angle_deg: float) -> Town:
        """Every vector layer rotated about the town's centre; the DEM made flat.

        A north-up raster cannot rotate with the vectors, so the rotated town (and the town
        it is compared with) has a flat DEM: every rule then still runs and must agree.
        """
        cx, cy = X0 + self.extent[2] / 2, Y0 + self.extent[3] / 2
        return self.map_geometries(lambda g: g.rotate(angle_deg, origin=(cx, cy)))

    def flat(self) -> Town:
        return replace(self, dem_slope=(self.dem_slope[0], 0.0, 0.0))

    def reprojected(self) -> Town:
        """Every vector layer to EPSG:4326 and back, as a user's GeoJSON would arrive.

        The way back goes through the readers' :func:`to_working_crs`, which also checks
        that the features lie in EPSG:2260's area of use.
        """

        def there_and_back(frame: gpd.GeoDataFrame, label: str) -> gpd.GeoDataFrame:
            return to_working_crs(frame.to_crs("EPSG:4326"), WORKING, label=label)

        return replace(
            self,
            vectors={k: there_and_back(v, k) for k, v in self.vectors.items()},
            disturbance=there_and_back(self.disturbance, "disturbance"),
            devices=there_and_back(self.devices, "devices"),
        )

    def with_devices(self, devices: gpd.GeoDataFrame) -> Town:
        return replace(self, devices=devices)

    def with_disturbance(self, disturbance: gpd.GeoDataFrame) -> Town:
        return replace(self, disturbance=disturbance)


def frame(rows: list[dict[str, Any]], columns: list[str]) -> gpd.GeoDataFrame:
    if not rows:
        data: dict[str, Any] = {c: pd.Series(dtype="object") for c in columns}
        return gpd.GeoDataFrame(data, geometry=gpd.GeoSeries([], crs=CRS), crs=CRS)
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def at(geometry: shapely.Geometry) -> shapely.Geometry:
    """A local-coordinate geometry placed at the town's corner (exact: 1/4 ft grid)."""
    return affinity.translate(geometry, X0, Y0)


@st.composite
def rect_in(
    draw: st.DrawFn,
    bounds: tuple[float, float, float, float],
    *,
    min_ft: float = 1.0,
    max_ft: float = 400.0,
    offset_ft: float = 0.0,
) -> shapely.Polygon:
    """A rectangle (local coordinates, 1/4 ft grid moved by ``offset_ft``) whose lower-left
    corner is in bounds."""
    minx, miny, maxx, maxy = bounds
    x = draw(quarter(minx, maxx - min_ft)) + offset_ft
    y = draw(quarter(miny, maxy - min_ft)) + offset_ft
    w = draw(quarter(min_ft, max(min_ft, min(max_ft, maxx - x))))
    h = draw(quarter(min_ft, max(min_ft, min(max_ft, maxy - y))))
    return box(x, y, x + w, y + h)


@st.composite
def devices_for(
    draw: st.DrawFn,
    proposal_id: str,
    bounds: tuple[float, float, float, float],
    *,
    start: int,
    ground_ft: float,
    min_size: int = 0,
) -> list[dict[str, Any]]:
    """Devices (points or small squares) in bounds; some with a bottom elevation near the
    ground (``ground_ft``, the DEM at the town's corner) so SW201 can go either way."""
    rows = []
    for k in range(draw(st.integers(min_size, 3))):
        # strictly inside: a device exactly on the town's outer lot line is on a parcel only
        # up to the last bit of a float (see test_device_a_hair_outside_its_lot_*)
        x = draw(quarter(bounds[0] + 0.25, bounds[2] - 0.25))
        y = draw(quarter(bounds[1] + 0.25, bounds[3] - 0.25))
        size = draw(st.one_of(st.just(0.0), quarter(1.0, 12.0)))
        shape = Point(x, y) if size == 0.0 else box(x, y, x + size, y + size)
        rows.append(
            {
                "device_id": f"D{start + k}",
                "proposal_id": proposal_id,
                "device_type": draw(st.sampled_from(["drywell", "trench", "basin"])),
                "serves_vehicle_traffic": draw(st.sampled_from([True, False, None])),
                "depth_ft": draw(st.one_of(st.none(), quarter(2.0, 12.0))),
                "bottom_elevation_ft": draw(
                    st.sampled_from([None, ground_ft - 6.0, ground_ft + 1.0])
                ),
                "has_sedimentation_device": draw(st.sampled_from([True, False, None])),
                "test_hole_logged": draw(st.sampled_from([True, False, None])),
                "geometry": at(shape),
            }
        )
    return rows


@st.composite
def towns(draw: st.DrawFn, *, max_proposals: int = 2, min_devices: int = 0) -> Town:
    """A tiny town (see the module docstring) with one or two proposals.

    ``min_devices``: the least number of devices proposal P1 has.
    """
    slope = (
        draw(quarter(200.0, 400.0)),
        draw(st.sampled_from([-0.2, -0.05, 0.0, 0.05, 0.1])),
        draw(st.sampled_from([-0.1, 0.0, 0.04, 0.2])),
    )
    widths = draw(st.lists(quarter(60.0, 400.0), min_size=2, max_size=3))
    height = draw(quarter(60.0, 400.0))
    edges = np.concatenate([[0.0], np.cumsum(widths)])
    width = float(edges[-1])
    parcels = [
        {"parcel_id": f"1.{i + 1}", "geometry": at(box(edges[i], 0.0, edges[i + 1], height))}
        for i in range(len(widths))
    ]
    split = draw(quarter(10.0, width - 10.0))
    margin = 500.0
    zoning = [
        {"zone": "R-10", "geometry": at(box(-margin, -margin, split, height + margin))},
        {"zone": "R-20", "geometry": at(box(split, -margin, width + margin, height + margin))},
    ]
    around = (-60.0, -60.0, width + 60.0, height + 60.0)
    inside = (0.0, 0.0, width, height)
    well = at(Point(draw(quarter(*around[::2])), draw(quarter(*around[1::2]))))
    wetland = at(draw(rect_in(around, min_ft=5.0, max_ft=80.0)))
    water = at(draw(rect_in(around, min_ft=5.0, max_ft=80.0)))
    listed = at(draw(rect_in(around, min_ft=20.0, max_ft=200.0)))
    septic = at(draw(rect_in(inside, min_ft=10.0, max_ft=40.0)))
    house = at(draw(rect_in(inside, min_ft=20.0, max_ft=50.0)))
    shed = at(draw(rect_in(inside, min_ft=8.0, max_ft=20.0)))
    vectors = {
        "parcels": frame(parcels, ["parcel_id"]),
        "zoning": frame(zoning, ["zone"]),
        "wells": frame([{"well_id": "W1", "geometry": well}], ["well_id"]),
        "wetlands": frame(
            [{"wetland_id": "WL1", "name": "Brook marsh", "geometry": wetland}], ["wetland_id"]
        ),
        "water_bodies": frame(
            [{"water_id": "WB1", "name": "Mill pond", "geometry": water}], ["water_id"]
        ),
        "septic_fields": frame([{"septic_id": "S1", "geometry": septic}], ["septic_id"]),
        "impaired_waters": frame(
            [{"name": "Saw Mill River", "pollutant": "phosphorus", "geometry": listed}], ["name"]
        ),
        "buildings": frame(
            [
                {"building_id": "H1", "habitable_basement": True, "geometry": house},
                {
                    "building_id": "G1",
                    "habitable_basement": draw(st.sampled_from([False, None])),
                    "geometry": shed,
                },
            ],
            ["building_id"],
        ),
    }
    n_props = draw(st.integers(1, max_proposals))
    dist_rows: list[dict[str, Any]] = []
    dev_rows: list[dict[str, Any]] = []
    attr_rows = []
    for p in range(n_props):
        pid = f"P{p + 1}"
        for _ in range(draw(st.integers(1, 3))):
            big = draw(st.booleans())
            # off the grid of the town's edges by 1/8 ft: a disturbance edge drawn exactly on
            # a lot line is one float bit from taking in the neighbour's lot (see
            # test_drainage_area_ignores_a_hair_of_a_neighbouring_lot)
            size = 600.0 if big else 30.0
            shape = draw(rect_in(around, min_ft=1.0, max_ft=size, offset_ft=0.125))
            dist_rows.append({"proposal_id": pid, "geometry": at(shape)})
        dev_rows += draw(
            devices_for(
                pid,
                inside,
                start=10 * p,
                ground_ft=slope[0],
                min_size=min_devices if p == 0 else 0,
            )
        )
        attr_rows.append(
            {
                "proposal_id": pid,
                "land_use": draw(st.sampled_from(["single_family", "agricultural", "other"])),
                "part_of_larger_plan": draw(st.sampled_from([True, False, None])),
                "construction_cost_usd": draw(st.sampled_from([None, 20_000.0, 1_250_000.0])),
            }
        )
    return Town(
        vectors=vectors,
        dem_slope=slope,
        groundwater_depth_ft=draw(quarter(3.0, 15.0)),
        disturbance=frame(dist_rows, ["proposal_id"]),
        devices=frame(dev_rows, ["device_id", "proposal_id"]),
        attributes=pd.DataFrame(attr_rows),
        extent=(0.0, 0.0, width, height),
    )


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns GDAL writes as they are: nullable booleans stay booleans."""
    out = frame.copy()
    for name in out.columns:
        values = [v for v in out[name] if v is not None and not pd.isna(v)]
        if values and all(isinstance(v, bool | np.bool_) for v in values):
            out[name] = pd.array(list(out[name]), dtype="boolean")
    return out


def write_town_files(town: Town, folder: Path) -> tuple[Path, Path]:
    """The town as a user would send it: layers and proposals in EPSG:4326 GeoPackages,
    rasters as GeoTIFFs (EPSG:2260, feet) beside ``town.gpkg``.

    Returns
    -------
    (town.gpkg, proposals.gpkg)
    """
    town_path, proposals_path = folder / "town.gpkg", folder / "proposals.gpkg"
    for kind, layer in town.vectors.items():
        pyogrio.write_dataframe(_plain(layer.to_crs("EPSG:4326")), town_path, layer=kind)
    for kind, raster in town.rasters().items():
        profile = {
            "driver": "GTiff",
            "width": raster.shape[1],
            "height": raster.shape[0],
            "count": 1,
            "dtype": "float64",
            "crs": CRS,
            "transform": raster.transform,
        }
        with rasterio.open(folder / f"{kind}.tif", "w", **profile) as dst:
            dst.write(raster.values, 1)
            dst.update_tags(GIS_SW_MODE=str(raster.mode))
    for kind, layer in (("disturbance", town.disturbance), ("devices", town.devices)):
        if len(layer):
            pyogrio.write_dataframe(_plain(layer.to_crs("EPSG:4326")), proposals_path, layer=kind)
    pyogrio.write_dataframe(_plain(town.attributes), proposals_path, layer="proposals")
    return town_path, proposals_path
