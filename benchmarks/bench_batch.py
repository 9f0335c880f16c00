"""Time ``gis-sw batch`` on sample towns, and the same screening by its peers.

    make bench        (benchmarks/report.py runs this and the other benchmarks)
    .venv/bin/python benchmarks/bench_batch.py [--sizes 10000 100000 1000000]
        [--stream-sizes 100000 1000000] [--dask-size 100000]
        [--peer-size 100000] [--peers ours,naive,loop,duckdb,postgis] [--work DIR]

Every result is also printed as one ``bench-row: {json}`` line, the common format that
``benchmarks/report.py`` collects into docs/batch.md and the README.

1. End to end: for each size, ``gis-sw sample --format parquet`` makes a town (kept in
   ``--work`` for the next run), then ``gis-sw batch`` reads, screens and writes it
   (parcels.parquet, parcels.gpkg, summary, overview map) in a child process: wall time,
   parcels/s and the child's peak memory (``wait4`` rusage).
2. Peers, on one town of ``--peer-size`` parcels, each in its own child process (so peak
   memory is its own), screening only (layers already in memory or loaded and indexed):

   * ``ours``: :func:`gis_sw.batch.run.screen_layers`, 2 threads, every figure;
   * ``naive``: the obvious geopandas: ``overlay`` for zones, wetlands, water, floodplain
     (layers dissolved first so overlaps count once), ``buffer(50)`` then ``sjoin`` for
     wells and septic fields;
   * ``loop``: a per-parcel Python loop over ``sindex`` candidates (what many scripts do),
     timed on the first 2,000 parcels and reported as parcels/s;
   * ``duckdb``: the same in SQL on DuckDB's spatial extension, loaded from the file the
     ``duckdb-extension-spatial`` wheel ships (``INSTALL`` needs the network);
   * ``postgis``: the same SQL on PostgreSQL 15 + PostGIS 3, a throwaway cluster made with
     ``initdb`` in a temporary folder (as the ``postgres`` user when run as root),
     listening on 127.0.0.1 only, GiST indexes, stopped and deleted at the end.

   The common screening: per parcel, area in each zone (hence the zones, the area in a
   low-threshold zone and the permit threshold), areas of wetland, water body and
   floodplain on it (overlaps once), wells and septic fields within 50 ft.  Every peer's
   figures are compared with ours (areas to 0.01 sq ft, counts exactly) and the mismatches
   printed, then the parcels/s, peak memory and the ratio to ours.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def emit(**row: object) -> None:
    """Print one result in the common row format :mod:`report` collects (``bench-row:``)."""
    print("bench-row: " + json.dumps({"bench": "batch", **row}), flush=True)


def stage_text(text: str) -> str:
    """The stage times of gis-sw batch's summary line ("read 1.3 s, screen 10.5 s, ...")."""
    line = next((t for t in text.splitlines() if t.startswith("screened")), "")
    return line[line.find("; ") + 2 : line.rfind(")")] if "; " in line else ""


def floor_seconds(work: Path, n: int) -> tuple[float, str]:
    """Seconds of the bare floor on a town (:func:`bench_floor.run_floor`), and its stages.

    The floor's one definition: the sum of its read, index, screen and write stages, timed
    in its own process, imports excluded (benchmarks/bench_floor.py).
    """
    from bench_floor import run_floor, stage_note

    town = make_town(work, n, 1).parent
    try:
        row = run_floor(town, work / f"floor_{n}.parquet")
    except RuntimeError as exc:
        print(f"  bare floor failed: {str(exc)[-300:]}", flush=True)
        return float("nan"), "failed"
    return float(row["seconds"]), stage_note(row["stages"])


def run_measured(cmd: list[str]) -> tuple[float, float, str]:
    """Run a command; return (wall seconds, the child's peak RSS in MB, its output).

    Peak memory comes from GNU ``time -f %M`` when installed (NaN otherwise).
    """
    timer = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else "")
    wrapped = [timer, "-f", "maxrss_kb=%M", *cmd] if timer else cmd
    started = time.perf_counter()
    done = subprocess.run(wrapped, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    peak = float("nan")
    for line in done.stderr.splitlines():
        if line.startswith("maxrss_kb="):
            peak = int(line.split("=")[1]) / 1024
    return elapsed, peak, done.stdout + done.stderr


def make_town(work: Path, n: int, seed: int) -> Path:
    town = work / f"town_{n}"
    if not (town / "layers.toml").exists():
        cmd = [
            str(BIN / "gis-sw"),
            "sample",
            "--out",
            str(town),
            "--parcels",
            str(n),
            "--seed",
            str(seed),
            "--format",
            "parquet",
            "--overwrite",
        ]
        seconds, _, _ = run_measured(cmd)
        print(f"  made a town of {n:,} parcels in {seconds:.1f} s ({town})", flush=True)
    return town / "layers.toml"


def batch_cmd(layers: Path, out: Path, workers: int, *extra: str) -> list[str]:
    """The gis-sw batch command line of the benchmark."""
    cmd = [str(BIN / "gis-sw"), "batch", "--layers", str(layers), "--out", str(out)]
    return [*cmd, "--overwrite", "--workers", str(workers), *extra]


def end_to_end(
    work: Path,
    sizes: list[int],
    seed: int,
    workers: int,
    *,
    stream: bool = False,
    quick_from: int = 0,
) -> None:
    """gis-sw batch on each size, against the bare floor on the same town."""
    how = "streamed (--stream)" if stream else "whole layers"
    print(f"\n== gis-sw batch end to end (read, screen, write), {how}, {workers} workers ==")
    print(f"{'parcels':>10} {'seconds':>8} {'parcels/s':>10} {'peak MB':>8} {'floor s':>8}  stages")
    for n in sizes:
        layers = make_town(work, n, seed)
        extra: tuple[str, ...] = ("--stream",) if stream else ()
        quick = bool(quick_from) and n >= quick_from
        if quick:
            extra += ("--quick", "--no-gpkg")
        out = work / f"batch_{n}{'_stream' if stream else ''}"
        seconds, peak, text = run_measured(batch_cmd(layers, out, workers, *extra))
        bare, bare_stages = floor_seconds(work, n)
        stages = stage_text(text)
        print(
            f"{n:>10,} {seconds:>8.1f} {n / seconds:>10,.0f} {peak:>8,.0f} {bare:>8.1f}  {stages}",
            flush=True,
        )
        emit(
            table="end to end",
            what="gis-sw batch" + (" --stream" if stream else "") + (" --quick" if quick else ""),
            size=f"{n:,} parcels",
            seconds=seconds,
            peak_mb=peak,
            against="bare floor",
            against_seconds=bare,
            goal="5,000,000 parcels in 8 GB" if stream else "",
            note=f"{stages}; floor: {bare_stages}"
            + ("; --quick --no-gpkg (no siting, no parcels.gpkg)" if quick else ""),
        )


def dask_vs_local(work: Path, n: int, seed: int, workers: int) -> None:
    """The same batch on a Dask LocalCluster and on local threads: time ratio and equality."""
    layers = make_town(work, n, seed)
    print(f"\n== --engine dask (in-process LocalCluster) against local threads, {n:,} parcels ==")
    times: dict[str, float] = {}
    for _ in range(2):  # alternated, best of two: the machine's load changes under a run
        for engine in ("local", "dask"):
            out = work / f"batch_{n}_{engine}"
            cmd = batch_cmd(layers, out, workers, "--engine", engine, "--no-map", "--no-gpkg")
            seconds, _, text = run_measured(cmd)
            times[engine] = min(times.get(engine, seconds), seconds)
            print(f"{engine:>6}: {seconds:.1f} s ({stage_text(text)})", flush=True)
    a = pd.read_parquet(work / f"batch_{n}_local" / "parcels.parquet")
    b = pd.read_parquet(work / f"batch_{n}_dask" / "parcels.parquet")
    same = "identical parcels.parquet" if a.equals(b) else "parcels.parquet DIFFER"
    ratio = times["dask"] / times["local"]
    print(f"dask / local: {ratio:.2f}x; {same}", flush=True)
    emit(
        table="dask",
        what="gis-sw batch --engine dask",
        size=f"{n:,} parcels",
        seconds=times["dask"],
        against="local threads",
        against_seconds=times["local"],
        goal="within 1.1x of local",
        met=ratio <= 1.1,
        note=f"{same}; best of 2 runs each, alternated",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--peer-size", type=int, default=100_000)
    parser.add_argument("--peers", default="ours,naive,loop,duckdb,postgis")
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--stream-sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument(
        "--stream-quick-from",
        type=int,
        default=0,
        help="streamed sizes from this one up run --quick --no-gpkg (to measure memory)",
    )
    parser.add_argument("--dask-size", type=int, default=100_000)
    parser.add_argument("--child", nargs=3, metavar=("PEER", "LAYERS", "RESULT"))
    args = parser.parse_args()
    if args.child:
        from bench_peers import child

        child(*args.child)
        return
    args.work.mkdir(parents=True, exist_ok=True)
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(f"machine: {os.cpu_count()} CPUs, {memory_gb:.1f} GB; python {sys.version.split()[0]}")
    if args.peer_size:
        from bench_peers import peers

        peers(args.work, args.peer_size, args.seed, args.peers.split(","))
    if args.sizes:
        end_to_end(args.work, args.sizes, args.seed, args.workers)
    if args.stream_sizes:
        end_to_end(
            args.work,
            args.stream_sizes,
            args.seed,
            args.workers,
            stream=True,
            quick_from=args.stream_quick_from,
        )
    if args.dask_size:
        dask_vs_local(args.work, args.dask_size, args.seed, args.workers)


if __name__ == "__main__":
    main()
