"""Read a GeoPackage layer's features by fid straight from SQLite, as pyogrio reads them.

``gis-sw check`` of one application reads a dozen layers of the town's GeoPackage by
window (:mod:`gis_sw.layers.window`), a few dozen features each.  Through pyogrio each read
opens the GeoPackage in GDAL again (about 7 ms, a dozen times a check) and sets up an Arrow
stream for a handful of rows; the features themselves are a few rows of an SQLite table
the R-tree lookup already has open.  :func:`read_gpkg_rows` reads them on that connection
and builds the frame pyogrio would: the same columns in the table's order, the same Arrow
types converted to pandas the same way (``str`` text, ``int64``, ``float64``, ``bool``,
integers with gaps as ``float64``, yes/no with gaps as objects), the geometries from the
WKB inside each GeoPackage blob (``shapely.from_wkb``, as pyogrio does with GDAL's), and
the layer's CRS as GDAL names it (``EPSG:<code>``).

Only what it reads exactly as GDAL does is read so: columns declared ``TEXT``,
``TEXT(n)``, ``INTEGER``/``INT``, ``MEDIUMINT``, ``REAL``/``DOUBLE`` or ``BOOLEAN``, each
value of its declared SQLite type (or NULL; yes/no 0 or 1), standard GeoPackage blobs of
the seven simple geometry types, an EPSG spatial reference whose definition names it.
Anything else (dates, blobs, curves, an extended or empty-flagged blob, text that is not
UTF-8 or holds a NUL, a column named ``geometry`` or ``fid``) answers None, and the
caller reads with pyogrio.  ``tests/test_cold16_gpkg_rows.py`` holds both readers equal on
generated layers with gaps; the sample's and a 100,000-parcel town's outputs are unchanged.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import struct
from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import shapely
from pyproj import CRS

from gis_sw.layers.window import quoted

__all__ = ["MAX_FIDS", "read_gpkg_rows"]

MAX_FIDS = 10_000
"""Most fids one read binds (SQLite's limit of bound values is 32,766); more: pyogrio."""

_ARROW_TYPES: dict[str, pa.DataType] = {
    "TEXT": pa.string(),
    "INTEGER": pa.int64(),
    "INT": pa.int64(),
    "MEDIUMINT": pa.int32(),
    "REAL": pa.float64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
}
"""GDAL's field type of each declared column type read here, as the Arrow type it emits."""
_TEXT_WIDTH = re.compile(r"TEXT\(\d+\)")
_SIMPLE_WKB = frozenset(range(1, 8))
"""WKB geometry codes (mod 1000) shapely reads as GDAL does: Point ... GeometryCollection."""
_ENVELOPE_BYTES = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}


@dataclass(frozen=True, slots=True)
class _Table:
    """What reading a feature table needs: its fid, geometry and field columns, its CRS."""

    fid: str
    geometry: str
    fields: tuple[tuple[str, str], ...]
    crs: str


def _declared(decl: str) -> str | None:
    """Return the key of :data:`_ARROW_TYPES` for a declared column type, or None."""
    word = decl.strip().upper()
    if _TEXT_WIDTH.fullmatch(word):
        return "TEXT"
    return word if word in _ARROW_TYPES else None


_DESCRIBED: dict[tuple[tuple[str, int, int], str], _Table | None] = {}
"""Tables described, by file version (path, size, modification time) and name."""


def _table(conn: sqlite3.Connection, key: tuple[str, int, int], table: str) -> _Table | None:
    """Describe ``table`` of the GeoPackage open on ``conn`` (file version ``key``), once."""
    if (key, table) not in _DESCRIBED:
        if len(_DESCRIBED) >= 256:
            _DESCRIBED.clear()
        _DESCRIBED[key, table] = _describe(conn, table)
    return _DESCRIBED[key, table]


def _describe(conn: sqlite3.Connection, table: str) -> _Table | None:
    """:func:`_table`, read from the catalog."""
    try:
        geometry = conn.execute(
            "SELECT g.column_name, s.organization, s.organization_coordsys_id, s.definition "
            "FROM gpkg_geometry_columns g JOIN gpkg_spatial_ref_sys s ON s.srs_id = g.srs_id "
            "WHERE lower(g.table_name) = lower(?)",
            (table,),
        ).fetchall()
        columns = conn.execute(f"PRAGMA table_info({quoted(table)})").fetchall()
    except sqlite3.Error:
        return None
    if len(geometry) != 1 or not columns:
        return None
    geom_column, org, code, definition = geometry[0]
    crs = _epsg(org, code, definition)
    keys = [c for c in columns if c[5]]
    # the fid: the one INTEGER PRIMARY KEY, SQLite's rowid (a whole read's order)
    if crs is None or len(keys) != 1 or str(keys[0][2]).strip().upper() != "INTEGER":
        return None
    fid = str(keys[0][1])
    fields = []
    for _, name, decl, *_rest in columns:
        if name in (fid, geom_column):
            continue
        kind = _declared(str(decl))
        if kind is None or str(name).lower() in ("geometry", "fid"):
            return None
        fields.append((str(name), kind))
    return _Table(fid, str(geom_column), tuple(fields), crs)


def _epsg(org: object, code: object, definition: object) -> str | None:
    """``EPSG:<code>`` when the spatial reference is EPSG's and its definition says so."""
    if not isinstance(org, str) or org.upper() != "EPSG" or not isinstance(code, int):
        return None
    text = re.sub(r"\s+", "", str(definition or ""))
    named = (f'AUTHORITY["EPSG","{code}"]]', f'ID["EPSG",{code}]]')
    return f"EPSG:{code}" if text.endswith(named) else None


def _wkb(blob: object) -> bytes | bool | None:
    """Return the WKB inside a standard GeoPackage blob; None for NULL; False: not read here."""
    if blob is None:
        return None
    if not isinstance(blob, bytes) or len(blob) < 8 or blob[:2] != b"GP" or blob[2] != 0:
        return False
    flags = blob[3]
    envelope = _ENVELOPE_BYTES.get((flags >> 1) & 0b111)
    if envelope is None or flags & 0b0011_0000:  # extended blob, or flagged empty
        return False
    body = blob[8 + envelope :]
    if len(body) < 5 or body[0] not in (0, 1):
        return False
    (code,) = struct.unpack("<I" if body[0] == 1 else ">I", body[1:5])
    if code % 1000 not in _SIMPLE_WKB or code >= 4000:
        return False
    return body


_PYTHON_TYPES: dict[str, type] = {
    "TEXT": str,
    "INTEGER": int,
    "INT": int,
    "MEDIUMINT": int,
    "REAL": float,
    "BOOLEAN": int,
}


def _column(values: list[object], kind: str) -> pa.Array | None:
    """Return the Arrow array GDAL gives a column of these SQLite values; None: not read here."""
    wanted = _PYTHON_TYPES[kind]
    if any(v is not None and type(v) is not wanted for v in values):
        return None
    if kind == "TEXT" and any(v is not None and "\x00" in v for v in values):  # type: ignore[operator]
        return None  # GDAL's C strings end there
    if kind == "BOOLEAN":
        if any(v not in (None, 0, 1) for v in values):
            return None
        values = [None if v is None else bool(v) for v in values]
    elif kind == "MEDIUMINT" and any(
        isinstance(v, int) and not -(2**31) <= v < 2**31 for v in values
    ):
        return None
    return pa.array(values, type=_ARROW_TYPES[kind])


def read_gpkg_rows(
    conn: sqlite3.Connection, key: tuple[str, int, int], table: str, fids: np.ndarray | None
) -> tuple[gpd.GeoDataFrame, np.ndarray] | None:
    """Return the features of ``table`` with these fids, in fid order, as pyogrio reads them.

    Parameters
    ----------
    conn
        The GeoPackage, open read-only.
    key
        Its version (path, size, modification time): the table's description is kept by it.
    table
        The feature table.
    fids
        The fids to read (sorted); those the table lacks are left out.  None: every row,
        when the table's fids span at most :data:`MAX_FIDS` (as a whole read by GDAL, in
        fid order).

    Returns
    -------
    (frame, fids) or None
        The features and their fids, or None when something in them is not read here
        exactly as GDAL reads it (module docstring): read them with pyogrio then.
    """
    described = _table(conn, key, table)
    if described is None or (fids is not None and len(fids) > MAX_FIDS):
        return None
    names = [described.fid, described.geometry, *(name for name, _ in described.fields)]
    fid = quoted(described.fid)
    where, bound = "", []
    if fids is not None:
        where = f"WHERE {fid} IN ({','.join('?' * len(fids))}) "
        bound = [int(f) for f in fids]
    query = (
        f"SELECT {', '.join(quoted(n) for n in names)} FROM {quoted(table)} "  # noqa: S608
        f"{where}ORDER BY {fid}"
    )
    try:
        if fids is None:
            (first, last) = conn.execute(
                f"SELECT min({fid}), max({fid}) FROM {quoted(table)}"  # noqa: S608
            ).fetchone()
            if first is not None and last - first + 1 > MAX_FIDS:
                return None
        rows = conn.execute(query, bound).fetchall()
    except (sqlite3.Error, UnicodeDecodeError, OverflowError):
        return None
    by_column = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    wkbs = [_wkb(blob) for blob in by_column[1]]
    if any(w is False for w in wkbs):
        return None
    arrays = {}
    for (name, kind), values in zip(described.fields, by_column[2:], strict=True):
        array = _column(list(values), kind)
        if array is None:
            return None
        arrays[name] = array
    if arrays:
        schema = pa.schema([(name, _ARROW_TYPES[kind]) for name, kind in described.fields])
        frame = pa.table(arrays, schema=schema).to_pandas(self_destruct=True)
    else:  # a table of geometries alone
        frame = pd.DataFrame(index=pd.RangeIndex(len(wkbs)))
    frame["geometry"] = shapely.from_wkb(np.array(wkbs, dtype=object), on_invalid="raise")
    found = np.asarray(by_column[0], dtype=np.int64)
    return gpd.GeoDataFrame(frame, geometry="geometry", crs=_crs(described.crs)), found


@functools.lru_cache(maxsize=16)
def _crs(text: str) -> CRS:
    """Return the CRS named ``text`` (``EPSG:<code>``), made once (each frame shares it)."""
    return CRS.from_user_input(text)
