"""Read a layer from PostGIS: a table or a ``SELECT``, through psycopg.

pyogrio's wheel carries no PostgreSQL driver, so rows are fetched with psycopg (the
``postgis`` extra): the geometry (or geography, cast to geometry) as WKB (``ST_AsBinary``)
and its SRID (``ST_SRID``), which is looked up in ``spatial_ref_sys`` to build the CRS.  A
layer whose SRID is 0 takes the CRS given in the manifest, or is refused.

Reading never writes: the session starts with ``default_transaction_read_only=on`` and every
statement runs in one ``READ ONLY`` transaction that is rolled back (a server that does not
report ``transaction_read_only = on`` is refused); a table name is quoted as identifiers
(``schema.table``); a manifest ``query`` must be exactly one ``SELECT`` (or
``WITH ... SELECT``) statement (:func:`check_select`), refused otherwise before connecting.
Messages carry the connection string without its password (:mod:`gis_sw.redact`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

import geopandas as gpd
import pandas as pd
import shapely
from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from gis_sw.errors import CRSError, InputFileError
from gis_sw.layers.postgis_session import driver, read_only_session
from gis_sw.layers.vector import WINDOW_ROW, curved, curved_message
from gis_sw.redact import redact

logger = logging.getLogger(__name__)

_WKB = "__gis_sw_wkb"
_SRID = "__gis_sw_srid"


def read_postgis(
    dsn: str,
    *,
    table: str | None = None,
    query: str | None = None,
    geometry_column: str | None = None,
    crs: CRS | None = None,
    label: str = "postgis",
    window: tuple[tuple[float, float, float, float], CRS] | None = None,
) -> tuple[gpd.GeoDataFrame, CRS, list[str]]:
    """Read the features of a PostGIS table or query, with their CRS.

    Parameters
    ----------
    dsn
        Connection string (``postgresql://user@host:5432/db`` or ``key=value`` form).
    table
        Table name, optionally ``schema.table``.
    query
        One ``SELECT`` or ``WITH ... SELECT`` statement (used instead of ``table``).
    geometry_column
        The geometry column; found from the column types when None.
    crs
        CRS to assume when the geometries carry SRID 0.
    label
        How the layer is named in messages (never with the password).
    window
        A box and its CRS: read only a table's features whose envelope meets it (``&&``,
        which the table's GiST index answers), in the table's physical order;
        the frame then holds the column :data:`gis_sw.layers.vector.WINDOW_ROW` (-1).  A
        query, or a table whose SRID is 0 without ``crs``, is read whole.

    Raises
    ------
    InputFileError
        If psycopg is missing, the server cannot be reached, the query is not one ``SELECT``,
        the session is not read-only, or the table, query or geometry column is wrong.
    CRSError
        If the SRID is 0 and no CRS was given, or geometries carry different SRIDs.
    """
    label = redact(label)
    sql = driver(label).sql
    if (table is None) == (query is None):
        raise InputFileError(f"{label}: give exactly one of table or query.")
    if table is not None:
        base: Any = sql.SQL("SELECT * FROM {}").format(sql.Identifier(*_table_parts(table, label)))
    else:
        base = sql.SQL(check_select(str(query), label=label))
    warnings: list[str] = []
    with read_only_session(dsn, label) as conn:
        geom_oids = _geometry_oids(conn, label)
        with conn.cursor() as cur:
            cur.execute(sql.SQL("SELECT * FROM ({}) AS q LIMIT 0").format(base))
            described = [(d.name, d.type_code) for d in cur.description or []]
        geom_col = _pick_geometry(described, set(geom_oids.values()), geometry_column, label)
        # geography columns are cast to geometry (same coordinates, SRID kept)
        cast = (
            sql.SQL("::geometry")
            if dict(described)[geom_col] != geom_oids["geometry"]
            else sql.SQL("")
        )
        others = [name for name, _ in described if name != geom_col]
        where, window_srid = (
            _window_clause(
                conn, base, geom_col=geom_col, cast=cast, window=window, crs=crs, label=label
            )
            if window is not None and table is not None
            else (None, None)
        )
        select = sql.SQL(
            "SELECT {cols}{sep}ST_AsBinary(q.{g}{cast}) AS {wkb}, "
            "ST_SRID(q.{g}{cast}) AS {srid} "
            "FROM ({base}) AS q{where}"
        ).format(
            cols=sql.SQL(", ").join(sql.SQL("q.{}").format(sql.Identifier(c)) for c in others),
            sep=sql.SQL(", ") if others else sql.SQL(""),
            g=sql.Identifier(geom_col),
            cast=cast,
            wkb=sql.Identifier(_WKB),
            srid=sql.Identifier(_SRID),
            base=base,
            where=sql.SQL("") if where is None else where,
        )
        with conn.cursor() as cur:
            cur.execute(select)
            rows = cur.fetchall()
            names = [d.name for d in cur.description or []]
        data = pd.DataFrame.from_records(rows, columns=names)
        srids = sorted({int(s) for s in data[_SRID].dropna()})
        if not srids and window_srid is not None:  # nothing in the window: the table's
            srids = [window_srid]
        source_crs = _crs_of(conn, srids, crs, label)
    try:
        geoms = shapely.from_wkb([None if v is None else bytes(v) for v in data[_WKB]])
    except NotImplementedError as exc:  # a curved geometry (CURVEPOLYGON, COMPOUNDCURVE)
        if not curved(exc):
            raise
        first = "select ST_CurveToLine(geom) in a query, or "
        raise InputFileError(curved_message(label, first=first)) from None
    attrs = data.drop(columns=[_WKB, _SRID])
    for column in attrs.columns:
        if attrs[column].map(lambda v: v.__class__.__name__ == "Decimal").any():
            attrs[column] = pd.to_numeric(attrs[column], errors="coerce")
    frame = gpd.GeoDataFrame(attrs, geometry=gpd.GeoSeries(geoms, crs=source_crs))
    if where is not None:
        frame[WINDOW_ROW] = -1  # rows of the whole table are not known: ids are required
    if crs is not None and srids and not source_crs.equals(crs):
        warnings.append(
            f"the table's SRID {srids[0]} was used; the manifest's crs applies only to SRID 0."
        )
    logger.info("%s: %d features from PostGIS", label, len(frame))
    return frame, source_crs, warnings


def read_postgis_column(dsn: str, *, table: str, column: str, label: str = "postgis") -> list[Any]:
    """Return one column of every row of a PostGIS table (no geometry), read-only.

    What a layer read by window needs to check its ids over the whole table
    (:func:`gis_sw.layers.clean.whole_ids_checked`).

    Raises
    ------
    InputFileError
        As :func:`read_only_session`, or when the table has no such column.
    """
    label = redact(label)
    sql = driver(label).sql
    name = sql.Identifier(*_table_parts(table, label))
    with read_only_session(dsn, label) as conn, conn.cursor() as cur:
        cur.execute(sql.SQL("SELECT * FROM {} LIMIT 0").format(name))
        columns = [d.name for d in cur.description or []]
        if column not in columns:
            raise InputFileError(
                f"{label}: no column {column!r} in table {table!r}. Fix: check the manifest's "
                "columns mapping."
            )
        cur.execute(sql.SQL("SELECT {} FROM {}").format(sql.Identifier(column), name))
        return [row[0] for row in cur.fetchall()]


def _window_clause(
    conn: Any,
    base: Any,
    *,
    geom_col: str,
    cast: Any,
    window: tuple[tuple[float, float, float, float], CRS],
    crs: CRS | None,
    label: str,
) -> tuple[Any, int | None]:
    """Return `` WHERE <geometry> && <box>`` for a window and the SRID, or None (whole).

    Plain index scans are turned off for the transaction, so the GiST index is read as a
    bitmap and the rows come in the table's physical order, as a whole read gives them.
    """
    from psycopg import sql

    from gis_sw.layers.window_read import project_box

    with conn.cursor() as cur:
        cur.execute(
            sql.SQL(
                "SELECT ST_SRID(q.{g}{cast}) FROM ({base}) AS q WHERE q.{g} IS NOT NULL LIMIT 1"
            ).format(g=sql.Identifier(geom_col), cast=cast, base=base)
        )
        row = cur.fetchone()
    if row is None or (int(row[0]) == 0 and crs is None):
        return None, None
    srid = int(row[0])
    box, working = window
    try:
        source = _crs_of(conn, [srid], crs, label)
    except CRSError:
        return None, None  # the whole read reports it
    x0, y0, x1, y1 = project_box(box, working_crs=working, crs=source)
    with conn.cursor() as cur:
        cur.execute("SET LOCAL enable_indexscan = off")
    # features with no geometry (or an empty one) meet no box: read them all the same, so
    # validation names them as a whole read does
    clause = sql.SQL(
        " WHERE (q.{g}{cast} && ST_MakeEnvelope({x0}, {y0}, {x1}, {y1}, {srid})"
        " OR q.{g} IS NULL OR ST_IsEmpty(q.{g}{cast}))"
    )
    return clause.format(
        g=sql.Identifier(geom_col),
        cast=cast,
        x0=sql.Literal(float(x0)),
        y0=sql.Literal(float(y0)),
        x1=sql.Literal(float(x1)),
        y1=sql.Literal(float(y1)),
        srid=sql.Literal(srid),
    ), srid


def check_select(query: str, *, label: str = "postgis") -> str:
    """Return the query without a trailing ``;``, when it is exactly one ``SELECT``.

    Comments, string literals (``'...'``, ``E'...'``, dollar-quoted) and quoted identifiers
    are skipped; what is left must hold no ``;`` but a final one, balanced parentheses, and
    begin with ``SELECT`` or ``WITH`` (whose main statement, after the common table
    expressions, is a ``SELECT``).  Writes hidden inside a ``SELECT`` (a data-modifying CTE,
    a function that writes) are stopped by the read-only transaction instead.

    Raises
    ------
    InputFileError
        Naming the layer and what was found, with the fix.
    """
    code = _code_only(query, label)
    body = code.rstrip()
    if body.endswith(";"):
        body = body[:-1].rstrip()
    fix = _QUERY_FIX
    if ";" in body:
        raise InputFileError(
            f"{label}: the query holds more than one statement (a ';' before its end). {fix}"
        )
    depth = 0
    for char in body:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            break
    if depth != 0:
        raise InputFileError(f"{label}: the query's parentheses do not balance. {fix}")
    words = [(m.group(0).upper(), m.start()) for m in _WORD.finditer(body)]
    if not words:
        raise InputFileError(f"{label}: the query is empty. {fix}")
    first = words[0][0]
    if first not in ("SELECT", "WITH") or body[: words[0][1]].strip(" \t\r\n("):
        raise InputFileError(
            f"{label}: the query must be a SELECT statement; it begins with {first}. {fix}"
        )
    if first == "WITH":
        main = next((w for w, at in words if w in _MAIN_WORDS and _depth(body, at) == 0), None)
        if main != "SELECT":
            raise InputFileError(
                f"{label}: the query's main statement after WITH is {main or 'missing'}, "
                f"not SELECT. {fix}"
            )
    return query[: len(body)].strip()  # blanked code keeps offsets: cut ';' and a last comment


_QUERY_FIX = (
    "Fix: give one SELECT (or WITH ... SELECT) statement as query, or name the table "
    'with table = "schema.table"; gis-sw only reads.'
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_MAIN_WORDS = frozenset({"SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "VALUES", "TABLE"})
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_\x80-\U0010ffff][A-Za-z0-9_\x80-\U0010ffff]*)?\$")


def _depth(code: str, at: int) -> int:
    return code.count("(", 0, at) - code.count(")", 0, at)


def _code_only(query: str, label: str) -> str:
    """Blank ``query``'s comments to spaces, its literals and quoted identifiers to ``0``.

    The text keeps its length, so offsets hold.

    Raises
    ------
    InputFileError
        For an unterminated comment, quote or dollar quote.
    """
    out: list[str] = []
    i, n = 0, len(query)
    while i < n:
        end = _token_end(query, i, label)
        if end is None:
            out.append(query[i])
            i += 1
            continue
        out.append((" " if query[i] in "-/" else "0") * (end - i))
        i = end
    return "".join(out)


def _token_end(query: str, i: int, label: str) -> int | None:
    """Return where a comment, literal or quoted identifier starting at ``i`` ends.

    None when none starts there.
    """
    char, two = query[i], query[i : i + 2]
    if two == "--":
        end = query.find("\n", i)
        return len(query) if end < 0 else end
    if two == "/*":
        return _block_comment_end(query, i, label)
    if char in "'\"":
        return _quote_end(query, i, label)
    if char == "$" and not _ident_char(query, i - 1) and (tag := _DOLLAR_TAG.match(query, i)):
        close = query.find(tag.group(0), tag.end())
        if close < 0:
            raise InputFileError(f"{label}: the query has an unterminated $ quote. {_QUERY_FIX}")
        return close + len(tag.group(0))
    return None


def _block_comment_end(query: str, i: int, label: str) -> int:
    """Return the end of the (nested) ``/* */`` comment starting at ``i``."""
    end, depth, n = i + 2, 1, len(query)
    while depth and end < n:
        if query.startswith("/*", end):
            depth, end = depth + 1, end + 2
        elif query.startswith("*/", end):
            depth, end = depth - 1, end + 2
        else:
            end += 1
    if depth:
        raise InputFileError(f"{label}: the query has an unterminated /* comment. {_QUERY_FIX}")
    return end


def _quote_end(query: str, i: int, label: str) -> int:
    """Return the end of the ``'...'``, ``E'...'`` or ``"..."`` quote starting at ``i``."""
    char, n = query[i], len(query)
    escapes = char == "'" and i > 0 and query[i - 1] in "eE" and not _ident_char(query, i - 2)
    end = i + 1
    while True:
        if end >= n:
            raise InputFileError(
                f"{label}: the query has an unterminated {char} quote. {_QUERY_FIX}"
            )
        if escapes and query[end] == "\\":
            end += 2
        elif query[end] == char:
            if not query.startswith(char * 2, end):
                return end + 1
            end += 2
        else:
            end += 1


def _ident_char(text: str, at: int) -> bool:
    """Whether ``text[at]`` continues an identifier or number (so a ``$`` there is no quote)."""
    return at >= 0 and (text[at].isalnum() or text[at] in "_$")


def _table_parts(table: str, label: str) -> list[str]:
    parts = table.split(".", 1)
    if not all(p.strip() for p in parts):
        raise InputFileError(
            f"{label}: table = {table!r} is not a table name. "
            'Fix: write table = "table" or "schema.table".'
        )
    return parts


def _geometry_oids(conn: Any, label: str) -> dict[str, int]:
    """OIDs of PostGIS's ``geometry`` (and ``geography`` when present) types."""
    with conn.cursor() as cur:
        cur.execute("SELECT typname, oid FROM pg_type WHERE typname IN ('geometry', 'geography')")
        oids = {str(name): int(oid) for name, oid in cur.fetchall()}
    if "geometry" not in oids:
        raise InputFileError(
            f"{label}: the database has no PostGIS geometry type. "
            "Fix: CREATE EXTENSION postgis, or connect to the right database."
        )
    return oids


def _pick_geometry(
    described: list[tuple[str, int]], geom_oids: set[int], wanted: str | None, label: str
) -> str:
    geometry_columns = [name for name, oid in described if oid in geom_oids]
    if wanted is not None:
        if wanted not in geometry_columns:
            raise InputFileError(
                f"{label}: no geometry column {wanted!r} (geometry columns: "
                f"{', '.join(geometry_columns) or 'none'}). Fix: correct geometry_column."
            )
        return wanted
    if len(geometry_columns) == 1:
        return geometry_columns[0]
    if not geometry_columns:
        raise InputFileError(
            f"{label}: the table or query has no geometry column. Fix: select one."
        )
    raise InputFileError(
        f"{label}: several geometry columns ({', '.join(geometry_columns)}). "
        'Fix: name one with geometry_column = "...".'
    )


def _crs_of(conn: Any, srids: list[int], crs: CRS | None, label: str) -> CRS:
    nonzero = [s for s in srids if s != 0]
    if len(nonzero) > 1 or (nonzero and 0 in srids):
        raise CRSError(
            f"{label}: geometries carry different SRIDs ({', '.join(map(str, srids))}). "
            "Fix: ST_Transform them to one SRID in a query."
        )
    if not nonzero:
        if crs is None:
            raise CRSError(
                f"{label}: geometries have SRID 0 (no CRS). Fix: ST_SetSRID in the table, or "
                'give crs = "EPSG:...." under the layer in the manifest.'
            )
        return crs
    srid = nonzero[0]
    with conn.cursor() as cur:
        cur.execute(
            "SELECT auth_name, auth_srid, srtext FROM spatial_ref_sys WHERE srid = %s", (srid,)
        )
        row = cur.fetchone()
    try:
        if row is not None and row[0] and row[1]:
            return CRS.from_authority(str(row[0]), int(row[1]))
        if row is not None and row[2]:
            return CRS.from_wkt(str(row[2]))
        return CRS.from_epsg(srid)
    except PyprojCRSError as exc:
        raise CRSError(f"{label}: SRID {srid} is not a CRS pyproj knows ({exc}).") from exc
