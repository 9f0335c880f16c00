"""Time ``gis-sw check`` of one small addition, cold and warm, against issue 16's goals.

    .venv/bin/python benchmarks/bench_check.py [--parcels 100000] [--runs 3] [--work DIR]

Measured, each the best of ``--runs`` (child processes, so every run starts cold):

* ``bare import``: ``python -c "import geopandas, shapely, pyogrio"``, the floor any
  command that reads a layer pays;
* ``check, sample``: ``gis-sw check ADDITION --layers data/sample/layers.toml --map none``,
  one 10 x 12 ft addition on the lot nearest the middle of the 323-parcel sample;
* ``check, N parcels``: the same on a town of ``--parcels`` parcels made by ``gis-sw sample``
  (kept in ``--work`` for the next run);
* ``warm re-check``: in this process, :func:`gis_sw.read_town` of the big town whole
  (layers loaded once, as ``gis-sw serve`` does), then :meth:`gis_sw.Town.screen` of the
  addition (``siting=False``, as the live app re-checks), the median of ``--runs`` x 5.

Each is printed with its goal and the ratio to it (at or under 1.00 meets it).  The times
are wall times on a shared machine: compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "data" / "sample" / "layers.toml"
CRS = "EPSG:2260"


def _best_of(runs: int, command: list[str]) -> float:
    """Return the shortest wall time of ``runs`` runs of ``command`` (it must succeed)."""
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
    return best


def _addition(layers: Path, out: Path) -> Path:
    """Write one 10 x 12 ft addition on the lot nearest the middle of the town."""
    import geopandas as gpd
    import numpy as np
    import shapely

    import gis_sw

    town = gis_sw.read_town(layers)
    parcels = town.layers.vectors["parcels"]
    centre = shapely.box(*town.bounds).centroid
    lot = parcels.geometry.iloc[int(np.argmin(parcels.distance(centre)))]
    point = lot.representative_point()
    box = shapely.box(point.x - 5, point.y - 6, point.x + 5, point.y + 6)
    frame = gpd.GeoDataFrame({"proposal_id": ["ADDITION"]}, geometry=[box], crs=CRS)
    frame.to_file(out, layer="disturbance")
    return out


def _town(parcels: int, work: Path) -> Path:
    """Return the layers manifest of a sample town of ``parcels`` parcels (made once)."""
    folder = work / f"town{parcels}"
    if not (folder / "layers.toml").is_file():
        subprocess.run(
            [str(BIN / "gis-sw"), "sample", "--parcels", str(parcels), "--out", str(folder)],
            check=True,
        )
    return folder / "layers.toml"


def _warm(layers: Path, addition: Path, repeats: int) -> float:
    """Return the median time of one re-check of the addition in a town loaded once."""
    import gis_sw

    town = gis_sw.read_town(layers)
    proposals = gis_sw.read_proposals(addition, ruleset=town.ruleset)
    town.screen(proposals, siting=False)  # first call builds the caches
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        town.screen(proposals, siting=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _row(what: str, seconds: float, goal: str, ratio: float) -> str:
    verdict = "meets" if ratio <= 1.0 else "misses"
    return f"| {what} | {seconds:.3f} s | {goal} | {ratio:.2f} ({verdict}) |"


def main() -> None:
    """Run the timings and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--parcels", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "gis_sw_bench")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    big = _town(args.parcels, args.work)
    small_add = _addition(SAMPLE, args.work / "addition_sample.gpkg")
    big_add = _addition(big, args.work / f"addition_{args.parcels}.gpkg")
    check = [str(BIN / "gis-sw"), "check", "--map", "none", "--fail-on", "never"]
    bare = _best_of(args.runs, [sys.executable, "-c", "import geopandas, shapely, pyogrio"])
    sample = _best_of(args.runs, [*check, str(small_add), "--layers", str(SAMPLE)])
    town = _best_of(args.runs, [*check, str(big_add), "--layers", str(big)])
    warm = _warm(big, big_add, args.runs * 5)
    n = f"{args.parcels:,}"
    print("| what | time | goal | ratio to goal |")
    print("|---|---|---|---|")
    print(f"| bare `import geopandas, shapely, pyogrio` | {bare:.3f} s | (the floor) | |")
    print(
        _row(
            "check, 323-parcel sample, --map none", sample, "<= 2x bare import", sample / (2 * bare)
        )
    )
    print(_row(f"check, {n}-parcel town, --map none", town, "<= 1 s", town / 1.0))
    print(
        _row(f"check, {n} parcels vs the sample", town, "<= 1.5x the sample", town / (1.5 * sample))
    )
    print(_row(f"warm re-check, {n}-parcel town loaded once", warm, "<= 0.050 s", warm / 0.050))


if __name__ == "__main__":
    main()
