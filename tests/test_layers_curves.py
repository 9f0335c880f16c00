"""A layer holding true arcs (ArcGIS and CAD curves) is refused with the fix for arcs.

shapely (GEOS) measures straight segments only.  A GeoPackage feature stored as a
CURVEPOLYGON (the blob written here as ArcGIS writes one) made the whole layer
"not a readable vector file ... export it again if it was cut short or damaged", which
sent the user looking for a damaged file.  Every read (whole, by window, PostGIS) now
names the curves and how to make them straight.
"""

from __future__ import annotations

import shutil
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pyogrio
import pytest
from test_layers_postgis import dsn  # noqa: F401 (the server fixture)
from test_window_reads import SAMPLE, _addition

import gis_sw
from gis_sw.errors import GisSwError

CURVED_PARCEL = "0.0-1-6"


def _curve_blob(srs_id: int, x: float, y: float, r: float) -> bytes:
    """A GeoPackage blob of a CURVEPOLYGON: one circle of radius ``r`` as a CIRCULARSTRING."""
    ring = [(x - r, y), (x, y + r), (x + r, y), (x, y - r), (x - r, y)]
    wkb = struct.pack("<BII", 1, 10, 1) + struct.pack("<BII", 1, 8, len(ring))
    wkb += b"".join(struct.pack("<dd", *p) for p in ring)
    return b"GP" + bytes([0, 1]) + struct.pack("<i", srs_id) + wkb


@pytest.fixture(scope="module")
def curved_town(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[float, float]]:
    """A copy of the sample whose parcel 0.0-1-6 is a circle drawn as an arc."""
    copy = tmp_path_factory.mktemp("curved") / "sample"
    shutil.copytree(SAMPLE, copy)
    gpkg = copy / "town.gpkg"
    parcels = pyogrio.read_dataframe(gpkg, layer="parcels", fid_as_index=True)
    row = parcels[parcels["parcel_id"] == CURVED_PARCEL]
    minx, miny, maxx, maxy = row.geometry.iloc[0].bounds
    x, y = (minx + maxx) / 2, (miny + maxy) / 2
    r = 0.45 * min(maxx - minx, maxy - miny)
    with sqlite3.connect(gpkg) as conn:
        # the R-tree triggers of the GeoPackage call these SpatiaLite-style functions
        conn.create_function("ST_IsEmpty", 1, lambda _: 0)
        for name, value in (("MinX", x - r), ("MaxX", x + r), ("MinY", y - r), ("MaxY", y + r)):
            conn.create_function(f"ST_{name}", 1, lambda _, v=value: v)
        srs_id, column = conn.execute(
            "SELECT srs_id, column_name FROM gpkg_geometry_columns WHERE table_name = 'parcels'"
        ).fetchone()
        conn.execute(
            f'UPDATE parcels SET "{column}" = ? WHERE fid = ?',
            (_curve_blob(srs_id, x, y, r), int(row.index[0])),
        )
    return copy / "layers.toml", (x, y)


def _says_curves(text: str) -> None:
    assert "town.gpkg: layer 'parcels' holds curved geometries (circular arcs" in text
    assert "CONVERT_TO_LINEAR" in text
    assert "cut short or damaged" not in text


def test_a_whole_read_names_the_curves_and_their_fix(
    curved_town: tuple[Path, tuple[float, float]],
) -> None:
    manifest, _ = curved_town
    with pytest.raises(GisSwError) as err:
        gis_sw.read_town(manifest)
    _says_curves(str(err.value))


def test_a_read_by_window_around_the_curved_lot_says_the_same(
    curved_town: tuple[Path, tuple[float, float]],
) -> None:
    manifest, (x, y) = curved_town
    with pytest.raises(GisSwError) as err:
        gis_sw.read_town(manifest, around=_addition(x, y))
    _says_curves(str(err.value))


def test_check_exits_2_with_one_line(
    curved_town: tuple[Path, tuple[float, float]], tmp_path: Path
) -> None:
    manifest, _ = curved_town
    cli = str(Path(sys.executable).parent / "gis-sw")
    args = ["--layers", str(manifest), "--out", str(tmp_path / "out"), "--map", "none"]
    done = subprocess.run(
        [cli, "check", str(SAMPLE / "proposals.gpkg"), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    _says_curves(lines[0])
    out = tmp_path / "out"
    assert not out.exists() or not any(out.iterdir())  # refused before anything was written


def test_a_postgis_table_of_arcs_names_st_curvetoline(dsn: str) -> None:  # noqa: F811
    psycopg = pytest.importorskip("psycopg")
    from gis_sw.errors import InputFileError
    from gis_sw.layers.postgis import read_postgis

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE curved_lots (parcel_id text, geom geometry)")
        conn.execute(
            "INSERT INTO curved_lots VALUES ('A', ST_GeomFromText("
            "'CURVEPOLYGON(CIRCULARSTRING(0 0, 50 50, 100 0, 50 -50, 0 0))', 2260))"
        )
    try:
        with pytest.raises(InputFileError) as err:
            read_postgis(dsn, table="curved_lots", label="parcels [postgis:curved_lots]")
        text = str(err.value)
        assert text.startswith("parcels [postgis:curved_lots] holds curved geometries")
        assert "Fix: select ST_CurveToLine(geom) in a query, or turn the arcs" in text
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE curved_lots")
