"""Read a layer from PostGIS: a table or a ``SELECT``, through psycopg.

pyogrio's wheel carries no PostgreSQL driver, so rows are fetched with psycopg (the
``postgis`` extra): the geometry (or geography, cast to geometry) as WKB (``ST_AsBinary``)
and its SRID (``ST_SRID``), which is looked up in ``spatial_ref_sys`` to build the CRS.  A
layer whose SRID is 0 takes the CRS given in the manifest, or is refused.
"""

from __future__ import annotations

import logging
from typing import Any

import geopandas as gpd
import pandas as pd
import shapely
from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from gis_sw.errors import CRSError, InputFileError

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10
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
) -> tuple[gpd.GeoDataFrame, CRS, list[str]]:
    """Features of a PostGIS table or query, with their CRS.

    Parameters
    ----------
    dsn
        Connection string (``postgresql://user@host:5432/db`` or ``key=value`` form).
    table
        Table name, optionally ``schema.table``.
    query
        A ``SELECT`` (used instead of ``table``).
    geometry_column
        The geometry column; found from the column types when None.
    crs
        CRS to assume when the geometries carry SRID 0.
    label
        How the layer is named in messages (never with the password).

    Raises
    ------
    InputFileError
        If psycopg is missing, the server cannot be reached, or the table, query or geometry
        column is wrong.
    CRSError
        If the SRID is 0 and no CRS was given, or geometries carry different SRIDs.
    """
    try:
        import psycopg
        from psycopg import sql
    except ImportError as exc:  # pragma: no cover - the postgis extra is in dev
        raise InputFileError(
            f"{label}: reading PostGIS needs psycopg. Fix: pip install 'gis_sw[postgis]'."
        ) from exc
    if (table is None) == (query is None):
        raise InputFileError(f"{label}: give exactly one of table or query.")
    if table is not None:
        base: Any = sql.SQL("SELECT * FROM {}").format(sql.Identifier(*table.split(".", 1)))
    else:
        base = sql.SQL(str(query).strip().rstrip(";"))
    warnings: list[str] = []
    try:
        with psycopg.connect(dsn, connect_timeout=CONNECT_TIMEOUT_S) as conn:
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
            select = sql.SQL(
                "SELECT {cols}{sep}ST_AsBinary(q.{g}{cast}) AS {wkb}, "
                "ST_SRID(q.{g}{cast}) AS {srid} "
                "FROM ({base}) AS q"
            ).format(
                cols=sql.SQL(", ").join(sql.SQL("q.{}").format(sql.Identifier(c)) for c in others),
                sep=sql.SQL(", ") if others else sql.SQL(""),
                g=sql.Identifier(geom_col),
                cast=cast,
                wkb=sql.Identifier(_WKB),
                srid=sql.Identifier(_SRID),
                base=base,
            )
            with conn.cursor() as cur:
                cur.execute(select)
                rows = cur.fetchall()
                names = [d.name for d in cur.description or []]
            data = pd.DataFrame.from_records(rows, columns=names)
            srids = sorted({int(s) for s in data[_SRID].dropna()})
            source_crs = _crs_of(conn, srids, crs, label)
    except psycopg.Error as exc:
        message = str(exc).strip()
        raise InputFileError(
            f"{label}: {message}. Fix: check the connection, table or query."
        ) from exc
    geoms = shapely.from_wkb([None if v is None else bytes(v) for v in data[_WKB]])
    attrs = data.drop(columns=[_WKB, _SRID])
    for column in attrs.columns:
        if attrs[column].map(lambda v: v.__class__.__name__ == "Decimal").any():
            attrs[column] = pd.to_numeric(attrs[column], errors="coerce")
    frame = gpd.GeoDataFrame(attrs, geometry=gpd.GeoSeries(geoms, crs=source_crs))
    if crs is not None and srids and not source_crs.equals(crs):
        warnings.append(
            f"the table's SRID {srids[0]} was used; the manifest's crs applies only to SRID 0."
        )
    logger.info("%s: %d features from PostGIS", label, len(frame))
    return frame, source_crs, warnings


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
