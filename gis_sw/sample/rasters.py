"""Rasters of the synthetic town: DEM, seasonal high groundwater depth, bedrock depth.

All three are closed-form functions of the distance to the nearest stream centre line plus
smooth noise drawn from the seed:

* ground elevation rises ``DEM_SLOPE`` (5 %) away from the stream and falls gently east
  (``DEM_EAST_SLOPE``); the noise slope is far smaller, so "up-gradient" is unambiguous
  everywhere except on the ridge half-way between two streams;
* the seasonal high groundwater lies 1.5 ft below ground at the stream, 2 ft deeper per
  100 ft away from it;
* bedrock lies 7 ft below ground at the stream, 3 ft deeper per 100 ft.

Values are float32 feet (the GeoTIFFs store float32; the in-memory layers hold the same
float32 values widened to float64, so what is written reads back identical).
"""

from __future__ import annotations

import math

import numpy as np
from affine import Affine
from pyproj import CRS

from gis_sw.layers.raster import RasterLayer, RasterMode
from gis_sw.sample.layout import RNG_RASTER, Layout
from gis_sw.sample.water import Streams

DEFAULT_CELL_FT = 10.0
MAX_CELLS_PER_SIDE = 4000
"""Towns wider than 40,000 ft get coarser cells so a raster stays under 16 M cells."""
DEM_BASE_FT = 300.0
DEM_SLOPE = 0.05
DEM_EAST_SLOPE = 0.004
DEM_NOISE_FT = 1.5
GW_AT_STREAM_FT, GW_SLOPE, GW_NOISE_FT = 1.5, 0.02, 0.8
GW_MIN_FT, GW_MAX_FT = 0.5, 40.0
ROCK_AT_STREAM_FT, ROCK_SLOPE, ROCK_NOISE_FT = 7.0, 0.03, 3.0
ROCK_MIN_FT, ROCK_MAX_FT = 3.0, 100.0
NOISE_WAVELENGTHS_FT = (1600.0, 2300.0, 3100.0, 4200.0)
"""Long wavelengths keep the noise gradient (< 0.006 ft/ft for the DEM) well under the slope."""


def cell_size_for(layout: Layout) -> float:
    """10 ft, or a multiple of 10 ft keeping each side under ``MAX_CELLS_PER_SIDE`` cells."""
    longest = max(layout.width_ft, layout.height_ft)
    if longest / DEFAULT_CELL_FT <= MAX_CELLS_PER_SIDE:
        return DEFAULT_CELL_FT
    return DEFAULT_CELL_FT * math.ceil(longest / (DEFAULT_CELL_FT * MAX_CELLS_PER_SIDE))


def _noise(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator, amplitude_ft: float
) -> np.ndarray:
    """Smooth noise in [-amplitude, amplitude] on the grid ``x`` (columns) by ``y`` (rows).

    A sum of plane waves of random direction and phase; each wave is separable
    (sin(a + b) = sin a cos b + cos a sin b), so the grid costs two outer products per wave.
    """
    total = np.zeros((len(y), len(x)), dtype=np.float64)
    for wavelength in NOISE_WAVELENGTHS_FT:
        angle = rng.uniform(0.0, 2 * np.pi)
        phase = rng.uniform(0.0, 2 * np.pi)
        k = 2 * np.pi / wavelength
        a = k * np.cos(angle) * x + phase
        b = k * np.sin(angle) * y
        total += np.outer(np.cos(b), np.sin(a)) + np.outer(np.sin(b), np.cos(a))
    return total * (amplitude_ft / len(NOISE_WAVELENGTHS_FT))


def make_rasters(
    layout: Layout,
    streams: Streams,
    seed: int,
    *,
    crs: CRS,
    cell_size_ft: float | None = None,
) -> dict[str, RasterLayer]:
    """Build the DEM (elevation) and groundwater and bedrock (depth below ground) of a town."""
    cell = float(cell_size_ft or cell_size_for(layout))
    cols = math.ceil(layout.width_ft / cell)
    rows = math.ceil(layout.height_ft / cell)
    transform = Affine(cell, 0.0, layout.x_min, 0.0, -cell, layout.y_max)
    x = layout.x_min + (np.arange(cols) + 0.5) * cell
    y = layout.y_max - (np.arange(rows) + 0.5) * cell
    dist = streams.distance_ft(x[None, :], y[:, None])
    dist = np.where(np.isfinite(dist), dist, 1000.0)
    rng = np.random.default_rng([seed, RNG_RASTER])
    dem = (
        DEM_BASE_FT
        + DEM_SLOPE * dist
        - DEM_EAST_SLOPE * (x[None, :] - layout.x_min)
        + _noise(x, y, rng, DEM_NOISE_FT)
    )
    gw = np.clip(
        GW_AT_STREAM_FT + GW_SLOPE * dist + _noise(x, y, rng, GW_NOISE_FT), GW_MIN_FT, GW_MAX_FT
    )
    rock = np.clip(
        ROCK_AT_STREAM_FT + ROCK_SLOPE * dist + _noise(x, y, rng, ROCK_NOISE_FT),
        ROCK_MIN_FT,
        ROCK_MAX_FT,
    )
    out = {}
    for kind, values, mode in (
        ("dem", dem, RasterMode.ELEVATION),
        ("seasonal_high_groundwater", gw, RasterMode.DEPTH),
        ("bedrock", rock, RasterMode.DEPTH),
    ):
        out[kind] = RasterLayer(
            kind=kind,
            values=values.astype(np.float32).astype(np.float64),
            transform=transform,
            crs=crs,
            mode=mode,
            source="<sample town>",
        )
    return out
