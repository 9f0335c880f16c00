"""Layout of a synthetic town: bands of blocks, lots sized by zone, zoning, roads.

The town is a grid.  Block columns are ``BLOCK_WIDTH_FT`` wide with a ``ROAD_FT``
right-of-way between them; rows of blocks ("bands") run east-west, each band in one zone
with its own lot size.  The bands repeat in :data:`BAND_CYCLE` (south to north) until the
town holds the asked number of parcels:

====  =====  ===============  ===============================================
band  zone   lot (ft)         notes
====  =====  ===============  ===============================================
0     CB     100 x 200        commercial strip; column 1 is a vacant 9-acre tract
1     R-10   100 x 100        sewered
2     R-10   100 x 100        column 1: the front 70 ft of its north row is zoned R-20
3     R-20   100 x 200        sewered
4     R-40   200 x 200        a stream runs along the rear lot lines (wells, septic)
5     R-40   200 x 200        unsewered; column 0 a farm, column 2 an estate tract
6     R-20   100 x 200        unsewered (wells and septic fields)
====  =====  ===============  ===============================================

Everything is computed with numpy arrays over all lots of a band at once; the only Python
loop runs over bands (a few hundred for a million parcels).  Every random draw comes from
``numpy.random.default_rng([seed, purpose, band])``, so a town is a pure function of
(parcels, seed).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import shapely
from pyproj import Transformer

ROAD_FT = 50.0
"""Right-of-way width between blocks; zone lines run along its centre line."""
BLOCK_WIDTH_FT = 1000.0
"""East-west length of every block."""
NOTCH_DEPTH_FT = 70.0
"""How far the R-20 zone reaches into the north row of the split-zoned R-10 block."""
LOT_JITTER = 0.12
"""Lot widths vary by up to this fraction around the zone's nominal width."""
CENTER_LON, CENTER_LAT = -73.80, 41.10
"""The town is centred near Mount Pleasant, Westchester County, NY."""
WORKING_CRS = "EPSG:2260"

# purposes of the random streams (the second number of the seed sequence)
RNG_LOTS, RNG_BUILDINGS, RNG_PEOPLE, RNG_WATER, RNG_RASTER, RNG_SOILS = range(1, 7)


@dataclass(frozen=True, slots=True)
class BandSpec:
    """One row of blocks: its zone, lot size and what it holds.

    Attributes
    ----------
    zone
        Zone of the band (zoning polygon and lot sizes).
    lot_width_ft, lot_depth_ft
        Nominal lot size; a block is two lots deep (lots back onto each other).
    sewered
        False where lots have a well and a septic field.
    stream
        True for the band whose rear lot lines the stream follows.
    notch_col
        Block column whose north row is partly zoned as the next band (split zoning).
    tracts
        (block column, kind) of blocks that are one large parcel instead of lots.
    """

    zone: str
    lot_width_ft: float
    lot_depth_ft: float
    sewered: bool = True
    stream: bool = False
    notch_col: int | None = None
    tracts: tuple[tuple[int, str], ...] = ()

    @property
    def block_depth_ft(self) -> float:
        """Depth of a block: two lots back to back."""
        return 2.0 * self.lot_depth_ft

    @property
    def lots_per_row(self) -> int:
        """Lots along one street side of a block."""
        return int(BLOCK_WIDTH_FT // self.lot_width_ft)


BAND_CYCLE: tuple[BandSpec, ...] = (
    BandSpec("CB", 100.0, 200.0, tracts=((1, "commercial_tract"),)),
    BandSpec("R-10", 100.0, 100.0),
    BandSpec("R-10", 100.0, 100.0, notch_col=1),
    BandSpec("R-20", 100.0, 200.0),
    BandSpec("R-40", 200.0, 200.0, sewered=False, stream=True),
    BandSpec("R-40", 200.0, 200.0, sewered=False, tracts=((0, "farm"), (2, "estate"))),
    BandSpec("R-20", 100.0, 200.0, sewered=False),
)
STREAM_BAND = next(i for i, b in enumerate(BAND_CYCLE) if b.stream)
CYCLE_HEIGHT_FT = sum(b.block_depth_ft + ROAD_FT for b in BAND_CYCLE)
MIN_COLUMNS = 3
"""Fewer block columns would lose the tracts and the split-zoned block."""

STREETS = (
    "Bedford Road",
    "Lakeview Avenue",
    "Cleveland Street",
    "Pleasantville Road",
    "Saw Mill River Road",
    "Franklin Avenue",
    "Hawthorne Lane",
    "Columbus Avenue",
    "Rolling Hills Drive",
    "Stevens Avenue",
    "Washington Avenue",
    "Elm Road",
)


@dataclass(frozen=True, slots=True, eq=False)
class Layout:
    """Where every band, block and lot is.

    Attributes
    ----------
    x_min, y_min, x_max, y_max
        Town extent (ft, EPSG:2260); its edges are road centre lines.
    columns
        Number of block columns.
    bands
        One row per band: ``band``, ``cycle``, ``spec`` (index into :data:`BAND_CYCLE`),
        ``zone``, ``y0``/``y1`` (road centre lines south and north), ``block_y0``/``block_y1``,
        ``first_lot`` (row of its first lot in the lot table) and ``lots`` (how many it holds:
        the last band may be cut short to give exactly the asked number of parcels).
    lots
        One row per parcel (see :func:`_band_lots` for the columns).
    """

    x_min: float
    y_min: float
    x_max: float
    y_max: float
    columns: int
    bands: pd.DataFrame
    lots: pd.DataFrame

    @property
    def width_ft(self) -> float:
        """Width of the town, west to east."""
        return self.x_max - self.x_min

    @property
    def height_ft(self) -> float:
        """Height of the town, south to north."""
        return self.y_max - self.y_min

    def block_x0(self, col: int | np.ndarray) -> np.ndarray:
        """West edge of the blocks of a column."""
        return self.x_min + ROAD_FT / 2 + np.asarray(col) * (BLOCK_WIDTH_FT + ROAD_FT)


def band_parcel_count(spec: BandSpec, columns: int) -> int:
    """Parcels a full band of ``columns`` block columns holds."""
    tracts = sum(1 for col, _ in spec.tracts if col < columns)
    return columns * 2 * spec.lots_per_row - tracts * (2 * spec.lots_per_row - 1)


def choose_columns(parcels: int) -> int:
    """Block columns that make a roughly square town of ``parcels`` parcels."""
    per_column = sum(band_parcel_count(b, 1) for b in BAND_CYCLE)
    cols = math.sqrt(parcels * CYCLE_HEIGHT_FT / ((BLOCK_WIDTH_FT + ROAD_FT) * per_column))
    return max(MIN_COLUMNS, round(cols))


def town_origin(width_ft: float, height_ft: float) -> tuple[float, float]:
    """South-west corner (multiple of 1,000 ft) centring the town on Mount Pleasant."""
    to_ny_east = Transformer.from_crs("EPSG:4326", WORKING_CRS, always_xy=True)
    cx, cy = to_ny_east.transform(CENTER_LON, CENTER_LAT)
    return (
        math.floor((cx - width_ft / 2) / 1000.0) * 1000.0,
        math.floor((cy - height_ft / 2) / 1000.0) * 1000.0,
    )


def plan_layout(*, parcels: int) -> Layout:
    """Bands and extent of a town of exactly ``parcels`` parcels, without its lots.

    The lot table of the plan is empty: :func:`band_lots` gives the lots of any band, so a
    big town can be generated band by band (:mod:`gis_sw.sample.stream`).

    Raises
    ------
    ValueError
        If ``parcels`` is smaller than 1.
    """
    if parcels < 1:
        raise ValueError(f"parcels must be at least 1, not {parcels}")
    columns = choose_columns(parcels)
    specs: list[int] = []
    counts: list[int] = []
    total = 0
    while total < parcels:
        spec_index = len(specs) % len(BAND_CYCLE)
        specs.append(spec_index)
        counts.append(band_parcel_count(BAND_CYCLE[spec_index], columns))
        total += counts[-1]
    heights = np.array([BAND_CYCLE[s].block_depth_ft + ROAD_FT for s in specs])
    width = columns * (BLOCK_WIDTH_FT + ROAD_FT)
    x_min, y_min = town_origin(width, float(heights.sum()))
    y0 = y_min + np.concatenate([[0.0], np.cumsum(heights)[:-1]])
    first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    counts[-1] -= total - parcels  # the last band keeps only the lots the town needs
    bands = pd.DataFrame(
        {
            "band": np.arange(len(specs)),
            "cycle": np.arange(len(specs)) // len(BAND_CYCLE),
            "spec": specs,
            "zone": [BAND_CYCLE[s].zone for s in specs],
            "y0": y0,
            "y1": y0 + heights,
            "block_y0": y0 + ROAD_FT / 2,
            "block_y1": y0 + heights - ROAD_FT / 2,
            "first_lot": first,
            "lots": np.asarray(counts, dtype=np.int64),
        }
    )
    y_max = y_min + float(heights.sum())
    return Layout(x_min, y_min, x_min + width, y_max, columns, bands, pd.DataFrame())


def band_lots(layout: Layout, bands: range, seed: int) -> pd.DataFrame:
    """Every lot of the bands ``bands`` of a planned town, south to north (see :func:`_band_lots`).

    The last band of the town keeps only the lots the asked number of parcels needs.
    """
    block_x0 = layout.x_min + ROAD_FT / 2 + np.arange(layout.columns) * (BLOCK_WIDTH_FT + ROAD_FT)
    rows = layout.bands.iloc[bands.start : bands.stop]
    keep = rows["lots"].to_numpy()
    frames = [
        _band_lots(row, block_x0, seed).iloc[: int(count)]
        for row, count in zip(rows.itertuples(index=False), keep, strict=True)
    ]
    return pd.concat(frames, ignore_index=True)


def make_layout(*, parcels: int, seed: int) -> Layout:
    """Bands and lots of a town of exactly ``parcels`` parcels.

    Raises
    ------
    ValueError
        If ``parcels`` is smaller than 1.
    """
    plan = plan_layout(parcels=parcels)
    lots = band_lots(plan, range(len(plan.bands)), seed)
    return dataclasses.replace(plan, lots=lots)


def _band_lots(band: Any, block_x0: np.ndarray, seed: int) -> pd.DataFrame:
    """Every lot of one band, as arrays.

    Columns: ``band``, ``cycle``, ``col``, ``row`` (1 south, 2 north), ``lot`` (1.. from
    west), ``kind`` (``lot`` or a tract kind), ``zone``, ``sewered``, ``x0``, ``x1``,
    ``y0``, ``y1``, ``front_y`` (the lot line on the street), ``dir`` (+1 when depth from
    the street runs north), ``depth`` (ft from front to rear line), ``street`` (index of the
    road centre line the lot fronts: the band's south line is its own index).
    """
    b = int(band.band)
    spec = BAND_CYCLE[int(band.spec)]
    bx0_all = block_x0
    columns = len(block_x0)
    k = spec.lots_per_row
    rng = np.random.default_rng([seed, RNG_LOTS, b])
    widths = spec.lot_width_ft * (1 + rng.uniform(-LOT_JITTER, LOT_JITTER, (columns, 2, k)))
    edges = np.cumsum(widths, axis=2)
    edges = np.round(edges / edges[:, :, -1:] * BLOCK_WIDTH_FT, 2)
    west = np.concatenate([np.zeros((columns, 2, 1)), edges[:, :, :-1]], axis=2)
    col = np.broadcast_to(np.arange(columns)[:, None, None], widths.shape)
    row = np.broadcast_to(np.array([1, 2])[None, :, None], widths.shape)
    lot = np.broadcast_to(np.arange(1, k + 1)[None, None, :], widths.shape)
    by0, by1 = float(band.block_y0), float(band.block_y1)
    mid = (by0 + by1) / 2
    south = row == 1
    frame = pd.DataFrame(
        {
            "col": col.ravel(),
            "row": row.ravel(),
            "lot": lot.ravel(),
            "x0": (bx0_all[col] + west).ravel(),
            "x1": (bx0_all[col] + edges).ravel(),
            "y0": np.where(south, by0, mid).ravel(),
            "y1": np.where(south, mid, by1).ravel(),
            "front_y": np.where(south, by0, by1).ravel(),
            "dir": np.where(south, 1, -1).ravel(),
            "depth": np.full(widths.size, spec.lot_depth_ft),
            "street": np.where(south, b, b + 1).ravel(),
            "kind": "lot",
        }
    )
    for tract_col, tract_kind in spec.tracts:
        if tract_col >= columns:
            continue
        keep = frame["col"] != tract_col
        first = int(np.argmax(~keep.to_numpy()))
        x0 = float(bx0_all[tract_col])
        tract = pd.DataFrame(
            {
                "col": [tract_col],
                "row": [1],
                "lot": [1],
                "x0": [x0],
                "x1": [x0 + BLOCK_WIDTH_FT],
                "y0": [by0],
                "y1": [by1],
                "front_y": [by0],
                "dir": [1],
                "depth": [by1 - by0],
                "street": [b],
                "kind": [tract_kind],
            }
        )
        frame = pd.concat(
            [frame.iloc[:first], tract, frame.iloc[first:][keep.iloc[first:]]],
            ignore_index=True,
        )
    frame.insert(0, "band", b)
    frame.insert(1, "cycle", int(band.cycle))
    frame["zone"] = spec.zone
    frame["sewered"] = spec.sewered
    return frame


def parcel_ids(lots: pd.DataFrame) -> pd.Series:
    """Section-block-lot style ids: ``"<band>.<column>-<row>-<lot>"`` (``"1.0-1-3"``)."""
    return (
        lots["band"].astype(str)
        + "."
        + lots["col"].astype(str)
        + "-"
        + lots["row"].astype(str)
        + "-"
        + lots["lot"].astype(str)
    )


def zoning_polygons(layout: Layout) -> tuple[list[str], np.ndarray]:
    """Zone names and polygons (one per band) tiling the town extent exactly.

    In the band whose spec has ``notch_col``, the front :data:`NOTCH_DEPTH_FT` of that
    block's north row belongs to the next band's zone, so those lots straddle a zone line.
    """
    bands = layout.bands
    n = len(bands)
    polygons = shapely.box(
        np.full(n, layout.x_min),
        bands["y0"].to_numpy(),
        np.full(n, layout.x_max),
        bands["y1"].to_numpy(),
    )
    zones = list(bands["zone"])
    row: Any
    for row in bands.itertuples(index=False):
        spec = BAND_CYCLE[int(row.spec)]
        nxt = int(row.band) + 1
        if spec.notch_col is None or spec.notch_col >= layout.columns or nxt >= len(bands):
            continue
        x0 = float(layout.block_x0(spec.notch_col))
        notch = shapely.box(
            x0, float(row.block_y1) - NOTCH_DEPTH_FT, x0 + BLOCK_WIDTH_FT, float(row.y1)
        )
        polygons[int(row.band)] = shapely.difference(polygons[int(row.band)], notch)
        polygons[nxt] = shapely.union(polygons[nxt], notch)
    polygons = shapely.normalize(polygons)
    return zones, polygons


def pavement_polygons(layout: Layout, *, width_ft: float = 26.0) -> np.ndarray:
    """Road surfaces: east-west streets on every band line, north-south between blocks.

    The surfaces do not overlap: north-south pieces stop at the east-west pavement.
    """
    half = width_ft / 2
    lines_y = np.concatenate([layout.bands["y0"].to_numpy(), [layout.y_max]])
    ew = shapely.box(
        np.full(len(lines_y), layout.x_min),
        np.maximum(lines_y - half, layout.y_min),
        np.full(len(lines_y), layout.x_max),
        np.minimum(lines_y + half, layout.y_max),
    )
    xs = layout.x_min + np.arange(layout.columns + 1) * (BLOCK_WIDTH_FT + ROAD_FT)
    xx, y0 = np.meshgrid(xs, layout.bands["y0"].to_numpy())
    _, y1 = np.meshgrid(xs, layout.bands["y1"].to_numpy())
    ns = shapely.box(
        np.maximum(xx - half, layout.x_min),
        y0 + half,
        np.minimum(xx + half, layout.x_max),
        y1 - half,
    ).ravel()
    return np.concatenate([ew, ns])
