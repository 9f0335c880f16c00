"""PostGIS sources through ``gis-sw validate`` and ``gis-sw check -v``: no password shown,
nothing written to the database.

The server is the throwaway cluster of :mod:`test_layers_postgis` (trust authentication, so
a password in the connection string is parsed by libpq and then not needed); without
PostgreSQL and PostGIS the tests skip.  Every password below holds ``S3cr``: no output,
log line, traceback or file may hold that.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import geopandas as gpd
import pytest
from click.testing import CliRunner, Result
from corpus import manifest, town_frames, write_town

from gis_sw.cli import cli
from gis_sw.errors import InputFileError
from gis_sw.layers.postgis import read_postgis

psycopg = pytest.importorskip("psycopg", reason="psycopg missing: pip install 'gis_sw[postgis]'")
pytestmark = pytest.mark.postgis

dsn = importlib.import_module("test_layers_postgis").dsn  # the throwaway server (fixture)

SECRET = "S3cr"
GIS_SW = str(Path(sys.executable).parent / "gis-sw")


def host_port(url: str) -> tuple[str, str]:
    hostport = url.split("@", 1)[1].split("/", 1)[0]
    host, port = hostport.rsplit(":", 1)
    return host, port


@pytest.fixture(scope="module")
def town_db(dsn: str) -> str:
    """Parcels, zoning and wetlands of the corpus town as PostGIS tables (EPSG:2260)."""
    frames = town_frames()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA sec")
        for name, frame in frames.items():
            if name not in ("parcels", "zoning", "wetlands", "water_bodies", "floodplain"):
                continue
            cols = [c for c in frame.columns if c != "geometry"]
            conn.execute(
                f"CREATE TABLE sec.{name} ({', '.join(f'{c} text' for c in cols)}, "
                "geom geometry(Polygon, 2260))"
            )
            for row in frame.itertuples(index=False):
                values = [getattr(row, c) for c in cols]
                marks = ", ".join(["%s"] * len(cols))
                conn.execute(
                    f"INSERT INTO sec.{name} VALUES ({marks}, ST_GeomFromText(%s, 2260))",
                    (*values, row.geometry.wkt),
                )
    return dsn


def sources(url: str) -> dict[str, str]:
    """The same server in every form a password can take (each password holds S3cr)."""
    host, port = host_port(url)
    uri, kv = f"postgresql://postgres@{host}:{port}/postgres", f"host={host} port={port}"
    return {
        "uri": f"postgresql://postgres:Uri-S3cret@{host}:{port}/postgres",
        "uri_encoded": f"postgresql://postgres:Enc%20S3cret%2F@{host}:{port}/postgres",
        "query": f"{uri}?password=Qry-S3cret&sslmode=disable",
        "kv_quoted": f"{kv} user=postgres password='Kv S3cret\\'s' dbname=postgres",
        "kv_spaced": f"{kv} user=postgres password = Sp-S3cret dbname=postgres",
        "uri_space": f"postgresql://postgres:Raw S3cret@{host}:{port}/postgres",
        "bad_percent": f"postgresql://postgres:Bad%zzS3cret@{host}:{port}/postgres",
        "bad_percent_query": f"{uri}?password=Q%zzS3cret",
        "pgpassword": f"{kv} user=postgres PGPASSWORD=Env-S3cret dbname=postgres",
    }


def good_manifest(folder: Path, url: str) -> Path:
    """Five town layers from PostGIS, one connection-string form each."""
    src = sources(url)
    return manifest(
        folder,
        {
            "parcels": {"postgis": src["uri"], "table": "sec.parcels"},
            "zoning": {"postgis": src["query"], "query": "SELECT zone, geom FROM sec.zoning;"},
            "wetlands": {"postgis": src["kv_quoted"], "table": "sec.wetlands"},
            "water_bodies": {"postgis": src["kv_spaced"], "table": "sec.water_bodies"},
            "floodplain": {"postgis": src["uri_encoded"], "table": "sec.floodplain"},
        },
    )


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The installed ``gis-sw`` in a child process: its real log handler and tracebacks."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [GIS_SW, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120, check=False
    )


def test_validate_shows_sources_without_passwords(tmp_path: Path, town_db: str) -> None:
    layers = good_manifest(tmp_path, town_db)
    result = invoke(["validate", "--layers", str(layers)])
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    host, port = host_port(town_db)
    uri, kv = f"postgis:postgresql://postgres@{host}:{port}/postgres", f"postgis:host={host}"
    sources_shown = [line for line in result.output.splitlines() if "source:" in line]
    assert sources_shown == [
        f"  source:   {uri}:sec.parcels",
        f"  source:   {uri}?sslmode=disable:query",
        f"  source:   {kv} port={port} user=postgres dbname=postgres:sec.wetlands",
        f"  source:   {uri}:sec.floodplain",
        f"  source:   {kv} port={port} user=postgres dbname=postgres:sec.water_bodies",
    ]


def test_validate_bad_connection_strings_say_why_without_passwords(
    tmp_path: Path, town_db: str
) -> None:
    src = sources(town_db)
    layers = manifest(
        tmp_path,
        {
            "parcels": {"postgis": src["bad_percent"], "table": "sec.parcels"},
            "zoning": {"postgis": src["bad_percent_query"], "table": "sec.zoning"},
            "wetlands": {"postgis": src["pgpassword"], "table": "sec.wetlands"},
            "floodplain": {"postgis": src["uri_space"], "table": "sec.floodplain"},
        },
    )
    result = invoke(["validate", "--layers", str(layers)])
    assert result.exit_code == 2, result.output
    assert SECRET not in result.output
    out = result.output
    assert "parcels: 1 problem(s)" in out
    assert 'invalid percent-encoded token: "***"' in out
    assert "zoning: 1 problem(s)" in out
    assert 'invalid connection option "PGPASSWORD"' in out
    assert f"postgis:host={host_port(town_db)[0]}" in out  # the source, without PGPASSWORD
    assert 'unexpected spaces found in "***"' in out


def test_check_verbose_logs_and_outputs_hold_no_password(tmp_path: Path, town_db: str) -> None:
    inputs = write_town(tmp_path)  # the corpus proposals (and a town GeoPackage, unused)
    layers = good_manifest(tmp_path, town_db)
    out = tmp_path / "out"
    done = run(
        [
            *("-v", "check", str(inputs.proposals), "--layers", str(layers)),
            *("--out", str(out), "--fail-on", "never", "--map", "none"),
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "features from PostGIS" in done.stderr  # the -v log names each PostGIS source
    assert "postgis:postgresql://postgres@" in done.stderr
    assert SECRET not in done.stdout + done.stderr
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {"summary.csv", "findings.gpkg", "findings.geojson"} <= {p.name for p in written}
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    summary = gpd.read_file(out / "findings.gpkg", layer="findings")
    permit = summary[(summary["rule_id"] == "SW101") & (summary["subject_id"] == "P-1")]
    assert permit["outcome"].tolist() == ["required"]  # the PostGIS zoning was read: R-10
    assert round(float(permit["measured"].iloc[0]), 2) == 134.0


def test_check_error_and_verbose_traceback_of_a_bad_password_hide_it(
    tmp_path: Path, town_db: str
) -> None:
    inputs = write_town(tmp_path)
    layers = manifest(
        tmp_path,
        {"parcels": {"postgis": sources(town_db)["bad_percent"], "table": "sec.parcels"}},
    )
    args = ["check", str(inputs.proposals), "--layers", str(layers)]
    plain = invoke(args)
    assert plain.exit_code == 2
    assert SECRET not in plain.output
    assert 'invalid percent-encoded token: "***"' in plain.stderr
    # -v prints the traceback and keeps exit 2: neither it nor a chained driver error holds
    # the secret
    verbose = invoke(["-v", *args])
    assert verbose.exit_code == 2
    shown = verbose.stderr
    assert "Traceback" in shown
    assert "LayerError" in shown
    assert "invalid percent-encoded token" in shown
    assert SECRET not in shown
    # the reader's own error does not chain the driver's (which quotes the password)
    with pytest.raises(InputFileError) as info:
        read_postgis(sources(town_db)["bad_percent"], table="sec.parcels", label="parcels")
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__
    assert SECRET not in "".join(traceback.format_exception(info.value))


# --- read-only ---------------------------------------------------------------------------


@pytest.fixture
def victim(dsn: str) -> Callable[[], int]:
    """A table ``victim`` with 3 rows and a function that writes to it; returns a row count."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS victim")
        conn.execute("CREATE TABLE victim (id int, geom geometry(Point, 2260))")
        conn.execute(
            "INSERT INTO victim SELECT g, ST_SetSRID(ST_MakePoint(g, g), 2260) "
            "FROM generate_series(1, 3) AS g"
        )
        conn.execute(
            "CREATE OR REPLACE FUNCTION sneaky() RETURNS int LANGUAGE sql AS "
            "$$ INSERT INTO victim VALUES (99, NULL) RETURNING id $$"
        )

    def count() -> int:
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT count(*) FROM victim").fetchone()
            assert row is not None
            return int(row[0])

    return count


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM victim; DROP TABLE victim",
        "SELECT * FROM victim) AS q; DROP TABLE victim; SELECT * FROM (SELECT * FROM victim",
        "SELECT * FROM victim; -- harmless?\nDELETE FROM victim",
        "DROP TABLE victim",
        "WITH v AS (SELECT * FROM victim) DELETE FROM victim",
        "SELECT 1 AS a$$; DROP TABLE victim; SELECT $$",
    ],
    ids=[
        "smuggled-drop",
        "breaks-out-of-the-subquery",
        "after-a-comment",
        "not-a-select",
        "with-then-delete",
        "dollar-in-identifier",
    ],
)
def test_a_query_that_is_not_one_select_is_refused_and_the_table_survives(
    tmp_path: Path, dsn: str, victim: Callable[[], int], query: str
) -> None:
    layers = manifest(tmp_path, {"parcels": {"postgis": dsn, "query": query}})
    result = invoke(["validate", "--layers", str(layers)])
    assert result.exit_code == 2, result.output
    assert "parcels: 1 problem(s)" in result.output
    assert "Fix: give one SELECT (or WITH ... SELECT) statement as query" in result.output
    assert victim() == 3


@pytest.mark.parametrize(
    ("query", "server_says"),
    [
        (
            "WITH gone AS (DELETE FROM victim RETURNING *) SELECT id, geom FROM gone",
            "data-modifying statement",
        ),
        ("SELECT id, geom, sneaky() AS n FROM victim", "read-only transaction"),
        ("SELECT id, geom, nextval('victim_seq') AS n FROM victim", "read-only transaction"),
        ("SELECT id, geom FROM victim FOR UPDATE", "read-only transaction"),
        ("SELECT id, geom INTO stolen FROM victim", "SELECT ... INTO is not allowed"),
    ],
    ids=["delete-in-a-cte", "function-that-inserts", "nextval", "row-locks", "select-into"],
)
def test_a_write_hidden_in_a_select_fails_read_only(
    dsn: str, victim: Callable[[], int], query: str, server_says: str
) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SEQUENCE IF NOT EXISTS victim_seq")
    with pytest.raises(InputFileError) as info:
        read_postgis(dsn, query=query, label="parcels")
    assert server_says in str(info.value)
    assert victim() == 3


def test_one_select_with_a_final_semicolon_and_comment_is_read(
    dsn: str, victim: Callable[[], int]
) -> None:
    query = "SELECT id, geom FROM victim WHERE id > 1 -- two of three\nORDER BY id; -- done"
    frame, _, _ = read_postgis(dsn, query=query, label="x")
    assert frame["id"].tolist() == [2, 3]
    assert [round(p.x, 2) for p in frame.geometry] == [2.0, 3.0]
    assert victim() == 3


def test_table_names_are_quoted_identifiers(dsn: str, victim: Callable[[], int]) -> None:
    with pytest.raises(InputFileError) as info:
        read_postgis(dsn, table="victim; DROP TABLE victim", label="parcels")
    assert 'relation "victim; DROP TABLE victim" does not exist' in str(info.value)
    assert victim() == 3
    frame, _, _ = read_postgis(dsn, table="public.victim", label="parcels")
    assert sorted(frame["id"]) == [1, 2, 3]
