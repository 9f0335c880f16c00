"""Infiltration devices prepared once for every SW2xx check: parcel, elevations, separations.

What is derived here and how:

- **Parcel**: the parcel holding the largest part of the device (for a point device, the
  parcel it lies in), from one STRtree query for all devices.  A device straddling a lot
  line belongs to the parcel that holds most of it, and SW205 then fails it at 0.00 ft.
- **Ground elevation**: the *highest* DEM cell the footprint touches (all-touched), so that
  a device is never judged lower than any part of it.  This matches the siting polygon,
  which removes every DEM cell above a septic field's lowest ground.
- **Vertical separation** (SW203, SW204): per cell of the groundwater or bedrock raster
  under the footprint, ``bottom - limit`` where the limit elevation is the raster value
  (``mode="elevation"``) or DEM minus the value (``mode="depth"``), and the device bottom is
  ``bottom_elevation_ft`` or DEM minus ``depth_ft``.  The DEM is read at the cell centres of
  the separation raster, so the two rasters need not share a grid.  The worst (smallest)
  separation counts.  A depth raster with a device given by ``depth_ft`` needs no DEM:
  the separation is ``value - depth_ft``.
- **Test-hole data**: optional device columns ``test_hole_groundwater_elevation_ft`` and
  ``test_hole_bedrock_elevation_ft`` (logged elevations at the device) take precedence over
  the rasters: a witnessed hole at the spot beats a map.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from affine import Affine
from rasterio import features

from gis_sw.analysis.context import CheckContext
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.raster import RasterLayer, RasterMode

TEST_HOLE_COLUMNS: dict[str, str] = {
    "seasonal_high_groundwater": "test_hole_groundwater_elevation_ft",
    "bedrock": "test_hole_bedrock_elevation_ft",
}
"""Optional device columns holding the logged elevation of each limit at the device."""

RASTER_NAMES: dict[str, str] = {
    "seasonal_high_groundwater": "seasonal high groundwater",
    "bedrock": "bedrock",
    "dem": "DEM",
}


def cells_with_centres(
    raster: RasterLayer, geometry: shapely.Geometry
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values and cell-centre coordinates of every cell a geometry touches (all-touched).

    Nodata cells are dropped.  Empty arrays when the geometry misses the raster.
    """
    empty = (np.empty(0), np.empty(0), np.empty(0))
    if geometry is None or shapely.is_empty(geometry):
        return empty
    nrows, ncols = raster.shape
    if isinstance(geometry, shapely.Point):
        col, row = ~raster.transform @ (geometry.x, geometry.y)
        c, r = math.floor(col), math.floor(row)
        if not (0 <= r < nrows and 0 <= c < ncols):
            return empty
        rows, cols = np.array([r]), np.array([c])
    else:
        minx, miny, maxx, maxy = shapely.bounds(geometry).tolist()
        inv = ~raster.transform
        c0, r0 = inv @ (minx, maxy)
        c1, r1 = inv @ (maxx, miny)
        col_lo = max(math.floor(min(c0, c1)) - 1, 0)
        col_hi = min(math.ceil(max(c0, c1)) + 1, ncols)
        row_lo = max(math.floor(min(r0, r1)) - 1, 0)
        row_hi = min(math.ceil(max(r0, r1)) + 1, nrows)
        if col_lo >= col_hi or row_lo >= row_hi:
            return empty
        mask = features.geometry_mask(
            [geometry],
            out_shape=(row_hi - row_lo, col_hi - col_lo),
            transform=raster.transform @ Affine.translation(col_lo, row_lo),
            all_touched=True,
            invert=True,
        )
        rr, cc = np.nonzero(mask)
        rows, cols = rr + row_lo, cc + col_lo
    values = raster.values[rows, cols]
    t = raster.transform
    xs = t.c + t.a * (cols + 0.5) + t.b * (rows + 0.5)
    ys = t.f + t.d * (cols + 0.5) + t.e * (rows + 0.5)
    keep = ~np.isnan(values)
    return values[keep], np.asarray(xs)[keep], np.asarray(ys)[keep]


def cells_touched(
    raster: RasterLayer, geometries: np.ndarray, *, keep_nodata: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every (geometry, cell) pair for many geometries at once, nodata dropped.

    ``keep_nodata`` keeps nodata cells (value ``nan``) of an unrotated grid, to tell where a
    raster has no data under part of a geometry.

    A point gives the one cell it falls in (as :meth:`RasterLayer.sample_xy`); a line every
    cell it touches; a polygon every cell whose interior meets the polygon's.  Vectorised:
    candidate cells come from each geometry's bounds, then one ``shapely.intersects`` call.

    Returns
    -------
    (owner, values, xs, ys)
        Index of the geometry, cell value, and cell-centre coordinates.
    """
    geoms = np.asarray(geometries, dtype=object)
    t = raster.transform
    if t.b != 0 or t.d != 0:  # a rotated grid: one window per geometry
        found = [cells_with_centres(raster, g) for g in geoms]
        owner = np.repeat(np.arange(len(geoms)), [len(f[0]) for f in found])
        parts = [np.concatenate([f[k] for f in found]) if found else np.empty(0) for k in range(3)]
        return owner, parts[0], parts[1], parts[2]
    nrows, ncols = raster.shape
    present = ~unlocated(geoms)
    bounds = np.where(present[:, None], shapely.bounds(geoms), 0.0)
    cols = (bounds[:, [0, 2]] - t.c) / t.a
    rows = (bounds[:, [1, 3]] - t.f) / t.e
    col_lo = np.maximum(np.floor(cols.min(axis=1)), 0).astype("int64")
    col_hi = np.minimum(np.floor(cols.max(axis=1)), ncols - 1).astype("int64")
    row_lo = np.maximum(np.floor(rows.min(axis=1)), 0).astype("int64")
    row_hi = np.minimum(np.floor(rows.max(axis=1)), nrows - 1).astype("int64")
    width = np.clip(col_hi - col_lo + 1, 0, None)
    height = np.clip(row_hi - row_lo + 1, 0, None)
    counts = np.where(present, width * height, 0)
    owner = np.repeat(np.arange(len(geoms)), counts)
    k = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
    r = row_lo[owner] + k // width[owner]
    c = col_lo[owner] + k % width[owner]
    kinds = shapely.get_type_id(geoms)[owner]
    x0, y0 = t.c + t.a * c, t.f + t.e * r
    boxes = shapely.box(
        np.minimum(x0, x0 + t.a),
        np.minimum(y0, y0 + t.e),
        np.maximum(x0, x0 + t.a),
        np.maximum(y0, y0 + t.e),
    )
    hit = shapely.intersects(boxes, geoms[owner])
    polygonal = np.isin(kinds, [3, 6])
    hit[polygonal] &= ~shapely.touches(boxes[polygonal], geoms[owner][polygonal])
    hit[kinds == 0] = True  # a point: the cell its coordinates floor to
    values = raster.values[r, c]
    keep = hit if keep_nodata else hit & ~np.isnan(values)
    xs, ys = x0 + t.a / 2, y0 + t.e / 2
    return owner[keep], values[keep], xs[keep], ys[keep]


def raster_gaps(raster: RasterLayer, geometries: np.ndarray) -> np.ndarray:
    """Return, per geometry, whether the raster lacks data under part of it.

    True where a cell the geometry touches is nodata, or the geometry reaches beyond the
    raster's extent: a figure read from the other cells is then partial.  False for a null
    or empty geometry (nothing is under it; callers say so on their own).
    """
    geoms = np.asarray(geometries, dtype=object)
    out = np.zeros(len(geoms), dtype=bool)
    present = ~unlocated(geoms) if len(geoms) else out
    if not present.any():
        return out
    extent = shapely.box(*raster.bounds)
    out[present] = ~shapely.covered_by(geoms[present], extent)
    owner, values, _, _ = cells_touched(raster, geoms, keep_nodata=True)
    out[np.unique(owner[np.isnan(values)])] = True
    return out


def device_frame(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Every device with its parcel and highest ground elevation (cached per context).

    Columns added: ``parcel_index`` (positional, -1 when on no parcel), ``parcel_id``
    (None when on no parcel), ``ground_max_ft`` (``nan`` without a DEM or DEM data),
    ``ground_partial`` (True where the DEM has no data under part of the device, so the
    highest ground read is partial).
    """
    return ctx.memo("devices.frame", lambda: _device_frame(ctx))


def _device_frame(ctx: CheckContext) -> gpd.GeoDataFrame:
    devices = ctx.proposals.devices.reset_index(drop=True).copy()
    n = len(devices)
    geoms = devices.geometry.to_numpy()
    parcel_index = np.full(n, -1, dtype="int64")
    parcels = ctx.layers.get("parcels")
    if parcels is not None and len(parcels) and n:
        lots = parcels.geometry.to_numpy()
        tree = shapely.STRtree(lots)
        # within the distance tolerance: a device a float bit outside its lot line (as a
        # reprojection leaves one drawn on it) is 0.00 ft from that line, not on no parcel
        tol = ctx.ruleset.devices.distance_tolerance_ft
        d_idx, p_idx = tree.query(geoms, predicate="dwithin", distance=tol)
        # the parcel holding most of the device; for points, the one holding it
        overlap = shapely.area(shapely.intersection(geoms[d_idx], lots[p_idx]))
        holds = shapely.intersects(shapely.point_on_surface(geoms[d_idx]), lots[p_idx])
        order = np.lexsort((p_idx, ~holds, -overlap, d_idx))
        d_idx, p_idx = d_idx[order], p_idx[order]
        first = np.r_[True, d_idx[1:] != d_idx[:-1]] if len(d_idx) else np.empty(0, bool)
        parcel_index[d_idx[first]] = p_idx[first]
    devices["parcel_index"] = parcel_index
    if parcels is not None:
        ids = parcels["parcel_id"].astype(str).to_numpy()
        devices["parcel_id"] = [ids[i] if i >= 0 else None for i in parcel_index]
    else:
        devices["parcel_id"] = None
    dem = ctx.layers.raster("dem")
    ground = np.full(n, np.nan)
    partial = np.zeros(n, dtype=bool)
    if dem is not None and n:
        owner, values, _, _ = cells_touched(dem, geoms)
        np.fmax.at(ground, owner, values)
        partial = raster_gaps(dem, geoms)
    devices["ground_max_ft"] = ground
    devices["ground_partial"] = partial
    return devices


def ground_difference_ft(device_ft: object, field_ft: object) -> np.ndarray:
    """Return ground at a device minus ground at a septic field.

    Each and the difference are rounded to 0.01 ft (the precision the law is applied at).
    """
    a = np.round(np.asarray(device_ft, dtype="float64"), 2)
    b = np.round(np.asarray(field_ft, dtype="float64"), 2)
    return np.round(a - b, 2)


def up_gradient(difference_ft: object, flat_ft: float) -> np.ndarray:
    """``1`` up-gradient, ``0`` flat within the DEM's resolution, ``-1`` down-gradient.

    ``difference_ft`` is :func:`ground_difference_ft`; a difference of ``flat_ft`` or less
    either way is not resolved by the DEM (``0``); ``nan`` gives ``0`` too.
    """
    diff = np.asarray(difference_ft, dtype="float64")
    eps = 1e-9  # the rounded difference and the ruleset's number are both 2-decimal floats
    with np.errstate(invalid="ignore"):
        return np.where(diff > flat_ft + eps, 1, np.where(diff < -flat_ft - eps, -1, 0))


@dataclass(frozen=True, slots=True)
class Separation:
    """Worst vertical separation of one device above one limit (groundwater or bedrock).

    ``separation_ft`` is ``nan`` when it cannot be computed; ``reason`` then says why.
    ``limit_ft`` is the elevation of the limit at the worst place (``nan`` when unknown).
    ``partial`` says why the worst place may lie where a raster has no data (a separation
    too small already fails; one large enough cannot pass on part of the device).
    """

    separation_ft: float
    source: str
    reason: str = ""
    limit_ft: float = math.nan
    partial: str = ""


def vertical_separation(ctx: CheckContext, kind: str) -> list[Separation]:
    """Worst separation of every device above ``kind`` (cached per context and kind)."""
    return ctx.memo(f"devices.separation.{kind}", lambda: _vertical(ctx, kind))


def _value(row: pd.Series, column: str) -> float:
    value = row.get(column)
    if value is None or pd.isna(value):
        return math.nan
    return float(value)


def _given_problem(bottom: float, depth: float, hole: float, hole_column: str) -> str:
    """Return why a device's bottom or test-hole figure cannot be used ("" when it can)."""
    if not math.isnan(bottom) and not math.isfinite(bottom):
        return (
            f"its bottom_elevation_ft is {bottom}, not an elevation: give the bottom's "
            "elevation in ft"
        )
    if math.isnan(bottom) and not math.isnan(depth) and not (math.isfinite(depth) and depth >= 0):
        return (
            f"its depth_ft is {depth:g}, not a depth below ground: give a depth of 0 ft or "
            "more, or bottom_elevation_ft"
        )
    if not math.isnan(hole) and not math.isfinite(hole):
        return f"its {hole_column} is {hole}, not an elevation: give the logged elevation in ft"
    return ""


def _above_ground(bottom: float, ground_max: float) -> str:
    """Return why a bottom above the highest DEM ground under the device is contradictory."""
    if not (math.isfinite(bottom) and math.isfinite(ground_max)):
        return ""
    if round(bottom, 2) <= round(ground_max, 2):
        return ""
    return (
        f"its bottom_elevation_ft {bottom:,.2f} ft is above the highest ground under it "
        f"({ground_max:,.2f} ft on the DEM), which contradicts a device below ground: check "
        "the bottom elevation and its vertical datum"
    )


def _vertical(ctx: CheckContext, kind: str) -> list[Separation]:
    devices = device_frame(ctx)
    raster = ctx.layers.raster(kind)
    dem = ctx.layers.raster("dem")
    name = RASTER_NAMES[kind]
    hole_column = TEST_HOLE_COLUMNS[kind]
    n = len(devices)
    bottoms = devices["bottom_elevation_ft"].to_numpy(dtype="float64", na_value=np.nan)
    depths = devices["depth_ft"].to_numpy(dtype="float64", na_value=np.nan)
    holes = (
        pd.to_numeric(devices[hole_column], errors="coerce").to_numpy(dtype="float64")
        if hole_column in devices.columns
        else np.full(n, np.nan)
    )
    ground = devices["ground_max_ft"].to_numpy(dtype="float64")
    out: list[Separation | None] = [None] * n
    use_raster = []
    for i in range(n):
        problem = _given_problem(bottoms[i], depths[i], holes[i], hole_column) or _above_ground(
            bottoms[i], ground[i]
        )
        if math.isnan(bottoms[i]) and math.isnan(depths[i]):
            out[i] = Separation(
                math.nan, "", "its bottom is not given (no bottom_elevation_ft or depth_ft)"
            )
        elif problem:
            out[i] = Separation(math.nan, "", problem)
        elif not math.isnan(holes[i]):
            out[i] = _from_test_hole(
                devices.iloc[i],
                bottom=bottoms[i],
                depth=depths[i],
                hole=holes[i],
                dem=dem,
                name=name,
            )
        elif raster is None:
            out[i] = Separation(
                math.nan,
                "",
                f"no {name} raster and no test-hole elevation ({hole_column}) were provided",
            )
        else:
            use_raster.append(i)
    if raster is not None and use_raster:
        rows = np.array(use_raster)
        found = _from_raster(
            devices.geometry.to_numpy()[rows],
            bottoms=bottoms[rows],
            depths=depths[rows],
            raster=raster,
            dem=dem,
            name=name,
            hole_column=hole_column,
        )
        for i, sep in zip(rows, found, strict=True):
            out[i] = sep
    return [s for s in out if s is not None]


def _from_test_hole(
    row: pd.Series, *, bottom: float, depth: float, hole: float, dem: RasterLayer | None, name: str
) -> Separation:
    if math.isnan(bottom):
        ground = float(row["ground_max_ft"])
        if dem is not None:
            cells = dem.cells_under(row.geometry)
            ground = float(cells.min()) if len(cells) else math.nan
        if math.isnan(ground):
            return Separation(
                math.nan, "test hole", "its bottom is given as a depth and no DEM covers it"
            )
        bottom = ground - depth
        if bool(row["ground_partial"]):
            partial = "the DEM has no data under part of the device, so its ground (and the "
            partial += "bottom given as a depth below it) is not known: give bottom_elevation_ft"
            return Separation(bottom - hole, f"test-hole {name} elevation", "", hole, partial)
    return Separation(bottom - hole, f"test-hole {name} elevation", "", hole)


def _from_raster(
    geometries: np.ndarray,
    *,
    bottoms: np.ndarray,
    depths: np.ndarray,
    raster: RasterLayer,
    dem: RasterLayer | None,
    name: str,
    hole_column: str,
) -> list[Separation]:
    """Worst separation of many devices over the cells under them, in one vectorised pass.

    Where the raster (or the DEM it needs) has no data under part of a device, the worst
    separation of the rest is kept with a ``partial`` reason.
    """
    n = len(geometries)
    owner, values, xs, ys = cells_touched(raster, geometries)
    source = f"{name} raster ({raster.mode})"
    depth_mode = raster.mode == RasterMode.DEPTH
    given = ~np.isnan(bottoms)
    # depth raster with a depth-given device needs no DEM; every other case does
    needs_dem = given if depth_mode else ~given
    ground = dem.sample_xy(xs, ys) if dem is not None else np.full(len(values), np.nan)
    limit = ground - values if depth_mode else values
    bottom = np.where(given[owner], bottoms[owner], ground - depths[owner])
    cancels = (depth_mode & ~given)[owner]  # (ground - depth) - (ground - value)
    seps = np.where(cancels, values - depths[owner], bottom - limit)
    limits = np.where(cancels, np.nan, limit)
    has_cells = np.bincount(owner, minlength=n) > 0
    ok = ~np.isnan(seps)
    order = np.lexsort((seps[ok], owner[ok]))
    worst_owner = owner[ok][order]
    first = np.r_[True, worst_owner[1:] != worst_owner[:-1]] if len(order) else np.empty(0, bool)
    worst_sep = np.full(n, np.nan)
    worst_limit = np.full(n, np.nan)
    worst_sep[worst_owner[first]] = seps[ok][order][first]
    worst_limit[worst_owner[first]] = limits[ok][order][first]
    raster_gap = raster_gaps(raster, geometries)
    dem_gap = np.zeros(n, dtype=bool)
    dem_gap[np.unique(owner[~ok])] = True  # a cell of the raster where the DEM has no data
    fix = f"supply it over the whole device, or the logged elevation ({hole_column})"
    out = []
    for i in range(n):
        if not has_cells[i]:
            out.append(Separation(math.nan, "", f"the {name} raster has no data under the device"))
        elif needs_dem[i] and dem is None:
            out.append(
                Separation(
                    math.nan,
                    "",
                    f"a DEM is needed to compare the device bottom with the {name} raster",
                )
            )
        elif math.isnan(worst_sep[i]):
            out.append(Separation(math.nan, "", "the DEM has no data under the device"))
        else:
            partial = ""
            if raster_gap[i]:
                partial = f"the {name} raster has no data under part of the device: {fix}"
            elif dem_gap[i] and needs_dem[i]:
                partial = f"the DEM has no data under part of the device: {fix}"
            out.append(Separation(float(worst_sep[i]), source, "", float(worst_limit[i]), partial))
    return out
