"""Each chunk owns its geometries: GEOS copies, never the whole layer's objects.

Two threads preparing the same halo feature crashed (commit 9b7a111), so every chunk gets
copies.  They are GEOS clones now (no WKB round trip): these tests hold the copies to what
the WKB copy guaranteed (same coordinates, SRID 0, separate objects, nothing prepared on one
shows on the other) and check that two overlapping chunks share no geometry object.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import shapely

from gis_sw.batch.chunks import ChunkSource, halo_ft, own_geometries, plan_chunks
from gis_sw.batch.run import _context
from gis_sw.batch.synthetic import synthetic_town
from gis_sw.ruleset import Ruleset


def _source(ruleset: Ruleset, n: int = 600, chunk_size: int = 150) -> ChunkSource:
    layers = synthetic_town(n, seed=3)
    parcels = layers.get("parcels")
    assert parcels is not None
    plan = plan_chunks(parcels.geometry, chunk_size=chunk_size, halo_ft=halo_ft(ruleset))
    return ChunkSource(parcels, _context(layers), plan)


def test_copies_keep_coordinates_and_types_exactly() -> None:
    square = shapely.Polygon([(0, 0), (10, 0), (10, 10), (0, 10)], [[(2, 2), (3, 2), (3, 3)]])
    geoms = np.array(
        [
            square,
            shapely.Point(1.5, -2.25),
            shapely.Point(1, 2, 3),  # a z coordinate stays
            shapely.MultiPolygon([square, shapely.box(20, 20, 21, 21)]),
            shapely.Polygon(),
            None,
        ],
        dtype=object,
    )
    shapely.prepare(geoms[0])
    copies = own_geometries(geoms)
    assert copies[5] is None
    for orig, copy in zip(geoms[:5], copies[:5], strict=True):
        assert copy is not orig
        assert shapely.get_type_id(copy) == shapely.get_type_id(orig)
        assert shapely.equals_exact(copy, orig, tolerance=0.0)
        assert np.array_equal(
            shapely.get_coordinates(copy, include_z=True),
            shapely.get_coordinates(orig, include_z=True),
            equal_nan=True,
        )
    assert shapely.has_z(copies[2])
    assert shapely.get_coordinates(copies[2], include_z=True)[0, 2] == 3
    assert not shapely.is_prepared(copies[0])  # prepared state is the object's, not copied
    assert (shapely.get_srid(copies[:5]) == 0).all()


def test_copies_match_the_wkb_round_trip_they_replace() -> None:
    rng = np.random.default_rng(5)
    geoms = shapely.buffer(shapely.points(rng.uniform(0, 1000, size=(200, 2))), 7.3)
    geoms = shapely.set_srid(geoms, 2260)
    old = shapely.from_wkb(shapely.to_wkb(geoms))
    new = own_geometries(geoms)
    assert shapely.to_wkb(new).tolist() == shapely.to_wkb(old).tolist()
    assert (shapely.get_srid(new) == shapely.get_srid(old)).all()


def test_chunk_geometries_are_not_the_layers_objects(ruleset: Ruleset) -> None:
    source = _source(ruleset)
    chunk = source.chunk(1)
    whole = source.parcels.geometry.to_numpy()
    mine = chunk.parcels.geometry.to_numpy()
    assert len(mine) == 150
    for at, geom in zip(chunk.rows, mine, strict=True):
        assert geom is not whole[at]
        assert shapely.equals_exact(geom, whole[at], tolerance=0.0)
    shapely.prepare(mine)
    assert not shapely.is_prepared(whole[chunk.rows]).any()


def test_overlapping_chunks_share_no_halo_feature_object(ruleset: Ruleset) -> None:
    source = _source(ruleset)
    first, second = source.chunk(0), source.chunk(1)
    shared_kinds = 0
    for kind in first.context:
        a, b = first.context[kind], second.context[kind]
        common = a.index.intersection(b.index)
        if len(common) == 0:
            continue
        shared_kinds += 1
        ga, gb = a.geometry.loc[common].to_numpy(), b.geometry.loc[common].to_numpy()
        assert all(x is not y for x, y in zip(ga, gb, strict=True))
        assert shapely.equals_exact(ga, gb, tolerance=0.0).all()
    assert shared_kinds >= 3  # the test needs halo features in both chunks


def test_threads_preparing_their_chunks_at_once(ruleset: Ruleset) -> None:
    """Chunks built and prepared on two threads at once: no crash, same bounds."""
    source = _source(ruleset)

    def work(chunk_id: int) -> float:
        chunk = source.chunk(chunk_id)
        total = 0.0
        for frame in chunk.context.values():
            geoms = frame.geometry.to_numpy()
            shapely.prepare(geoms)
            total += float(
                shapely.intersects(geoms, shapely.box(*source.plan.bounds[chunk_id])).sum()
            )
        return total

    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = list(pool.map(work, [0, 1, 2, 3] * 3))
    alone = [work(i) for i in (0, 1, 2, 3)]
    assert threaded == alone * 3
    for frame in source._layers.values():  # the whole layers stay unprepared
        assert not shapely.is_prepared(frame.geometry.to_numpy()).any()
