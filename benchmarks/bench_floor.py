"""The bare vectorised floor of a townwide screening: what GEOS alone costs.

    .venv/bin/python benchmarks/bench_floor.py LAYERS_DIR [--out DIR]

Reads the town's GeoParquet layers with ``geopandas.read_parquet`` (no validation), cuts
big polygons into pieces of at most 256 vertices (``gis_sw.batch.chunks.subdivide``, as
``ST_Subdivide`` would), builds one STRtree per layer, and computes, for every parcel, the
area in each zone, the wetland, water body and floodplain areas (overlaps counted twice: no
union, it is a floor), and the
wells and septic fields within 50 ft (``dwithin``); then writes the figures to one
GeoParquet.  No siting, no chunking, no resume, no checks: the least any implementation of
the batch can take on this machine.  Prints ``bench-row:`` lines (see
:mod:`benchmarks.report`) with the time of each stage.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.batch.chunks import subdivide

NEAR_FT = 50.0
AREAS = {
    "wetland_sqft": "wetlands",
    "water_body_sqft": "water_bodies",
    "floodplain_sqft": "floodplain",
}
COUNTS = {"wells_near": "wells", "septic_fields_near": "septic_fields"}


def floor(layers_dir: Path, out: Path) -> dict[str, float]:
    """Run the floor on a town; return seconds per stage (read, screen, write)."""
    stages: dict[str, float] = {}
    tick = time.perf_counter()
    kinds = ["parcels", "zoning", *AREAS.values(), *COUNTS.values()]
    frames = {k: gpd.read_parquet(layers_dir / f"{k}.parquet") for k in kinds}
    stages["read"] = time.perf_counter() - tick
    tick = time.perf_counter()
    for kind in ("zoning", *AREAS.values()):
        # without it GEOS pays every vertex of a town-long polygon in each intersection
        frames[kind] = subdivide(frames[kind])
    stages["subdivide"] = time.perf_counter() - tick
    tick = time.perf_counter()
    parcels = np.asarray(frames["parcels"].geometry.to_numpy(), dtype=object)
    n = len(parcels)
    out_frame = pd.DataFrame({"row": np.arange(n)})
    zoning = frames["zoning"]
    tree = shapely.STRtree(zoning.geometry.to_numpy())
    p, z = tree.query(parcels, predicate="intersects")
    area = shapely.area(shapely.intersection(parcels[p], zoning.geometry.to_numpy()[z]))
    pieces = pd.DataFrame({"row": p, "zone": zoning["zone"].to_numpy()[z], "area": area})
    out_frame["zone_main"] = (
        pieces.sort_values(["row", "area"], ascending=[True, False])
        .drop_duplicates("row")
        .set_index("row")["zone"]
        .reindex(range(n))
        .to_numpy()
    )
    for column, kind in AREAS.items():
        geoms = frames[kind].geometry.to_numpy()
        p, f = shapely.STRtree(geoms).query(parcels, predicate="intersects")
        a = shapely.area(shapely.intersection(parcels[p], geoms[f]))
        out_frame[column] = np.bincount(p, weights=a, minlength=n)
    for column, kind in COUNTS.items():
        geoms = frames[kind].geometry.to_numpy()
        p, _ = shapely.STRtree(geoms).query(parcels, predicate="dwithin", distance=NEAR_FT)
        out_frame[column] = np.bincount(p, minlength=n)
    stages["screen"] = time.perf_counter() - tick
    tick = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    gpd.GeoDataFrame(
        out_frame, geometry=frames["parcels"].geometry.to_numpy(), crs=frames["parcels"].crs
    ).to_parquet(out / "floor.parquet")
    stages["write"] = time.perf_counter() - tick
    return stages


def main() -> None:
    """Run the floor and print its ``bench-row:`` line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("layers_dir", type=Path)
    parser.add_argument("--out", type=Path, default=Path("out/bench/floor"))
    args = parser.parse_args()
    started = time.perf_counter()
    stages = floor(args.layers_dir, args.out)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("bench-row: " + json.dumps({"seconds": seconds, "peak_mb": peak, "stages": stages}))


if __name__ == "__main__":
    main()
