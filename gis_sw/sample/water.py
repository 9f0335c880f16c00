"""Streams, wetlands, floodplain, ponds and soils of the synthetic town.

One stream per stream band follows the band's rear lot lines (the middle of its blocks),
meandering ``STREAM_AMPLITUDE_FT`` either side.  Wetlands border both banks, the 100-year
floodplain (zone AE) is wider still, and the stream is listed as an impaired water.  The
centre line is a closed-form curve, so the rasters can measure the distance to it for every
cell without any geometry work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import shapely

from gis_sw.sample.layout import (
    BAND_CYCLE,
    BLOCK_WIDTH_FT,
    CYCLE_HEIGHT_FT,
    RNG_SOILS,
    RNG_WATER,
    Layout,
)

STREAM_AMPLITUDE_FT = 25.0
STREAM_HALF_WIDTH_FT = 12.5
WETLAND_MIN_FT, WETLAND_MAX_FT = 30.0, 70.0
"""Wetland width beyond each bank."""
FLOODPLAIN_MIN_FT, FLOODPLAIN_MAX_FT = 130.0, 170.0
"""Half-width of the 100-year floodplain from the stream centre line."""
SAMPLE_STEP_FT = 10.0
"""Vertex spacing of the stream, wetland and floodplain outlines."""
SOIL_CELL_FT = 500.0
NEAR_STREAM_SOIL_FT = 250.0
HSG_CHOICES = ("A", "B", "C", "D")
HSG_WEIGHTS = (0.12, 0.38, 0.35, 0.15)
MUSYM = {"A": "HsB", "B": "ChB", "C": "PnB", "D": "Sh", "B/D": "Ff"}
"""Map-unit symbols in the style of the Westchester County soil survey."""


@dataclass(frozen=True, slots=True)
class Streams:
    """Meander parameters of every stream, one per stream band (south to north).

    ``y = mid + amplitude * sin(2 pi x / wavelength + phase)``.
    """

    mid_y: np.ndarray
    wavelength_ft: np.ndarray
    phase: np.ndarray
    bands: np.ndarray

    def centre_y(self, index: int, x: np.ndarray) -> np.ndarray:
        """Centre line of stream ``index`` at ``x``."""
        return self.mid_y[index] + STREAM_AMPLITUDE_FT * np.sin(
            2 * np.pi * x / self.wavelength_ft[index] + self.phase[index]
        )

    def distance_ft(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Vertical distance to the nearest stream centre line (broadcasts ``x`` and ``y``).

        Streams are one cycle apart, so only the two around each point are compared.
        Infinite when the town has no stream.
        """
        x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
        n = len(self.mid_y)
        if n == 0:
            return np.full(x.shape, np.inf)
        below = np.clip(np.floor((y - self.mid_y[0]) / CYCLE_HEIGHT_FT).astype(int), 0, n - 1)
        best = np.full(x.shape, np.inf)
        for offset in (0, 1):
            k = np.clip(below + offset, 0, n - 1)
            centre = self.mid_y[k] + STREAM_AMPLITUDE_FT * np.sin(
                2 * np.pi * x / self.wavelength_ft[k] + self.phase[k]
            )
            best = np.minimum(best, np.abs(y - centre))
        return best


def make_streams(layout: Layout, seed: int) -> Streams:
    """Draw the streams of every stream band of the town."""
    bands = layout.bands[[BAND_CYCLE[s].stream for s in layout.bands["spec"]]]
    rng = np.random.default_rng([seed, RNG_WATER])
    n = len(bands)
    return Streams(
        mid_y=((bands["block_y0"] + bands["block_y1"]) / 2).to_numpy(),
        wavelength_ft=rng.uniform(700.0, 1000.0, n),
        phase=rng.uniform(0.0, 2 * np.pi, n),
        bands=bands["band"].to_numpy(),
    )


def _wave(x: np.ndarray, rng: np.random.Generator, low: float, high: float) -> np.ndarray:
    """Return a smooth width between ``low`` and ``high`` along ``x``."""
    wavelength = rng.uniform(500.0, 1100.0)
    phase = rng.uniform(0.0, 2 * np.pi)
    return low + (high - low) * (0.5 + 0.5 * np.sin(2 * np.pi * x / wavelength + phase))


def _between(x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> shapely.Polygon:
    """Return the polygon between two curves over the same ``x``."""
    ring = np.concatenate([np.column_stack([x, lower]), np.column_stack([x[::-1], upper[::-1]])])
    return shapely.Polygon(ring)


def water_layers(
    layout: Layout, streams: Streams, seed: int, *, which: range | None = None
) -> dict[str, pd.DataFrame]:
    """Frames (with a ``geometry`` column of shapely arrays) for the water layers.

    Returns ``water_bodies``, ``wetlands``, ``floodplain`` and ``impaired_waters`` of the
    streams ``which`` (indices into ``streams``; all by default).  Each stream draws from
    its own generator and its features follow one another, so the frames of consecutive
    ranges of streams, one after the other, are the frames of all of them.
    """
    which = range(len(streams.bands)) if which is None else which
    x = np.arange(layout.x_min, layout.x_max + SAMPLE_STEP_FT / 2, SAMPLE_STEP_FT)
    x[-1] = layout.x_max
    step = BLOCK_WIDTH_FT + (layout.block_x0(1) - layout.block_x0(0) - BLOCK_WIDTH_FT)
    col_edges = layout.x_min + np.arange(layout.columns + 1) * step
    col_boxes_x0, col_boxes_x1 = col_edges[:-1], col_edges[1:]
    water_ids, water_names, water_geoms = [], [], []
    wet_ids, wet_geoms = [], []
    flood_geoms = []
    for i in which:
        band = streams.bands[i]
        rng = np.random.default_rng([seed, RNG_WATER, int(band)])
        centre = streams.centre_y(i, x)
        stream = _between(x, centre - STREAM_HALF_WIDTH_FT, centre + STREAM_HALF_WIDTH_FT)
        water_ids.append(f"S{i + 1}")
        water_names.append(f"Sample Brook reach {i + 1}")
        water_geoms.append(stream)
        bank = centre + STREAM_HALF_WIDTH_FT
        north = (bank, bank + _wave(x, rng, WETLAND_MIN_FT, WETLAND_MAX_FT))
        bank = centre - STREAM_HALF_WIDTH_FT
        south = (bank - _wave(x, rng, WETLAND_MIN_FT, WETLAND_MAX_FT), bank)
        # one wetland polygon per bank and block column; column edges are sample points, so
        # slicing the outlines cuts them exactly where an intersection would
        for side, (lower, upper) in (("N", north), ("S", south)):
            for col, (e0, e1) in enumerate(zip(col_boxes_x0, col_boxes_x1, strict=True)):
                part = (x >= e0) & (x <= e1)
                wet_ids.append(f"W{i + 1}-{col}{side}")
                wet_geoms.append(_between(x[part], lower[part], upper[part]))
        half = _wave(x, rng, FLOODPLAIN_MIN_FT, FLOODPLAIN_MAX_FT)
        flood_geoms.append(_between(x, centre - half, centre + half))
        # ponds: a farm pond in the farm tract of the next band, one beside the stream
        if layout.columns > 2:
            bx0 = float(layout.block_x0(layout.columns - 1))
            pond_xy = (bx0 + 700.0, float(streams.mid_y[i]) + 75.0)
            water_ids.append(f"P{i + 1}-1")
            water_names.append(f"Mill Pond {i + 1}")
            water_geoms.append(shapely.Point(pond_xy).buffer(30.0, quad_segs=8))
        farm = layout.bands[layout.bands["band"] == band + 1]
        if len(farm):
            fx0 = float(layout.block_x0(0))
            fy0 = float(farm["block_y0"].iloc[0])
            water_ids.append(f"P{i + 1}-2")
            water_names.append(f"Farm pond {i + 1}")
            water_geoms.append(shapely.Point(fx0 + 800.0, fy0 + 300.0).buffer(45.0, quad_segs=8))
    extent = shapely.box(layout.x_min, layout.y_min, layout.x_max, layout.y_max)
    water = np.asarray(water_geoms, dtype=object)
    stream_count = len(which)
    stream_geoms = water[[j for j, wid in enumerate(water_ids) if wid.startswith("S")]]
    wetlands = shapely.intersection(np.asarray(wet_geoms, dtype=object), extent)
    keep = ~shapely.is_empty(wetlands)
    return {
        "water_bodies": pd.DataFrame(
            {
                "water_id": water_ids,
                "name": water_names,
                "geometry": shapely.intersection(water, extent),
            }
        ),
        "wetlands": pd.DataFrame(
            {
                "wetland_id": np.asarray(wet_ids, dtype=object)[keep],
                "name": "Sample Brook wetland",
                "geometry": wetlands[keep],
            }
        ),
        "floodplain": pd.DataFrame(
            {
                "flood_zone": ["AE"] * len(flood_geoms),
                "geometry": shapely.intersection(np.asarray(flood_geoms, dtype=object), extent),
            }
        ),
        "impaired_waters": pd.DataFrame(
            {
                "name": [f"Sample Brook reach {i + 1}" for i in which],
                "pollutant": ["phosphorus"] * stream_count,
                "listing": ["303(d)"] * stream_count,
                "geometry": shapely.intersection(stream_geoms, extent),
            }
        ),
    }


def soils(layout: Layout, streams: Streams, seed: int) -> pd.DataFrame:
    """Soil map units on a grid of ``SOIL_CELL_FT`` squares tiling the town.

    Hydrologic soil groups are drawn by seed; cells whose centre lies within
    ``NEAR_STREAM_SOIL_FT`` of a stream are wet alluvium, ``B/D``.
    """
    xs = np.arange(layout.x_min, layout.x_max, SOIL_CELL_FT)
    ys = np.arange(layout.y_min, layout.y_max, SOIL_CELL_FT)
    gx, gy = np.meshgrid(xs, ys)
    x1 = np.minimum(gx + SOIL_CELL_FT, layout.x_max)
    y1 = np.minimum(gy + SOIL_CELL_FT, layout.y_max)
    rng = np.random.default_rng([seed, RNG_SOILS])
    hsg = rng.choice(np.array(HSG_CHOICES, dtype=object), size=gx.shape, p=HSG_WEIGHTS)
    near = streams.distance_ft((gx + x1) / 2, (gy + y1) / 2) <= NEAR_STREAM_SOIL_FT
    hsg = np.where(near, "B/D", hsg).ravel()
    return pd.DataFrame(
        {
            "hsg": hsg,
            "musym": pd.Series(hsg).map(MUSYM).to_numpy(),
            "geometry": shapely.box(gx.ravel(), gy.ravel(), x1.ravel(), y1.ravel()),
        }
    )
