"""Design-storm runoff, § 183-12C(2) and § 183-7B(3)(e): rules SW501-SW504.

For each proposal's drainage area (a ``drainage_areas`` polygon with its ``proposal_id`` or
touching its disturbance; by default the parcels the disturbance touches, with the
disturbance itself), the runoff of every design storm of the ruleset is computed by TR-55
before and after the proposal (:mod:`gis_sw.analysis.runoff`).  The figures are screening
calculations: the design professional owns the design and the Town Engineer reviews it.

- SW501 (info, review when soils or existing impervious layers are missing): the summary.
- SW502: 25-year runoff volume post against pre.
- SW503: 25-year peak discharge (TR-55 graphical method) post against pre.
- SW504 (info): NYSDEC water quality volume WQv = P Rv A / 12.

SW502 and SW503 (issue 13 item 9).  The comparison of post- with pre-development runoff is
one of the SWPPP's post-construction items (§ 183-7B(3)(e)), and the town permit's
application asks for the same calculations (§ 183-12C(2)).  So it runs only where one of
them is required: SW101 says a town permit is required, or SW102 says the work is a land
development activity (a SWPPP); both read with the functions of
:mod:`gis_sw.analysis.permits` (:func:`gis_sw.analysis.construction.duties_apply`), so the
thresholds are not repeated here.  Where neither is required the finding is ``info``
"not required" with no figures (kept, not dropped, so the report shows the rule was
considered); where either is undetermined the comparison runs and says so.

The measured figure is the increase the stormwater devices must handle for the design
storm: ``post - pre`` in cu ft (SW502) or cfs (SW503), 0 when post does not exceed pre; the
limit is 0.  ``pass`` when there is no increase, ``review`` when there is one (the design
must show devices that take it; the Town Engineer reviews it).  A difference within the
float guard of ``[hydrology.compare]`` (0.5 cu ft, 0.005 cfs) is no increase: it is
reported as 0, never shown as the limit.
"""

from __future__ import annotations

import logging
import math

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.construction import duties_apply
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.runoff.areas import has_many_small_parts
from gis_sw.analysis.runoff.cover import LayerArrays, area_inside, polygon_parts
from gis_sw.analysis.runoff.dem_tc import dem_times_of_concentration
from gis_sw.analysis.runoff.levels import union_groups
from gis_sw.analysis.runoff.params import HydrologyParams, parse_hydrology
from gis_sw.analysis.runoff.sheet import calculation_sheet
from gis_sw.analysis.runoff.site import (
    DrainageJob,
    DrainageResult,
    TimeOfConcentration,
    compute_drainages,
)
from gis_sw.analysis.wording import decimals_apart, figure_pair, fmt_number
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import Ruleset

logger = logging.getLogger(__name__)


MIN_OVERLAP_SQFT = 0.005
"""A parcel or drainage area counts as drained by a disturbance when they share at least
this much area (0.01 sq ft after rounding): a lot that only touches the disturbance, or
overlaps it by a float bit after a reprojection, is not taken in."""


def _parcel_drainage(ctx: CheckContext) -> dict[str, shapely.Geometry]:
    """Every proposal's default drainage area: its disturbance with the parcels it overlaps.

    One spatial query and one overlay for all proposals (the tree's candidates come in the
    order a query of each proposal alone gives, so each union is the same polygon).
    """

    def compute() -> dict[str, shapely.Geometry]:
        pids, dists = [], []
        for pid, dist in ctx.disturbance_union.items():
            if dist is not None and not shapely.is_empty(dist):
                pids.append(str(pid))
                dists.append(dist)
        out = dict(zip(pids, dists, strict=True))
        parcels = ctx.layers.get("parcels")
        if parcels is None or len(parcels) == 0 or not dists:
            return out
        geoms = np.asarray(dists, dtype=object)
        which, idx = parcels.sindex.query(geoms, predicate="intersects")
        lots = parcels.geometry.to_numpy()[idx]
        many = {
            int(i): polygon_parts(geoms[i])
            for i in set(which.tolist())
            if has_many_small_parts(geoms[i])
        }
        plain = ~np.isin(which, list(many))
        overlap = np.zeros(len(which))
        overlap[plain] = shapely.area(shapely.intersection(lots[plain], geoms[which[plain]]))
        trees = {i: shapely.STRtree(parts) for i, parts in many.items()}
        for k in np.flatnonzero(~plain).tolist():  # 100,000 lots in one proposal: by part
            lot, i = lots[k], int(which[k])
            shapely.prepare(lot)
            # only the parts near the lot, in their order: the same parts inside and across
            near = np.sort(trees[i].query(lot))
            overlap[k] = area_inside(many[i][near], lot)
        keep = overlap >= MIN_OVERLAP_SQFT
        which, lots = which[keep], lots[keep]
        for i in set(which.tolist()) & set(many):  # parts: only those on a lot merge
            own = many[i]
            out[pids[i]] = shapely.disjoint_subset_union_all([*lots[which == i], *own])
        plain_lots = ~np.isin(which, list(many))
        which, lots = which[plain_lots], lots[plain_lots]
        drained = np.unique(which)  # each: its lots, then its disturbance, in one union
        members = np.concatenate([lots, geoms[drained]])
        codes = np.concatenate([which, drained])
        unions = union_groups(members, codes, len(geoms))
        for i in drained.tolist():
            out[pids[i]] = unions[i]
        return out

    return ctx.memo("hydrology.parcel_drainage", compute)


def _drainage_areas(
    ctx: CheckContext, pid: str, dist: shapely.Geometry
) -> list[tuple[str, shapely.Geometry, float]]:
    """(drainage id, polygon, tc_min or NaN) for one proposal."""
    das = ctx.layers.get("drainage_areas")
    if das is not None and len(das):
        mine = das[das["proposal_id"].astype("object") == pid]
        if len(mine) == 0:
            idx = das.sindex.query(dist, predicate="intersects")
            mine = das.iloc[idx]
            overlap = shapely.area(shapely.intersection(mine.geometry.to_numpy(), dist))
            mine = mine[overlap >= MIN_OVERLAP_SQFT]
        if len(mine):
            return [
                (str(d), g, float(t))
                for d, g, t in zip(
                    mine["drainage_id"],
                    mine.geometry,
                    mine["tc_min"].astype("float64"),
                    strict=True,
                )
            ]
    return [(pid, _parcel_drainage(ctx).get(pid, dist), float("nan"))]


def _times(
    ctx: CheckContext, areas: list[shapely.Geometry], tc_mins: list[float], params: HydrologyParams
) -> list[TimeOfConcentration]:
    """Return each drainage area's Tc: its given ``tc_min``, else from the DEM, else default.

    The DEM's flow paths of every area without a ``tc_min`` come from one vectorised pass
    (:mod:`gis_sw.analysis.runoff.dem_tc`).
    """
    given = [not math.isnan(t) and t > 0 for t in tc_mins]
    found: list[TimeOfConcentration | None] = [None] * len(areas)
    dem = ctx.layers.raster("dem")
    if dem is not None:
        p2 = ctx.ruleset.storms.depths_in[params.sheet_flow_p2_storm_yr]
        todo = [i for i, g in enumerate(given) if not g]
        for i, tc in zip(
            todo, dem_times_of_concentration([areas[i] for i in todo], dem, params, p2), strict=True
        ):
            found[i] = tc
    default = TimeOfConcentration(params.default_tc_hr, "default")
    return [
        TimeOfConcentration(t / 60.0, "given tc_min on drainage_areas") if g else f or default
        for t, g, f in zip(tc_mins, given, found, strict=True)
    ]


def _params(ctx: CheckContext) -> HydrologyParams:
    return ctx.memo("hydrology.params", lambda: parse_hydrology(ctx.ruleset))


def _compute(ctx: CheckContext) -> list[DrainageResult]:
    params = _params(ctx)
    storms = ctx.ruleset.storms
    imp_all = ctx.proposals.impervious
    imp_by_pid: dict[str, gpd.GeoDataFrame] = {}
    if imp_all is not None and len(imp_all):
        imp_by_pid = {
            str(k): g for k, g in imp_all.groupby(imp_all["proposal_id"].astype(str), sort=False)
        }
    soils = LayerArrays.of(ctx.layers.get("soils"), "hsg")
    buildings = LayerArrays.of(ctx.layers.get("buildings"))
    pavement = LayerArrays.of(ctx.layers.get("pavement"))
    land_cover = LayerArrays.of(ctx.layers.get("land_cover"), "cover")
    found = []
    for pid, dist in ctx.disturbance_union.items():
        if dist is None or shapely.is_empty(dist):
            continue
        imp = imp_by_pid.get(str(pid))
        found += [(str(pid), *d, imp, dist) for d in _drainage_areas(ctx, str(pid), dist)]
    tcs = _times(ctx, [f[2] for f in found], [f[3] for f in found], params)
    jobs = [
        DrainageJob(pid, did, area, imp, dist, tc)
        for (pid, did, area, _, imp, dist), tc in zip(found, tcs, strict=True)
    ]
    results = compute_drainages(  # the overlays of every drainage area at once
        jobs,
        params=params,
        storms_in=storms.depths_in,
        distribution=storms.distribution,
        soils=soils,
        buildings=buildings,
        pavement=pavement,
        land_cover=land_cover,
    )
    if not ctx.layers.has("buildings") and not ctx.layers.has("pavement"):
        results = [
            _with_problem(
                result,
                "neither buildings nor pavement layer provided: existing "
                "impervious surfaces unknown",
            )
            for result in results
        ]
    return results


def _with_problem(result: DrainageResult, problem: str) -> DrainageResult:
    from dataclasses import replace

    return replace(result, problems=(*result.problems, problem))


def _subject(result: DrainageResult) -> str:
    """Return the subject id: the proposal id, or ``pid:drainage_id`` for a layer's area."""
    if result.drainage_id == result.proposal_id:
        return result.proposal_id
    return f"{result.proposal_id}:{result.drainage_id}"


_LAST_RUN: list[tuple[LayerSet, Proposals, Ruleset, list[DrainageResult]]] = []
"""The inputs and results of the last computation, so the calculation sheet written after a
check run reuses the rules' results instead of computing every drainage area again."""


def runoff_results(ctx: CheckContext) -> list[DrainageResult]:
    """Every drainage area's result, computed once per context (and per set of inputs)."""

    def compute() -> list[DrainageResult]:
        for layers, proposals, ruleset, results in _LAST_RUN:
            if layers is ctx.layers and proposals is ctx.proposals and ruleset is ctx.ruleset:
                return results
        results = _compute(ctx)
        _LAST_RUN[:] = [(ctx.layers, ctx.proposals, ctx.ruleset, results)]
        return results

    return ctx.memo("hydrology.results", compute)


def calculation_sheet_for(layers: LayerSet, proposals: Proposals, ruleset: Ruleset) -> pd.DataFrame:
    """Return the calculation sheet of every proposal (:mod:`gis_sw.analysis.runoff.sheet`)."""
    return calculation_sheet(runoff_results(CheckContext(layers, proposals, ruleset)))


@rule_check
def check_design_calculations(ctx: CheckContext, rows: Findings) -> None:
    """Check SW501: the design-storm summary (info), review when needed layers are missing."""
    results = runoff_results(ctx)
    if not results:
        return
    year = ctx.ruleset.storms.design_return_period_yr
    outcomes, messages, measured = [], [], []
    for r in results:
        if r.pre is None or r.post is None:
            outcomes.append(Outcome.REVIEW)
            messages.append("Design-storm runoff not computed: " + "; ".join(r.problems) + ".")
            measured.append(float("nan"))
            continue
        pre, post = r.pre.storm(year), r.post.storm(year)
        text = (
            f"TR-55, {year}-year {ctx.ruleset.storms.distribution} storm "
            f"P = {pre['p_in']:.2f} in on {r.pre.area_sqft:,.0f} sq ft, Tc {r.tc.tc_hr:.2f} h "
            f"({r.tc.source}): CN {r.pre.cn_used:.0f} -> {r.post.cn_used:.0f}, "
            f"Q {pre['q_in']:.2f} -> {post['q_in']:.2f} in, "
            f"volume {pre['volume_cf']:,.0f} -> {post['volume_cf']:,.0f} cu ft, "
            f"peak {pre['qp_cfs']:.2f} -> {post['qp_cfs']:.2f} cfs "
            f"(Rational {pre['qp_rational_cfs']:.2f} -> {post['qp_rational_cfs']:.2f} cfs)."
        )
        extra = [*r.problems, *r.notes]
        if extra:
            text += " Note: " + "; ".join(extra) + "."
        outcomes.append(Outcome.REVIEW if r.problems else Outcome.INFO)
        messages.append(text)
        measured.append(post["q_in"])
    rows.extend(
        proposal_id=[r.proposal_id for r in results],
        subject_id=[_subject(r) for r in results],
        outcome=outcomes,
        message=messages,
        measured=measured,
        unit="in",
        geometry=[r.geometry for r in results],
    )


def calculations_required(ctx: CheckContext) -> dict[str, bool | None]:
    """Whether the law asks each proposal for the runoff comparison (None: cannot tell).

    True when a town permit (SW101) or a SWPPP (SW102) is required, False when neither is;
    the same reading as the construction duties (:func:`duties_apply`).
    """
    return duties_apply(ctx)


def _compare(
    ctx: CheckContext, rows: Findings, column: str, *, unit: str, label: str, tol: str
) -> None:
    """Add the post- against pre-development comparison of ``column`` for every result."""
    results = runoff_results(ctx)
    if not results:
        return
    tolerance = float(getattr(_params(ctx), tol))
    year = ctx.ruleset.storms.design_return_period_yr
    cite = rows.citation
    needed = calculations_required(ctx)
    outcomes, messages, measured = [], [], []
    decimals = 0 if unit == "cu ft" else 2
    for r in results:
        need = needed.get(r.proposal_id)
        if need is False:
            outcomes.append(Outcome.INFO)
            messages.append(
                f"Not required: no town permit is required (SW101) and the work is not a land "
                f"development activity needing a SWPPP (SW102), so the post- against "
                f"pre-development {label} comparison of {cite} is not asked for."
            )
            measured.append(float("nan"))
            continue
        if r.pre is None or r.post is None:
            outcomes.append(Outcome.REVIEW)
            messages.append(f"{label.capitalize()} not compared: " + "; ".join(r.problems) + ".")
            measured.append(float("nan"))
            continue
        pre, post = r.pre.storm(year)[column], r.post.storm(year)[column]
        change = post - pre
        increase = change if change > tolerance else 0.0
        others = ", ".join(
            f"{int(y)}-yr {a:,.{decimals}f} -> {b:,.{decimals}f}"
            for y, a, b in zip(
                r.pre.storm_columns["storm_yr"].tolist(),
                r.pre.storm_columns[column].tolist(),
                r.post.storm_columns[column].tolist(),
                strict=True,
            )
            if int(y) != year
        )
        shown_post, shown_pre = figure_pair(post, pre, base=decimals)
        if increase > 0:
            # the increase gets one decimal more than the figures (734.6 cu ft, 0.195 cfs)
            shown_up = fmt_number(increase, decimals_apart(increase, 0.0, base=decimals + 1))
            head = (
                f"{year}-year post-development {label} {shown_post} {unit} exceeds "
                f"pre-development {shown_pre} {unit}: the stormwater devices must handle an "
                f"increase of {shown_up} {unit}"
            )
        else:
            head = (
                f"{year}-year post-development {label} {shown_post} {unit} does not exceed "
                f"pre-development {shown_pre} {unit}: no increase for the devices to handle"
            )
        tail = f"; other storms: {others}." if others else "."
        if need is None:
            tail += (
                " Whether the comparison is required is undetermined (a town permit, SW101, or"
                " a SWPPP, SW102)."
            )
        if r.problems:
            tail += " " + "; ".join(r.problems) + "."
        outcomes.append(Outcome.REVIEW if increase > 0 or r.problems else Outcome.PASS)
        messages.append(f"{head} ({cite}){tail}")
        measured.append(increase)
    rows.extend(
        proposal_id=[r.proposal_id for r in results],
        subject_id=[_subject(r) for r in results],
        outcome=outcomes,
        message=messages,
        measured=measured,
        threshold=0.0,
        unit=unit,
        geometry=[r.geometry for r in results],
    )


@rule_check
def check_runoff_volume(ctx: CheckContext, rows: Findings) -> None:
    """Check SW502: the 25-year runoff volume increase (cu ft) the devices must handle, limit 0."""
    _compare(ctx, rows, "volume_cf", unit="cu ft", label="runoff volume", tol="volume_tolerance_cf")


@rule_check
def check_peak_discharge(ctx: CheckContext, rows: Findings) -> None:
    """Check SW503: the 25-year TR-55 peak discharge increase (cfs) to handle, limit 0."""
    _compare(ctx, rows, "qp_cfs", unit="cfs", label="peak discharge", tol="peak_tolerance_cfs")


@rule_check
def check_water_quality_volume(ctx: CheckContext, rows: Findings) -> None:
    """Check SW504: NYSDEC water quality volume WQv = P Rv A / 12 (info)."""
    results = runoff_results(ctx)
    if not results:
        return
    messages = []
    for r in results:
        area = float(shapely.area(r.geometry))
        imp_pct = (r.wqv_rv - 0.05) / 0.009
        messages.append(
            f"WQv = P Rv A / 12 = {r.wqv_rainfall_in:.2f} in x {r.wqv_rv:.3f} x "
            f"{area:,.0f} sq ft / 12 = {r.wqv_cf:,.0f} cu ft (post-development impervious "
            f"{imp_pct:.1f}%, Rv = 0.05 + 0.009 I)."
        )
    rows.extend(
        proposal_id=[r.proposal_id for r in results],
        subject_id=[_subject(r) for r in results],
        outcome=Outcome.INFO,
        message=messages,
        measured=[r.wqv_cf for r in results],
        unit="cu ft",
        geometry=[r.geometry for r in results],
    )
