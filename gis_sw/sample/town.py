"""The synthetic town: parcels, zoning, buildings, wells, septic fields, water, soils.

:func:`build_town` returns a :class:`SampleTown` in memory; :mod:`gis_sw.sample.write`
writes it.  Every feature is computed with numpy/shapely array functions from the lot
table of :mod:`gis_sw.sample.layout`, so a million parcels take seconds, not hours.

A few lots are fixed rather than drawn, because the sample proposals
(:mod:`gis_sw.sample.cases`) stand on them: :data:`CASE_LOTS` says which lot each case uses
and :data:`FIXED_LOTS` whether it is built and whether its house has a habitable basement.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from numpy.typing import ArrayLike
from pyproj import CRS

from gis_sw.layers.build import make_layerset
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.raster import RasterLayer
from gis_sw.sample.layout import (
    BAND_CYCLE,
    RNG_BUILDINGS,
    RNG_PEOPLE,
    STREAM_BAND,
    STREETS,
    WORKING_CRS,
    Layout,
    band_lots,
    parcel_ids,
    pavement_polygons,
    plan_layout,
    zoning_polygons,
)
from gis_sw.sample.rasters import make_rasters
from gis_sw.sample.water import Streams, make_streams, soils, water_layers

logger = logging.getLogger(__name__)

CASE_LOTS: dict[str, str] = {
    "P01": "1.0-1-3",
    "P02": "3.1-1-5",
    "P03": "3.1-1-6",
    "P04": "2.1-2-3",
    "P05": "2.1-2-6",
    "P06": "5.2-1-1",
    "P07": "0.1-1-1",
    "P08": "5.0-1-1",
    "P09": "3.0-1-4",
    "P10": "5.1-1-1",
    "P11": "5.1-1-3",
    "P12": "4.1-1-2",
    "P13": "3.2-1-3",
    "P14": "4.0-2-2",
    "P15": "6.0-1-4",
    "P16": "3.0-2-6",
    "P17": "5.1-1-5",
    "P18": "3.1-1-8",
}
"""Parcel each named sample case stands on (all in the first cycle of bands)."""

TRACT_CASES = ("P06", "P07", "P08")
"""Cases on whole-block tracts: farm and estate always have their house, the commercial
tract never has a building."""

FIXED_LOTS: dict[str, tuple[bool, bool | None]] = {
    **dict.fromkeys((v for k, v in CASE_LOTS.items() if k not in TRACT_CASES), (True, False)),
    CASE_LOTS["P13"]: (True, True),
    CASE_LOTS["P15"]: (False, None),
    CASE_LOTS["P16"]: (True, None),
    CASE_LOTS["P18"]: (False, None),
}
"""Parcel id to (built, habitable_basement) for the lots the cases need."""

# house footprint by zone: width range, depth range, front setback range (ft)
HOUSE_SIZES: dict[str, tuple[tuple[float, float], tuple[float, float], tuple[float, float]]] = {
    "R-10": ((30.0, 40.0), (26.0, 34.0), (20.0, 25.0)),
    "R-20": ((36.0, 48.0), (30.0, 40.0), (30.0, 40.0)),
    "R-40": ((44.0, 60.0), (32.0, 40.0), (35.0, 45.0)),
    "CB": ((50.0, 70.0), (50.0, 80.0), (20.0, 30.0)),
}
TRACT_HOUSES: dict[str, tuple[float, float, float]] = {
    "farm": (40.0, 34.0, 60.0),
    "estate": (60.0, 45.0, 50.0),
}
"""Tract kind to (width, depth, setback) of its one house; other tracts are vacant."""
VACANT_FRACTION = 0.07
BASEMENT_P = (0.50, 0.43, 0.07)
"""Probability of a habitable basement: yes, no, unknown."""
SEPTIC_DEPTH_FT = (130.0, 160.0)
"""Septic fields lie this far behind the street line (stream band: beside the house)."""

FIRST_NAMES = np.array(
    ["Ana", "Ben", "Carla", "Dev", "Elena", "Frank", "Grace", "Hiro", "Ines", "Jamal", "Kate",
     "Luis", "Maya", "Noah", "Olga", "Priya", "Quinn", "Rosa", "Sam", "Tara"],
    dtype=object,
)  # fmt: skip
LAST_NAMES = np.array(
    ["Abbott", "Bianchi", "Chen", "Delgado", "Evans", "Fitzgerald", "Greco", "Haddad", "Ito",
     "Jensen", "Kowalski", "Lopez", "Murphy", "Nakamura", "O'Brien", "Patel", "Rossi",
     "Schmidt", "Tanaka", "Van Tassel"],
    dtype=object,
)  # fmt: skip


@dataclass(frozen=True, slots=True, eq=False)
class SampleTown:
    """A generated town in memory.

    Attributes
    ----------
    parcels, seed
        What it was generated from.
    layout
        Bands and the lot table (with house, well and septic positions).
    streams
        Stream centre lines (closed form).
    vectors
        Layer kind to GeoDataFrame, columns as :mod:`gis_sw.layers.specs` names them.
    rasters
        ``dem``, ``seasonal_high_groundwater`` (depth), ``bedrock`` (depth).
    """

    parcels: int
    seed: int
    layout: Layout
    streams: Streams
    vectors: dict[str, gpd.GeoDataFrame]
    rasters: dict[str, RasterLayer]
    crs: CRS = field(default_factory=lambda: CRS.from_user_input(WORKING_CRS))

    def layerset(self) -> LayerSet:
        """Return the town as a :class:`LayerSet` (as the readers would give it)."""
        return make_layerset(self.crs, self.vectors, self.rasters, source="<sample town>")

    def lot(self, parcel_id: str) -> pd.Series:
        """One row of the lot table by parcel id.

        Raises
        ------
        KeyError
            If the town has no such parcel (too few parcels for the named cases).
        """
        lots = self.layout.lots
        hit = lots.index[lots["parcel_id"] == parcel_id]
        if len(hit) == 0:
            raise KeyError(f"the sample town has no parcel {parcel_id}")
        return lots.loc[hit[0]]


HOUSE_DRAWS = ("width", "depth", "setback", "centre", "built", "basement", "well_x", "well_d")
"""The arrays of uniform numbers the houses draw, in the order the town's generator draws them."""


def _house_draws(seed: int, total: int, start: int, count: int) -> dict[str, np.ndarray]:
    """Uniform numbers in [0, 1) for lots ``start`` to ``start + count`` of a ``total``-lot town.

    The town's generator draws each array of :data:`HOUSE_DRAWS` for all ``total`` lots in
    turn, one 64-bit step per number; advancing a copy of it (``PCG64.advance``) to where a
    block of lots begins gives that block's numbers exactly, so a town written block by
    block is the town drawn whole.
    """
    out: dict[str, np.ndarray] = {}
    for i, name in enumerate(HOUSE_DRAWS):
        bits = np.random.PCG64(np.random.SeedSequence([seed, RNG_BUILDINGS]))
        bits.advance(i * total + start)
        out[name] = np.random.Generator(bits).random(count)
    return out


def name_draws(seed: int, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Draw indices into :data:`FIRST_NAMES` and :data:`LAST_NAMES` for every lot of the town.

    Bounded integers may reject a draw, so a block's numbers cannot be found by advancing
    the generator: they are drawn whole (one byte per lot) and sliced by block.
    """
    rng = np.random.default_rng([seed, RNG_PEOPLE])
    first = rng.integers(0, len(FIRST_NAMES), total).astype(np.uint8)
    last = rng.integers(0, len(LAST_NAMES), total).astype(np.uint8)
    return first, last


def _local_box(
    lots: pd.DataFrame, xa: ArrayLike, xb: ArrayLike, da: ArrayLike, db: ArrayLike
) -> Any:
    """Boxes from x range and depth range behind each lot's street line."""
    front = lots["front_y"].to_numpy()
    sign = lots["dir"].to_numpy()
    ya = front + sign * np.asarray(da, dtype=float)
    yb = front + sign * np.asarray(db, dtype=float)
    return shapely.box(
        np.asarray(xa, dtype=float),
        np.minimum(ya, yb),
        np.asarray(xb, dtype=float),
        np.maximum(ya, yb),
    )


def _place_houses(lots: pd.DataFrame, seed: int, *, total: int, start: int) -> pd.DataFrame:
    """Add house, well and septic positions to lots ``start``.. of a ``total``-lot town."""
    n = len(lots)
    u = _house_draws(seed, total, start, n)
    zone = lots["zone"].to_numpy()
    kind = lots["kind"].to_numpy()
    sizes = np.array([HOUSE_SIZES[z] for z in zone]).reshape(n, 3, 2) if n else np.zeros((0, 3, 2))
    width, depth, setback = (
        sizes[:, i, 0] + (sizes[:, i, 1] - sizes[:, i, 0]) * u[name]
        for i, name in enumerate(("width", "depth", "setback"))
    )
    for tract, (w, d, s) in TRACT_HOUSES.items():
        is_tract = kind == tract
        width[is_tract], depth[is_tract], setback[is_tract] = w, d, s
    centre = (lots["x0"].to_numpy() + lots["x1"].to_numpy()) / 2 + (-8.0 + 16.0 * u["centre"])
    built = u["built"] >= VACANT_FRACTION
    built |= np.isin(kind, list(TRACT_HOUSES))
    built &= kind != "commercial_tract"
    draw = u["basement"]
    basement = np.where(
        draw < BASEMENT_P[0], 1, np.where(draw < BASEMENT_P[0] + BASEMENT_P[1], 0, -1)
    )
    basement = np.where(zone == "CB", 0, basement)
    basement = np.where(np.isin(kind, list(TRACT_HOUSES)), 1, basement)
    ids = lots["parcel_id"].to_numpy()
    for pid, (is_built, has_basement) in FIXED_LOTS.items():
        hit = ids == pid
        built[hit] = is_built
        basement[hit] = -1 if has_basement is None else int(has_basement)
    well_x = lots["x0"].to_numpy() + (15.0 + 10.0 * u["well_x"])
    well_d = 15.0 + 10.0 * u["well_d"]
    out = lots.copy()
    out["built"] = built
    out["basement"] = basement
    out["house_x0"] = np.round(centre - width / 2, 2)
    out["house_x1"] = np.round(centre + width / 2, 2)
    out["house_d0"] = np.round(setback, 2)
    out["house_d1"] = np.round(setback + depth, 2)
    unsewered = built & ~lots["sewered"].to_numpy()
    out["has_well"] = unsewered
    out["well_x"] = np.round(well_x, 2)
    out["well_d"] = np.round(well_d, 2)
    stream = np.isin(lots["band"].to_numpy() % len(BAND_CYCLE), [STREAM_BAND])
    side_x0 = out["house_x1"].to_numpy() + 10.0
    out["has_septic"] = unsewered
    out["septic_x0"] = np.where(stream, side_x0, np.round(centre - 25.0, 2))
    out["septic_x1"] = np.where(stream, side_x0 + 30.0, np.round(centre + 25.0, 2))
    out["septic_d0"] = np.where(stream, out["house_d0"], SEPTIC_DEPTH_FT[0])
    out["septic_d1"] = np.where(stream, out["house_d0"] + 40.0, SEPTIC_DEPTH_FT[1])
    return out


def _people(
    lots: pd.DataFrame, layout: Layout, names: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Fake owners (``names``: this block's slice of :func:`name_draws`) and addresses."""
    first = FIRST_NAMES[names[0]]
    last = LAST_NAMES[names[1]]
    owner = pd.Series(first) + " " + pd.Series(last)
    commercial = (lots["zone"] == "CB").to_numpy()
    owner = owner.where(~commercial, pd.Series(last) + " Holdings LLC")
    owner = owner.where(lots["kind"].to_numpy() != "farm", pd.Series(last) + " Family Farm")
    centre = (lots["x0"] + lots["x1"]).to_numpy() / 2 - layout.x_min
    number = np.round(centre / 10.0).astype(int) * 2 + 10 + (lots["row"] == 2).to_numpy()
    street = np.asarray(STREETS, dtype=object)[lots["street"].to_numpy() % len(STREETS)]
    address = pd.Series(number.astype(str)) + " " + pd.Series(street)
    return owner.to_numpy(dtype=object), address.to_numpy(dtype=object)


def _frame(data: dict[Any, Any], crs: CRS) -> gpd.GeoDataFrame:
    geometry = np.asarray(data.pop("geometry"), dtype=object)
    return gpd.GeoDataFrame(data, geometry=gpd.GeoSeries(geometry, crs=crs), crs=crs)


LAYER_ORDER = (
    "parcels", "zoning", "buildings", "wells", "septic_fields", "water_bodies", "wetlands",
    "floodplain", "impaired_waters", "soils", "land_cover", "pavement",
)  # fmt: skip
"""Vector layers of the town, in the order they are written and listed."""
LOT_LAYERS = ("parcels", "buildings", "wells", "septic_fields", "land_cover", "pavement")
"""Layers whose features stand on lots: they grow with the town and can be made by block."""
WATER_LAYERS = ("water_bodies", "wetlands", "floodplain", "impaired_waters")
"""Layers drawn along the streams: they grow with the town too, and go by block of streams."""


def town_lots(layout: Layout, bands: range, seed: int, *, parcels: int) -> pd.DataFrame:
    """Lot table of ``bands`` (parcel ids; house, well and septic positions) of a planned town."""
    lots = band_lots(layout, bands, seed)
    lots.insert(0, "parcel_id", parcel_ids(lots).to_numpy())
    start = int(layout.bands["first_lot"].iloc[bands.start])
    return _place_houses(lots, seed, total=parcels, start=start)


def lot_vectors(
    lots: pd.DataFrame,
    layout: Layout,
    names: tuple[np.ndarray, np.ndarray],
    crs: CRS,
    *,
    roads: np.ndarray,
) -> dict[str, gpd.GeoDataFrame]:
    """Frames of :data:`LOT_LAYERS` for ``lots``; ``roads`` lead the pavement (empty: none)."""
    vectors: dict[str, gpd.GeoDataFrame] = {}
    owner, address = _people(lots, layout, names)
    kind = lots["kind"].to_numpy()
    land_use = np.where(lots["zone"] == "CB", "commercial", "residential").astype(object)
    land_use[kind == "farm"] = "agricultural"
    land_use[~lots["built"].to_numpy()] = "vacant"
    parcel_geoms = shapely.box(lots["x0"], lots["y0"], lots["x1"], lots["y1"])
    vectors["parcels"] = _frame(
        {
            "parcel_id": lots["parcel_id"].to_numpy(dtype=object),
            "owner": owner,
            "address": address,
            "land_use": land_use,
            "geometry": parcel_geoms,
        },
        crs,
    )
    built = lots[lots["built"].to_numpy()]
    houses = _local_box(
        built, built["house_x0"], built["house_x1"], built["house_d0"], built["house_d1"]
    )
    basement = pd.array([None if b < 0 else bool(b) for b in built["basement"]], dtype="boolean")
    # a house whose basement is recorded has no separate below-ground storage area; where
    # the basement is unknown, so is the storage (SW206 needs both answers)
    storage = pd.array([None if b < 0 else False for b in built["basement"]], dtype="boolean")
    vectors["buildings"] = _frame(
        {
            "building_id": ("B" + built["parcel_id"]).to_numpy(dtype=object),
            "parcel_id": built["parcel_id"].to_numpy(dtype=object),
            "habitable_basement": basement,
            "below_ground_storage": storage,
            "geometry": houses,
        },
        crs,
    )
    wells = lots[lots["has_well"].to_numpy()]
    well_y = wells["front_y"] + wells["dir"] * wells["well_d"]
    vectors["wells"] = _frame(
        {
            "well_id": ("WL" + wells["parcel_id"]).to_numpy(dtype=object),
            "parcel_id": wells["parcel_id"].to_numpy(dtype=object),
            "geometry": shapely.points(wells["well_x"].to_numpy(), well_y.to_numpy()),
        },
        crs,
    )
    septic = lots[lots["has_septic"].to_numpy()]
    vectors["septic_fields"] = _frame(
        {
            "septic_id": ("SF" + septic["parcel_id"]).to_numpy(dtype=object),
            "parcel_id": septic["parcel_id"].to_numpy(dtype=object),
            "geometry": _local_box(
                septic,
                septic["septic_x0"],
                septic["septic_x1"],
                septic["septic_d0"],
                septic["septic_d1"],
            ),
        },
        crs,
    )
    cover = np.where(lots["built"].to_numpy(), "lawn", "meadow").astype(object)
    cover[kind == "estate"] = "woods"
    cover[kind == "farm"] = "meadow"
    vectors["land_cover"] = _frame({"cover": cover, "geometry": parcel_geoms}, crs)
    drive_x0 = built["house_x0"].to_numpy() + 2.0
    driveways = _local_box(
        built, drive_x0, drive_x0 + 12.0, np.zeros(len(built)), built["house_d0"]
    )
    vectors["pavement"] = _frame(
        {
            "surface": np.array(
                ["road"] * len(roads) + ["driveway"] * len(driveways), dtype=object
            ),
            "geometry": np.concatenate([roads, driveways]),
        },
        crs,
    )
    return vectors


def water_vectors(
    layout: Layout, streams: Streams, seed: int, crs: CRS, *, which: range | None = None
) -> dict[str, gpd.GeoDataFrame]:
    """Frames of :data:`WATER_LAYERS` for the streams ``which`` (all by default)."""
    frames = water_layers(layout, streams, seed, which=which)
    return {name: _frame(frame.to_dict("list"), crs) for name, frame in frames.items()}


def area_vectors(
    layout: Layout, streams: Streams, seed: int, crs: CRS, *, water: bool = True
) -> dict[str, gpd.GeoDataFrame]:
    """Frames of zoning and soils, and (``water``) of the water layers, whole."""
    zones, zone_geoms = zoning_polygons(layout)
    vectors = {
        "zoning": _frame({"zone": np.asarray(zones, dtype=object), "geometry": zone_geoms}, crs)
    }
    if water:
        vectors |= water_vectors(layout, streams, seed, crs)
    vectors["soils"] = _frame(soils(layout, streams, seed).to_dict("list"), crs)
    return vectors


def build_town(*, parcels: int, seed: int, cell_size_ft: float | None = None) -> SampleTown:
    """Generate a town of exactly ``parcels`` parcels, the same for the same seed.

    Parameters
    ----------
    parcels
        Number of parcels (a few hundred for the sample; millions for benchmarks).
    seed
        Random seed: lot widths, houses, owners, stream meanders, soils, raster noise.
    cell_size_ft
        Raster cell size; by default 10 ft, coarser for towns wider than 40,000 ft.

    Raises
    ------
    ValueError
        If ``parcels`` is smaller than 1.
    """
    crs = CRS.from_user_input(WORKING_CRS)
    plan = plan_layout(parcels=parcels)
    lots = town_lots(plan, range(len(plan.bands)), seed, parcels=parcels)
    layout = dataclasses.replace(plan, lots=lots)
    streams = make_streams(layout, seed)
    names = name_draws(seed, parcels)
    made = lot_vectors(lots, layout, names, crs, roads=pavement_polygons(layout))
    made |= area_vectors(layout, streams, seed, crs)
    vectors = {name: made[name] for name in LAYER_ORDER}
    rasters = make_rasters(layout, streams, seed, crs=crs, cell_size_ft=cell_size_ft)
    logger.info("sample town: %d parcels, seed %d", len(lots), seed)
    return SampleTown(parcels, seed, layout, streams, vectors, rasters, crs)
