"""PostGIS layers through the reader, against a throwaway PostgreSQL cluster.

The fixture runs ``initdb`` in a temporary folder (as the ``postgres`` user when the tests
run as root, because initdb refuses root), starts the server on 127.0.0.1 only with trust
auth, creates the PostGIS extension, and stops the server afterwards.  Without the
PostgreSQL or PostGIS binaries the tests skip, saying what to install.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import shapely
from pyproj import Transformer

from gis_sw.errors import LayerError
from gis_sw.layers.read import read_layers
from gis_sw.ruleset import Ruleset

psycopg = pytest.importorskip("psycopg", reason="psycopg missing: pip install 'gis_sw[postgis]'")

pytestmark = pytest.mark.postgis

X0, Y0 = 685_000.0, 830_000.0


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    return str(candidates[-1]) if candidates else None


def _postgis_available() -> bool:
    shares = [Path("/usr/share/postgresql"), Path("/usr/local/share/postgresql")]
    return any(any(share.glob("**/extension/postgis.control")) for share in shares)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def dsn() -> Iterator[str]:
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) not found: apt-get install postgresql-15")
    if not _postgis_available():
        pytest.skip("PostGIS not installed: apt-get install postgresql-15-postgis-3")
    as_root = os.geteuid() == 0
    prefix: list[str] = []
    if as_root:
        runuser = shutil.which("runuser")
        if runuser is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL as postgres")
        prefix = [runuser, "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="gis_sw_pg_"))
    data = root / "data"
    if as_root:
        shutil.chown(root, user="postgres")
    port = _free_port()
    env = {**os.environ, "LC_ALL": "C"}
    subprocess.run(
        [*prefix, initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        check=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off"
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"],
        check=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION postgis")
        yield url
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
            check=False,
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def town_tables(dsn: str) -> str:
    """parcels in EPSG:2263 (NY Long Island ftUS), zoning with SRID 0, wells in 4326."""
    to_2263 = Transformer.from_crs("EPSG:2260", "EPSG:2263", always_xy=True)
    boxes = [shapely.box(X0, Y0, X0 + 100, Y0 + 100), shapely.box(X0 + 100, Y0, X0 + 250, Y0 + 100)]
    dense = shapely.segmentize(np.asarray(boxes, dtype=object), 5.0)
    moved = shapely.transform(dense, lambda xy: np.column_stack(to_2263.transform(*xy.T)))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA town")
        conn.execute(
            "CREATE TABLE town.parcels (gid serial, pin text, owner text, "
            "geom geometry(Polygon, 2263))"
        )
        for pin, geom in zip(["P-1", "P-2"], moved, strict=True):
            conn.execute(
                "INSERT INTO town.parcels (pin, owner, geom) "
                "VALUES (%s, 'Ames', ST_GeomFromText(%s, 2263))",
                (pin, geom.wkt),
            )
        to_wgs84 = Transformer.from_crs("EPSG:2260", "EPSG:4326", always_xy=True)
        lon, lat = to_wgs84.transform(X0 + 50.0, Y0 + 50.0)
        conn.execute("CREATE TABLE wells (well_id text, depth_ft numeric, location geography)")
        conn.execute(
            "INSERT INTO wells VALUES ('W-1', 180.5, ST_GeogFromText(%s))",
            (f"SRID=4326;POINT({lon!r} {lat!r})",),
        )
        conn.execute("CREATE TABLE zoning (zone text, acres numeric, geom geometry)")
        conn.execute(
            "INSERT INTO zoning VALUES ('R-10', 0.57, ST_GeomFromText(%s))",
            (shapely.box(X0, Y0, X0 + 250, Y0 + 100).wkt,),
        )
    return dsn


def write_manifest(folder: Path, text: str) -> Path:
    path = folder / "layers.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_postgis_table_query_and_srid_zero(
    tmp_path: Path, ruleset: Ruleset, town_tables: str
) -> None:
    manifest = write_manifest(
        tmp_path,
        f'[parcels]\npostgis = "{town_tables}"\ntable = "town.parcels"\n'
        'columns = { parcel_id = "pin" }\n\n'
        f'[zoning]\npostgis = "{town_tables}"\n'
        "query = \"SELECT zone, acres, geom AS shape FROM zoning WHERE zone = 'R-10'\"\n"
        'crs = "EPSG:2260"\n\n'
        f'[wells]\npostgis = "{town_tables}"\ntable = "wells"\n',
    )
    layers = read_layers(manifest, ruleset=ruleset)
    well = layers.get("wells").geometry.iloc[0]
    assert (round(well.x, 2), round(well.y, 2)) == (X0 + 50.0, Y0 + 50.0)
    assert layers.reports["wells"].source_crs == "EPSG:4326"
    parcels = layers.get("parcels").sort_values("parcel_id")
    assert parcels["parcel_id"].tolist() == ["P-1", "P-2"]
    np.testing.assert_allclose(parcels.area.to_numpy(), [10_000.0, 15_000.0], rtol=1e-6)
    np.testing.assert_allclose(parcels.total_bounds, [X0, Y0, X0 + 250, Y0 + 100], atol=0.01)
    assert layers.reports["parcels"].source_crs == "EPSG:2263"
    assert layers.reports["parcels"].units == "US survey foot"
    zoning = layers.get("zoning")
    assert zoning["zone"].tolist() == ["R-10"]
    assert round(float(zoning.area.iloc[0]), 2) == 25_000.0
    assert layers.reports["zoning"].source_crs == "EPSG:2260"
    assert layers.reports["zoning"].source.startswith("postgis:postgresql://postgres@127.0.0.1")


def test_postgis_problems(tmp_path: Path, ruleset: Ruleset, town_tables: str) -> None:
    manifest = write_manifest(
        tmp_path,
        f'[parcels]\npostgis = "{town_tables}"\ntable = "town.parcels"\n\n'
        f'[zoning]\npostgis = "{town_tables}"\ntable = "zoning"\n\n'
        f'[buildings]\npostgis = "{town_tables}"\ntable = "no_such_table"\n',
    )
    with pytest.raises(LayerError) as info:
        read_layers(manifest, ruleset=ruleset)
    problems = {p.layer.split(" ")[0]: p.message for p in info.value.problems}
    assert "required column 'parcel_id' is missing" in problems["parcels"]
    assert "geometries have SRID 0 (no CRS)" in problems["zoning"]
    assert 'relation "no_such_table" does not exist' in problems["buildings"]
