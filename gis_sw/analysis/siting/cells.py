"""Raster cells of siting: the septic up-gradient cells and the vertical separation cells.

Septic lows come from one labelled rasterisation of all fields (``np.minimum.at``); the
threshold raster burns each field's 20-ft zone with its low, lowest last, so a cell near two
fields is judged against the lower (stricter) one.  The up-gradient reference is the
field's lowest ground cell over the whole field, which is at or below the low of the part
within 20 ft that SW201 uses, and both compare ground with ground by the same rule
(:func:`gis_sw.analysis.devices.up_gradient`): a place the siting polygon allows always
passes SW201 on the same DEM, whatever the device's depth.
"""

from __future__ import annotations

import math

import numpy as np
import shapely
from affine import Affine
from rasterio import features

from gis_sw.analysis.devices import ground_difference_ft, up_gradient
from gis_sw.analysis.siting.records import Note, grown_buffer
from gis_sw.layers.raster import RasterLayer, RasterMode


def window(
    raster: RasterLayer, bounds: tuple[float, float, float, float]
) -> tuple[slice, slice, Affine]:
    """Return the rows and columns of ``raster`` covering ``bounds`` (clipped), and transform."""
    minx, miny, maxx, maxy = bounds
    inv = ~raster.transform
    c0, r0 = inv @ (minx, maxy)
    c1, r1 = inv @ (maxx, miny)
    nrows, ncols = raster.shape
    col_lo = min(max(math.floor(min(c0, c1)) - 1, 0), ncols)
    col_hi = max(min(math.ceil(max(c0, c1)) + 1, ncols), col_lo)
    row_lo = min(max(math.floor(min(r0, r1)) - 1, 0), nrows)
    row_hi = max(min(math.ceil(max(r0, r1)) + 1, nrows), row_lo)
    transform = raster.transform @ Affine.translation(col_lo, row_lo)
    return slice(row_lo, row_hi), slice(col_lo, col_hi), transform


def polygonise(mask: np.ndarray, transform: Affine) -> np.ndarray:
    """Return the polygons of the True cells of ``mask`` (connected cells merged, exact edges)."""
    if mask.size == 0 or not mask.any():
        return np.empty(0, dtype=object)
    shapes = features.shapes(mask.astype("uint8"), mask=mask, transform=transform)
    return np.array([shapely.geometry.shape(g) for g, _ in shapes], dtype=object)


def cell_centres(shape: tuple[int, int], transform: Affine) -> tuple[np.ndarray, np.ndarray]:
    """Return the x and y of the centre of every cell of a grid."""
    rows, cols = np.indices(shape)
    xs = transform.c + transform.a * (cols + 0.5) + transform.b * (rows + 0.5)
    ys = transform.f + transform.d * (cols + 0.5) + transform.e * (rows + 0.5)
    return xs, ys


def septic_parts(
    fields: np.ndarray,
    dem: RasterLayer | None,
    *,
    setback_ft: float,
    flat_ft: float,
    quad_segs: int,
) -> tuple[np.ndarray, list[Note]]:
    """Return the up-gradient parts of the septic fields' setback zones, plus the fields.

    Up-gradient, or flat within ``flat_ft``, as SW201 reads it: a cell whose ground is not
    more than ``flat_ft`` below the field's lowest ground cell is taken out.  Without a DEM
    (or where it has no data under a field) the whole zone is taken out, with a note.
    """
    zones = grown_buffer(fields, setback_ft, quad_segs)
    if len(fields) == 0:
        return np.empty(0, dtype=object), []
    whole = (
        f"the whole {setback_ft:g}-ft zone around a septic field was removed: "
        "{why}, so up-gradient cannot be decided"
    )
    # a whole zone holds its field: the zones alone are the part
    if dem is None:
        return zones, [Note(whole.format(why="no DEM"), zones, removes=True)]
    minx, miny, maxx, maxy = (float(v) for v in shapely.total_bounds(zones))
    rows, cols, transform = window(dem, (minx, miny, maxx, maxy))
    ground = dem.values[rows, cols]
    if ground.size == 0:
        note = Note(whole.format(why="the DEM does not cover it"), zones, removes=True)
        return zones, [note]
    labels = features.rasterize(
        ((g, i + 1) for i, g in enumerate(fields)),
        out_shape=ground.shape,
        transform=transform,
        fill=0,
        all_touched=True,
        dtype="int32",
    )
    lows = np.full(len(fields), np.inf)
    inside = (labels > 0) & ~np.isnan(ground)
    np.minimum.at(lows, labels[inside] - 1, ground[inside])
    known = np.isfinite(lows)
    order = np.argsort(-np.where(known, lows, -np.inf))  # unknown lows burn last
    burn = np.where(known, np.round(lows, 2), -np.inf)
    # Rasterise coarse zones that contain the exact ones (few vertices: rasterio reads
    # coordinates in Python); the exact zones clip the result below.
    coarse = grown_buffer(fields, setback_ft, 2)
    threshold = features.rasterize(
        ((coarse[i], float(burn[i])) for i in order),
        out_shape=ground.shape,
        transform=transform,
        fill=np.nan,
        all_touched=True,
        dtype="float64",
    )
    near = ~np.isnan(threshold)
    # only cells SW201 would pass stay: more than the flat tolerance below the field's low
    side = up_gradient(ground_difference_ft(ground, threshold), flat_ft)
    high = near & ((side >= 0) | np.isnan(ground))
    cells = polygonise(high, transform)
    if len(cells):
        tree = shapely.STRtree(zones)
        c_idx, z_idx = tree.query(cells, predicate="intersects")
        parts = np.asarray(shapely.intersection(cells[c_idx], zones[z_idx]), dtype=object)
    else:
        parts = np.empty(0, dtype=object)
    notes: list[Note] = []
    if not known.all():
        why = "the DEM has no data under the field"
        notes.append(Note(whole.format(why=why), zones[~known], removes=True))
        parts = np.concatenate([parts, zones[~known]])
    return np.concatenate([parts, fields]), notes


def vertical_parts(
    raster: RasterLayer,
    dem: RasterLayer | None,
    *,
    depth_ft: float,
    minimum_ft: float,
    tolerance_ft: float,
    bounds: tuple[float, float, float, float],
) -> tuple[np.ndarray, list[Note]]:
    """Return the cells where a device ``depth_ft`` deep would not keep ``minimum_ft`` above.

    Cells without data and everything outside the raster are left out too (with a note).
    """
    rows, cols, transform = window(raster, bounds)
    values = raster.values[rows, cols]
    if raster.mode == RasterMode.DEPTH:
        separation = values - depth_ft
    else:
        if dem is None:
            text = (
                f"no DEM: the {raster.kind} elevations cannot be compared with a depth; "
                "vertical separation not screened"
            )
            return np.empty(0, dtype=object), [Note(text)]
        xs, ys = cell_centres(values.shape, transform)
        separation = dem.sample_xy(xs, ys) - depth_ft - values
    nodata = np.isnan(separation)
    with np.errstate(invalid="ignore"):
        bad = ~nodata & (np.round(separation, 2) < minimum_ft - tolerance_ft)
    parts = polygonise(bad, transform)
    unknown = polygonise(nodata, transform)
    covered = shapely.box(*raster.bounds)
    outside = shapely.difference(shapely.box(*bounds).buffer(1.0, join_style="mitre"), covered)
    if not shapely.is_empty(outside):
        unknown = np.concatenate([unknown, np.array([outside], dtype=object)])
    notes = []
    if len(unknown):
        text = (
            f"part of the parcel has no {raster.kind} data"
            + ("" if raster.mode == RasterMode.DEPTH else " or no DEM data")
            + " and was left out"
        )
        notes.append(Note(text, unknown, removes=True))
    return np.concatenate([parts, unknown]), notes
