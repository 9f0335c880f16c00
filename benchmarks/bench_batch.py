"""Time ``gis-sw batch`` on sample towns against issue 16's goals, and its peers.

    make bench        (benchmarks/report.py runs this and the other benchmarks)
    .venv/bin/python benchmarks/bench_batch.py [--sizes 100000 1000000]
        [--stream-sizes 5000000] [--stream-quick-from 1000000]
        [--dask-size 100000] [--peer-size 100000] [--peers ours,duckdb,postgis]
        [--repeat 2] [--work DIR]

Every result is printed for people and as one ``bench-row: {json}`` line, the common format
``benchmarks/report.py`` collects into docs/batch.md and the README.  Every row of a goal
of issue 16 carries a ``goal_id`` (see :data:`GOALS`), its goal and whether it is met; a
piece that fails still prints its row (``met: false``, the error in the note) and the rest
runs.  Towns are made by ``gis-sw sample --parcels N --seed 1 --format parquet`` in
``--work`` (default ``out/bench``) and kept for the next run.  Each command runs in a child
process: wall time, CPU time (user + sys) and peak memory (:class:`Measured`: ``wait4``'s
``ru_maxrss`` and the process tree's summed PSS, so forked workers count).

1. **End to end**, whole layers, at each ``--sizes``: ``gis-sw batch --profile`` (every
   output: parcels.parquet, parcels.gpkg, summary, problems, overview map; the best of
   ``--repeat`` runs up to 100,000 parcels, one run above), its stage times, against the
   bare floor on the same town (``benchmarks/bench_floor.py``, the one definition; at the
   sizes up to ``--floor-max``).  Goals: 100,000 parcels in <= 5 s and <= 2x the floor;
   1,000,000 parcels in <= 60 s.
2. **Streamed**, ``--stream`` at each ``--stream-sizes`` (from ``--stream-quick-from`` up
   with ``--quick --no-gpkg``: no siting, no parcels.gpkg, memory in minutes): peak
   memory.  Goal: 5,000,000 parcels within 8 GB (8,192 MB).
3. **Dask** at ``--dask-size``: ``gis-sw batch --engine dask`` (its own ``LocalCluster``
   of 2 forked worker processes, one thread each: the goal's row), and ``--engine dask
   --scheduler ADDRESS`` on a ``LocalCluster`` started here (spawned workers, to which the
   chunks are sent, as to a real cluster), against the local engine (all ``--no-map
   --no-gpkg``, taking turns, best of two each); the ``parcels.parquet`` of each compared
   with the local one's.  Goal: within 1.1x of local, identical ``parcels.parquet``.
4. **Peers** at ``--peer-size`` (:mod:`bench_peers`: ours, DuckDB spatial, PostGIS; also
   ``naive`` geopandas and a per-parcel ``loop``, not run by default), each peer's figures
   checked equal to ours.  Goal: identical figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

COUNTY = 100_000
"""Parcels of the end-to-end run with the 5 s and 2x-floor goals."""
MILLION = 1_000_000
"""Parcels of the end-to-end run with the 60 s goal."""
STATE = 5_000_000
"""Parcels of the streamed run with the 8 GB goal."""
GOAL_COUNTY_S = 5.0
GOAL_X_FLOOR = 2.0
GOAL_MILLION_S = 60.0
GOAL_STATE_MB = 8 * 1024.0
GOAL_DASK_X = 1.1

STATE_NOTE = "run by every full make bench, last (report.py --no-state leaves it out)"
"""The streamed 5,000,000-parcel row's note on where it runs."""

GOALS = {
    "county": f"<= {GOAL_COUNTY_S:g} s and <= {GOAL_X_FLOOR:g}x the bare floor",
    "million": f"<= {GOAL_MILLION_S:g} s",
    "state": f"peak <= {GOAL_STATE_MB:,.0f} MB (8 GB)",
    "dask": f"within {GOAL_DASK_X:g}x of local, identical parcels.parquet",
    "peer": "figures identical to ours",
}
"""Goal text of each ``goal_id`` (peers: ``peer-duckdb``, ``peer-postgis``, ...)."""


def emit(**row: object) -> None:
    """Print one result in the common row format :mod:`report` collects (``bench-row:``)."""
    print("bench-row: " + json.dumps({"bench": "batch", **row}), flush=True)


@dataclass(frozen=True, slots=True)
class Measured:
    """What one child process took: wall and CPU seconds, peak memory, its output.

    ``peak_mb`` is the larger of the child's ``ru_maxrss`` (the largest single process of
    its tree, exact) and the largest sum of the tree's proportional set sizes sampled while
    it ran (:class:`TreeMemory`: forked workers count too, pages they share once);
    ``processes`` the most processes the tree had at a sample.
    """

    seconds: float
    cpu_seconds: float
    peak_mb: float
    output: str
    returncode: int
    processes: int = 1

    @property
    def failed(self) -> str:
        """The end of the output of a failed run ("" when it succeeded)."""
        if not self.returncode:
            return ""
        lines = [t for t in self.output.strip().splitlines() if t.strip()]
        return f"exit {self.returncode}: " + " / ".join(lines[-3:])[-400:]


def tree(pid: int) -> list[int]:
    """The process ``pid`` and its descendants (Linux ``/proc``; [pid] where unreadable)."""
    found, todo = [], [pid]
    while todo:
        now = todo.pop()
        found.append(now)
        for task in Path(f"/proc/{now}/task").glob("*/children"):
            try:
                todo += [int(c) for c in task.read_text(encoding="ascii").split()]
            except (OSError, ValueError):
                continue
    return found


def pss_kb(pid: int) -> int:
    """The proportional set size of one process in kB (0 when it is gone or unreadable)."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text(encoding="ascii")
    except OSError:
        return 0
    line = next((t for t in text.splitlines() if t.startswith("Pss:")), "Pss: 0 kB")
    return int(line.split()[1])


class TreeMemory:
    """Sample the summed PSS of a process tree every ``interval`` seconds, in a thread."""

    def __init__(self, pid: int, interval: float = 0.5) -> None:
        import threading

        self.pid, self.interval = pid, interval
        self.peak_kb, self.processes = 0, 1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            pids = tree(self.pid)
            self.processes = max(self.processes, len(pids))
            self.peak_kb = max(self.peak_kb, sum(pss_kb(p) for p in pids))

    def stop(self) -> float:
        """Stop sampling; return the peak in MB."""
        self._stop.set()
        self._thread.join()
        return self.peak_kb / 1024


def measure(cmd: list[str], interval: float = 0.5) -> Measured:
    """Run a command in a child process; time it and read its peak memory.

    Peak memory: see :class:`Measured` (``wait4``'s ``ru_maxrss`` and the tree's PSS
    sampled every ``interval`` seconds).  The output (stdout then stderr) goes through
    temporary files, so a long run never blocks on a full pipe.  Never raises for a failed
    command: see :attr:`Measured.failed`.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        sampler = TreeMemory(proc.pid, interval)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        tree_mb = sampler.stop()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace") + err.read().decode(errors="replace")
    return Measured(
        seconds=elapsed,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_mb=max(usage.ru_maxrss / 1024, tree_mb),  # ru_maxrss: kilobytes on Linux
        output=text,
        returncode=proc.returncode,
        processes=sampler.processes,
    )


def run_measured(cmd: list[str]) -> tuple[float, float, str]:
    """Run a command; return (wall seconds, the child's peak RSS in MB, its output).

    Raises
    ------
    RuntimeError
        When the command fails (the end of its output in the message).
    """
    got = measure(cmd)
    if got.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{got.output[-3000:]}")
    return got.seconds, got.peak_mb, got.output


def stage_text(text: str) -> str:
    """The stage times of a run's output: its ``--profile`` line, else its summary line.

    ``gis-sw: profile: import 0.55 s, read 1.44 s, ..., total 13.2 s`` gives
    ``import 0.55 s, read 1.44 s, ..., total 13.2 s``; without it, the part in brackets of
    ``screened ... (... parcels/s; read 1.3 s, screen 10.5 s, ...)``.
    """
    lines = text.splitlines()
    profile = [t for t in lines if t.startswith("gis-sw: profile: ")]
    if profile:
        return profile[-1].removeprefix("gis-sw: profile: ").strip()
    line = next((t for t in lines if t.startswith("screened")), "")
    return line[line.find("; ") + 2 : line.rfind(")")] if "; " in line else ""


def make_town(work: Path, n: int, seed: int) -> Path:
    """Return the layers manifest of a sample town of ``n`` parcels, made when missing.

    Raises
    ------
    RuntimeError
        When ``gis-sw sample`` fails.
    """
    town = work / f"town_{n}"
    if not (town / "layers.toml").exists():
        cmd = [str(BIN / "gis-sw"), "sample", "--out", str(town), "--parcels", str(n)]
        cmd += ["--seed", str(seed), "--format", "parquet", "--overwrite"]
        got = measure(cmd)
        if got.returncode:
            raise RuntimeError(f"making the town of {n:,} parcels failed: {got.failed}")
        print(
            f"  made a town of {n:,} parcels in {got.seconds:.1f} s "
            f"(CPU {got.cpu_seconds:.1f} s, peak {got.peak_mb:,.0f} MB; {town})",
            flush=True,
        )
    return town / "layers.toml"


def floor_seconds(work: Path, n: int, seed: int) -> tuple[float, str]:
    """Seconds of the bare floor on a town (:func:`bench_floor.run_floor`), and its stages.

    The floor's one definition: the sum of its read, index, screen and write stages, timed
    in its own process, imports excluded (benchmarks/bench_floor.py).  NaN when it fails.
    """
    from bench_floor import run_floor, stage_note

    town = make_town(work, n, seed).parent
    try:
        row = run_floor(town, work / f"floor_{n}.parquet")
    except RuntimeError as exc:
        print(f"  bare floor failed: {str(exc)[-300:]}", flush=True)
        return float("nan"), "failed"
    return float(row["seconds"]), stage_note(row["stages"])


def batch_cmd(layers: Path, out: Path, workers: int, *extra: str) -> list[str]:
    """The gis-sw batch command line of the benchmark."""
    cmd = [str(BIN / "gis-sw"), "batch", "--layers", str(layers), "--out", str(out)]
    return [*cmd, "--overwrite", "--workers", str(workers), *extra]


def goal_of(n: int, *, stream: bool) -> str | None:
    """The ``goal_id`` of an end-to-end or streamed run of ``n`` parcels (None: no goal)."""
    if stream:
        return "state" if n == STATE else None
    return {COUNTY: "county", MILLION: "million"}.get(n)


def verdict(goal_id: str | None, seconds: float, peak_mb: float, floor: float) -> bool | None:
    """Whether a run meets its goal; None when it has none.

    A figure that is missing or not a number (a failed floor, no peak read) never meets a
    goal that needs it.
    """
    if goal_id == "county":
        if not math.isfinite(floor) or floor <= 0:
            return False
        return seconds <= GOAL_COUNTY_S and seconds <= GOAL_X_FLOOR * floor
    if goal_id == "million":
        return seconds <= GOAL_MILLION_S
    if goal_id == "state":
        return math.isfinite(peak_mb) and peak_mb <= GOAL_STATE_MB
    return None


def end_to_end_row(
    n: int,
    got: Measured,
    *,
    stream: bool,
    quick: bool,
    floor: float = float("nan"),
    floor_stages: str = "",
    runs: int = 1,
) -> dict:
    """The row of one end-to-end (or streamed) run of ``n`` parcels, with its verdict."""
    goal_id = goal_of(n, stream=stream)
    what = (
        "gis-sw batch" + (" --stream" if stream else "") + (" --quick --no-gpkg" if quick else "")
    )
    row: dict = {
        "table": "streamed" if stream else "end to end",
        "what": what,
        "size": f"{n:,} parcels",
        "seconds": got.seconds,
        "peak_mb": got.peak_mb,
    }
    if math.isfinite(floor):
        row.update(against="bare floor", against_seconds=floor)
    if goal_id:
        row.update(goal_id=goal_id, goal=GOALS[goal_id])
    notes = []
    if got.failed:
        notes.append(f"failed: {got.failed}")
        row["met"] = False if goal_id else None
    else:
        row["met"] = verdict(goal_id, got.seconds, got.peak_mb, floor)
        stages = stage_text(got.output)
        notes.append(stages or "no stage line found")
        notes.append(f"CPU {got.cpu_seconds:.1f} s")
        if got.processes > 1:
            notes.append(f"peak: summed PSS of up to {got.processes} processes")
        if runs > 1:
            notes.append(f"best of {runs}")
    if floor_stages:
        notes.append(f"floor: {floor_stages}")
    elif goal_id == "county":
        notes.append("no floor measured")
    if quick:
        notes.append("--quick --no-gpkg: no siting, no parcels.gpkg")
    if goal_id == "state":
        notes.append(STATE_NOTE)
    row["note"] = "; ".join(notes)
    if row["met"] is None:
        del row["met"]
    return row


def end_to_end(
    work: Path,
    sizes: list[int],
    seed: int,
    workers: int,
    *,
    stream: bool = False,
    quick_from: int = 0,
    floor_max: int = MILLION,
    repeat: int = 1,
) -> None:
    """gis-sw batch on each size (every output, ``--profile``), against the bare floor."""
    how = "streamed (--stream)" if stream else "whole layers, every output"
    print(f"\n== gis-sw batch end to end, {how}, {workers} workers ==", flush=True)
    bench = {"bench": "state"} if stream else {}  # report.py's ``state`` run (--no-state)
    for n in sizes:
        quick = stream and bool(quick_from) and n >= quick_from
        goal_id = goal_of(n, stream=stream)
        try:
            layers = make_town(work, n, seed)
        except RuntimeError as exc:
            failed = Measured(float("nan"), float("nan"), float("nan"), str(exc), 1)
            emit(**bench, **end_to_end_row(n, failed, stream=stream, quick=quick))
            continue
        extra: tuple[str, ...] = ("--profile",) + (("--stream",) if stream else ())
        if quick:
            extra += ("--quick", "--no-gpkg")
        out = work / f"batch_{n}{'_stream' if stream else ''}"
        times = max(repeat, 1) if n <= COUNTY else 1  # a long run is steady enough once
        runs = [measure(batch_cmd(layers, out, workers, *extra)) for _ in range(times)]
        good = [r for r in runs if not r.returncode]
        got = min(good, key=lambda r: r.seconds) if good else runs[-1]
        bare, bare_stages = float("nan"), ""
        if not stream and n <= floor_max:
            bare, bare_stages = floor_seconds(work, n, seed)
        row = end_to_end_row(
            n,
            got,
            stream=stream,
            quick=quick,
            floor=bare,
            floor_stages=bare_stages,
            runs=len(good),
        )
        met = "no goal" if row.get("met") is None else ("met" if row["met"] else "NOT met")
        print(
            f"{n:>10,} parcels: {got.seconds:.1f} s, CPU {got.cpu_seconds:.1f} s, peak "
            f"{got.peak_mb:,.0f} MB, floor {bare:.2f} s; {row['note']}"
            + (f"; {row['goal']}: {met}" if goal_id else ""),
            flush=True,
        )
        emit(**bench, **row)


def dask_row(
    what: str,
    n: int,
    times: list[float],
    local: list[float],
    same: str,
    cpu: list[float] | None = None,
    local_cpu: list[float] | None = None,
) -> dict:
    """The row of one Dask variant against ``--engine local`` (best of each's runs).

    With ``cpu`` and ``local_cpu`` (the CPU seconds of each run's whole process tree),
    the note gives the CPU ratio too (the least of each's): on a shared machine it moves
    less than the wall time does.
    """
    row: dict = {
        "table": "dask",
        "what": what,
        "size": f"{n:,} parcels",
        "goal": GOALS["dask"],
    }
    if not times or not local:
        row.update(met=False, note=f"failed: {same}")
        return row
    best, best_local = min(times), min(local)
    ratio = best / best_local
    row.update(
        seconds=best,
        against="--engine local",
        against_seconds=best_local,
        met=ratio <= GOAL_DASK_X and same == "identical parcels.parquet",
        note=f"{same}; {ratio:.2f}x; best of {len(times)} runs each, taking turns",
    )
    if cpu and local_cpu:
        cpu_ratio = min(cpu) / min(local_cpu)
        row["note"] += f"; CPU {min(cpu):.1f} s against {min(local_cpu):.1f} s, {cpu_ratio:.2f}x"
    return row


def compare_parquet(a: Path, b: Path) -> str:
    """Return "identical parcels.parquet" or what differs (a missing file included)."""
    import pandas as pd

    if not a.exists() or not b.exists():
        return f"no parcels.parquet ({b if a.exists() else a} missing)"
    left, right = pd.read_parquet(a), pd.read_parquet(b)
    if left.equals(right):
        return "identical parcels.parquet"
    if list(left.columns) != list(right.columns) or len(left) != len(right):
        return (
            f"parcels.parquet DIFFER ({len(left)} x {len(left.columns)} against "
            f"{len(right)} x {len(right.columns)})"
        )
    bad = [c for c in left.columns if not left[c].equals(right[c])]
    return "parcels.parquet DIFFER in " + ", ".join(bad[:6])


DASK_WHAT = {
    "dask": "gis-sw batch --engine dask (its LocalCluster of 2 forked worker processes)",
    "processes": (
        "gis-sw batch --engine dask --scheduler ADDRESS (a LocalCluster started apart, "
        "2 spawned worker processes: the chunks are sent to them, as to a real cluster)"
    ),
}


def dask_vs_local(work: Path, n: int, seed: int, workers: int, rounds: int = 2) -> None:
    """Local, Dask's own forked cluster and a LocalCluster started apart, taking turns."""
    print(f"\n== --engine dask against --engine local, {n:,} parcels ==", flush=True)
    try:
        layers = make_town(work, n, seed)
    except RuntimeError as exc:
        emit(goal_id="dask", **dask_row(DASK_WHAT["dask"], n, [], [], str(exc)))
        return
    engines: dict[str, tuple[str, ...]] = {
        "local": ("--engine", "local"),
        "dask": ("--engine", "dask"),
    }
    errors: dict[str, str] = {}
    cluster = None
    try:
        from dask.distributed import LocalCluster

        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        engines["processes"] = ("--engine", "dask", "--scheduler", cluster.scheduler_address)
    except Exception as exc:  # noqa: BLE001  # reported in the row; local and in-process still run
        errors["processes"] = f"no LocalCluster: {type(exc).__name__}: {exc}"[:400]
        print(f"  {errors['processes']}", flush=True)
    times: dict[str, list[float]] = {name: [] for name in (*engines, "processes")}
    cpu: dict[str, list[float]] = {name: [] for name in times}
    try:
        for _ in range(rounds):
            for name, flags in engines.items():
                out = work / f"batch_{n}_{name}"
                got = measure(batch_cmd(layers, out, workers, *flags, "--no-map", "--no-gpkg"))
                if got.returncode:
                    errors[name] = got.failed
                    print(f"{name:>10}: failed: {got.failed}", flush=True)
                    continue
                times[name].append(got.seconds)
                cpu[name].append(got.cpu_seconds)
                print(
                    f"{name:>10}: {got.seconds:.1f} s, CPU {got.cpu_seconds:.1f} s "
                    f"({stage_text(got.output)})",
                    flush=True,
                )
    finally:
        if cluster is not None:
            cluster.close()
    local = work / f"batch_{n}_local" / "parcels.parquet"
    for name, goal_id in (("dask", "dask"), ("processes", "dask-scheduler")):
        same = (
            errors.get(name)
            or errors.get("local")
            or compare_parquet(local, work / f"batch_{n}_{name}" / "parcels.parquet")
        )
        row = dask_row(
            DASK_WHAT[name], n, times[name], times["local"], same, cpu[name], cpu["local"]
        )
        if name == "processes":
            row["note"] += "; the cluster started before the runs (not timed), as a real one runs"
        print(f"{name}: {row['note']}", flush=True)
        emit(goal_id=goal_id, **row)


def arguments() -> argparse.ArgumentParser:
    """The command line of this script (the full run's sizes are its defaults)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[COUNTY, MILLION])
    parser.add_argument("--floor-max", type=int, default=MILLION, help="floor up to this size")
    parser.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="end-to-end runs of each size up to 100,000, the best one kept (larger: once)",
    )
    parser.add_argument("--stream-sizes", type=int, nargs="*", default=[STATE])
    parser.add_argument(
        "--stream-quick-from",
        type=int,
        default=MILLION,
        help="streamed sizes from this one up run --quick --no-gpkg (0: never)",
    )
    parser.add_argument("--dask-size", type=int, default=COUNTY)
    parser.add_argument("--peer-size", type=int, default=COUNTY)
    parser.add_argument("--peers", default="ours,duckdb,postgis")
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--child", nargs=3, metavar=("PEER", "LAYERS", "RESULT"))
    return parser


def main() -> None:
    """Run the pieces asked for, in order: end to end, streamed, dask, peers."""
    args = arguments().parse_args()
    if args.child:
        from bench_peers import child

        child(*args.child)
        return
    args.work.mkdir(parents=True, exist_ok=True)
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    print(f"machine: {os.cpu_count()} CPUs, {memory_gb:.1f} GB; python {sys.version.split()[0]}")
    if args.sizes:
        end_to_end(
            args.work,
            args.sizes,
            args.seed,
            args.workers,
            floor_max=args.floor_max,
            repeat=args.repeat,
        )
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
    if args.peer_size:
        from bench_peers import peers

        peers(args.work, args.peer_size, args.seed, args.peers.split(","))


if __name__ == "__main__":
    main()
