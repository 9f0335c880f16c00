"""Whether a town permit is needed (SW101), and whether this is land development (SW102).

SW101 splits each proposal's disturbance union over the zoning layer
(:func:`gis_sw.analysis.overlay.area_by_key`): the permit is needed at the any-zone
threshold, or at the low threshold inside the low-threshold zones (R-10).  SW102 is a land
development activity at one acre, or as part of a larger common plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.overlay import Pieces, overlay_pieces, union_of_parts
from gis_sw.analysis.permits.common import (
    EMPTY,
    GAP_FIX,
    area,
    attr,
    disturbance_gap,
    flag,
    plan_acres,
    plan_acres_problem,
    reached,
    say,
    sqft_pair,
    union,
)
from gis_sw.analysis.wording import fmt_limit, fmt_sqft, sqft_acres_pair
from gis_sw.units import SQFT_PER_ACRE


@dataclass(frozen=True, slots=True)
class PermitArea:
    """How one proposal's disturbance splits over the zoning layer."""

    proposal_id: str
    total_sqft: float
    low_sqft: float
    unzoned_sqft: float
    by_zone: tuple[tuple[str, float], ...]
    union: shapely.Geometry
    low_part: shapely.Geometry
    zoning_problem: str | None  # why the zone split is unknown, when it is
    outcome: Outcome
    decided_by: str  # "any", "low", "below", "unknown", "none", "partial"
    gap: str = ""  # why the disturbed area is not known whole (:func:`disturbance_gap`)


def permit_areas(ctx: CheckContext) -> dict[str, PermitArea]:
    """Return the zone split and SW101 outcome of every proposal (cached on the context)."""
    return ctx.memo("permits.areas", lambda: _permit_areas(ctx))


def _zone_split(ctx: CheckContext) -> tuple[Pieces | None, str | None]:
    """Return the overlay of the disturbance unions on the zoning, or why there is none."""
    zone_col = ctx.ruleset.zones.zone_column
    zoning = ctx.layers.get("zoning")
    if zoning is None:
        return None, "the zoning layer was not provided"
    if zone_col not in zoning.columns:
        return None, f"the zoning layer has no column {zone_col!r}"
    return overlay_pieces(ctx.disturbance_union, zoning, zone_col, keep_geometry=True), None


ZoneSums = tuple[dict[str, list[tuple[str, float]]], dict[str, float], dict[str, Any]]
"""Per proposal: (zone, sq ft) in zone order; sq ft in low-threshold zones; that part."""


def _zone_sums(ctx: CheckContext, split: Pieces | None) -> ZoneSums:
    """Return each proposal's areas by named zone, in the low zones, and the low part.

    The overlay has one row per (proposal, zone), so a proposal's area in a zone is its
    row's; zones are listed in sorted order, as a pandas groupby lists them.
    """
    if split is None or split.geometry is None:
        return {}, {}, {}
    named = np.array([k is not None for k in split.key.tolist()], dtype=bool)
    subjects, keys = split.subject[named].tolist(), split.key[named].tolist()
    areas, geoms = split.area_sqft[named], split.geometry[named]
    if not all(type(k) is str for k in keys) or not all(type(p) is str for p in subjects):
        return _zone_sums_pandas(ctx, subjects, keys, areas, geoms)
    by_zone_of: dict[str, list[tuple[str, float]]] = {}
    for i in sorted(range(len(keys)), key=lambda i: (subjects[i], keys[i])):
        by_zone_of.setdefault(subjects[i], []).append((keys[i], float(areas[i])))
    low = ctx.ruleset.low_threshold_mask(keys)
    low_rows: dict[str, list[int]] = {}
    for i in np.flatnonzero(low).tolist():
        low_rows.setdefault(subjects[i], []).append(i)
    if any(len(rows) > 1 for rows in low_rows.values()):
        return _zone_sums_pandas(ctx, subjects, keys, areas, geoms)
    low_of = {pid: float(areas[rows[0]]) for pid, rows in low_rows.items()}
    low_part_of = {pid: union_of_parts(geoms[rows]) for pid, rows in low_rows.items()}
    return by_zone_of, low_of, low_part_of


def _zone_sums_pandas(
    ctx: CheckContext, subjects: list[Any], keys: list[Any], areas: Any, geoms: Any
) -> ZoneSums:
    """Return :func:`_zone_sums` through pandas' groupby.

    For zone names that are not text, or a proposal in several low-threshold zones (whose
    areas pandas sums).
    """
    named = pd.DataFrame(
        {"subject": subjects, "key": pd.Series(keys, dtype=object), "area_sqft": areas}
    )
    named["geometry"] = geoms
    zone_sums = named.groupby(["subject", "key"], sort=True)["area_sqft"].sum()
    by_zone_of: dict[str, list[tuple[str, float]]] = {}
    pids = zone_sums.index.get_level_values(0).astype(str)
    zones = zone_sums.index.get_level_values(1).astype(str)
    for subject, zone, zone_sqft in zip(pids, zones, zone_sums.to_numpy(), strict=True):
        by_zone_of.setdefault(subject, []).append((zone, float(zone_sqft)))
    low_rows = named[ctx.ruleset.low_threshold_mask(named["key"])]
    low_of = {str(k): float(v) for k, v in low_rows.groupby("subject")["area_sqft"].sum().items()}
    low_part_of = {
        str(subject): shapely.union_all(group.to_numpy())
        for subject, group in low_rows.groupby("subject")["geometry"]
    }
    return by_zone_of, low_of, low_part_of


def _decide(ctx: CheckContext, total: float, low: float, unzoned: float) -> tuple[Outcome, str]:
    """Return the SW101 outcome of a disturbed proposal and what decided it."""
    params = ctx.ruleset.permit
    if reached(total, params.threshold_any_zone_sqft):
        return Outcome.REQUIRED, "any"
    if reached(low, params.threshold_low_zone_sqft):
        return Outcome.REQUIRED, "low"
    if reached(low + unzoned, params.threshold_low_zone_sqft):
        return Outcome.REVIEW, "unknown"
    return Outcome.PASS, "below"


def _permit_areas(ctx: CheckContext) -> dict[str, PermitArea]:
    split, problem = _zone_split(ctx)
    out: dict[str, PermitArea] = {}
    has_dist = set(ctx.proposals.disturbance["proposal_id"].astype(str))
    # one pass over the overlay rows, grouped by proposal (no per-proposal filtering)
    by_zone_of, low_of, low_part_of = _zone_sums(ctx, split)
    for pid in ctx.proposal_ids:
        total = area(ctx)[pid]
        by_zone = tuple(by_zone_of.get(pid, ()))
        low = float(low_of.get(pid, 0.0))
        unzoned = max(total - sum(a for _, a in by_zone), 0.0) if problem is None else total
        gap = disturbance_gap(ctx).get(pid, "")
        if pid not in has_dist or total <= 0.0:
            outcome, decided = Outcome.REVIEW, "none"
        else:
            outcome, decided = _decide(ctx, total, low, unzoned)
            if gap and outcome is not Outcome.REQUIRED:
                outcome, decided = Outcome.REVIEW, "partial"
        out[pid] = PermitArea(
            proposal_id=pid,
            total_sqft=total,
            low_sqft=low,
            unzoned_sqft=round(unzoned, 6),
            by_zone=by_zone,
            union=union(ctx)[pid],
            low_part=low_part_of.get(pid, EMPTY),
            zoning_problem=problem,
            outcome=outcome,
            decided_by=decided,
            gap=gap,
        )
    return out


def _threshold_row(ctx: CheckContext, pa: PermitArea, cite: str) -> tuple[str, float, Any, Any]:
    """Return the SW101 message, measured figure, threshold and geometry of one proposal."""
    params = ctx.ruleset.permit
    low_name = " / ".join(ctx.ruleset.zones.low_threshold_zones)
    t_any, t_low = params.threshold_any_zone_sqft, params.threshold_low_zone_sqft
    pid = pa.proposal_id
    zones = ", ".join(f"{z}: {fmt_sqft(a)} sq ft" for z, a in pa.by_zone)
    if len(pa.by_zone) == 1 and pa.unzoned_sqft < 0.05:
        split = f" in zone {pa.by_zone[0][0]}"
    else:
        split = f" ({zones})" if zones else ""
    permit = f"a stormwater management control permit is required ({cite})."
    if pa.decided_by == "none":
        msg = (
            f"Proposal {pid} has no disturbance polygons: the permit threshold cannot be "
            f"checked ({cite})."
        )
        if pa.gap and "has no disturbance polygons" not in pa.gap:
            msg = f"The permit threshold cannot be checked: {pa.gap}. Fix: {GAP_FIX} ({cite})."
        return msg, float("nan"), t_any, pa.union
    if pa.decided_by == "partial":
        m, lim_text = sqft_pair(pa.total_sqft, t_any)
        msg = (
            f"Disturbance of {m} sq ft drawn is below the {lim_text} sq ft threshold, but "
            f"{pa.gap}, so the whole disturbed area is not known: review. Fix: {GAP_FIX} "
            f"({cite})."
        )
        return msg, pa.total_sqft, t_any, pa.union
    if pa.decided_by == "any":
        low_m, low_l = sqft_pair(pa.low_sqft, t_low)
        also = (
            f", and {low_m} sq ft of it inside zone {low_name} reaches the {low_l} sq ft threshold"
            if reached(pa.low_sqft, t_low)
            else ""
        )
        m, lim_text = sqft_pair(pa.total_sqft, t_any)
        msg = (
            f"Disturbance of {m} sq ft{split} reaches the {lim_text} sq ft threshold for all "
            f"zones{also}: {permit}"
        )
        return msg, pa.total_sqft, t_any, pa.union
    if pa.decided_by == "low":
        of_total = (
            f" (of {fmt_sqft(pa.total_sqft)} sq ft in all)"
            if pa.total_sqft - pa.low_sqft >= 0.05
            else ""
        )
        m, lim_text = sqft_pair(pa.low_sqft, t_low)
        msg = (
            f"Disturbance of {m} sq ft inside zone {low_name}{of_total} "
            f"reaches the {lim_text} sq ft threshold: {permit}"
        )
        return msg, pa.low_sqft, t_low, pa.low_part
    if pa.decided_by == "unknown":
        why = pa.zoning_problem or (
            f"{fmt_sqft(pa.unzoned_sqft)} sq ft lies outside any named zone of the zoning layer"
        )
        m, lim_text = sqft_pair(pa.total_sqft, t_any)
        msg = (
            f"Disturbance of {m} sq ft is below the {lim_text} sq ft threshold for all zones, "
            f"but {why}, so whether {fmt_limit(t_low)} sq ft or more lies inside zone "
            f"{low_name} is unknown: review against the zoning map ({cite})."
        )
        return msg, pa.total_sqft, t_low, pa.union
    m, lim_text = sqft_pair(pa.total_sqft, t_any)
    low_m, low_l = sqft_pair(pa.low_sqft, t_low)
    msg = (
        f"Disturbance of {m} sq ft{split} is below the {lim_text} sq ft threshold for all "
        f"zones, and {low_m} sq ft inside zone {low_name} is below the {low_l} sq ft "
        f"threshold: no stormwater management control permit is required ({cite})."
    )
    return msg, pa.total_sqft, t_any, pa.union


@rule_check
def check_permit_threshold(ctx: CheckContext, rows: Findings) -> None:
    """Check SW101: 250 sq ft of disturbance in any zone, or 100 sq ft of it inside R-10."""
    rows.unit, rows.decimals = "sq ft", 2
    for pid, pa in permit_areas(ctx).items():
        msg, meas, lim, geom = _threshold_row(ctx, pa, rows.citation)
        rows.add(pid, pa.outcome, msg, measured=meas, threshold=lim, geometry=geom)


def land_development(ctx: CheckContext) -> dict[str, bool | None]:
    """Return whether each proposal is a land development activity (None: unknown)."""

    def compute() -> dict[str, bool | None]:
        limit_sqft = ctx.ruleset.permit.land_development_acres * SQFT_PER_ACRE
        larger = attr(ctx, "part_of_larger_plan")
        out: dict[str, bool | None] = {}
        for pid in ctx.proposal_ids:
            stated_flag = flag(larger.get(pid))
            acres = plan_acres(ctx, pid)
            stated = acres is not None and round(acres * SQFT_PER_ACRE, 2) > round(
                area(ctx)[pid], 2
            )
            if reached(area(ctx)[pid], limit_sqft):
                out[pid] = True
            elif acres is None and (pid in disturbance_gap(ctx) or plan_acres_problem(ctx, pid)):
                out[pid] = None  # how much is disturbed, or the plan's size, is not known
            elif stated or (stated_flag is None and acres is not None):
                # a larger plan's total beyond the proposal's own area is stated: the proposal
                # is part of one, whatever part_of_larger_plan says (the stricter reading)
                out[pid] = True
            else:
                out[pid] = stated_flag
        return out

    return ctx.memo("permits.land_development", compute)


def _land_development_row(
    ctx: CheckContext, pid: str, lda: bool | None, cite: str
) -> tuple[Outcome, str]:
    """Return the SW102 outcome and message of one proposal."""
    params = ctx.ruleset.permit
    disturbed = area(ctx)[pid]
    measured, acre = sqft_acres_pair(disturbed, params.land_development_acres)
    figure = f"Disturbance of {measured}"
    need = (
        "a land development activity: a stormwater pollution prevention plan (SWPPP) and "
        f"{say(ctx, 'state_construction_permit')} are required ({cite})"
    )
    swppp = flag(attr(ctx, "approved_swppp").get(pid))
    note = " The application states an approved SWPPP." if swppp else ""
    if reached(disturbed, params.land_development_acres * SQFT_PER_ACRE):
        return Outcome.REQUIRED, f"{figure} reaches the {acre} threshold: this is {need}.{note}"
    if lda is True:
        return Outcome.REQUIRED, (
            f"{figure} is below {acre} but is part of a larger common plan of development "
            f"or sale: this is {need}.{note}"
        )
    gap = disturbance_gap(ctx).get(pid) or plan_acres_problem(ctx, pid)
    if lda is None and gap:
        return Outcome.REVIEW, (
            f"{figure} is below {acre} as drawn, but {gap}, so whether this is a land "
            f"development activity needing a SWPPP is unknown. Fix: {GAP_FIX} ({cite})."
        )
    if lda is None:
        return Outcome.REVIEW, (
            f"{figure} is below {acre}; the attribute part_of_larger_plan is not given, so "
            f"whether this is a land development activity needing a SWPPP is unknown ({cite})."
        )
    return Outcome.PASS, (
        f"{figure} is below {acre} and is not part of a larger common plan: not a land "
        f"development activity; no SWPPP is required ({cite})."
    )


@rule_check
def check_land_development(ctx: CheckContext, rows: Findings) -> None:
    """Check SW102: 1 acre or more, or part of a larger common plan: a SWPPP and SPDES coverage."""
    rows.unit, rows.decimals = "sq ft", 2
    rows.threshold = ctx.ruleset.permit.land_development_acres * SQFT_PER_ACRE
    lda = land_development(ctx)
    for pid in ctx.proposal_ids:
        outcome, msg = _land_development_row(ctx, pid, lda[pid], rows.citation)
        rows.add(pid, outcome, msg, measured=area(ctx)[pid], geometry=union(ctx)[pid])
