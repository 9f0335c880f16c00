"""Read vector files of any supported format and bring them into the working CRS.

Formats: GeoPackage, Shapefile, GeoJSON, TopoJSON, FlatGeobuf, File Geodatabase (OpenFileGDB)
through pyogrio with Arrow; GeoParquet through ``geopandas.read_parquet`` (pyogrio's wheel has
no Parquet driver); DXF through pyogrio, its closed polylines turned into polygons (a DXF
carries no CRS, so one must be given).  PostGIS lives in :mod:`gis_sw.layers.postgis`.

The CRS is read from the file; the one given by the caller is used when the file has none
(``[manifest] crs``), and instead of the file's when the caller says so (a layer's own
``crs``, ``--crs``: ``override_crs``), the warnings naming the CRS replaced.  A file with
neither is an error naming the fix.  Linear
units come from the CRS (:func:`crs_units`), never assumed.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyogrio
import shapely
from pyproj import CRS

from gis_sw.errors import CRSError, InputFileError
from gis_sw.layers.window import (
    GpkgWindow,
    ParquetWindow,
    read_gpkg_table,
    read_gpkg_window,
    read_parquet_window,
)

logger = logging.getLogger(__name__)

PARQUET_SUFFIXES = (".parquet", ".geoparquet", ".pq")
DXF_LAYER_FIELD = "Layer"
"""The attribute that holds a DXF entity's CAD layer (OGR's DXF driver)."""


UNREADABLE_FIX = (
    "Fix: check that the path names the right file and that it is whole (export it again "
    "from the GIS if it was cut short or damaged)."
)
"""The fix named by every 'not a readable file' message."""


def reason(exc: BaseException) -> str:
    """GDAL's message for why a file could not be read: its first sentence, no path."""
    text = str(exc).split("; ", 1)[0].strip().rstrip(".")
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    return text or type(exc).__name__


CURVES_STEPS = (
    "turn the arcs into straight segments and export the layer again (QGIS: "
    "Processing, Segmentize by maximum distance, at most 0.01 ft (0.003 m) off the arc; "
    "ArcGIS: Densify; GDAL: ogr2ogr -nlt CONVERT_TO_LINEAR)."
)
"""How to make a layer's curved geometries straight (the fix of :func:`curved_message`)."""


def curved(exc: BaseException) -> bool:
    """Whether ``exc`` is shapely refusing a curved geometry (a circular arc)."""
    return "Nonlinear geometry" in str(exc)


def curved_message(where: str, *, first: str = "") -> str:
    """``<where> holds curved geometries ... Fix: ...``: what any reader says of arcs.

    ``first`` is a fix of the source's own to name before :data:`CURVES_STEPS`.
    """
    return (
        f"{where} holds curved geometries (circular arcs, as ArcGIS and CAD draw lot lines "
        f"on a cul-de-sac or a road's bend), which gis-sw cannot measure. "
        f"Fix: {first}{CURVES_STEPS}"
    )


def unreadable(path: Path, what: str, exc: BaseException) -> str:
    """``<path>: not a readable <what> (<reason>). Fix: ...``.

    A layer refused for its curved geometries says so and names the fix for it instead
    (the file is whole: export it again with the arcs made straight).
    """
    if curved(exc):
        layer = re.search(r"layer '[^']*'", what)
        return curved_message(f"{path}: {layer.group(0)}" if layer else str(path))
    return f"{path}: not a readable {what} ({reason(exc)}). {UNREADABLE_FIX}"


def crs_units(crs: CRS | None) -> str:
    """Return the linear (or angular) unit of a CRS's first axis, as pyproj names it."""
    if crs is None:
        return "unknown"
    if not crs.axis_info:
        return "unknown"
    return str(crs.axis_info[0].unit_name or "unknown")


def crs_text(crs: CRS | None) -> str:
    """``EPSG:2260`` when the CRS has an authority code, else its name."""
    if crs is None:
        return "none"
    if "id" not in crs.to_json_dict():  # a CRS built here (a foot twin): its own name
        return str(crs.name)
    code = crs.to_authority()
    return f"{code[0]}:{code[1]}" if code else str(crs.name)


def read_vector(
    path: Path,
    *,
    layer: str | None = None,
    kind: str | None = None,
    crs: CRS | None = None,
    override_crs: bool = False,
    where: str | None = None,
    box: GpkgWindow | ParquetWindow | None = None,
) -> tuple[gpd.GeoDataFrame, CRS, list[str]]:
    """Read one vector layer with its CRS.

    The CRS is the file's, else ``crs``; ``crs`` always when ``override_crs``.

    Parameters
    ----------
    path
        File (or ``.gdb`` folder) to read.
    layer
        Layer inside a multi-layer file; for DXF, the CAD layer to keep.
    kind
        Layer kind, used to pick the layer of a multi-layer file named after it.
    crs
        CRS to assume when the file has none.
    override_crs
        Use ``crs`` whatever the file claims (a state-plane GeoJSON without a ``crs`` member
        is EPSG:4326 to GDAL); the warnings say which CRS was replaced.
    where
        Attribute filter (an OGR SQL ``WHERE`` clause) applied by GDAL while reading.
    box
        Read only the features of this GeoPackage layer (or GeoParquet file) whose
        envelope meets its box (in the file's CRS), when the file can filter so (its
        R-tree, no ``where``; a bbox covering): each feature's row in the whole layer is
        then in the column :data:`WINDOW_ROW` (-1 for GeoParquet).  Other files are read
        whole (no such column).

    Returns
    -------
    (frame, source CRS, warnings)

    Raises
    ------
    InputFileError
        If the file cannot be read, or the layer is not in it.
    CRSError
        If the file has no CRS and none was given.
    """
    suffix = path.suffix.lower()
    warnings: list[str] = []
    if where is not None and (suffix in PARQUET_SUFFIXES or suffix == ".dxf"):
        raise InputFileError(
            f"{path}: where = {where!r} cannot be applied to a "
            f"{'GeoParquet' if suffix in PARQUET_SUFFIXES else 'DXF'} file. Fix: filter the "
            "file when exporting it, or save it as a GeoPackage."
        )
    if suffix in PARQUET_SUFFIXES:
        frame = _read_parquet(path, box if isinstance(box, ParquetWindow) else None)
    elif suffix == ".dxf":
        frame = _read_dxf(path, layer)
    else:
        gpkg = box if isinstance(box, GpkgWindow) else None
        frame, notes = _read_ogr(path, layer, kind, where=where, box=gpkg)
        warnings.extend(notes)
    label = f"{path}:{layer}" if layer else str(path)
    if override_crs and crs is not None:
        if frame.crs is not None and not CRS(frame.crs).equals(crs):
            warnings.append(
                f"CRS {crs_text(crs)} from the manifest replaces the file's own "
                f"{crs_text(CRS(frame.crs))}."
            )
        frame = frame.set_crs(crs, allow_override=True)
    elif frame.crs is None:
        if crs is None:
            raise CRSError(
                f'{label} has no CRS. Fix: give the CRS it is in, e.g. crs = "EPSG:2263" '
                "under its table in the layers manifest (or [manifest] crs), or --crs for a "
                "proposal file."
            )
        frame = frame.set_crs(crs)
    elif crs is not None and not CRS.from_user_input(frame.crs).equals(crs):
        warnings.append(
            f"the file's own CRS {crs_text(CRS(frame.crs))} was used; the manifest's "
            f"{crs_text(crs)} applies only to files without one."
        )
    source_crs = CRS.from_user_input(frame.crs)  # the frame's own CRS object: no parse
    frame, dropped = drop_z(frame)
    if dropped:
        warnings.append("Z/M values dropped (2-D geometry is used).")
    return frame, source_crs, warnings


def _read_parquet(path: Path, window: ParquetWindow | None = None) -> gpd.GeoDataFrame:
    try:
        if window is None:
            return gpd.read_parquet(path)
        return read_parquet_window(path, window).assign(**{WINDOW_ROW: -1})
    except (OSError, ValueError) as exc:
        raise InputFileError(unreadable(path, "GeoParquet file", exc)) from exc


def pick_layer(path: Path, layer: str | None, kind: str | None) -> tuple[str | None, list[str]]:
    """Return the layer of ``path`` to read (None: its only layer) and all it holds.

    Raises
    ------
    InputFileError
        If the file cannot be read, holds several layers and none is named (or named after
        ``kind``), or has no layer ``layer``.
    """
    try:
        layers = [str(name) for name, _ in pyogrio.list_layers(path)]
    except Exception as exc:  # pyogrio's DataSourceError and GDAL errors
        raise InputFileError(unreadable(path, "vector file", exc)) from exc
    if layer is None and len(layers) > 1:
        if kind is not None and kind in layers:
            layer = kind
        else:
            raise InputFileError(
                f"{path} holds several layers ({', '.join(layers)}). Fix: name the one to read "
                'with layer = "..." in the layers manifest.'
            )
    if layer is not None and layer not in layers:
        raise InputFileError(
            f"{path} has no layer {layer!r} (it has {', '.join(layers)}). Fix: correct layer."
        )
    return layer, layers


WINDOW_ROW = "__gis_sw_layer_row"
"""Column of a window's features holding each one's row in the whole layer (from 0)."""


def _read_window(path: Path, window: GpkgWindow) -> gpd.GeoDataFrame | None:
    """Read a GeoPackage layer's features in a window with their rows; None: read whole.

    Raises
    ------
    InputFileError
        If GDAL cannot read them.
    """
    try:
        found = read_gpkg_window(path, window)
    except Exception as exc:  # GDAL read errors
        what = f"vector file: layer {window.table!r} failed"
        raise InputFileError(unreadable(path, what, exc)) from exc
    if found is None or not isinstance(found.frame, gpd.GeoDataFrame):
        return None
    return found.frame.assign(**{WINDOW_ROW: found.rows})


def _read_ogr(
    path: Path,
    layer: str | None,
    kind: str | None,
    *,
    where: str | None = None,
    box: GpkgWindow | None = None,
) -> tuple[gpd.GeoDataFrame, list[str]]:
    if box is not None and where is None:
        windowed = _read_window(path, box)
        if windowed is not None:
            return windowed, []
    name = layer if layer is not None else kind
    if path.suffix.lower() == ".gpkg" and where is None and name is not None:
        # a small feature table named (or named after its kind): straight from SQLite
        table = read_gpkg_table(path, name)
        if table is not None:
            return table, []
    if path.suffix.lower() == ".shp" and path.is_file():
        _check_shapefile_parts(path)
    layer, layers = pick_layer(path, layer, kind)
    try:
        frame = pyogrio.read_dataframe(path, layer=layer, use_arrow=True, where=where)
    except Exception as exc:  # GDAL read errors
        if where is not None:
            raise InputFileError(
                f"{path}: the filter where = {where!r} failed ({reason(exc)}). Fix: write an "
                "OGR SQL condition on the file's own column names, e.g. where = "
                "\"PROP_CLASS <> '330'\" (text in single quotes)."
            ) from exc
        raise InputFileError(
            unreadable(path, f"vector file: layer {layer or layers[0]!r} failed", exc)
        ) from exc
    if not isinstance(frame, gpd.GeoDataFrame):
        raise InputFileError(
            f"{path}: layer {layer!r} has no geometry column. Fix: give a layer with "
            "geometries (a table of attributes belongs in a proposals GeoPackage)."
        )
    bad = not_utf8_columns(frame)
    if not bad:
        return frame, []
    try:  # Arrow refuses a non-UTF-8 encoding for some drivers: read without it
        frame = pyogrio.read_dataframe(
            path, layer=layer, use_arrow=False, encoding=FALLBACK_ENCODING, where=where
        )
    except Exception as exc:  # GDAL read errors
        raise InputFileError(
            f"{path}: text in column(s) {', '.join(bad)} is not UTF-8 ({reason(exc)}). Fix: "
            "save the file as UTF-8 (for a Shapefile, a .cpg file naming its encoding)."
        ) from exc
    note = (
        f"text in column(s) {', '.join(bad)} is not UTF-8 and was read as Latin-1 "
        f"({FALLBACK_ENCODING}); if names look wrong, save the file as UTF-8 or give a "
        "Shapefile a .cpg file naming its encoding."
    )
    return frame, [note]


FALLBACK_ENCODING = "ISO-8859-1"
"""Encoding tried when a file's text is not UTF-8 (old Shapefiles without a ``.cpg``)."""


def not_utf8_columns(frame: pd.DataFrame) -> list[str]:
    """Text columns holding bytes that are not UTF-8 (GDAL passes them through to Arrow)."""
    bad = []
    for column in frame.columns:
        series = frame[column]
        chunked = getattr(series.array, "_pa_array", None)
        if chunked is not None and (
            pa.types.is_string(chunked.type) or pa.types.is_large_string(chunked.type)
        ):
            try:
                chunked.validate(full=True)
            except pa.ArrowInvalid:
                bad.append(str(column))
        elif series.dtype == object and any(isinstance(v, bytes) for v in series):
            bad.append(str(column))
    return bad


def _check_shapefile_parts(path: Path) -> None:
    """Refuse a Shapefile without its ``.dbf`` (attributes): GDAL reads it without one.

    Raises
    ------
    InputFileError
        Naming the missing part.
    """
    if not any(path.with_suffix(suffix).is_file() for suffix in (".dbf", ".DBF", ".Dbf")):
        raise InputFileError(
            f"{path}: its attribute file {path.stem}.dbf is missing, so no feature has an id "
            f"or any other column. Fix: copy {path.stem}.dbf (and .shx, .prj, .cpg) beside it, "
            "or export the layer again."
        )


def _read_dxf(path: Path, cad_layer: str | None) -> gpd.GeoDataFrame:
    """DXF entities; closed polylines become polygons; optionally one CAD layer only."""
    try:
        frame = pyogrio.read_dataframe(path, use_arrow=True)
    except Exception as exc:  # GDAL read errors
        raise InputFileError(unreadable(path, "DXF file", exc)) from exc
    if cad_layer is not None:
        names = sorted({str(x) for x in frame.get(DXF_LAYER_FIELD, [])})
        frame = frame[frame[DXF_LAYER_FIELD] == cad_layer]
        if frame.empty:
            raise InputFileError(
                f"{path} has no entities on CAD layer {cad_layer!r} (layers: "
                f"{', '.join(names) or 'none'}). Fix: correct layer."
            )
    geoms = np.asarray(frame.geometry.values, dtype=object)
    frame = frame.copy()
    frame[frame.geometry.name] = gpd.GeoSeries(
        closed_lines_to_polygons(geoms), index=frame.index, crs=frame.crs
    )
    return gpd.GeoDataFrame(frame, geometry=frame.geometry.name, crs=frame.crs)


def closed_lines_to_polygons(geoms: np.ndarray) -> np.ndarray:
    """Turn closed (multi)linestrings into (multi)polygons; leave everything else.

    CAD exports limits of disturbance as closed polylines.  A line whose ends meet and that
    has at least four vertices encloses an area; open lines stay lines (and then fail a
    polygon layer's geometry check, naming the feature).
    """
    out = geoms.copy()
    types = shapely.get_type_id(geoms)
    for i in np.flatnonzero((types == 1) | (types == 5)):
        parts = shapely.get_parts(geoms[i])
        if len(parts) and all(p.is_closed and len(p.coords) >= 4 for p in parts):
            polys = [shapely.Polygon(p.coords) for p in parts]
            out[i] = polys[0] if len(polys) == 1 else shapely.MultiPolygon(polys)
    return out


def drop_z(frame: gpd.GeoDataFrame) -> tuple[gpd.GeoDataFrame, bool]:
    """Return the frame with 2-D geometries, and whether any had Z or M."""
    geoms = np.asarray(frame.geometry.values, dtype=object)
    has_m = getattr(shapely, "has_m", None)  # shapely >= 2.1
    measured = bool(has_m(geoms).any()) if has_m is not None and len(geoms) else False
    if not (len(geoms) and (shapely.has_z(geoms).any() or measured)):
        return frame, False
    frame = frame.copy()
    frame[frame.geometry.name] = gpd.GeoSeries(
        shapely.force_2d(geoms), index=frame.index, crs=frame.crs
    )
    return frame, True


def to_working_crs(frame: gpd.GeoDataFrame, crs: CRS, *, label: str) -> gpd.GeoDataFrame:
    """Reproject a frame (with a CRS) to the working CRS.

    Raises
    ------
    CRSError
        If the transformation fails or gives coordinates that are not finite (data far
        outside the working CRS's area of use).
    """
    from gis_sw.layers.extent import check_extent  # it imports this module

    if CRS.from_user_input(frame.crs).equals(crs):
        check_extent(frame, crs, label=label)
        return frame
    try:
        out = frame.to_crs(crs)
    except Exception as exc:  # pyproj raises several kinds
        raise CRSError(
            f"{label}: cannot reproject from {crs_text(CRS(frame.crs))} to {crs_text(crs)} "
            f"({exc}). Fix: check the layer's CRS."
        ) from exc
    if len(out) and not np.isfinite(out.geometry.dropna().total_bounds).all():
        raise CRSError(_not_landing(frame, crs, label))
    check_extent(out, crs, label=label, source=CRS(frame.crs))
    return round_coordinates(out)


def _not_landing(frame: gpd.GeoDataFrame, crs: CRS, label: str) -> str:
    """Return the message for coordinates that do not land in the working CRS.

    With the likely fix: projected numbers in a file that claims degrees (a GeoJSON
    without a ``crs`` member always claims EPSG:4326) need the CRS they are in, by hand.
    """
    source = CRS(frame.crs)
    head = f"{label}: coordinates in {crs_text(source)} do not land in {crs_text(crs)}."
    minx, miny, maxx, maxy = (float(v) for v in frame.geometry.dropna().total_bounds)
    degrees = max(abs(minx), abs(maxx)) <= 180 and max(abs(miny), abs(maxy)) <= 90
    if source.is_geographic and not degrees:
        working = crs_text(crs)
        example = working if ":" in working else "EPSG:...."
        return (
            f"{head} The file says {crs_text(source)} (degrees), but its coordinates "
            f"({minx:,.0f}, {miny:,.0f}) are not longitudes and latitudes: they are projected "
            "(a GeoJSON without a crs member always says EPSG:4326). Fix: give the CRS they "
            f"are in: --crs {example} (if that is it) for a proposals file, or crs = "
            '"..." for the layer in the layers manifest.'
        )
    return f"{head} Fix: check that the CRS given for the layer is the one it is in."


COORDINATE_DECIMALS = 6
"""Reprojected coordinates are rounded to 1e-6 working-CRS units (a millionth of a foot).

A reprojection leaves rounding noise of about 1e-9 on every coordinate: a vertex drawn on a
raster cell's edge or on a lot line would land on one side of it or the other depending on
the CRS the file was stored in.  Rounding far below any figure reported (0.01 ft) makes a
layer stored in metres read exactly as the same layer stored in feet."""


def round_coordinates(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Return the frame with every coordinate rounded to :data:`COORDINATE_DECIMALS`."""
    geoms = np.asarray(frame.geometry.values, dtype=object)
    if not len(geoms):
        return frame
    rounded = shapely.transform(geoms, lambda xy: np.round(xy, COORDINATE_DECIMALS))
    out = frame.copy()
    out[frame.geometry.name] = gpd.GeoSeries(rounded, index=frame.index, crs=frame.crs)
    return out
