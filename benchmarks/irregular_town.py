"""A copy of a generated town whose lots are not axis-aligned rectangles, for benchmarks.

    .venv/bin/python benchmarks/irregular_town.py TOWN_DIR OUT_DIR [--offset-ft 3]

``gis-sw sample`` lays its lots out as rectangles on the axes of the working CRS; real
parcels are not.  Some of the screen's fast paths are exact shortcuts for axis-aligned
rectangles, so a benchmark on the generated town alone would say nothing about a real
town.  This copy moves every parcel vertex by up to ``--offset-ft`` in x and in y, by an
amount that depends only on the vertex's own coordinates (a vertex shared by two lots moves
the same way in both, so neighbours stay neighbours), and links every other file of the
town as it is.  The lots become irregular quadrilaterals of the same size, and the wells,
buildings, wetlands and rasters stay where they were.  The figures of the copy differ from
the original's, so a benchmark compares only the time of the two.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import geopandas as gpd
import numpy as np
import shapely


def _offsets(xy: np.ndarray, offset_ft: float) -> np.ndarray:
    """Return a pseudo-random offset in [-offset_ft, offset_ft] per vertex, from its coordinates."""
    key = np.round(xy, 3)
    seed = np.sin(key[:, 0] * 12.9898 + key[:, 1] * 78.233) * 43758.5453
    u = seed - np.floor(seed)
    v = (seed * 7.13) - np.floor(seed * 7.13)
    return np.column_stack([u, v]) * (2.0 * offset_ft) - offset_ft


def irregular_parcels(parcels: gpd.GeoDataFrame, offset_ft: float) -> gpd.GeoDataFrame:
    """Return ``parcels`` with every vertex moved by :func:`_offsets` (null geometries kept)."""
    out = parcels.copy()
    geoms = out.geometry.to_numpy()
    present = ~shapely.is_missing(geoms)
    moved = shapely.transform(geoms[present], lambda xy: xy + _offsets(xy, offset_ft))
    geoms = geoms.copy()
    geoms[present] = shapely.make_valid(moved)
    out[out.geometry.name] = gpd.GeoSeries(geoms, crs=parcels.crs, index=parcels.index)
    return out


def make_irregular_town(town: Path, out: Path, offset_ft: float = 3.0) -> Path:
    """Write the copy of ``town`` into ``out`` (made when missing); return its layers.toml."""
    manifest = out / "layers.toml"
    if manifest.exists():
        return manifest
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for path in town.iterdir():
        if path.name == "parcels.parquet":
            frame = gpd.read_parquet(path)
            irregular_parcels(frame, offset_ft).to_parquet(tmp / path.name)
        elif path.name == "layers.toml":
            shutil.copyfile(path, tmp / path.name)
        else:
            (tmp / path.name).symlink_to(path.resolve())
    tmp.rename(out)
    return manifest


def main() -> None:
    """Make the copy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("town", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--offset-ft", type=float, default=3.0)
    args = parser.parse_args()
    print(make_irregular_town(args.town, args.out, args.offset_ft))


if __name__ == "__main__":
    main()
