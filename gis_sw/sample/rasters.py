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


STRIP_ROWS = 256
"""Rows computed at a time: the full-grid temporaries of a 4,000-cell-wide raster would take
several hundred MB; every cell is computed by the same element-wise operations either way."""


def _waves(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Draw the plane waves of one noise field: ``(cos b, sin b, sin a, cos a)`` per wave.

    A sum of plane waves of random direction and phase; each wave is separable
    (sin(a + b) = sin a cos b + cos a sin b), so a grid costs two outer products per wave.
    """
    waves = []
    for wavelength in NOISE_WAVELENGTHS_FT:
        angle = rng.uniform(0.0, 2 * np.pi)
        phase = rng.uniform(0.0, 2 * np.pi)
        k = 2 * np.pi / wavelength
        a = k * np.cos(angle) * x + phase
        b = k * np.sin(angle) * y
        waves.append((np.cos(b), np.sin(b), np.sin(a), np.cos(a)))
    return waves


def _noise(
    waves: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    rows: slice,
    amplitude_ft: float,
) -> np.ndarray:
    """Smooth noise in [-amplitude, amplitude] on the grid rows ``rows`` of :func:`_waves`."""
    cos_b, _, sin_a, _ = waves[0]
    total = np.zeros((len(cos_b[rows]), len(sin_a)), dtype=np.float64)
    for cos_b, sin_b, sin_a, cos_a in waves:
        total += np.outer(cos_b[rows], sin_a) + np.outer(sin_b[rows], cos_a)
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
    rng = np.random.default_rng([seed, RNG_RASTER])
    dem_waves, gw_waves, rock_waves = (_waves(x, y, rng) for _ in range(3))
    dem, gw, rock = (np.empty((rows, cols), dtype=np.float64) for _ in range(3))
    for start in range(0, rows, STRIP_ROWS):
        r = slice(start, min(start + STRIP_ROWS, rows))
        dist = streams.distance_ft(x[None, :], y[r, None])
        dist = np.where(np.isfinite(dist), dist, 1000.0)
        dem[r] = (
            DEM_BASE_FT
            + DEM_SLOPE * dist
            - DEM_EAST_SLOPE * (x[None, :] - layout.x_min)
            + _noise(dem_waves, r, DEM_NOISE_FT)
        ).astype(np.float32)
        gw[r] = np.clip(
            GW_AT_STREAM_FT + GW_SLOPE * dist + _noise(gw_waves, r, GW_NOISE_FT),
            GW_MIN_FT,
            GW_MAX_FT,
        ).astype(np.float32)
        rock[r] = np.clip(
            ROCK_AT_STREAM_FT + ROCK_SLOPE * dist + _noise(rock_waves, r, ROCK_NOISE_FT),
            ROCK_MIN_FT,
            ROCK_MAX_FT,
        ).astype(np.float32)
    out = {}
    for kind, values, mode in (
        ("dem", dem, RasterMode.ELEVATION),
        ("seasonal_high_groundwater", gw, RasterMode.DEPTH),
        ("bedrock", rock, RasterMode.DEPTH),
    ):
        out[kind] = RasterLayer(
            kind=kind,
            values=values,
            transform=transform,
            crs=crs,
            mode=mode,
            source="<sample town>",
        )
    return out
