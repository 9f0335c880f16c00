"""The batch's full screen, siting included, against the bare vectorised floor.

    nice -n 5 .venv/bin/python benchmarks/bench_siting.py [--sizes 10000 100000]
        [--irregular-sizes 100000] [--work DIR] [--seed 1] [--repeat 1]

For each size, ``gis-sw sample --format parquet`` makes a town (kept in ``--work`` for the
next run), then three child processes run one after the other (each its own interpreter,
timed inside it, imports excluded):

1. ``floor``: the bare floor, as every benchmark defines it (``benchmarks/bench_floor.py``:
   read the eight layers, subdivide and index, screen without siting, adjacent area or
   unions, write; the sum of those stages, timed in the process, imports excluded).
2. ``batch``: ``gis-sw batch --no-map --no-gpkg`` (2 threads), its own stage times
   (read, screen, write) from the line it prints: everything, siting included.
3. ``parts``: the batch's screen on one thread, whole (``screen_layers``), quick
   (no siting, no adjacent area), siting alone
   (:func:`gis_sw.analysis.siting.siting_areas` on every chunk) and the wetland adjacent
   area alone (:func:`gis_sw.analysis.bands.band_inside` on every chunk), so the share of
   each is plain; and the one-thread screen's time inside GEOS calls alone (cProfile's own
   time of shapely's overlays, buffers, predicates and tree queries): the part no Python
   around GEOS can remove, half of it on each of 2 cores at best.

The generated towns' lots are rectangles along the axes of the CRS, and real parcels are
not: each of ``--irregular-sizes`` is run again on the town's copy with every parcel vertex
moved up to 3 ft (``benchmarks/irregular_town.py``), its rows' size marked "irregular lots".

Printed: each stage, and the ratios ``batch / floor`` (read + screen + write against read +
index + screen + write; the target is 2x) and siting's share of the screen.  Each town's
results are also printed as ``bench-row: {json}`` lines (the format ``benchmarks/report.py``
collects for ``make bench``): the batch against the floor with the 2x goal and whether it
is met, and the one-thread screen against the same without siting.  The machine
is shared: compare the ratios, measured in the same run, not the absolute times.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from irregular_town import make_irregular_town  # noqa: E402

BIN = Path(sys.executable).parent
TARGET_RATIO = 2.0


def make_town(work: Path, n: int, seed: int) -> Path:
    """Return the folder of a sample town of ``n`` parcels, made when missing."""
    town = work / f"town_{n}"
    if not (town / "layers.toml").exists():
        cmd = [str(BIN / "gis-sw"), "sample", "--out", str(town), "--parcels", str(n)]
        cmd += ["--seed", str(seed), "--format", "parquet", "--overwrite"]
        subprocess.run(cmd, check=True, capture_output=True)
    return town


def floor(town: Path, out: Path) -> dict[str, float]:
    """The bare floor's stage seconds: the one definition, benchmarks/bench_floor.py."""
    from bench_floor import floor as bare_floor

    return bare_floor(town, out)


def parts(town: Path) -> dict[str, float]:
    """Time the batch's screen whole, quick and its siting alone, one thread each."""
    from bench_floor import KINDS

    from gis_sw.batch.chunks import ChunkSource
    from gis_sw.batch.parcels import _adjacent, _geoms, _siting
    from gis_sw.batch.run import RunOptions, plan_for, screen_layers
    from gis_sw.layers.read import read_layers
    from gis_sw.ruleset import load_ruleset

    ruleset = load_ruleset()
    layers = read_layers(town / "layers.toml", ruleset=ruleset)
    times: dict[str, float] = {}
    for name, quick in (("screen_1_thread", False), ("quick_1_thread", True)):
        started = time.perf_counter()
        screen_layers(layers, ruleset, options=RunOptions(workers=1, quick=quick))
        times[name] = time.perf_counter() - started
    times["geos_1_thread"] = _geos_seconds(
        lambda: screen_layers(layers, ruleset, options=RunOptions(workers=1))
    )
    prepared, plan = plan_for(layers, ruleset, chunk_size=5000)
    context = {kind: layers.get(kind) for kind in KINDS if kind != "parcels"}
    source = ChunkSource(prepared.parcels, context, plan)
    times["siting_1_thread"] = times["band_1_thread"] = 0.0
    for chunk in source:
        started = time.perf_counter()
        _adjacent(_geoms(chunk.parcels), chunk.context.get("wetlands"), ruleset, [])
        times["band_1_thread"] += time.perf_counter() - started
        started = time.perf_counter()
        _siting(chunk, ruleset)  # siting_areas on the chunk, as the batch calls it
        times["siting_1_thread"] += time.perf_counter() - started
    return times


GEOS_MODULES = ("set_operations", "constructive", "predicates", "measurement")
"""shapely's modules whose functions are one GEOS call over an array each."""


def _geos_seconds(run: Callable[[], object]) -> float:
    """Return the seconds ``run`` spends inside shapely's GEOS calls (cProfile, one thread).

    The own time of shapely's overlay, buffer, predicate and measurement functions and of
    the STRtree's queries: GEOS's work, which no Python around it can remove.  A lower
    bound: ufuncs called straight from ``shapely.lib`` (the rectangle clips) are not
    profiled, so not counted.
    """
    profile = cProfile.Profile()
    profile.runcall(run)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    total = 0.0
    for (filename, _line, name), (_cc, _nc, own, _cum, _callers) in stats.items():
        in_module = "shapely" in filename and any(m in filename for m in GEOS_MODULES)
        if in_module or "shapely.lib.STRtree" in name:
            total += own
    return float(total)


STAGES = re.compile(r"read ([\d.]+) s, screen ([\d.]+) s(?:, [a-z]+ [\d.]+ s)*?, write ([\d.]+) s")


def batch(town: Path, out: Path) -> dict[str, float]:
    """Run ``gis-sw batch --no-map --no-gpkg``; return its wall time and stage times."""
    cmd = [str(BIN / "gis-sw"), "batch", "--layers", str(town / "layers.toml"), "--out"]
    cmd += [str(out), "--overwrite", "--no-map", "--no-gpkg", "--workers", "2"]
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    found = STAGES.search(done.stderr + done.stdout)
    if found is None:
        return {"wall": wall}
    read, screen, write = (float(v) for v in found.groups())
    return {"wall": wall, "read": read, "screen": screen, "write": write}


def child(kind: str, town: Path, out: Path) -> dict[str, float]:
    """Run one measurement in a fresh interpreter; return what it printed."""
    cmd = [sys.executable, __file__, "--child", kind, str(town), str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{kind} failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def report(n: int, low: dict[str, float], ours: dict[str, float], split: dict[str, float]) -> None:
    """Print one town's stages and ratios."""
    floor_total = low["read"] + low["index"] + low["screen"] + low["write"]
    print(
        f"{n:>9,} floor {floor_total:6.2f} s (read {low['read']:.2f}, index "
        f"{low['index']:.2f}, screen {low['screen']:.2f}, write {low['write']:.2f})"
    )
    if "screen" in ours:
        total = ours["read"] + ours["screen"] + ours["write"]
        print(
            f"{'':>9} batch {total:6.2f} s (read {ours['read']:.2f}, screen "
            f"{ours['screen']:.2f}, write {ours['write']:.2f}; wall {ours['wall']:.2f} s)"
        )
        ratio = total / floor_total
        verdict = "within" if ratio <= TARGET_RATIO else "OVER"
        print(f"{'':>9} batch / floor = {ratio:.2f}x ({verdict} the {TARGET_RATIO:g}x target)")
    else:
        print(f"{'':>9} batch wall {ours['wall']:.2f} s (no stage line found)")
    whole = split["screen_1_thread"]
    print(
        f"{'':>9} one thread: screen {whole:.2f} s, quick {split['quick_1_thread']:.2f} s, "
        f"siting {split['siting_1_thread']:.2f} s = {split['siting_1_thread'] / whole:.0%} "
        f"of the screen, adjacent area {split['band_1_thread']:.2f} s = "
        f"{split['band_1_thread'] / whole:.0%}; GEOS calls alone "
        f"{split.get('geos_1_thread', float('nan')):.2f} s",
        flush=True,
    )


def rows(
    n: int,
    low: dict[str, float],
    ours: dict[str, float],
    split: dict[str, float],
    *,
    irregular: bool = False,
) -> list[dict]:
    """Return one town's ``bench-row`` rows (see benchmarks/report.py), with the 2x goal.

    Parameters
    ----------
    n
        The town's parcel count.
    low, ours, split
        The stage seconds of :func:`floor`, :func:`batch` and :func:`parts`.
    irregular
        The town is the irregular-lot copy (benchmarks/irregular_town.py).
    """
    floor_total = low["read"] + low["index"] + low["screen"] + low["write"]
    floor_note = ", ".join(f"{k} {low[k]:.2f} s" for k in ("read", "index", "screen", "write"))
    size = f"{n:,} parcels" + (", irregular lots" if irregular else "")
    goal = f"<= {TARGET_RATIO:g}x the bare floor"
    if "screen" in ours:
        total = ours["read"] + ours["screen"] + ours["write"]
        stages = ", ".join(f"{k} {ours[k]:.1f} s" for k in ("read", "screen", "write"))
        met: bool | None = total <= TARGET_RATIO * floor_total
        note = f"{stages} (wall {ours['wall']:.2f} s); floor: {floor_note}"
    else:
        total, met = ours["wall"], None
        note = f"no stage line found: wall time, imports included; floor: {floor_note}"
    whole, siting, band = (
        split[k] for k in ("screen_1_thread", "siting_1_thread", "band_1_thread")
    )
    geos = split.get("geos_1_thread")
    geos_note = (
        ""
        if geos is None
        else f"; GEOS calls alone (overlays, buffers, predicates, tree queries; cProfile, a "
        f"lower bound) {geos:.2f} s, {geos / 2:.2f} s if split perfectly over 2 cores"
    )
    return [
        {
            "table": "batch screen vs the bare floor",
            "what": "gis-sw batch --no-map --no-gpkg, siting included (read + screen + write)",
            "size": size,
            "seconds": total,
            "against": "bare floor (read + index + screen + write)",
            "against_seconds": floor_total,
            "goal": goal,
            "met": met,
            "note": note,
        },
        {
            "table": "batch screen vs the bare floor",
            "what": "screen_layers, one thread, whole",
            "size": size,
            "seconds": whole,
            "against": "the same --quick (no siting)",
            "against_seconds": split["quick_1_thread"],
            "note": f"siting alone {siting:.2f} s = {siting / whole:.0%} of the screen, "
            f"wetland adjacent area alone {band:.2f} s = {band / whole:.0%}{geos_note}",
        },
    ]


def main() -> None:
    """Parse the options and run every size, one measurement at a time."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--irregular-sizes",
        type=int,
        nargs="*",
        default=[100_000],
        help="also run these sizes on the town's irregular-lot copy (irregular_town.py)",
    )
    parser.add_argument("--child", nargs=3, metavar=("KIND", "TOWN", "OUT"))
    args = parser.parse_args()
    if args.child:
        kind, town, out = args.child
        runs = {"floor": floor, "parts": lambda t, _o: parts(t)}
        print(json.dumps(runs[kind](Path(town), Path(out))))
        return
    args.work.mkdir(parents=True, exist_ok=True)
    load = Path("/proc/loadavg").read_text(encoding="ascii").split()[:3]
    print(f"load average {' '.join(load)}; ratios compare runs made one after the other")
    runs = [(n, False) for n in args.sizes] + [(n, True) for n in args.irregular_sizes]
    for n, irregular in runs:
        town = make_town(args.work, n, args.seed)
        if irregular:  # the generated lots are axis-aligned rectangles; real ones are not
            town = make_irregular_town(town, args.work / f"town_{n}_irregular").parent
        tag = f"{n}_irregular" if irregular else f"{n}"
        for _ in range(args.repeat):
            low = child("floor", town, args.work / f"floor_{tag}.parquet")
            ours = batch(town, args.work / f"siting_batch_{tag}")
            split = child("parts", town, args.work)
            report(n, low, ours, split)
            for row in rows(n, low, ours, split, irregular=irregular):
                print("bench-row: " + json.dumps({"bench": "siting", **row}), flush=True)


if __name__ == "__main__":
    main()
