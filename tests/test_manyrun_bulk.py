"""The runoff of many proposals at once equals one drainage area at a time (issue 14).

A generated town (lots with houses, driveways, woods, a cover name the ruleset lacks, soil
strips with two values of one group letter, a gap no soil maps, a DEM) and 150 proposals,
many on the same lot (so sharing one drainage area, computed once), some with new
impervious surfaces: :func:`compute_drainages` (levels, pieces, figures, DEM Tc for all at
once) against :func:`compute_drainage` of each area alone, areas to 0.01 sq ft, the rest
exactly; the column-built calculation sheet against the row-built one, exactly.
"""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import pytest
import shapely
from affine import Affine

from gis_sw.analysis.runoff import site
from gis_sw.analysis.runoff.cover import LayerArrays
from gis_sw.analysis.runoff.dem_tc import dem_times_of_concentration
from gis_sw.analysis.runoff.levels import same_areas
from gis_sw.analysis.runoff.params import parse_hydrology
from gis_sw.analysis.runoff.sheet import calculation_sheet, calculation_sheet_by_rows
from gis_sw.analysis.runoff.site import DrainageJob, DrainageResult, TimeOfConcentration
from gis_sw.layers.raster import RasterLayer
from gis_sw.ruleset import Ruleset

X0, Y0 = 700_000.0, 840_000.0
CRS = "EPSG:2260"


def _frame(column: str, values: list[str], geoms: np.ndarray) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({column: values}, geometry=list(geoms), crs=CRS)


def _town(rng: np.random.Generator) -> tuple[dict[str, gpd.GeoDataFrame], np.ndarray]:
    """A 10 x 6 grid of 90 x 70 ft lots; returns the layers and the lots."""
    i = np.arange(60)
    x, y = X0 + (i % 10) * 90.0, Y0 + (i // 10) * 70.0
    lots = shapely.box(x, y, x + 90, y + 70)
    j = rng.uniform(0, 8, (3, 60))
    houses = shapely.box(x + 15 + j[0], y + 15, x + 45 + j[0], y + 40 + j[1])
    drives = shapely.box(x + 50, y + j[2], x + 58, y + 35)
    woods = shapely.buffer(shapely.points(x[::4] + 80, y[::4] + 60), 25, quad_segs=4)
    odd = shapely.box(x[::9] + 2, y[::9] + 50, x[::9] + 30, y[::9] + 68)
    cuts = X0 + np.array([0.0, 305.5, 480.25, 700.0]) + rng.uniform(-3, 3, 4)
    soils = np.r_[  # B, then D by two values (B/D undrained, D), then C; a gap past x=700
        shapely.box(cuts[:-1], Y0 - 20, cuts[1:], Y0 + 200),
        [shapely.box(cuts[1], Y0 + 200, cuts[2], Y0 + 450)],
    ]
    layers = {
        "buildings": _frame("id", [f"b{k}" for k in i], houses),
        "pavement": _frame("id", [f"d{k}" for k in i], drives),
        "land_cover": _frame(
            "cover",
            ["woods"] * len(woods) + ["moonscape"] * len(odd),  # a cover the ruleset lacks
            np.r_[woods, odd],
        ),
        "soils": _frame("hsg", ["B", "B/D", "C", "D"], soils),
    }
    return layers, lots


def _dem(rng: np.random.Generator) -> RasterLayer:
    """A 10-ft DEM over the town sloping to the south-west, with a hole of no data."""
    rows, cols = 50, 100
    yy, xx = np.mgrid[0:rows, 0:cols]
    values = 300.0 + 0.08 * xx - 0.05 * yy + rng.uniform(0, 0.3, (rows, cols))
    values[20:23, 30:34] = np.nan
    transform = Affine(10.0, 0.0, X0 - 20, 0.0, -10.0, Y0 + 460)
    return RasterLayer("dem", values, transform, pyproj.CRS.from_user_input(CRS))


def _jobs(rng: np.random.Generator, lots: np.ndarray, n: int) -> list[DrainageJob]:
    """Proposals of one small box each, most on one of eight lots (so areas repeat)."""
    pick = rng.choice([3, 8, 14, 15, 27, 33, 41, 58], n)
    jobs = []
    for k in range(n):
        minx, miny = shapely.bounds(lots[pick[k]]).tolist()[:2]
        across = k % 9 == 0  # a box across the lot's edge: an area of its own
        x = minx + (85.0 if across else rng.uniform(5, 60))
        y = miny + rng.uniform(5, 45)
        dist = shapely.box(x, y, x + 20, y + 20)
        area = shapely.disjoint_subset_union_all([lots[pick[k]], dist])
        imp = None
        if k % 5 == 0:
            imp = gpd.GeoDataFrame(
                {"proposal_id": [f"P{k}"] * 3, "surface": ["roof", None, "Patio"]},
                geometry=[
                    shapely.box(x, y, x + 6, y + 8),
                    shapely.box(x + 4, y + 5, x + 12, y + 12),
                    shapely.box(x + 14, y, x + 19, y + 5),
                ],
                crs=CRS,
            )
        tc = (
            TimeOfConcentration(0.12, "given tc_min on drainage_areas")
            if k % 7 == 0
            else TimeOfConcentration(0.1, "default")
        )
        jobs.append(DrainageJob(f"P{k}", f"P{k}", area, imp, dist, tc))
    return jobs


def _alone(job: DrainageJob, common: dict) -> DrainageResult:
    """One drainage area's result, computed alone."""
    fields = {k: getattr(job, k) for k in ("impervious", "disturbance", "tc")}
    return site.compute_drainage(job.proposal_id, job.drainage_id, job.area, **fields, **common)


def _assert_same(bulk: DrainageResult, one: DrainageResult) -> None:
    """The same result to 0.01 sq ft (areas) and exactly (texts, CN)."""
    for name in ("proposal_id", "drainage_id", "problems", "notes"):
        assert getattr(bulk, name) == getattr(one, name), name
    assert abs(bulk.wqv_cf - one.wqv_cf) < 0.01
    assert [bulk.pre is None, bulk.post is None] == [one.pre is None, one.post is None]
    pairs = [(m, t) for m, t in ((bulk.pre, one.pre), (bulk.post, one.post)) if m and t]
    for mine, theirs in pairs:
        for name in ("area_sqft", "impervious_sqft", "mapped_area_sqft"):
            assert abs(getattr(mine, name) - getattr(theirs, name)) < 0.01, name
        np.testing.assert_equal(mine.cn_used, theirs.cn_used)
        a, b = mine.subareas, theirs.subareas
        for column in ("source", "cover", "hsg"):
            assert a[column].tolist() == b[column].tolist(), column
        np.testing.assert_allclose(a["area_sqft"], b["area_sqft"], rtol=0, atol=0.01)
        for column in ("volume_cf", "qp_cfs", "qp_rational_cfs"):
            np.testing.assert_allclose(
                mine.storm_columns[column], theirs.storm_columns[column], rtol=1e-9
            )


@pytest.mark.parametrize("as_arrays", [True, False])
def test_many_proposals_at_once_equal_one_at_a_time(ruleset: Ruleset, as_arrays: bool) -> None:
    rng = np.random.default_rng(1406)
    params = parse_hydrology(ruleset)
    town, lots = _town(rng)
    columns = {"soils": ("hsg",), "land_cover": ("cover",)}
    layers = {
        k: LayerArrays.of(v, *columns.get(k, ())) if as_arrays else v for k, v in town.items()
    }
    common = {
        "params": params,
        "storms_in": ruleset.storms.depths_in,
        "distribution": ruleset.storms.distribution,
        **layers,
    }
    jobs = _jobs(rng, lots, 150)
    _, first = same_areas([j.area for j in jobs])
    assert 8 < len(first) < 60  # areas repeat: the shared path is taken
    bulk = site.compute_drainages(jobs, **common)
    one = [_alone(j, common) for j in jobs]
    for mine, theirs in zip(bulk, one, strict=True):
        _assert_same(mine, theirs)
    # every branch reached: new surfaces, a cover the ruleset lacks, unmapped ground, B/D
    subareas = pd.concat([r.post.subareas for r in bulk if r.post is not None])
    assert {"new roof", "new default", "new Patio"} <= set(subareas["source"])
    assert {"B", "C", "D", None} <= set(subareas["hsg"])
    assert any("'moonscape' is not a cover" in p for r in bulk for p in r.problems)
    assert any("has no soil group A-D" in p for r in bulk for p in r.problems)
    # the post-development disturbed ground of a proposal off every building and drive
    for job, result in zip(jobs, bulk, strict=True):
        if result.post is None or job.impervious is not None:
            continue
        existing = shapely.union_all(np.r_[town["buildings"].geometry, town["pavement"].geometry])
        expected = float(shapely.area(shapely.difference(job.disturbance, existing)))
        sub = result.post.subareas
        got = float(sub.loc[sub["source"] == "disturbed, not impervious", "area_sqft"].sum())
        assert abs(got - expected) < 0.01
    # the sheet built by columns is the sheet built row by row
    pd.testing.assert_frame_equal(calculation_sheet(bulk), calculation_sheet_by_rows(bulk))
    pd.testing.assert_frame_equal(calculation_sheet(one), calculation_sheet_by_rows(one))


def test_dem_tc_of_many_areas_equals_one_at_a_time(ruleset: Ruleset) -> None:
    rng = np.random.default_rng(7)
    params = parse_hydrology(ruleset)
    _, lots = _town(rng)
    dem = _dem(rng)
    hole = shapely.box(X0 + 290, Y0 + 225, X0 + 325, Y0 + 245)  # all in the no-data hole
    thin = shapely.box(X0 + 1, Y0 + 1, X0 + 3, Y0 + 3)  # no cell centre inside
    far = shapely.box(X0 - 900, Y0, X0 - 800, Y0 + 50)  # off the DEM
    areas = [*lots.tolist(), hole, thin, far, lots[5], lots[5]]
    p2 = ruleset.storms.depths_in[params.sheet_flow_p2_storm_yr]
    bulk = dem_times_of_concentration(areas, dem, params, p2)
    one = [site.dem_time_of_concentration(a, dem, params, p2) for a in areas]
    assert [b is None for b in bulk] == [o is None for o in one]
    assert sum(b is None for b in bulk) == 3
    for mine, theirs in zip(bulk, one, strict=True):
        if mine is None or theirs is None:
            continue
        assert mine.tc_hr == theirs.tc_hr  # the same cells, the same arithmetic
        assert mine.segments == theirs.segments
        assert mine.source == theirs.source
        assert shapely.equals_exact(mine.path, theirs.path, tolerance=0)
        assert math.isclose(sum(s.travel_time_hr for s in mine.segments), mine.tc_hr, rel_tol=1e-12)
