"""The bare vectorised floor of a townwide screening: what GEOS alone costs.

    .venv/bin/python benchmarks/bench_floor.py LAYERS_DIR [--out FILE]

The one definition of "the bare floor" every benchmark compares with (``bench_batch.py``
and ``bench_siting.py`` both call :func:`run_floor`, which runs this script in a child
process): the eight vector layers the batch reads, read with ``geopandas.read_parquet`` (no
validation); polygons of more than 256 vertices cut into pieces
(``gis_sw.batch.chunks.subdivide``, as ``ST_Subdivide`` would) and one STRtree per layer
built (``index``); for every parcel the area in each zone, the wetland, water body and
floodplain areas (overlaps counted twice: no union, it is a floor), and the wells, septic
fields and buildings within 50 ft (``dwithin``) (``screen``); the figures written to one
GeoParquet (``write``).  No siting, no adjacent area, no chunking, no resume, no checks: the
least any implementation of the batch can take on this machine.

The floor's time is the **sum of those four stages, timed inside the process, imports
excluded** (about 1 s of importing geopandas and shapely is not counted).  Prints one
``bench-row:`` line (see :mod:`benchmarks.report`) with ``seconds`` (that sum), the stages
and the process's peak memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gis_sw.batch.chunks import CONTEXT_KINDS

KINDS = ("parcels", *CONTEXT_KINDS)
"""The vector layers the batch reads."""

NEAR_FT = 50.0
AREA_KINDS = ("wetlands", "water_bodies", "floodplain")
COUNT_KINDS = ("wells", "septic_fields", "buildings")
STAGES = ("read", "index", "screen", "write")


def floor(town: Path, out: Path) -> dict[str, float]:
    """Read, index, screen and write a town the bare vectorised way; seconds per stage."""
    import geopandas as gpd
    import numpy as np
    import pandas as pd
    import shapely

    from gis_sw.batch.chunks import subdivide

    times: dict[str, float] = {}
    started = time.perf_counter()
    frames = {kind: gpd.read_parquet(town / f"{kind}.parquet") for kind in KINDS}
    times["read"] = time.perf_counter() - started
    started = time.perf_counter()
    for kind in ("zoning", *AREA_KINDS):
        # without it GEOS pays every vertex of a town-long polygon in each intersection
        frames[kind] = subdivide(frames[kind])
    geoms = {kind: np.asarray(frame.geometry.to_numpy()) for kind, frame in frames.items()}
    trees = {kind: shapely.STRtree(g) for kind, g in geoms.items() if kind != "parcels"}
    for tree in trees.values():
        tree.query(shapely.box(0, 0, 0, 0))  # STRtree builds lazily: build it here
    times["index"] = time.perf_counter() - started
    started = time.perf_counter()
    parcels = geoms["parcels"]
    n = len(parcels)
    figures = pd.DataFrame({"parcel_id": frames["parcels"]["parcel_id"].to_numpy()})
    lot, zone = trees["zoning"].query(parcels, predicate="intersects")
    pieces = pd.DataFrame({"lot": lot, "zone": frames["zoning"]["zone"].to_numpy()[zone]})
    pieces["area"] = shapely.area(shapely.intersection(parcels[lot], geoms["zoning"][zone]))
    main = pieces.sort_values("area", ascending=False).drop_duplicates("lot")
    figures["zone_main"] = main.set_index("lot")["zone"].reindex(range(n)).to_numpy()
    for kind in AREA_KINDS:
        lot, hit = trees[kind].query(parcels, predicate="intersects")
        areas = shapely.area(shapely.intersection(parcels[lot], geoms[kind][hit]))
        figures[f"{kind}_sqft"] = np.bincount(lot, weights=areas, minlength=n)
    for kind in COUNT_KINDS:
        lot, _ = trees[kind].query(parcels, predicate="dwithin", distance=NEAR_FT)
        figures[f"{kind}_near"] = np.bincount(lot, minlength=n)
    times["screen"] = time.perf_counter() - started
    started = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    gpd.GeoDataFrame(figures, geometry=frames["parcels"].geometry).to_parquet(out)
    times["write"] = time.perf_counter() - started
    return times


def run_floor(town: Path, out: Path) -> dict[str, Any]:
    """Run the floor in a child process; return its row (``seconds``, ``stages``, ``peak_mb``).

    Raises
    ------
    RuntimeError
        When the child fails (its stderr's end in the message).
    """
    cmd = [sys.executable, str(Path(__file__).resolve()), str(town), "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    line = next(t for t in done.stdout.splitlines() if t.startswith("bench-row: "))
    row: dict[str, Any] = json.loads(line.split(": ", 1)[1])
    return row


def stage_note(stages: dict[str, float]) -> str:
    """The floor's stages as text ("read 0.30 s, index 0.51 s, ...")."""
    return ", ".join(f"{k} {stages[k]:.2f} s" for k in STAGES if k in stages)


def main() -> None:
    """Run the floor and print its ``bench-row:`` line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("layers_dir", type=Path)
    parser.add_argument("--out", type=Path, default=Path("out/bench/floor.parquet"))
    args = parser.parse_args()
    stages = floor(args.layers_dir, args.out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row = {"seconds": sum(stages[k] for k in STAGES), "peak_mb": peak, "stages": stages}
    print("bench-row: " + json.dumps(row))


if __name__ == "__main__":
    main()
