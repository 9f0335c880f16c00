"""A quick synthetic town of any size, for batch tests and benchmarks.

Parcels are a jittered grid (neighbours share their vertices, like a parcel fabric);
zoning is made of bands that cut across parcels; wetlands are overlapping blobs, water
bodies ponds, the floodplain a band along a stream; wells, septic fields and buildings sit
on parcels.  Everything is vectorised, so a million parcels take seconds.  The project's
own sample generator (``gis-sw sample``) makes richer towns; this one only needs numpy.
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.layers.build import make_layerset
from gis_sw.layers.layerset import LayerSet

CRS = "EPSG:2260"
PARCEL_W_FT, PARCEL_H_FT = 100.0, 150.0
ORIGIN = (600_000.0, 800_000.0)


def synthetic_frames(n_parcels: int, *, seed: int = 0) -> dict[str, gpd.GeoDataFrame]:
    """Frames of a town of about ``n_parcels`` parcels (``cols * rows >= n_parcels``)."""
    rng = np.random.default_rng(seed)
    cols = int(np.ceil(np.sqrt(n_parcels * PARCEL_H_FT / PARCEL_W_FT)))
    rows = int(np.ceil(n_parcels / cols))
    gx = ORIGIN[0] + np.arange(cols + 1) * PARCEL_W_FT
    gy = ORIGIN[1] + np.arange(rows + 1) * PARCEL_H_FT
    xx, yy = np.meshgrid(gx, gy)
    jitter = rng.uniform(-12, 12, size=(2, *xx.shape))
    jitter[:, [0, -1], :] = 0
    jitter[:, :, [0, -1]] = 0
    xx, yy = xx + jitter[0], yy + jitter[1]
    r, c = np.divmod(np.arange(n_parcels), cols)
    ring = np.stack(
        [
            np.stack([xx[r, c], yy[r, c]], axis=-1),
            np.stack([xx[r, c + 1], yy[r, c + 1]], axis=-1),
            np.stack([xx[r + 1, c + 1], yy[r + 1, c + 1]], axis=-1),
            np.stack([xx[r + 1, c], yy[r + 1, c]], axis=-1),
        ],
        axis=1,
    )
    parcels = shapely.polygons(ring)
    width, height = cols * PARCEL_W_FT, rows * PARCEL_H_FT
    x0, y0 = ORIGIN
    # zoning: vertical bands of irregular width, with one diagonal cut
    n_bands = max(2, cols // 7)
    edges = np.sort(rng.uniform(x0, x0 + width, n_bands - 1))
    edges = np.r_[x0 - 500, edges, x0 + width + 500]
    names = np.array(["R-10", "R-20", "R-40", "B-1", "OB"])
    zones = [
        shapely.box(edges[i], y0 - 500, edges[i + 1], y0 + height + 500) for i in range(n_bands)
    ]
    zone_names = [names[i % len(names)] for i in range(n_bands)]
    # wetlands: blobs, some overlapping each other
    n_wet = max(3, n_parcels // 40)
    centres = shapely.points(
        rng.uniform(x0, x0 + width, n_wet), rng.uniform(y0, y0 + height, n_wet)
    )
    wetlands = shapely.buffer(centres, rng.uniform(20, 120, n_wet), quad_segs=6)
    n_ponds = max(2, n_parcels // 150)
    ponds = shapely.buffer(
        shapely.points(rng.uniform(x0, x0 + width, n_ponds), rng.uniform(y0, y0 + height, n_ponds)),
        rng.uniform(15, 60, n_ponds),
        quad_segs=4,
    )
    stream_y = y0 + height * rng.uniform(0.3, 0.7)
    xs = np.linspace(x0 - 100, x0 + width + 100, max(3, cols))
    stream = shapely.linestrings(xs, stream_y + 80 * np.sin(xs / 700.0))
    flood = shapely.buffer(stream, 140.0, quad_segs=4)
    n_wells = max(3, n_parcels // 8)
    wells = shapely.points(
        rng.uniform(x0, x0 + width, n_wells), rng.uniform(y0, y0 + height, n_wells)
    )
    cx, cy = shapely.get_coordinates(shapely.centroid(parcels)).T
    has_septic = rng.random(n_parcels) < 0.4
    sx = cx[has_septic] + rng.uniform(-25, 25, has_septic.sum())
    sy = cy[has_septic] - 40
    septic = shapely.box(sx - 15, sy - 10, sx + 15, sy + 10)
    bx = cx + rng.uniform(-10, 10, n_parcels)
    by = cy + 25
    buildings = shapely.box(bx - 20, by - 15, bx + 20, by + 15)
    basement = rng.random(n_parcels) < 0.6
    ids = pd.Series([f"P{i:07d}" for i in range(n_parcels)], dtype=object)
    return {
        "parcels": gpd.GeoDataFrame({"parcel_id": ids}, geometry=parcels, crs=CRS),
        "zoning": gpd.GeoDataFrame({"zone": zone_names}, geometry=zones, crs=CRS),
        "wetlands": gpd.GeoDataFrame(
            {"wetland_id": [f"W{i}" for i in range(n_wet)]}, geometry=wetlands, crs=CRS
        ),
        "water_bodies": gpd.GeoDataFrame(
            {"water_id": [f"H{i}" for i in range(n_ponds)]}, geometry=ponds, crs=CRS
        ),
        "floodplain": gpd.GeoDataFrame({"flood_zone": ["AE"]}, geometry=[flood], crs=CRS),
        "wells": gpd.GeoDataFrame(
            {"well_id": [f"WL{i}" for i in range(n_wells)]}, geometry=wells, crs=CRS
        ),
        "septic_fields": gpd.GeoDataFrame(
            {"septic_id": [f"S{i}" for i in range(len(septic))]}, geometry=septic, crs=CRS
        ),
        "buildings": gpd.GeoDataFrame(
            {
                "building_id": [f"B{i}" for i in range(n_parcels)],
                "habitable_basement": basement,
                # recorded without a below-ground storage area (SW206 needs both answers)
                "below_ground_storage": np.zeros(n_parcels, dtype=bool),
            },
            geometry=buildings,
            crs=CRS,
        ),
    }


def synthetic_town(n_parcels: int, *, seed: int = 0) -> LayerSet:
    """Return a :class:`LayerSet` of :func:`synthetic_frames`."""
    return make_layerset(CRS, synthetic_frames(n_parcels, seed=seed), source="<synthetic>")


def write_synthetic_town(folder: Path, n_parcels: int, *, seed: int = 0) -> Path:
    """Write :func:`synthetic_frames` as GeoParquet files and a layers manifest in ``folder``.

    Returns the manifest's path (``folder/layers.toml``), as ``gis-sw sample`` lays a town
    out: one file a layer, named for its kind.
    """
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[manifest]", 'name = "generated"', f'crs = "{CRS}"', ""]
    for kind, frame in synthetic_frames(n_parcels, seed=seed).items():
        frame.to_parquet(folder / f"{kind}.parquet")
        lines += [f"[{kind}]", f'path = "{kind}.parquet"', ""]
    manifest = folder / "layers.toml"
    manifest.write_text("\n".join(lines), encoding="utf-8")
    return manifest
