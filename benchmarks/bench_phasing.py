"""Time the SW301 sweep against a naive ``union_all`` at every event.

    .venv/bin/python benchmarks/bench_phasing.py [N ...]

For each plan size N: N lots on a grid (35% shifted to overlap a neighbour), random start
dates over two years, 10 to 120 days open.  Prints the time of the whole timeline by the
sweep (:class:`gis_sw.analysis.phasing.DisturbanceSweep`), by the naive reference
(:func:`gis_sw.analysis.phasing.naive_timeline`, skipped above 2,000 polygons), the number of
unions the sweep computed, and checks both give the same areas.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import shapely

from gis_sw.analysis.phasing import DisturbanceSweep, naive_timeline, to_day_numbers


def plan(n: int, seed: int = 183) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cols = max(10, int(np.sqrt(n)))
    x = (np.arange(n) % cols) * 300.0
    y = (np.arange(n) // cols) * 300.0
    shift = np.where(rng.random(n) < 0.35, 150.0, 0.0)
    sizes = rng.uniform(150, 250, n)
    geoms = shapely.box(x + shift, y, x + shift + sizes, y + sizes)
    start = rng.integers(0, 700, n)
    end = start + rng.integers(10, 120, n)
    base = np.datetime64("2026-01-01", "D")
    return geoms, base + start, base + end


def main(sizes: list[int]) -> None:
    print(f"{'polygons':>9} {'events':>7} {'sweep s':>8} {'unions':>7} {'naive s':>8} {'ratio':>6}")
    for n in sizes:
        geoms, start, end = plan(n)
        t0 = time.perf_counter()
        sweep = DisturbanceSweep(geoms, to_day_numbers(start), to_day_numbers(end))
        fast = sweep.timeline()
        peak = sweep.peak()
        t1 = time.perf_counter()
        naive_s, ratio = "-", "-"
        if n <= 2000:
            slow = naive_timeline(geoms, start, end)
            t2 = time.perf_counter()
            if fast.days != slow.days or not np.allclose(fast.area_sqft, slow.area_sqft, atol=1e-3):
                raise SystemExit(f"sweep and naive disagree for {n} polygons")
            naive_s, ratio = f"{t2 - t1:.3f}", f"{(t2 - t1) / (t1 - t0):.1f}x"
        assert peak is not None
        print(
            f"{n:>9} {len(fast.days):>7} {t1 - t0:>8.3f} {sweep.unions_computed:>7} "
            f"{naive_s:>8} {ratio:>6}"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [300, 1000, 2000, 10000])
