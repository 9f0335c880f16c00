"""Read only the features of a layer that lie in a box: the GeoPackage R-tree, PostGIS ``&&``.

``gis-sw check`` of one application needs the town around it, not the town: a 10 x 12 ft
addition on a 100,000-parcel town reads a few dozen parcels.  :func:`read_gpkg_window` asks
a GeoPackage's R-tree (``rtree_<table>_<geometry>``, which GDAL writes with every layer)
for the features whose *envelope* meets the box, then reads those features by fid.  The
envelope test is what :class:`shapely.STRtree` ``query`` does, so a caller that picks
features by envelope (``gis_sw.Town.local``) sees the same ones in a window as in the
whole layer.  (pyogrio's own ``bbox`` keeps only features whose geometry meets the box:
an L-shaped lot whose envelope reaches the box would be left out.)

Each feature also gets its row in the whole layer (from 0): a feature without its optional
id is named ``#<row + 1>`` after its place in the whole layer, so names do not change with
the window.  The R-tree stores 32-bit bounds rounded outwards, so it may return a few more
features than the box meets, never fewer.

A source that cannot filter this way (another format, a GeoPackage view without an R-tree)
answers None and is read whole by the caller.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio

__all__ = [
    "Bounds",
    "GpkgLayer",
    "GpkgWindow",
    "ParquetWindow",
    "WindowRead",
    "gpkg_fields",
    "gpkg_has_rows",
    "gpkg_layers",
    "gpkg_window_rows",
    "parquet_crs",
    "read_gpkg_table",
    "read_gpkg_window",
    "read_parquet_window",
]

Bounds = tuple[float, float, float, float]
"""(minx, miny, maxx, maxy)."""


@dataclass(frozen=True, slots=True, eq=False)
class WindowRead:
    """The features of a layer in a window, in the layer's order.

    Attributes
    ----------
    frame
        The features read, in the file's CRS.
    rows
        Each feature's row in the whole layer (from 0).
    """

    frame: gpd.GeoDataFrame
    rows: np.ndarray


@dataclass(frozen=True, slots=True)
class GpkgLayer:
    """A feature table of a GeoPackage, as its catalog tables describe it.

    Attributes
    ----------
    table
        The table (layer) name.
    rtree
        Its R-tree table, or None when it has none.
    crs
        ``EPSG:<code>`` or the WKT of its spatial reference; None when undefined.
    extent
        The layer's extent as ``gpkg_contents`` records it (its CRS), or None.
    """

    table: str
    rtree: str | None
    crs: str | None
    extent: Bounds | None = None


@dataclass(frozen=True, slots=True)
class GpkgWindow:
    """A box to read a GeoPackage layer in.

    Attributes
    ----------
    table
        The layer.
    box
        In the layer's CRS.
    """

    table: str
    box: Bounds


def gpkg_layers(path: Path) -> dict[str, GpkgLayer] | None:
    """Return the feature tables of a GeoPackage, in catalog order; None: not one.

    Read once per file version (path, size, modification time), so the dozen layers of one
    GeoPackage cost one look at its catalog.
    """
    try:
        stat = path.stat()
    except OSError:
        return None
    return _catalog(str(path.resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _catalog(path: str, size: int, mtime_ns: int) -> dict[str, GpkgLayer] | None:
    del size, mtime_ns  # the cache key: a rewritten file is read again
    conn = _connect(Path(path))
    if conn is None:
        return None
    try:
        rows = conn.execute(
            "SELECT c.table_name, g.column_name, s.organization, "
            "s.organization_coordsys_id, s.definition, g.srs_id, "
            "c.min_x, c.min_y, c.max_x, c.max_y "
            "FROM gpkg_contents c JOIN gpkg_geometry_columns g "
            "ON lower(g.table_name) = lower(c.table_name) "
            "LEFT JOIN gpkg_spatial_ref_sys s ON s.srs_id = g.srs_id "
            "WHERE c.data_type = 'features'"
        ).fetchall()
        indexed = {
            str(r[0]).lower()
            for r in conn.execute(
                "SELECT table_name FROM gpkg_extensions WHERE extension_name = 'gpkg_rtree_index'"
            )
        }
        tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    out: dict[str, GpkgLayer] = {}
    for table, column, org, code, definition, srs_id, *box in rows:
        rtree = f"rtree_{table}_{column}"
        has_rtree = str(table).lower() in indexed and rtree in tables
        extent = tuple(float(v) for v in box) if all(v is not None for v in box) else None
        out[str(table)] = GpkgLayer(
            str(table),
            rtree if has_rtree else None,
            _srs_text(org, code, definition, srs_id),
            extent,  # type: ignore[arg-type]
        )
    return out


def _srs_text(org: object, code: object, definition: object, srs_id: object) -> str | None:
    """``EPSG:<code>``, else the WKT; None for the undefined systems (srs_id 0 and -1)."""
    if srs_id in (0, -1, None):
        return None
    if isinstance(org, str) and org.upper() == "EPSG" and isinstance(code, int):
        return f"EPSG:{code}"
    text = str(definition or "").strip()
    return text if text and text.lower() != "undefined" else None


def _connect(path: Path) -> sqlite3.Connection | None:
    """Open a GeoPackage read-only, or None when it is not an SQLite file."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        conn.execute("SELECT 1 FROM gpkg_geometry_columns LIMIT 1")
    except sqlite3.Error:
        return None
    return conn


_HELD = threading.local()
_INHERITED: list[sqlite3.Connection] = []


def _held_connection(path: Path) -> sqlite3.Connection | None:
    """:func:`_connect`, kept open in this thread while the same file version is read.

    A check reads a dozen layers of one GeoPackage by window: one connection (2 ms to
    open and close) serves them all.  A thread holds one, to its last file: another file,
    or this one rewritten (its size or modification time changed), closes it.  A process
    forked from the one that opened it (SQLite connections must not cross a fork) opens
    its own and leaves the inherited one alone.
    """
    try:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, os.getpid())
    except OSError:
        return None
    held: tuple[tuple[str, int, int, int], sqlite3.Connection | None] | None = getattr(
        _HELD, "connection", None
    )
    if held is not None and held[0] == key:
        return held[1]
    if held is not None and held[1] is not None:
        if held[0][3] == key[3]:
            held[1].close()
        else:  # the parent's: neither used nor closed here
            _INHERITED.append(held[1])
    conn = _connect(path)
    _HELD.connection = (key, conn)
    return conn


def _table_connection(path: Path, table: str) -> sqlite3.Connection | None:
    """Return the held connection of a GeoPackage with feature table ``table``, else None."""
    layers = gpkg_layers(path)
    if layers is None or table not in layers:
        return None
    return _held_connection(path)


def gpkg_fields(path: Path, table: str) -> list[str] | None:
    """Return a GeoPackage feature table's attribute columns as GDAL lists its fields.

    Every column but the integer primary key (the fid) and the geometry column, in the
    table's order; read from SQLite without opening the file in GDAL.  None when ``path``
    is not a GeoPackage with that feature table, or its key is not one integer column.
    """
    conn = _table_connection(path, table)
    if conn is None:
        return None
    try:
        geometry = conn.execute(
            "SELECT column_name FROM gpkg_geometry_columns WHERE lower(table_name) = lower(?)",
            (table,),
        ).fetchall()
        columns = conn.execute(f"PRAGMA table_info({quoted(table)})").fetchall()
    except sqlite3.Error:
        return None
    keys = [c for c in columns if c[5]]
    if len(geometry) != 1 or len(keys) != 1 or str(keys[0][2]).upper() != "INTEGER":
        return None
    skip = {str(keys[0][1]), str(geometry[0][0])}
    return [str(c[1]) for c in columns if str(c[1]) not in skip]


def gpkg_has_rows(path: Path, table: str) -> bool | None:
    """Whether a GeoPackage feature table holds any row; None: not such a table."""
    conn = _table_connection(path, table)
    if conn is None:
        return None
    try:
        (found,) = conn.execute(f"SELECT EXISTS(SELECT 1 FROM {quoted(table)})").fetchone()  # noqa: S608
    except sqlite3.Error:
        return None
    return bool(found)


def quoted(name: str) -> str:
    """Return an SQLite identifier in double quotes (inner quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def _layer_rows(conn: sqlite3.Connection, table: str, fids: np.ndarray) -> np.ndarray:
    """Rows (from 0) of ``fids`` in the whole layer, read in fid order as GDAL reads it."""
    first, last, count = conn.execute(
        f"SELECT min(rowid), max(rowid), count(*) FROM {quoted(table)}"  # noqa: S608 (quoted)
    ).fetchone()
    if count == 0:
        return np.empty(0, dtype=np.int64)
    if last - first + 1 == count:  # fids 1..n, as GDAL writes them
        return fids - int(first)
    every = np.fromiter(
        (r[0] for r in conn.execute(f"SELECT rowid FROM {quoted(table)} ORDER BY rowid")),  # noqa: S608
        dtype=np.int64,
    )
    return np.searchsorted(every, fids)


def _all_indexed(conn: sqlite3.Connection, layer: GpkgLayer) -> int | None:
    """Return the first fid when every row has its R-tree entry and the fids have no gap.

    None otherwise, or when it cannot tell.  The R-tree's entries are rows of the table (the
    GeoPackage's triggers keep them so), and the table's rows lie between its first and
    last fid: when the R-tree holds as many entries as that range has fids, every row has
    one.  Two lookups of the table's b-tree and a count of the R-tree's ids, where finding
    the rows without an entry scans the whole table (0.2 s for 100,000 parcels).
    """
    shadow = f"{layer.rtree}_rowid"  # the R*Tree module's table of its entries' ids
    try:
        # one aggregate a query: SQLite reads min or max alone off the b-tree, both together
        # by scanning the table
        (first,) = conn.execute(f"SELECT min(rowid) FROM {quoted(layer.table)}").fetchone()  # noqa: S608
        (last,) = conn.execute(f"SELECT max(rowid) FROM {quoted(layer.table)}").fetchone()  # noqa: S608
        (entries,) = conn.execute(f"SELECT count(*) FROM {quoted(shadow)}").fetchone()  # noqa: S608
    except sqlite3.Error:
        return None
    if first is None or entries != last - first + 1:
        return None
    return int(first)


def gpkg_window_rows(path: Path, window: GpkgWindow) -> tuple[np.ndarray, np.ndarray] | None:
    """Fids of the features whose envelope meets the window's box, and their rows.

    Parameters
    ----------
    path
        A GeoPackage.
    window
        The layer and the box (in the layer's own CRS).

    Returns
    -------
    (fids, rows) or None
        Sorted fids and each one's row in the whole layer (from 0); None when ``path`` is
        not a GeoPackage or the layer has no R-tree.
    """
    layers = gpkg_layers(path)
    layer = None if layers is None else layers.get(window.table)
    if layer is None or layer.rtree is None:
        return None
    conn = _held_connection(path)
    if conn is None:
        return None
    try:
        minx, miny, maxx, maxy = window.box
        fids = np.fromiter(
            (
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM {quoted(layer.rtree)} "  # noqa: S608 (quoted identifier)
                    "WHERE maxx >= ? AND minx <= ? AND maxy >= ? AND miny <= ?",
                    (minx, maxx, miny, maxy),
                )
            ),
            dtype=np.int64,
        )
        first = _all_indexed(conn, layer)
        if first is not None:  # every row has its R-tree entry, fids first..last: no scan
            fids = np.sort(fids)
            return fids, fids - first
        # features with no geometry (or an empty one) have no R-tree entry: read them all,
        # so validation names them as a whole read does
        unlocated = np.fromiter(
            (
                r[0]
                for r in conn.execute(
                    f"SELECT rowid FROM {quoted(layer.table)} "  # noqa: S608 (quoted)
                    f"WHERE rowid NOT IN (SELECT id FROM {quoted(layer.rtree)})"
                )
            ),
            dtype=np.int64,
        )
        fids = np.union1d(fids, unlocated)
        return fids, _layer_rows(conn, layer.table, fids)
    except sqlite3.Error:
        return None


def read_gpkg_window(path: Path, window: GpkgWindow) -> WindowRead | None:
    """Read the features of a GeoPackage layer whose envelope meets the window's box.

    Returns
    -------
    WindowRead or None
        None when the source cannot be read by window (not a GeoPackage, no R-tree): read
        it whole.

    Raises
    ------
    pyogrio.errors.DataSourceError
        When GDAL cannot read the features (the caller names the file).
    """
    found = gpkg_window_rows(path, window)
    if found is None:
        return None
    fids, rows = found
    layer = window.table
    direct = _direct_rows(path, layer, fids)
    if direct is not None:  # straight from SQLite, as pyogrio reads them (gpkg_rows)
        frame, read = direct
        return WindowRead(frame, np.asarray(rows[np.searchsorted(fids, read)], dtype=np.int64))
    if len(fids):
        frame = pyogrio.read_dataframe(
            path, layer=layer, fids=fids, use_arrow=True, fid_as_index=True
        )
        order = np.argsort(np.asarray(frame.index, dtype=np.int64), kind="stable")
        frame = frame.iloc[order]
        rows = rows[np.searchsorted(fids, np.asarray(frame.index, dtype=np.int64))]
    else:
        frame = pyogrio.read_dataframe(path, layer=layer, max_features=0, use_arrow=True)
    return WindowRead(frame.reset_index(drop=True), np.asarray(rows, dtype=np.int64))


def read_gpkg_table(path: Path, table: str) -> gpd.GeoDataFrame | None:
    """Read a small GeoPackage feature table whole straight from SQLite, as pyogrio would.

    :func:`gis_sw.layers.gpkg_rows.read_gpkg_rows` of every row; None when ``path`` is not
    a GeoPackage with that feature table, the table is large, or holds what that reader
    leaves to pyogrio.
    """
    layers = gpkg_layers(path)
    if layers is None or table not in layers:
        return None
    found = _direct_rows(path, table, None)
    return None if found is None else found[0]


def _direct_rows(
    path: Path, table: str, fids: np.ndarray | None
) -> tuple[gpd.GeoDataFrame, np.ndarray] | None:
    """:func:`gis_sw.layers.gpkg_rows.read_gpkg_rows` on this thread's connection, or None."""
    from gis_sw.layers.gpkg_rows import read_gpkg_rows

    conn = _held_connection(path)
    if conn is None:
        return None
    stat = path.stat()
    return read_gpkg_rows(conn, (str(path.resolve()), stat.st_size, stat.st_mtime_ns), table, fids)


@dataclass(frozen=True, slots=True)
class ParquetWindow:
    """A box (in the file's CRS) to read a GeoParquet file in, by its bbox covering.

    Attributes
    ----------
    box
        (minx, miny, maxx, maxy).
    """

    box: Bounds


def parquet_crs(path: Path) -> tuple[str, Bounds] | None:
    """Return the CRS (text) and extent of a GeoParquet file with a bbox covering column.

    None when the file is not GeoParquet, records no ``covering`` bbox for its primary
    column (GeoParquet 1.1, ``to_parquet(write_covering_bbox=True)``) or no ``bbox`` of it,
    or cannot be read: it is then read whole.  A file without ``crs`` is in OGC:CRS84, as
    the standard says.
    """
    import json

    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
        geo = json.loads(meta.get(b"geo", b"{}"))
        column = geo["columns"][geo["primary_column"]]
        extent = tuple(float(v) for v in column["bbox"][:4])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    if len(extent) != 4 or "bbox" not in column.get("covering", {}):
        return None
    crs = column.get("crs", "OGC:CRS84")
    if crs is None:
        return None
    return (json.dumps(crs) if isinstance(crs, dict) else str(crs)), extent


def read_parquet_window(path: Path, window: ParquetWindow) -> gpd.GeoDataFrame:
    """Read the rows of a GeoParquet file whose bbox covering meets the window's box.

    Row groups whose bbox statistics miss the box are skipped; the rows keep the file's
    order.  The rows' places in the whole file are not known (the caller reads layers
    whose features need them whole).

    Raises
    ------
    OSError, ValueError
        When pyarrow cannot read the file (the caller names it).
    """
    found = gpd.read_parquet(path, bbox=window.box)
    # rows with no geometry (or an empty one) have no bbox: read them all the same, so
    # validation names them as a whole read does
    unlocated = _unlocated_parquet_rows(path)
    if len(unlocated) == 0:
        return found
    return gpd.GeoDataFrame(pd.concat([found, unlocated], ignore_index=True), crs=found.crs)


def _unlocated_parquet_rows(path: Path) -> gpd.GeoDataFrame:
    """Return a GeoParquet file's rows without a bbox (no geometry, or an empty one)."""
    import json

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    geo = json.loads((pq.read_schema(path).metadata or {})[b"geo"])
    xmin = geo["columns"][geo["primary_column"]]["covering"]["bbox"]["xmin"]
    names = [xmin] if isinstance(xmin, str) else list(xmin)
    return gpd.read_parquet(path, filters=pc.field(*names).is_null(nan_is_null=True))
