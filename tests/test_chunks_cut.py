"""Cutting big polygons on threads gives the very pieces of the serial cut.

:func:`gis_sw.batch.chunks.subdivide` shares each level's intersections out over a thread
pool; the pieces must be the same geometries (WKB equal), in the same order, with the same
attributes, or the areas summed over them would move in their last bits.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import geopandas as gpd
import numpy as np
import shapely

from gis_sw.batch.chunks import ChunkSource, halo_ft, plan_chunks, subdivide
from gis_sw.batch.run import _context
from gis_sw.batch.synthetic import synthetic_town
from gis_sw.ruleset import Ruleset


def _ribbons() -> gpd.GeoDataFrame:
    """A stream-like ribbon of ~4,000 vertices, a small pond and a big blob with a hole."""
    x = np.linspace(0, 20_000, 2000)
    line = shapely.LineString(np.column_stack([x, 300 * np.sin(x / 900)]))
    ribbon = shapely.buffer(line, 40, quad_segs=4)
    blob = shapely.Polygon(
        shapely.buffer(shapely.Point(5000, 3000), 2500, quad_segs=400).exterior,
        [shapely.buffer(shapely.Point(5000, 3000), 500, quad_segs=20).exterior.coords],
    )
    pond = shapely.box(100, 100, 200, 180)
    return gpd.GeoDataFrame(
        {"water_id": ["S1", "P1", "B1"]}, geometry=[ribbon, pond, blob], crs="EPSG:2260"
    )


def test_threaded_cut_gives_the_serial_pieces() -> None:
    frame = _ribbons()
    assert shapely.get_num_coordinates(frame.geometry.to_numpy()).min() <= 256
    serial = subdivide(frame, max_vertices=64)
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = subdivide(frame, max_vertices=64, pool=pool, workers=2)
        three = subdivide(frame, max_vertices=64, pool=pool, workers=3)
    assert len(serial) > 100
    for other in (threaded, three):
        assert other["water_id"].tolist() == serial["water_id"].tolist()
        assert (
            shapely.to_wkb(other.geometry.to_numpy()).tolist()
            == shapely.to_wkb(serial.geometry.to_numpy()).tolist()
        )
    assert shapely.get_num_coordinates(serial.geometry.to_numpy()).max() <= 64
    # the pieces tile each original: same area to 1e-6 sq ft
    for wid, geom in zip(frame["water_id"], frame.geometry, strict=True):
        pieces = serial.geometry[serial["water_id"] == wid].to_numpy()
        assert abs(shapely.area(pieces).sum() - geom.area) < 1e-6
    assert (serial["water_id"] == "P1").sum() == 1  # the small pond is not cut


def test_chunk_source_on_threads_equals_serial(ruleset: Ruleset) -> None:
    layers = synthetic_town(400, seed=9)
    parcels = layers.get("parcels")
    assert parcels is not None
    plan = plan_chunks(parcels.geometry, chunk_size=100, halo_ft=halo_ft(ruleset))
    context = _context(layers)
    context["water_bodies"] = _ribbons()
    one = ChunkSource(parcels, context, plan)
    two = ChunkSource(parcels, context, plan, workers=2)
    assert one.present == two.present
    for kind in one.present:
        a, b = one._layers[kind], two._layers[kind]
        assert a.drop(columns="geometry").equals(b.drop(columns="geometry"))
        assert (
            shapely.to_wkb(a.geometry.to_numpy()).tolist()
            == shapely.to_wkb(b.geometry.to_numpy()).tolist()
        )
    assert len(one._layers["water_bodies"]) > 3
    for chunk_id in range(plan.n_chunks):
        x, y = one.chunk(chunk_id), two.chunk(chunk_id)
        for kind in one.present:
            assert x.context[kind].index.equals(y.context[kind].index)
