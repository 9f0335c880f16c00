"""Property tests: what no screening result may depend on, over generated tiny towns.

Each town (``tests/strategies.py``) has a few rectangular parcels split between R-10 and R-20,
a well, a wetland, a water body, a septic field, a house with a habitable basement, a sloped
DEM and a groundwater raster, and one or two proposals with disturbance and devices.  It is
built in memory with ``make_layerset`` / ``make_proposals`` and screened with ``run_rules``.

1. Translating every layer (rasters too) changes no outcome; rotating every vector layer
   (over a flat DEM) changes no outcome.
2. EPSG:2260 -> EPSG:4326 -> EPSG:2260 changes no outcome except within 0.01 of a limit.
3. Shrinking a disturbance never adds a permit requirement (SW101-SW103).
4. Moving a device away from every feature never worsens a setback (SW201/202/205/206/210).
5. Findings round-trip through GeoJSON and GeoPackage with the same ids and values.

Hypothesis runs derandomized with no example database, so CI is reproducible; set
``GIS_SW_PROPERTY_EXAMPLES`` to a larger number for a thorough local run.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely
from hypothesis import HealthCheck, Phase, assume, event, example, given, settings
from hypothesis import strategies as st
from shapely import affinity
from shapely.geometry import Point, box
from shapely.ops import polylabel
from strategies import CRS, X0, Y0, Town, frame, towns, write_town_files

from gis_sw.analysis.engine import run_rules
from gis_sw.layers.proposals_io import read_proposals
from gis_sw.layers.read import read_layers
from gis_sw.outputs.geojson import FAMILY_FILES, geometry_family, write_findings_geojson
from gis_sw.outputs.geopackage import write_findings_geopackage
from gis_sw.ruleset import Ruleset, load_ruleset

RULESET = load_ruleset()
EXAMPLES = int(os.environ.get("GIS_SW_PROPERTY_EXAMPLES", "0")) or None


SHRINK = os.environ.get("GIS_SW_PROPERTY_SHRINK", "") not in ("", "0")


def prop(n: int) -> settings:
    """Modest, reproducible settings: ``n`` examples unless the environment asks for more.

    Shrinking a town takes minutes (every step screens it again), so CI reports the first
    failing town with its reproduction blob; ``GIS_SW_PROPERTY_SHRINK=1`` shrinks it.
    """
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    return settings(
        max_examples=EXAMPLES or n,
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        phases=[*phases, Phase.shrink] if SHRINK else phases,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


SETBACK_RULES = ("SW201", "SW202", "SW205", "SW206", "SW210")
PERMIT_RULES = ("SW101", "SW102", "SW103")
RANK = {"pass": 0, "info": 0, "required": 1, "review": 1, "fail": 2}


def outcomes(findings: gpd.GeoDataFrame) -> dict[str, tuple[str, str, float, float]]:
    """finding_id -> (rule, outcome, measured, threshold)."""
    return {
        str(f): (str(r), str(o), float(m), float(t))
        for f, r, o, m, t in zip(
            findings["finding_id"],
            findings["rule_id"],
            findings["outcome"],
            findings["measured"],
            findings["threshold"],
            strict=True,
        )
    }


def same_number(a: float, b: float, tol: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def assert_same_outcomes(
    before: gpd.GeoDataFrame, after: gpd.GeoDataFrame, *, near_limit_ok: bool = False
) -> None:
    """Same findings, same outcomes, measured values within 0.01 (their printed precision).

    With ``near_limit_ok``, an outcome may differ where a measured value lies within 0.01 of
    its limit (in either run).
    """
    a, b = outcomes(before), outcomes(after)
    assert a.keys() == b.keys()
    problems = []
    for fid, (rule, out_a, meas_a, lim_a) in a.items():
        _, out_b, meas_b, lim_b = b[fid]
        near = any(abs(m - lim) <= 0.01 for m, lim in ((meas_a, lim_a), (meas_b, lim_b)))
        changed = out_a != out_b and not (near_limit_ok and near)
        drifted = out_a == out_b and not same_number(meas_a, meas_b, 0.0101)
        if changed or drifted:
            problems.append((rule, fid, out_a, out_b, meas_a, meas_b))
        assert same_number(lim_a, lim_b, 1e-9), (rule, lim_a, lim_b)
    assert not problems, problems


# -- 1. translation and rotation ---------------------------------------------------------------


offsets = st.floats(min_value=-20_000.0, max_value=20_000.0, allow_nan=False)


@prop(6)
@given(town=towns(), dx=offsets, dy=offsets)
def test_translating_every_layer_changes_no_outcome(town: Town, dx: float, dy: float) -> None:
    assert_same_outcomes(town.screen(RULESET), town.translated(dx, dy).screen(RULESET))


@prop(6)
@given(town=towns(), angle=st.floats(min_value=0.0, max_value=360.0, allow_nan=False))
def test_rotating_every_vector_layer_changes_no_outcome(town: Town, angle: float) -> None:
    flat = town.flat()
    assert_same_outcomes(flat.screen(RULESET), flat.rotated(angle).screen(RULESET))


# -- 2. reprojection ---------------------------------------------------------------------------


@prop(6)
@given(town=towns())
def test_reprojecting_through_wgs84_changes_no_outcome_away_from_limits(town: Town) -> None:
    before = town.screen(RULESET)
    after = town.reprojected().screen(RULESET)
    assert_same_outcomes(before, after, near_limit_ok=True)


@prop(4)
@given(town=towns())
def test_reading_the_town_from_wgs84_files_changes_no_outcome_away_from_limits(
    town: Town,
) -> None:
    """The same, through the readers: GeoPackages in EPSG:4326, GeoTIFFs beside them."""
    before = town.screen(RULESET)
    with tempfile.TemporaryDirectory() as tmp:
        layers_path, proposals_path = write_town_files(town, Path(tmp))
        layers = read_layers(layers_path, ruleset=RULESET)
        proposals = read_proposals(proposals_path, ruleset=RULESET)
    after = run_rules(layers, proposals, RULESET, on_error="raise")
    assert_same_outcomes(before, after, near_limit_ok=True)


# -- explicit boundaries, carried through translation and reprojection ---------------------


def lot_town(
    device_x: float,
    *,
    dist: shapely.Polygon | None = None,
    neighbour: bool = False,
) -> Town:
    """One 100 x 100 ft lot at the town's corner (and a 200 x 100 ft ``neighbour`` east of
    it), a point device ``device_x`` ft inside its west line (at mid-height), and a
    disturbance (by default 10 x 10 ft in R-20)."""
    lots = [{"parcel_id": "104-22", "geometry": box(X0, Y0, X0 + 100, Y0 + 100)}]
    if neighbour:
        lots.append({"parcel_id": "104-23", "geometry": box(X0 + 100, Y0, X0 + 300, Y0 + 100)})
    zoning = frame(
        [
            {"zone": "R-10", "geometry": box(X0 - 500, Y0 - 500, X0 - 200, Y0 + 600)},
            {"zone": "R-20", "geometry": box(X0 - 200, Y0 - 500, X0 + 600, Y0 + 600)},
        ],
        ["zone"],
    )
    device = {
        "device_id": "D-7",
        "proposal_id": "P1",
        "serves_vehicle_traffic": False,
        "geometry": Point(X0 + device_x, Y0 + 50),
    }
    shape = dist if dist is not None else box(X0 + 40, Y0 + 40, X0 + 50, Y0 + 50)
    return Town(
        vectors={
            "parcels": frame(lots, []),
            "zoning": zoning,
        },
        dem_slope=(300.0, 0.0, 0.0),
        groundwater_depth_ft=10.0,
        disturbance=frame([{"proposal_id": "P1", "geometry": shape}], []),
        devices=frame([device], []),
        attributes=pd.DataFrame({"proposal_id": ["P1"], "part_of_larger_plan": [False]}),
        extent=(0.0, 0.0, 100.0, 100.0),
    )


def one(findings: gpd.GeoDataFrame, rule_id: str) -> pd.Series:
    rows = findings[findings["rule_id"] == rule_id]
    assert len(rows) == 1
    return rows.iloc[0]


@prop(6)
@given(
    x=st.floats(min_value=0.5, max_value=49.5, allow_nan=False),
    dx=offsets,
    dy=offsets,
)
@example(x=10.0, dx=0.0, dy=0.0).via("10.00-ft-from-lot-line")
@example(x=9.99, dx=0.0, dy=0.0).via("9.99-ft-from-lot-line")
@example(x=10.0, dx=1234.567, dy=-9876.54321).via("10.00-ft-from-lot-line-moved")
@example(x=9.99, dx=1234.567, dy=-9876.54321).via("9.99-ft-from-lot-line-moved")
def test_lot_line_setback_is_exact_where_ever_the_lot_is(x: float, dx: float, dy: float) -> None:
    """SW205: a device x ft inside the lot passes iff x, to 0.01 ft, is at least 10 ft."""
    assume(abs(x - 9.995) > 1e-6)  # where a float bit decides the rounding
    town = lot_town(x)
    expected = "pass" if round(x, 2) >= 10.0 else "fail"
    for variant in (town, town.translated(dx, dy), town.reprojected()):
        row = one(variant.screen(RULESET, select=["SW205"]), "SW205")
        assert row["outcome"] == expected, (x, dx, dy, row["message"])
        assert row["measured"] == pytest.approx(x, abs=0.0051)


@prop(6)
@given(
    width=st.floats(min_value=1.0, max_value=60.0, allow_nan=False),
    dx=offsets,
    dy=offsets,
)
@example(width=25.0, dx=0.0, dy=0.0).via("250.00-sq-ft-needs-a-permit")
@example(width=24.99, dx=0.0, dy=0.0).via("249.90-sq-ft-needs-none")
@example(width=25.0, dx=-4321.5, dy=777.125).via("250.00-sq-ft-moved")
@example(width=24.99, dx=-4321.5, dy=777.125).via("249.90-sq-ft-moved")
def test_permit_threshold_is_exact_where_ever_the_disturbance_is(
    width: float, dx: float, dy: float
) -> None:
    """SW101: a width x 10 ft disturbance in R-20 needs a permit iff its area, to 0.01 sq ft,
    reaches 250 sq ft."""
    assume(abs(width * 10 - 249.995) > 1e-6)  # where a float bit decides the rounding
    shape = box(X0 + 10, Y0 + 10, X0 + 10 + width, Y0 + 20)
    town = lot_town(50.0, dist=shape)
    expected = "required" if round(shape.area, 2) >= 250.0 else "pass"
    for variant in (town, town.translated(dx, dy), town.reprojected()):
        row = one(variant.screen(RULESET, select=["SW101"]), "SW101")
        assert row["outcome"] == expected, (width, dx, dy, row["message"])
        assert row["measured"] == pytest.approx(shape.area, abs=0.0051)


@pytest.mark.parametrize(
    ("x", "angle"),
    [
        pytest.param(-1e-9, 0.0, id="1e-9-ft-outside-the-lot-line"),
        pytest.param(0.0, 123.4, id="on-the-lot-line-rotated-123.4-deg"),
    ],
)
def test_device_a_hair_outside_its_lot_fails_at_0_00_ft(x: float, angle: float) -> None:
    row = one(lot_town(x).rotated(angle).screen(RULESET, select=["SW205"]), "SW205")
    assert row["outcome"] == "fail", row["message"]
    assert row["measured"] == 0.0


@pytest.mark.parametrize(
    "over_ft", [pytest.param(1e-9, id="1e-9-ft-over-the-lot-line"), pytest.param(None, id="wgs84")]
)
def test_drainage_area_ignores_a_hair_of_a_neighbouring_lot(over_ft: float | None) -> None:
    up_to_line = lot_town(50.0, dist=box(X0 + 40, Y0 + 40, X0 + 100, Y0 + 60), neighbour=True)
    if over_ft is None:
        variant = up_to_line.reprojected()
    else:
        variant = lot_town(
            50.0, dist=box(X0 + 40, Y0 + 40, X0 + 100 + over_ft, Y0 + 60), neighbour=True
        )
    before = one(up_to_line.screen(RULESET, select=["SW504"]), "SW504")
    after = one(variant.screen(RULESET, select=["SW504"]), "SW504")
    assert after["measured"] == pytest.approx(before["measured"], abs=0.01), after["message"]


@pytest.mark.parametrize(
    ("short_ft", "angle"),
    [
        pytest.param(1e-9, 0.0, id="1e-9-ft-short-of-the-impaired-water"),
        pytest.param(0.0, 123.4, id="up-to-the-impaired-water-rotated-123.4-deg"),
    ],
)
def test_condition_a_does_not_hang_on_a_float_bit(short_ft: float, angle: float) -> None:
    def town(east: float) -> Town:
        base = lot_town(50.0, dist=box(X0 + 40, Y0 + 40, X0 + east, Y0 + 60))
        water = box(X0 + 100, Y0 - 50, X0 + 400, Y0 + 150)
        listed = frame([{"name": "Pocantico River", "geometry": water}], [])
        return replace(
            base,
            vectors={**base.vectors, "impaired_waters": listed},
            attributes=pd.DataFrame({"proposal_id": ["P1"], "part_of_larger_plan": [True]}),
        )

    def condition_a(variant: Town) -> str:
        findings = variant.screen(RULESET, select=["SW103"])
        return str(findings.set_index("subject_id").loc["P1:condition-A", "outcome"])

    assert condition_a(town(100.0)) == "required"
    assert condition_a(town(100.0 - short_ft).rotated(angle)) == "required"


# -- 3. shrinking a disturbance ----------------------------------------------------------------


@st.composite
def shrunk(draw: st.DrawFn, town: Town) -> Town:
    """The town with one disturbance polygon, or every polygon of its proposal, scaled about
    its centroid by one factor in [0.001, 1] or cut by a box (the same fractions of each one's
    bounds)."""
    dist = town.disturbance.copy()
    i = draw(st.integers(0, len(dist) - 1))
    pids = dist["proposal_id"].to_numpy()
    chosen = np.flatnonzero(pids == pids[i]) if draw(st.booleans()) else np.array([i])
    geoms = dist.geometry.to_numpy().copy()
    if draw(st.booleans()):
        # not below 1/1000: a polygon scaled to nothing is "no disturbance" (review)
        factor = draw(
            st.one_of(st.sampled_from([0.1, 0.3, 0.6]), st.floats(min_value=0.001, max_value=1.0))
        )
        for k in chosen:
            geoms[k] = affinity.scale(geoms[k], factor, factor, origin="centroid")
    else:
        fx0, fy0 = draw(st.floats(0.0, 0.95)), draw(st.floats(0.0, 0.95))
        fx1, fy1 = draw(st.floats(fx0 + 0.05, 1.0)), draw(st.floats(fy0 + 0.05, 1.0))
        for k in chosen:
            minx, miny, maxx, maxy = geoms[k].bounds
            w, h = maxx - minx, maxy - miny
            cut = box(minx + fx0 * w, miny + fy0 * h, minx + fx1 * w, miny + fy1 * h)
            geoms[k] = shapely.intersection(geoms[k], cut)
    dist = dist.set_geometry(gpd.GeoSeries(geoms, index=dist.index, crs=dist.crs))
    return town.with_disturbance(dist)


NEEDS = {"pass": 0, "info": 0, "review": 1, "required": 2, "fail": 2}


def requirements(findings: gpd.GeoDataFrame) -> dict[tuple[str, str], str]:
    """(rule, proposal) -> the weightiest outcome of its rows.

    SW103 has one row per condition; what the law attaches is post-construction controls
    under any of them, so shrinking 6 acres to 3 trades Condition B for C (see
    :func:`test_shrinking_below_five_acres_trades_condition_b_for_c`) without adding one.
    """
    out: dict[tuple[str, str], str] = {}
    for rule, pid, outcome in zip(
        findings["rule_id"], findings["proposal_id"], findings["outcome"], strict=True
    ):
        key = (str(rule), str(pid))
        if key not in out or NEEDS[str(outcome)] > NEEDS[out[key]]:
            out[key] = str(outcome)
    return out


@prop(12)
@given(data=st.data(), town=towns())
def test_shrinking_a_disturbance_never_adds_a_permit_requirement(
    data: st.DataObject, town: Town
) -> None:
    smaller = data.draw(shrunk(town))
    before = requirements(town.screen(RULESET, select=list(PERMIT_RULES)))
    after = requirements(smaller.screen(RULESET, select=list(PERMIT_RULES)))
    assert before.keys() == after.keys()
    for (rule, pid), out in before.items():
        if after[rule, pid] != out:
            event(f"{rule} {out} -> {after[rule, pid]}")
    worse = [
        (rule, pid, out, after[rule, pid])
        for (rule, pid), out in before.items()
        if out == "pass" and after[rule, pid] in ("required", "fail")
    ]
    assert not worse, worse


def test_shrinking_below_five_acres_trades_condition_b_for_c() -> None:
    """6 acres -> 3 acres (land use "other"): Condition B no longer, Condition C now."""
    acre = 43_560.0
    big = box(X0 + 10, Y0 + 10, X0 + 10 + 6 * acre / 400, Y0 + 410)
    town = replace(
        lot_town(50.0, dist=big),
        attributes=pd.DataFrame(
            {"proposal_id": ["P1"], "part_of_larger_plan": [False], "land_use": ["other"]}
        ),
    )
    smaller = town.with_disturbance(
        town.disturbance.set_geometry(town.disturbance.geometry.scale(0.5, 1.0, origin="centroid"))
    )
    before = town.screen(RULESET, select=["SW103"]).set_index("subject_id")["outcome"]
    after = smaller.screen(RULESET, select=["SW103"]).set_index("subject_id")["outcome"]
    assert (before["P1:condition-B"], before["P1:condition-C"]) == ("required", "pass")
    assert (after["P1:condition-B"], after["P1:condition-C"]) == ("pass", "required")
    assert requirements(town.screen(RULESET, select=["SW103"]))["SW103", "P1"] == "required"


# -- 4. moving a device away from every feature ------------------------------------------------


def feature_geometries(town: Town) -> list[shapely.Geometry]:
    kinds = ("wells", "wetlands", "water_bodies", "septic_fields", "buildings")
    return [g for k in kinds for g in town.vectors[k].geometry]


def home_parcel(town: Town, device: shapely.Geometry) -> shapely.Polygon:
    """The parcel holding most of the device (for a point, the one holding it)."""
    lots = list(town.vectors["parcels"].geometry)
    spot = shapely.point_on_surface(device)
    return max(lots, key=lambda lot: (lot.intersection(device).area, lot.intersects(spot)))


FARTHEST_SETBACK_FT = max(
    RULESET.devices.septic_upgradient_ft,
    RULESET.devices.vehicle_traffic_ft,
    RULESET.devices.property_line_ft,
    RULESET.devices.habitable_basement_ft,
    RULESET.devices.state_well_surface_recharge_ft,
)
"""A device may come nearer a feature still farther than this: no setback reaches it."""


@st.composite
def moved_away(draw: st.DrawFn, town: Town) -> tuple[Town, str]:
    """The town with one device moved toward the pole of inaccessibility of its parcel less
    every feature, kept only where the move takes it no nearer its lot line or any feature
    (but those it stays more than :data:`FARTHEST_SETBACK_FT` from)."""
    devs = town.devices
    i = draw(st.integers(0, len(devs) - 1))
    device = devs.geometry.iat[i]
    lot = home_parcel(town, device)
    features = feature_geometries(town)
    free = shapely.difference(lot, shapely.union_all(features))
    if free.is_empty:
        free = lot
    pieces = sorted(shapely.get_parts(free), key=lambda g: -g.area)
    targets = [polylabel(pieces[0], tolerance=0.5), polylabel(lot, tolerance=0.5)]
    start = shapely.centroid(device)
    edge = lot.boundary
    obstacles = [edge, *features]
    was = [shapely.distance(device, f) for f in obstacles]

    def away(new: shapely.Geometry) -> bool:
        """Inside the lot and no nearer any feature that a setback could reach."""
        if not shapely.within(new, lot):
            return False
        for f, d in zip(obstacles, was, strict=True):
            now = shapely.distance(new, f)
            if now < d - 1e-9 and now <= FARTHEST_SETBACK_FT:
                return False
        return True

    t = draw(st.floats(min_value=0.0, max_value=1.0, exclude_min=True))
    # the whole way may pass close by a feature: then try a shorter step the same way, or
    # toward the middle of the lot
    steps = [t / 2**k for k in range(8)]
    moves = [
        affinity.translate(device, s * (to.x - start.x), s * (to.y - start.y))
        for to in targets
        for s in steps
    ]
    new = next((m for m in moves if away(m)), None)
    assume(new is not None)
    geoms = devs.geometry.to_numpy().copy()
    geoms[i] = new
    moved = devs.set_geometry(gpd.GeoSeries(geoms, index=devs.index, crs=devs.crs))
    return town.with_devices(moved), str(devs["device_id"].iat[i])


@prop(12)
@given(data=st.data(), town=towns(min_devices=1))
def test_moving_a_device_away_never_adds_a_setback_failure(data: st.DataObject, town: Town) -> None:
    """Over a flat DEM: on a slope, moving away from a septic field can move a device uphill
    of it, which SW201 rightly fails."""
    flat = town.flat()
    away, device_id = data.draw(moved_away(flat))
    before = flat.screen(RULESET, select=list(SETBACK_RULES))
    after = away.screen(RULESET, select=list(SETBACK_RULES))
    b, a = outcomes(before), outcomes(after)
    subject = dict(zip(before["finding_id"], before["subject_id"], strict=True))
    worse = [
        (b[fid][0], b[fid][1], a[fid][1], b[fid][2], a[fid][2])
        for fid in b
        if subject[fid] == device_id and RANK[a[fid][1]] > RANK[b[fid][1]]
    ]
    for fid in b:
        if subject[fid] == device_id and a[fid][1] != b[fid][1]:
            event(f"{b[fid][0]} {b[fid][1]} -> {a[fid][1]}")
    assert not worse, worse


# -- 5. round trips through GeoJSON and GeoPackage ---------------------------------------------


def as_text(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def as_number(value: Any) -> float:
    return math.nan if value is None or pd.isna(value) else float(value)


VALUE_COLUMNS = ("rule_id", "outcome", "message", "unit", "citation", "subject_id", "proposal_id")


def assert_round_trip(
    original: gpd.GeoDataFrame,
    read: gpd.GeoDataFrame | pd.DataFrame,
    *,
    geometry_tol: float | None,
    crs: str,
) -> None:
    """Every finding read back with the same values; geometry within ``geometry_tol``."""
    assert sorted(read["finding_id"]) == sorted(original["finding_id"])
    back = read.set_index("finding_id")
    families, simple = geometry_family(original.geometry.to_numpy())
    expected = gpd.GeoSeries(simple, crs=original.crs).to_crs(crs)
    for pos, (fid, row) in enumerate(original.set_index("finding_id").iterrows()):
        got = back.loc[fid]
        for column in VALUE_COLUMNS:
            assert as_text(got[column]) == as_text(row[column]), (fid, column)
        for column in ("measured", "threshold"):
            assert same_number(as_number(got[column]), as_number(row[column]), 1e-9), (fid, column)
        assert bool(got["waived"]) is False
        if geometry_tol is None:
            continue
        want = expected.iat[pos]
        have = got["geometry"]
        if families[pos] == "none":
            assert have is None or shapely.is_empty(have), fid
        else:
            assert have is not None, fid
            assert shapely.hausdorff_distance(want, have) <= geometry_tol, (fid, want, have)


@prop(5)
@given(town=towns())
def test_findings_round_trip_through_geojson_and_geopackage(town: Town) -> None:
    findings = town.screen(RULESET)
    assert len(findings)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        write_findings_geojson(out, findings)
        parts = [pyogrio.read_dataframe(out / name) for name, _ in FAMILY_FILES.values()]
        geojson = pd.concat([p for p in parts if len(p)], ignore_index=True)
        assert_round_trip(findings, geojson, geometry_tol=1e-6, crs="EPSG:4326")

        gpkg = write_findings_geopackage(out / "findings.gpkg", findings)
        table = pyogrio.read_dataframe(gpkg, layer="findings", read_geometry=False)
        assert_round_trip(findings, table, geometry_tol=None, crs=CRS)
        layers = [
            pyogrio.read_dataframe(gpkg, layer=f"findings_{family}") for family in FAMILY_FILES
        ]
        with_geometry = pd.concat([p for p in layers if len(p)], ignore_index=True)
        has_geom = np.array([f != "none" for f in geometry_family(findings.geometry.to_numpy())[0]])
        assert_round_trip(
            findings[has_geom].reset_index(drop=True), with_geometry, geometry_tol=0.01, crs=CRS
        )


def test_ruleset_is_the_default(ruleset: Ruleset) -> None:
    """The properties run on the default ruleset (Mount Pleasant) the fixture loads."""
    assert ruleset.name == RULESET.name
