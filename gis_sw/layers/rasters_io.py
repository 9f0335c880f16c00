"""Read the town's rasters (DEM, seasonal high groundwater, bedrock) from GeoTIFF.

A raster whose CRS differs from the working CRS is reprojected with ``rasterio.warp``
(bilinear, keeping about the same cell size); nodata becomes ``nan``.  Values in metres
(``units = "m"`` in the manifest, the GeoTIFF tag ``GIS_SW_UNITS=m``, or a band unit of
metres) are converted to the working CRS's linear unit (US survey feet for EPSG:2260); values
in feet are kept as they are.

Groundwater and bedrock are depths below ground or elevations: the manifest's ``mode``, else
the GeoTIFF tag ``GIS_SW_MODE``.  A raster that says neither is refused, because reading a
depth as an elevation (or back) silently moves every device.

Only the part of a raster the other layers need is read: ``area`` (the extent of the town's
vector layers grown by the largest distance the ruleset uses, :func:`needed_area`) is turned
into a window of the file, so a county DEM, or a sparse GeoTIFF whose header claims
billions of cells, costs what the town needs.  A window (or, without ``area``, a whole
raster) over :data:`MAX_RASTER_CELLS` cells is refused naming the file and its size.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import rasterio
import rasterio.crs
import rasterio.windows
from affine import Affine
from pyproj import CRS, Transformer
from rasterio.errors import RasterioIOError, WindowError
from rasterio.warp import Resampling, calculate_default_transform, reproject, transform_bounds

from gis_sw.errors import CRSError, InputFileError, LayerError, Problem
from gis_sw.layers.layerset import LayerReport
from gis_sw.layers.raster import RasterLayer, RasterMode
from gis_sw.layers.vector import crs_text, crs_units, unreadable
from gis_sw.units import feet_per_unit, metres_per_unit

logger = logging.getLogger(__name__)

MODE_TAG = "GIS_SW_MODE"
"""GeoTIFF tag saying ``depth`` or ``elevation``."""
UNITS_TAG = "GIS_SW_UNITS"
"""GeoTIFF tag saying ``ft`` or ``m`` for the values."""

MAX_RASTER_CELLS = 200_000_000
"""Most cells one raster may bring into memory (1.5 GiB as 8-byte values): a town's DEM at
2 ft cells over 25 square miles is about 175 million."""
PAD_CELLS = 2
"""Cells added around a window, so sampling and reprojection near its edge see neighbours."""

Bounds = tuple[float, float, float, float]

_METRE_WORDS = frozenset({"m", "metre", "metres", "meter", "meters"})
_FOOT_WORDS = frozenset({"ft", "foot", "feet", "us survey foot", "ftus", "us-ft", "ft_us"})


def read_raster(
    path: Path,
    *,
    kind: str,
    working_crs: CRS,
    mode: RasterMode | None = None,
    units: str | None = None,
    crs: CRS | None = None,
    area: Bounds | None = None,
    full_area: Bounds | None = None,
) -> tuple[RasterLayer, LayerReport]:
    """Read a single-band GeoTIFF into a :class:`RasterLayer` in the working CRS.

    Parameters
    ----------
    path
        The GeoTIFF.
    kind
        ``dem``, ``seasonal_high_groundwater`` or ``bedrock``.
    working_crs
        CRS to reproject to.
    mode, units
        From the manifest; None to read them from the GeoTIFF's tags.
    crs
        CRS to assume when the file has none.
    area
        (minx, miny, maxx, maxy) in the working CRS that the raster must cover; only the
        window of the file over it is read.  None: the whole raster.
    full_area
        The area a whole read of the town covers, when ``area`` is only part of it: the
        window read is then ``area``'s within ``full_area``'s (the same cells as there), and
        the layer's :attr:`~RasterLayer.full_bounds` are those of ``full_area``'s window.

    Raises
    ------
    InputFileError
        If the file is not a readable raster.
    CRSError
        If it has no CRS and none was given.
    LayerError
        If its mode is unknown, its units unknown, it holds no data (in ``area``), or the
        cells to read are more than :data:`MAX_RASTER_CELLS`.
    """
    label = str(path)
    problems: list[Problem] = []
    warnings: list[str] = []
    try:
        src = rasterio.open(path)
    except RasterioIOError as exc:
        raise InputFileError(unreadable(path, "raster", exc)) from exc
    with src:
        tags = src.tags()
        band_unit = (src.units[0] or "") if src.units else ""
        if src.crs is not None:
            source_crs = CRS.from_wkt(src.crs.to_wkt())
            if crs is not None and not source_crs.equals(crs):
                warnings.append(f"the file's own CRS {crs_text(source_crs)} was used.")
        elif crs is not None:
            source_crs = crs
        else:
            raise CRSError(
                f'{path} has no CRS. Fix: give crs = "EPSG:...." under [{kind}] in the '
                "layers manifest."
            )
        if src.count > 1:
            warnings.append(f"band 1 of {src.count} was read.")
        window, full_bounds = _windows(
            src, area, full_area, source_crs=source_crs, working_crs=working_crs
        )
        _check_size(label, int(window.width), int(window.height), area)
        values = _read_band(src, window)
        windowed = (window.width, window.height) != (src.width, src.height)
        file_extent = _extent_in(src.bounds, source_crs, working_crs) if windowed else None
        if windowed:
            warnings.append(
                f"read {int(window.width):,} x {int(window.height):,} of its "
                f"{src.width:,} x {src.height:,} cells: the area the other layers need."
            )
        transform = src.transform @ Affine.translation(window.col_off, window.row_off)
        width, height = int(window.width), int(window.height)
        bounds = _window_bounds(src.transform, window)

    resolved_mode = _mode(kind, mode, tags.get(MODE_TAG), label, problems)
    factor = _unit_factor(
        units,
        tag=tags.get(UNITS_TAG),
        band_unit=band_unit,
        working_crs=working_crs,
        label=label,
        problems=problems,
    )
    if not np.isfinite(values).any() and not windowed:
        problems.append(Problem(label, "holds no data (every cell is nodata).", "check the file."))
    elif not np.isfinite(values).any():
        problems.append(
            Problem(
                label,
                "holds no data in the area the other layers need (every cell there is nodata, "
                "or the raster lies outside it).",
                "check that the raster covers the town.",
            )
        )
    if problems:
        raise LayerError(problems)

    same_grid = (
        None
        if source_crs.equals(working_crs)
        else _same_grid(source_crs, working_crs, transform, width, height)
    )
    if same_grid is not None:
        transform = same_grid
        warnings.append(
            f"grid from {crs_text(source_crs)} rescaled to {crs_text(working_crs)} "
            "(same projection, other unit: no resampling)."
        )
    elif not source_crs.equals(working_crs):
        dst_crs = rasterio.crs.CRS.from_wkt(working_crs.to_wkt())
        src_crs = rasterio.crs.CRS.from_wkt(source_crs.to_wkt())
        dst_transform, dst_width, dst_height = calculate_default_transform(
            src_crs, dst_crs, width, height, *bounds
        )
        _check_size(label, int(dst_width or 0), int(dst_height or 0), area)
        out = np.full((int(dst_height), int(dst_width)), np.nan, dtype="float64")
        reproject(
            source=values,
            destination=out,
            src_transform=transform,
            src_crs=src_crs,
            src_nodata=np.nan,
            dst_transform=dst_transform,
            dst_crs=dst_crs,
            dst_nodata=np.nan,
            resampling=Resampling.bilinear,
        )
        values, transform = out, dst_transform
        warnings.append(f"reprojected from {crs_text(source_crs)} (bilinear).")
    if factor != 1.0:
        values = values * factor
        warnings.append(f"values converted from metres ({factor:.6f} per metre).")

    layer = RasterLayer(
        kind=kind,
        values=values,
        transform=transform,
        crs=working_crs,
        mode=resolved_mode,
        source=label,
        file_extent=file_extent,
        full_bounds=full_bounds if source_crs.equals(working_crs) else None,
    )
    report = LayerReport(
        kind=kind,
        source=label,
        features=int(values.size),
        source_crs=crs_text(source_crs),
        units=crs_units(source_crs),
        bounds=tuple(float(v) for v in layer.bounds),  # type: ignore[arg-type]
        warnings=(f"mode: {resolved_mode.value}", *warnings),
    )
    return layer, report


def _read_band(src: Any, window: rasterio.windows.Window) -> np.ndarray:
    """Read band 1 over ``window`` as float64, nodata as ``nan``."""
    if window.width == 0 or window.height == 0:
        return np.full((0, 0), np.nan)
    masked = src.read(1, window=window, masked=True, out_dtype="float64")
    values = np.ma.getdata(masked)  # filled in place: no second copy of the cells
    mask = np.ma.getmask(masked)
    if mask is not np.ma.nomask:
        values[mask] = np.nan
    return np.asarray(values)


GRID_TOLERANCE_CELLS = 1e-6
"""How far (in cells) a reprojected grid point may stray from an affine map of the grid."""


def _same_grid(
    source: CRS, target: CRS, transform: Affine, width: int, height: int
) -> Affine | None:
    """Return the grid's transform in ``target`` when the CRSs differ by an affine map.

    A metre state plane and its foot twin (or EPSG:2260 and the twin of EPSG:32115) are the
    same projection in other units: the grid maps onto itself scaled, and resampling it
    (bilinear) would blur every value for nothing.  Returns None when the map is not affine
    to within :data:`GRID_TOLERANCE_CELLS` of a cell at the grid's corners, edges and centre.
    """
    to_target = Transformer.from_crs(source, target, always_xy=True)
    cols = np.array([0.0, width, 0.0, width, width / 2, 0.0, width / 2, width, width / 2])
    rows = np.array([0.0, 0.0, height, height, height / 2, height / 2, 0.0, height / 2, height])
    xs, ys = _apply(transform, cols, rows)
    tx, ty = (np.asarray(v, dtype="float64") for v in to_target.transform(xs, ys))
    if not (np.isfinite(tx).all() and np.isfinite(ty).all()):
        return None
    # corners 0 (col 0, row 0), 1 (col w, row 0) and 2 (col 0, row h) fix the affine map
    new = Affine(
        (tx[1] - tx[0]) / width,
        (tx[2] - tx[0]) / height,
        tx[0],
        (ty[1] - ty[0]) / width,
        (ty[2] - ty[0]) / height,
        ty[0],
    )
    px, py = _apply(new, cols, rows)
    cell = max(abs(new.a), abs(new.e), 1e-12)
    error = max(float(np.abs(px - tx).max()), float(np.abs(py - ty).max()))
    return new if error <= GRID_TOLERANCE_CELLS * cell else None


def _apply(t: Affine, cols: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of grid positions under an affine transform."""
    return t.a * cols + t.b * rows + t.c, t.d * cols + t.e * rows + t.f


def _mode(
    kind: str,
    given: RasterMode | None,
    tag: str | None,
    label: str,
    problems: list[Problem],
) -> RasterMode:
    if given is not None:
        return given
    if tag:
        try:
            return RasterMode(tag.strip().lower())
        except ValueError:
            problems.append(
                Problem(
                    label,
                    f"tag {MODE_TAG}={tag!r} is not depth or elevation.",
                    f'set mode = "depth" or "elevation" under [{kind}] in the manifest.',
                )
            )
            return RasterMode.ELEVATION
    if kind == "dem":
        return RasterMode.ELEVATION
    problems.append(
        Problem(
            label,
            "does not say whether its values are depths below ground or elevations.",
            f'set mode = "depth" (or "elevation") under [{kind}] in the layers manifest, '
            f"or the GeoTIFF tag {MODE_TAG}.",
        )
    )
    return RasterMode.ELEVATION


def _unit_factor(
    given: str | None,
    *,
    tag: str | None,
    band_unit: str,
    working_crs: CRS,
    label: str,
    problems: list[Problem],
) -> float:
    """Multiplier from the raster's value unit to the working CRS's linear unit."""
    text = given or tag or band_unit or "ft"
    word = text.strip().lower()
    if word in _FOOT_WORDS:
        return 1.0
    if word in _METRE_WORDS:
        return 1.0 / metres_per_unit(working_crs)
    problems.append(
        Problem(
            label,
            f"value unit {text!r} is neither feet nor metres.",
            'set units = "ft" or "m" in the layers manifest.',
        )
    )
    return 1.0


def needed_area(vectors: Mapping[str, gpd.GeoDataFrame], *, margin_ft: float) -> Bounds | None:
    """Return the extent of every non-empty vector layer, grown by ``margin_ft``.

    None when no layer has a finite extent (the rasters are then read whole).
    """
    boxes = [f.total_bounds for f in vectors.values() if len(f) and f.crs is not None]
    boxes = [b for b in boxes if np.isfinite(b).all()]
    if not boxes:
        return None
    crs = CRS(next(f.crs for f in vectors.values() if len(f) and f.crs is not None))
    margin = float(margin_ft) / feet_per_unit(crs) if crs.is_projected else 0.0
    stack = np.asarray(boxes, dtype="float64")
    return (
        float(stack[:, 0].min() - margin),
        float(stack[:, 1].min() - margin),
        float(stack[:, 2].max() + margin),
        float(stack[:, 3].max() + margin),
    )


def largest_distance_ft(raw: Mapping[str, Any]) -> float:
    """Return the largest finite value of any ``*_ft`` key of a ruleset's TOML (0: none).

    The reach of the rules beyond the town's features: a raster is read that far around them.
    """
    found = [0.0]

    def walk(node: object) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                if (
                    str(key).endswith("_ft")
                    and isinstance(value, int | float)
                    and not isinstance(value, bool)
                    and math.isfinite(value)
                ):
                    found.append(abs(float(value)))
                else:
                    walk(value)
        elif isinstance(node, list | tuple):
            for item in node:
                walk(item)

    walk(raw)
    return max(found)


def _extent_in(bounds: Any, source_crs: CRS, working_crs: CRS) -> tuple[float, float, float, float]:
    """Return a file's ``bounds`` (in ``source_crs``) as an extent in the working CRS."""
    if source_crs.equals(working_crs):
        return (float(bounds[0]), float(bounds[1]), float(bounds[2]), float(bounds[3]))
    left, bottom, right, top = transform_bounds(
        rasterio.crs.CRS.from_wkt(source_crs.to_wkt()),
        rasterio.crs.CRS.from_wkt(working_crs.to_wkt()),
        *bounds,
        densify_pts=21,
    )
    return (float(left), float(bottom), float(right), float(top))


def _window(
    src: Any, area: Bounds | None, *, source_crs: CRS, working_crs: CRS
) -> rasterio.windows.Window:
    """Return the window of ``src`` over ``area`` (working CRS), padded, clipped to the file."""
    full = rasterio.windows.Window(0, 0, src.width, src.height)
    if area is None:
        return full
    if source_crs.equals(working_crs):
        left, bottom, right, top = area
    else:
        left, bottom, right, top = transform_bounds(
            rasterio.crs.CRS.from_wkt(working_crs.to_wkt()),
            rasterio.crs.CRS.from_wkt(source_crs.to_wkt()),
            *area,
            densify_pts=21,
        )
    try:
        wanted = rasterio.windows.from_bounds(left, bottom, right, top, transform=src.transform)
    except (WindowError, ValueError):  # a rotated grid: read it whole (the size still counts)
        return full
    col0 = math.floor(wanted.col_off) - PAD_CELLS
    row0 = math.floor(wanted.row_off) - PAD_CELLS
    col1 = math.ceil(wanted.col_off + wanted.width) + PAD_CELLS
    row1 = math.ceil(wanted.row_off + wanted.height) + PAD_CELLS
    col0, col1 = max(col0, 0), min(col1, src.width)
    row0, row1 = max(row0, 0), min(row1, src.height)
    if col1 <= col0 or row1 <= row0:
        return rasterio.windows.Window(0, 0, 0, 0)
    return rasterio.windows.Window(col0, row0, col1 - col0, row1 - row0)


def _windows(
    src: Any,
    area: Bounds | None,
    full_area: Bounds | None,
    *,
    source_crs: CRS,
    working_crs: CRS,
) -> tuple[rasterio.windows.Window, Bounds | None]:
    """Return the window to read over ``area`` within ``full_area``'s, and that one's bounds.

    The bounds are None when ``full_area``'s window is the window read (or not given).
    """
    window = _window(src, area, source_crs=source_crs, working_crs=working_crs)
    if full_area is None:
        return window, None
    full = _window(src, full_area, source_crs=source_crs, working_crs=working_crs)
    window = _within(window, full)
    if _cells(window) == _cells(full):
        return window, None
    return window, _window_bounds(src.transform, full)


def _cells(window: rasterio.windows.Window) -> tuple[int, int, int, int]:
    return (int(window.col_off), int(window.row_off), int(window.width), int(window.height))


def _within(
    window: rasterio.windows.Window, outer: rasterio.windows.Window
) -> rasterio.windows.Window:
    """Return the part of ``window`` inside ``outer`` (both in whole cells of one file)."""
    col0, row0 = max(window.col_off, outer.col_off), max(window.row_off, outer.row_off)
    col1 = min(window.col_off + window.width, outer.col_off + outer.width)
    row1 = min(window.row_off + window.height, outer.row_off + outer.height)
    if col1 <= col0 or row1 <= row0:
        return rasterio.windows.Window(0, 0, 0, 0)
    return rasterio.windows.Window(col0, row0, col1 - col0, row1 - row0)


def _window_bounds(transform: Affine, window: rasterio.windows.Window) -> Bounds:
    """(minx, miny, maxx, maxy) of a window of a grid with ``transform``."""
    inner = transform @ Affine.translation(window.col_off, window.row_off)
    x0, y0 = inner @ (0, 0)
    x1, y1 = inner @ (int(window.width), int(window.height))
    return (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))


def _check_size(label: str, width: int, height: int, area: Bounds | None) -> None:
    """Refuse more than :data:`MAX_RASTER_CELLS` cells, naming the file and the size."""
    cells = width * height
    if cells <= MAX_RASTER_CELLS:
        return
    what = (
        "the window over the area the other layers need "
        f"({area[0]:,.2f}, {area[1]:,.2f} to {area[2]:,.2f}, {area[3]:,.2f})"
        if area is not None
        else "the whole raster"
    )
    raise LayerError(
        [
            Problem(
                label,
                f"{what} is {width:,} x {height:,} = {cells:,} cells "
                f"({cells * 8 / 2**30:,.1f} GiB as 8-byte values), more than the "
                f"{MAX_RASTER_CELLS:,} cells ({MAX_RASTER_CELLS * 8 / 2**30:,.1f} GiB) gis-sw "
                "reads from one raster.",
                "clip the raster to the town (gdal_translate -projwin) or resample it to "
                "larger cells (gdalwarp -tr).",
            )
        ]
    )
