"""Every drainage area's runoff computed at once equals one area at a time (issue 14)."""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pytest
import shapely

from gis_sw.analysis.runoff.cover import LayerArrays, clip
from gis_sw.analysis.runoff.params import parse_hydrology
from gis_sw.analysis.runoff.site import (
    DrainageJob,
    DrainageResult,
    TimeOfConcentration,
    compute_drainage,
    compute_drainages,
)
from gis_sw.ruleset import Ruleset

X0, Y0 = 685_000.0, 830_000.0
CRS = "EPSG:2260"


def _frame(column: str, values: list[str], geoms: np.ndarray) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({column: values}, geometry=list(geoms), crs=CRS)


def _town(rng: np.random.Generator) -> dict[str, gpd.GeoDataFrame]:
    """A 12 x 8 grid of 100 x 80 ft lots with houses, driveways, woods and four soils."""
    i = np.arange(96)
    x, y = X0 + (i % 12) * 100.0, Y0 + (i // 12) * 80.0
    jitter = rng.uniform(0, 10, (4, 96))
    houses = shapely.box(x + 20 + jitter[0], y + 20, x + 50 + jitter[0], y + 50 + jitter[1])
    drives = shapely.box(x + 55, y + jitter[2], x + 65, y + 40)
    woods = shapely.buffer(shapely.points(x[::5] + 90, y[::5] + 70), 30 + jitter[3][::5])
    lawn = shapely.box(x[::7], y[::7], x[::7] + 60, y[::7] + 15)
    # soil strips, a dual group, a letter no table has, and a gap mapped by none
    cuts = X0 + np.array([0, 310.5, 640.25, 900.0, 1150.0]) + rng.uniform(-5, 5, 5)
    soils = np.r_[  # abutting strips, and a patch mapped twice (A over the last strip)
        shapely.box(cuts[:-1], Y0 - 50, cuts[1:], Y0 + 600),
        [shapely.box(X0 + 1000, Y0 + 450, X0 + 1100, Y0 + 520)],
    ]
    return {
        "buildings": _frame("id", [f"b{k}" for k in i], houses),
        "pavement": _frame("id", [f"d{k}" for k in i], drives),
        "land_cover": _frame(
            "cover", ["woods"] * len(woods) + ["lawn"] * len(lawn), np.r_[woods, lawn]
        ),
        "soils": _frame("hsg", ["B", "C/D", "W", "A", "A"], soils),
    }


def _jobs(rng: np.random.Generator, n: int) -> list[DrainageJob]:
    """Proposals of one box each (some with new impervious), on lots or spanning two."""
    x = X0 + rng.uniform(-40, 1200, n)
    y = Y0 + rng.uniform(-40, 640, n)
    w = rng.choice([5.0, 20.0, 150.0], n)
    jobs = []
    for k in range(n):
        dist = shapely.box(x[k], y[k], x[k] + w[k], y[k] + 20)
        lot = shapely.box(x[k] - 30, y[k] - 25, x[k] + w[k] + 35, y[k] + 60)
        area = shapely.union(lot, dist) if k % 4 else dist
        imp = None
        if k % 3 == 0:
            imp = gpd.GeoDataFrame(
                {"proposal_id": [f"P{k}"] * 2, "surface": ["roof", None]},
                geometry=[
                    shapely.box(x[k], y[k], x[k] + 4, y[k] + 6),
                    shapely.box(x[k] + 2, y[k] + 3, x[k] + 9, y[k] + 9),
                ],
                crs=CRS,
            )
        tc = TimeOfConcentration(0.1 + 0.01 * (k % 7), "given tc_min on drainage_areas")
        jobs.append(DrainageJob(f"P{k}", f"P{k}", area, imp, dist, tc))
    empty = shapely.Polygon()  # nothing on it: the whole area is default cover
    jobs.append(
        DrainageJob(
            "far",
            "far",
            shapely.box(X0 - 900, Y0, X0 - 800, Y0 + 50),
            None,
            empty,
            TimeOfConcentration(0.1, "default"),
        )
    )
    k = np.arange(100)  # a disturbance of 100 small parts: summed by areas of unions
    bx, by = X0 + 300 + (k % 10) * 6.0, Y0 + 200 + (k // 10) * 6.0
    parts = shapely.union_all(shapely.box(bx, by, bx + 4, by + 4))
    jobs.append(
        DrainageJob(
            "many",
            "many",
            shapely.box(X0 + 290, Y0 + 190, X0 + 370, Y0 + 270),
            None,
            parts,
            TimeOfConcentration(0.1, "default"),
        )
    )
    return jobs


def _assert_same(bulk: DrainageResult, one: DrainageResult) -> None:
    assert (bulk.proposal_id, bulk.drainage_id) == (one.proposal_id, one.drainage_id)
    assert bulk.problems == one.problems
    assert bulk.notes == one.notes
    assert math.isclose(bulk.wqv_cf, one.wqv_cf, abs_tol=0.01)
    for mine, theirs in ((bulk.pre, one.pre), (bulk.post, one.post)):
        assert (mine is None) == (theirs is None)
        if mine is None or theirs is None:
            continue
        assert abs(mine.impervious_sqft - theirs.impervious_sqft) < 0.01
        assert abs(mine.mapped_area_sqft - theirs.mapped_area_sqft) < 0.01
        np.testing.assert_equal(mine.cn_used, theirs.cn_used)  # NaN on unmapped ground
        a, b = mine.subareas, theirs.subareas
        assert a[["source", "cover"]].values.tolist() == b[["source", "cover"]].values.tolist()
        assert a["hsg"].tolist() == b["hsg"].tolist()
        np.testing.assert_allclose(a["area_sqft"], b["area_sqft"], rtol=0, atol=0.01)
        np.testing.assert_allclose(
            mine.storm_columns["qp_cfs"], theirs.storm_columns["qp_cfs"], rtol=1e-9
        )


@pytest.mark.parametrize("seed", [14, 183])
def test_bulk_equals_one_area_at_a_time(ruleset: Ruleset, seed: int) -> None:
    rng = np.random.default_rng(seed)
    params = parse_hydrology(ruleset)
    town = _town(rng)
    layers = {
        "soils": LayerArrays.of(town["soils"], "hsg"),
        "buildings": LayerArrays.of(town["buildings"]),
        "pavement": LayerArrays.of(town["pavement"]),
        "land_cover": LayerArrays.of(town["land_cover"], "cover"),
    }
    storms = ruleset.storms
    common = {
        "params": params,
        "storms_in": storms.depths_in,
        "distribution": storms.distribution,
        **layers,
    }
    jobs = _jobs(rng, 120)
    bulk = compute_drainages(jobs, **common)
    assert len(bulk) == len(jobs)
    one = [
        compute_drainage(
            j.proposal_id,
            j.drainage_id,
            j.area,
            impervious=j.impervious,
            disturbance=j.disturbance,
            tc=j.tc,
            **common,
        )
        for j in jobs
    ]
    for mine, theirs in zip(bulk, one, strict=True):
        _assert_same(mine, theirs)
    # the data reach every branch: several soil groups, unmapped ground, new impervious
    hsgs = {h for r in bulk if r.post is not None for h in r.post.subareas["hsg"].tolist()}
    assert {"A", "B", "D", None} <= hsgs  # C/D counted as D
    assert any(
        r.post is not None and r.post.subareas["source"].str.startswith("new").any() for r in bulk
    )
    far = bulk[-2]  # off every soil polygon: a review, never figures
    assert far.pre is None
    assert far.post is None
    assert far.problems[0].startswith("5,000 sq ft of the drainage area has no soil group")
    many = bulk[-1].post
    assert many is not None
    disturbed = many.subareas[many.subareas["source"] == "disturbed, not impervious"]
    existing = shapely.union_all(np.r_[town["buildings"].geometry, town["pavement"].geometry])
    expected = shapely.area(shapely.difference(jobs[-1].disturbance, existing))
    assert 0 < expected < 1600.0
    assert abs(float(disturbed["area_sqft"].sum()) - expected) < 0.01
    assert any("no soil group" in p for r in bulk for p in r.problems)


def test_no_soils_layer_gives_the_same_review(ruleset: Ruleset) -> None:
    rng = np.random.default_rng(7)
    params = parse_hydrology(ruleset)
    storms = ruleset.storms
    common = {
        "params": params,
        "storms_in": storms.depths_in,
        "distribution": storms.distribution,
        "soils": None,
        "buildings": None,
        "pavement": None,
        "land_cover": None,
    }
    jobs = _jobs(rng, 10)
    bulk = compute_drainages(jobs, **common)
    for job, mine in zip(jobs, bulk, strict=True):
        theirs = compute_drainage(
            job.proposal_id,
            job.drainage_id,
            job.area,
            impervious=job.impervious,
            disturbance=job.disturbance,
            tc=job.tc,
            **common,
        )
        _assert_same(mine, theirs)
        assert mine.pre is None
        assert "soils layer not provided" in mine.problems[-1]


def test_clip_equals_the_overlay() -> None:
    """Polygons inside, across and on the edge of an area clip as the overlay does."""
    rng = np.random.default_rng(5)
    area = shapely.Polygon([(0, 0), (100, 0), (100, 60), (40, 90), (0, 60)])
    x, y = rng.uniform(-30, 120, 400), rng.uniform(-30, 110, 400)
    geoms = np.r_[
        shapely.box(x, y, x + rng.uniform(1, 40, 400), y + rng.uniform(1, 40, 400)),
        [shapely.box(0, 0, 10, 10), shapely.box(-10, 0, 0, 10), area],  # edge, touch, same
    ]
    mine, theirs = clip(geoms, area), shapely.intersection(geoms, area)
    np.testing.assert_allclose(shapely.area(mine), shapely.area(theirs), rtol=0, atol=1e-6)
    assert shapely.equals(mine[~shapely.is_empty(theirs)], theirs[~shapely.is_empty(theirs)]).all()
    assert 0 < shapely.contains_properly(area, geoms).sum() < len(geoms)  # both paths taken
