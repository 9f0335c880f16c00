"""The batch's peers: the same per-parcel screening by DuckDB, PostGIS, geopandas, a loop.

Run by :mod:`bench_batch` (``--peer-size``, ``--peers``); each peer runs in its own child
process (``bench_peers.py --child PEER LAYERS RESULT``) so its peak memory is its own,
screening only (layers already in memory, or loaded and indexed):

* ``ours``: :func:`gis_sw.batch.run.screen_layers`, 2 threads, ``quick`` (every figure
  compared here; no siting, no adjacent area);
* ``duckdb``: the SQL of :data:`SQL` on DuckDB's spatial extension, loaded from the file
  the ``duckdb-extension-spatial`` wheel ships (``INSTALL`` needs the network), 2 threads;
* ``postgis``: the same SQL on PostgreSQL 15 + PostGIS 3 (Debian's ``postgresql-15`` and
  ``postgresql-15-postgis-3``), a throwaway cluster made with ``initdb`` in a temporary
  folder (as the ``postgres`` user when run as root), listening on 127.0.0.1 only, GiST
  indexes, stopped and deleted at the end; without them the peer is reported failed;
* ``naive`` (not run by default): the obvious geopandas: ``overlay`` for zones, wetlands,
  water, floodplain (layers dissolved first so overlaps count once), ``buffer(50)`` then
  ``sjoin`` for wells and septic fields;
* ``loop`` (not run by default): a per-parcel Python loop over ``sindex`` candidates (what
  many scripts do), timed on the first 2,000 parcels and reported as parcels/s.

The common screening: per parcel, area in each zone (hence the zones, the area in a
low-threshold zone and the permit threshold), areas of wetland, water body and floodplain
on it (overlaps once), wells and septic fields within 50 ft.  Every peer's figures are
compared with ours (areas to 0.01 sq ft, counts exactly): its row's goal is identical
figures (``met`` only then), beside its time against ours.  A peer that fails still
prints its row, ``met: false``, the error in the note.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from bench_batch import GOALS, emit, make_town, measure

COMPARED = ("zones", "low_zone_area_sqft", "wetland_sqft", "water_body_sqft", "floodplain_sqft")
COUNTS = ("wells_near", "septic_fields_near")
AREA_LAYERS = {
    "wetland_sqft": "wetlands",
    "water_body_sqft": "water_bodies",
    "floodplain_sqft": "floodplain",
}
COUNT_LAYERS = {"wells_near": "wells", "septic_fields_near": "septic_fields"}
NEAR_FT = 50.0
MIN_ZONE_PART_SQFT = 1.0
LOOP_SAMPLE = 2000


def load(layers_path: str) -> object:
    from gis_sw.layers.read import read_layers
    from gis_sw.ruleset import load_ruleset

    return read_layers(layers_path, ruleset=load_ruleset())


def zone_figures(rows: pd.DataFrame, n: int) -> pd.DataFrame:
    """From (row, zone, area) pieces: zones, low-threshold area, as the batch reports them."""
    from gis_sw.ruleset import load_ruleset

    low_zones = load_ruleset().zones.low_threshold_zones
    rows = rows[rows["area"] >= MIN_ZONE_PART_SQFT].sort_values(["row", "zone"])
    zones = rows.groupby("row")["zone"].agg(";".join).reindex(range(n))
    low = rows[rows["zone"].isin(low_zones)].groupby("row")["area"].sum()
    return pd.DataFrame({"zones": zones, "low_zone_area_sqft": low.reindex(range(n)).fillna(0.0)})


def peer_ours(layers: object, n: int) -> tuple[pd.DataFrame, float]:
    from gis_sw.batch.run import RunOptions, screen_layers
    from gis_sw.ruleset import load_ruleset

    ruleset = load_ruleset()
    started = time.perf_counter()
    options = RunOptions(workers=2, quick=True)
    result = screen_layers(layers, ruleset, options=options)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    return result.rows[["row", *COMPARED, *COUNTS]].set_index("row"), seconds


def peer_naive(layers: object, n: int) -> tuple[pd.DataFrame, float]:
    import geopandas as gpd

    get = layers.get  # type: ignore[attr-defined]
    parcels = get("parcels")[["geometry"]].assign(row=np.arange(n))
    started = time.perf_counter()
    pieces = gpd.overlay(parcels, get("zoning")[["zone", "geometry"]], how="intersection")
    pieces["area"] = pieces.area
    out = zone_figures(pieces.groupby(["row", "zone"], as_index=False)["area"].sum(), n)
    for column, kind in AREA_LAYERS.items():
        merged = get(kind)[["geometry"]].dissolve()
        cut = gpd.overlay(parcels, merged, how="intersection")
        out[column] = cut.assign(a=cut.area).groupby("row")["a"].sum().reindex(range(n))
        out[column] = out[column].fillna(0.0)
    grown = parcels.assign(geometry=parcels.buffer(NEAR_FT))
    for column, kind in COUNT_LAYERS.items():
        hits = gpd.sjoin(grown, get(kind)[["geometry"]], predicate="intersects")
        out[column] = hits.groupby("row").size().reindex(range(n)).fillna(0).astype(int)
    return out.round(2), time.perf_counter() - started


def peer_loop(layers: object, n: int) -> tuple[pd.DataFrame, float]:
    """Per-parcel loop (sampled): the script many people write first."""
    get = layers.get  # type: ignore[attr-defined]
    parcels = get("parcels").geometry.iloc[:LOOP_SAMPLE]
    zoning, tree = get("zoning"), get("zoning").sindex
    others = {kind: get(kind) for kind in [*AREA_LAYERS.values(), *COUNT_LAYERS.values()]}
    started = time.perf_counter()
    records = []
    for geom in parcels:
        record: dict[str, object] = {}
        parts = []
        for i in tree.query(geom, predicate="intersects"):
            parts.append((zoning["zone"].iloc[i], geom.intersection(zoning.geometry.iloc[i]).area))
        record["zones"] = parts
        for column, kind in AREA_LAYERS.items():
            layer = others[kind]
            hits = layer.sindex.query(geom, predicate="intersects")
            inter = [geom.intersection(layer.geometry.iloc[i]) for i in hits]
            record[column] = round(__import__("shapely").union_all(inter).area, 2) if inter else 0.0
        for column, kind in COUNT_LAYERS.items():
            layer = others[kind]
            record[column] = int((layer.distance(geom) <= NEAR_FT).sum())
        records.append(record)
    seconds = time.perf_counter() - started
    zone_rows = pd.DataFrame(
        [(r, z, a) for r, rec in enumerate(records) for z, a in rec["zones"]],  # type: ignore[attr-defined]
        columns=["row", "zone", "area"],
    )
    zone_rows = zone_rows.groupby(["row", "zone"], as_index=False)["area"].sum()
    out = zone_figures(zone_rows, len(records)).round(2)
    for column in [*AREA_LAYERS, *COUNT_LAYERS]:
        out[column] = [rec[column] for rec in records]
    return out, seconds


SQL = {
    "zones": """SELECT p.row, z.zone, SUM(ST_Area(ST_Intersection(p.geom, z.geom))) AS area
                FROM parcels p JOIN zoning z ON ST_Intersects(p.geom, z.geom)
                GROUP BY p.row, z.zone""",
    "area": """SELECT p.row, ST_Area({union}(ST_Intersection(p.geom, w.geom))) AS area
               FROM parcels p JOIN {table} w ON ST_Intersects(p.geom, w.geom) GROUP BY p.row""",
    "count": """SELECT p.row, COUNT(*) AS n FROM parcels p JOIN {table} w
                ON ST_DWithin(p.geom, w.geom, {near}) GROUP BY p.row""",
}


def run_sql(query: object, n: int, union: str) -> pd.DataFrame:
    """The common screening through ``query(sql) -> DataFrame``."""
    zones = query(SQL["zones"])  # type: ignore[operator]
    out = zone_figures(zones.astype({"row": int, "area": float}), n)
    for column, kind in AREA_LAYERS.items():
        got = query(SQL["area"].format(union=union, table=kind))  # type: ignore[operator]
        out[column] = got.set_index("row")["area"].astype(float).reindex(range(n)).fillna(0.0)
    for column, kind in COUNT_LAYERS.items():
        got = query(SQL["count"].format(table=kind, near=NEAR_FT))  # type: ignore[operator]
        out[column] = got.set_index("row")["n"].reindex(range(n)).fillna(0).astype(int)
    return out.round(2)


def _tables(layers: object) -> dict[str, pd.DataFrame]:
    import shapely

    tables = {}
    for kind in ["parcels", "zoning", *AREA_LAYERS.values(), *COUNT_LAYERS.values()]:
        frame = layers.get(kind)  # type: ignore[attr-defined]
        table = pd.DataFrame(
            {"row": np.arange(len(frame)), "wkb": shapely.to_wkb(frame.geometry.to_numpy())}
        )
        if kind == "zoning":
            table["zone"] = frame["zone"].astype(str).to_numpy()
        tables[kind] = table
    return tables


def peer_duckdb(layers: object, n: int) -> tuple[pd.DataFrame, float]:
    import duckdb
    import duckdb_extension_spatial

    ext = (
        Path(duckdb_extension_spatial.__file__).parent
        / "extensions"
        / f"v{duckdb.__version__}"
        / "spatial.duckdb_extension"
    )
    con = duckdb.connect()
    con.execute(f"LOAD '{ext}'")
    con.execute("SET threads TO 2")
    for kind, table in _tables(layers).items():
        con.register("src", table)
        extra = ", zone" if kind == "zoning" else ""
        con.execute(
            f"CREATE TABLE {kind} AS SELECT row{extra}, ST_GeomFromWKB(wkb) AS geom FROM src"
        )
        con.unregister("src")
    started = time.perf_counter()
    out = run_sql(lambda sql: con.execute(sql).df(), n, "ST_Union_Agg")
    return out, time.perf_counter() - started


def peer_postgis(layers: object, n: int) -> tuple[pd.DataFrame, float]:
    import psycopg

    pg = Path("/usr/lib/postgresql/15/bin")
    folder = Path(tempfile.mkdtemp(prefix="gis-sw-bench-pg-"))
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_postgres:
        shutil.chown(folder, "postgres", "postgres")
    with socket.socket() as probe:  # a free port on 127.0.0.1
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    data = folder / "data"
    subprocess.run(
        [
            *as_postgres,
            str(pg / "initdb"),
            "-D",
            str(data),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
        ],
        check=True,
        capture_output=True,
    )
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={folder} "
        "-c fsync=off -c shared_buffers=1GB -c work_mem=256MB"
    )
    subprocess.run(
        [
            *as_postgres,
            str(pg / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-w",
            "-l",
            str(folder / "log"),
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        with psycopg.connect(
            f"host=127.0.0.1 port={port} user=postgres dbname=postgres", autocommit=True
        ) as con:
            con.execute("CREATE EXTENSION postgis")
            for kind, table in _tables(layers).items():
                extra = ", zone text" if kind == "zoning" else ""
                con.execute(f"CREATE TABLE {kind} (row integer{extra}, geom geometry)")
                columns = "row, zone, geom" if kind == "zoning" else "row, geom"
                with con.cursor().copy(f"COPY {kind} ({columns}) FROM STDIN") as copy:
                    for record in table.itertuples(index=False):
                        values = [record.row, *([record.zone] if kind == "zoning" else [])]
                        copy.write_row([*values, record.wkb.hex()])
                con.execute(f"CREATE INDEX ON {kind} USING gist (geom)")
                con.execute(f"ANALYZE {kind}")

            def query(sql: str) -> pd.DataFrame:
                cur = con.execute(sql)
                return pd.DataFrame(cur.fetchall(), columns=[d.name for d in cur.description])

            started = time.perf_counter()
            out = run_sql(query, n, "ST_Union")
            seconds = time.perf_counter() - started
    finally:
        subprocess.run(
            [*as_postgres, str(pg / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)
    return out, seconds


PEER_NAMES = {
    "naive": "geopandas overlay + buffer/sjoin",
    "loop": "per-parcel loop (sampled)",
    "duckdb": "DuckDB spatial",
    "postgis": "PostGIS",
}

PEERS = {
    "ours": peer_ours,
    "naive": peer_naive,
    "loop": peer_loop,
    "duckdb": peer_duckdb,
    "postgis": peer_postgis,
}


def child(name: str, layers_path: str, result_path: str) -> None:
    """Run one peer (in its own process) and save its figures and time."""
    import resource

    layers = load(layers_path)
    n = len(layers.get("parcels"))  # type: ignore[attr-defined]
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures, seconds = PEERS[name](layers, n)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures.reset_index(names="row").to_parquet(result_path)
    print(
        json.dumps(
            {"seconds": seconds, "parcels": len(figures), "peak_mb": peak, "loaded_mb": base}
        )
    )


AREA_TOLERANCE_SQFT = 0.011
"""Areas equal to 0.01 sq ft (both sides rounded to 2 decimals; the float gap of two
such values 0.01 apart is 0.0100000000x)."""


def compare(ours: pd.DataFrame, other: pd.DataFrame, *, sampled: bool = False) -> str:
    """Return "identical" or what differs between a peer's figures and ours, by row.

    Areas must agree to 0.01 sq ft, zones and counts exactly; a figure missing (NaN) on one
    side only differs.  Every row of ours must be in ``other`` unless ``sampled`` (the
    loop peer screens the first rows only), and ``other`` may have no row ours lacks.
    """
    bad = []
    extra = other.index.difference(ours.index)
    missing = ours.index.difference(other.index)
    if len(extra):
        bad.append(f"rows not in ours: {len(extra)}")
    if len(missing) and not sampled:
        bad.append(f"rows missing: {len(missing)}")
    common = other.index.intersection(ours.index)
    a, b = ours.loc[common], other.loc[common]
    for column in (*COMPARED, *COUNTS):
        if column == "zones":
            diff = int((a[column].fillna("") != b[column].fillna("")).sum())
        else:
            x, y = a[column].astype(float), b[column].astype(float)
            limit = AREA_TOLERANCE_SQFT if column in COMPARED else 0.0
            same = ((x - y).abs() <= limit) | (x.isna() & y.isna())
            diff = int((~same).sum())
        if diff:
            bad.append(f"{column}: {diff}")
    return "identical" if not bad else "DIFFER " + ", ".join(bad)


def peer_row(name: str, n: int, info: dict | None, same: str, ours_rate: float) -> dict:
    """The row of one peer: its time against ours and whether its figures equal ours.

    ``info`` is what the peer's child printed (None when it failed: ``same`` then says
    why).  The goal is identical figures; a peer that failed, or that ran without ours to
    compare with, does not meet it.
    """
    goal_id = f"peer-{name}"
    row: dict = {
        "table": "peers",
        "what": PEER_NAMES.get(name, name),
        "goal_id": goal_id,
        "goal": GOALS["peer"],
    }
    if info is None:
        row.update(size=f"{n:,} parcels", met=False, note=f"failed: {same}")
        return row
    parcels = int(info["parcels"])
    row.update(
        size=f"{parcels:,} parcels",
        seconds=info["seconds"],
        peak_mb=info["peak_mb"],
        met=same == "identical",
        note=f"figures vs ours: {same}",
    )
    if ours_rate:
        row.update(against="gis_sw (--quick, 2 workers)", against_seconds=parcels / ours_rate)
    return row


def peers(work: Path, n: int, seed: int, names: list[str]) -> None:
    """Run each peer in its own process on a town of ``n`` parcels; print and emit rows."""
    print(f"\n== the same screening by its peers, {n:,} parcels (screening only) ==", flush=True)
    results: dict[str, dict[str, float]] = {}
    figures: dict[str, pd.DataFrame] = {}
    failed: dict[str, str] = {}
    try:
        layers = make_town(work, n, seed)
    except RuntimeError as exc:
        failed = dict.fromkeys(names, str(exc))
        names = []
    for name in names:
        path = work / f"peer_{name}_{n}.parquet"
        cmd = [sys.executable, __file__, "--child", name, str(layers), str(path)]
        got = measure(cmd)
        lines = [t for t in got.output.splitlines() if t.startswith("{")]
        if got.returncode or not lines:
            failed[name] = got.failed or "printed no result"
            print(f"  {name}: failed: {failed[name]}", flush=True)
            continue
        results[name] = {**json.loads(lines[-1]), "wall": got.seconds}
        figures[name] = pd.read_parquet(path).set_index("row")
    print(
        f"{'peer':>8} {'parcels':>8} {'seconds':>8} {'parcels/s':>10} {'peak MB':>8} "
        f"{'ours x':>7} {'wall s':>7}  figures vs ours",
        flush=True,
    )
    ours_rate = results["ours"]["parcels"] / results["ours"]["seconds"] if "ours" in results else 0
    for name in [*results, *failed]:
        info = results.get(name)
        if info is None:
            same = failed[name]
        elif "ours" in figures:
            same = compare(figures["ours"], figures[name], sampled=name == "loop")
        else:
            same = "not compared (ours failed)"
        if info is not None:
            rate = info["parcels"] / info["seconds"]
            ratio = ours_rate / rate if rate else float("nan")
            print(
                f"{name:>8} {int(info['parcels']):>8,} {info['seconds']:>8.2f} {rate:>10,.0f} "
                f"{info['peak_mb']:>8,.0f} {ratio:>7.1f} {info['wall']:>7.1f}  {same}",
                flush=True,
            )
        if name != "ours":
            emit(**peer_row(name, n, info, same, ours_rate))
    sql = [
        results[k]["parcels"] / results[k]["seconds"] for k in ("duckdb", "postgis") if k in results
    ]
    if sql and ours_rate:
        print(f"ours / best of DuckDB and PostGIS: {ours_rate / max(sql):.2f}x")


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child(*sys.argv[2:5])
