"""Permits and plans, SW101-SW107: what an application must carry under Chapter 183.

Every number (thresholds, acres, fees, zone names, the wetland adjacent area) comes from the
ruleset.  Areas are those of each proposal's disturbance *union* (overlaps counted once) in
the working CRS, split by the zoning overlay (:func:`gis_sw.analysis.overlay.area_by_key`).
Areas are compared with the limits after rounding to 0.01 sq ft, so a polygon drawn at
exactly 250 sq ft and carried through a reprojection still meets a 250 sq ft threshold.

Subjects: SW101, SW102, SW104, SW105 and SW107 give one row per proposal (``subject_id`` is
the proposal id); SW103 one row per condition (``P-1:condition-A``) and SW106 one row per
mapped resource (``P-1:wetlands``, ``P-1:wetland_adjacent_area``, ``P-1:water_bodies``,
``P-1:floodplain``, and ``P-1:streams`` when a ``streams`` line layer is given).

Readings (issue 13; docs/check.md states them for users):

- Condition A (§ 183-7B(2)(a)) is about where runoff *goes*: the applicant's
  ``discharges_to_impaired_water`` decides when given; otherwise a TMDL watershed
  (``impaired_waters.listing`` naming one of ``[condition_a] watershed_listings``) is met by
  overlap, and an impaired water body by overlap or by a D8 flow path over the DEM reaching
  it (:mod:`gis_sw.analysis.flow`); anything the layers cannot show is ``review``.
- Conditions B and C count the project: the larger of the proposal's own area and its
  ``larger_plan_acres``.  A part of a larger plan whose total is not given (or whose
  ``part_of_larger_plan`` is not given) is never passed on its own area.
- A claimed exemption is read by :func:`gis_sw.layers.exemptions.parse_exemption` (letter,
  citation or heading) and its own conditions are checked (``[exemption_conditions]``):
  routine maintenance at 5 acres or more and landscaping on a lot with no building fail;
  agricultural activity with new roofs is review.
- Sentences naming a state programme, another chapter or an agency come from the ruleset's
  ``[wording]`` (:data:`WORDING_DEFAULTS` names the keys and their neutral fallbacks); a
  measured figure beside its limit is written by :mod:`gis_sw.analysis.wording`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.bands import adjacent_band_near
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Outcome, empty_findings, make_findings
from gis_sw.analysis.flow import Reach, impaired_discharge
from gis_sw.analysis.overlay import area_by_key
from gis_sw.analysis.wording import figure_pair, fmt_acres, fmt_sqft, fmt_usd
from gis_sw.layers.exemptions import parse_exemption
from gis_sw.units import SQFT_PER_ACRE

__all__ = [
    "WORDING_DEFAULTS",
    "PermitArea",
    "check_application",
    "check_exemption",
    "check_land_development",
    "check_mapped_resources",
    "check_permit_threshold",
    "check_post_construction",
    "check_state_floor",
    "exemption_letter",
    "fmt_acres",
    "fmt_sqft",
    "fmt_usd",
    "land_development",
    "permit_areas",
]

_EMPTY = shapely.Polygon()

WORDING_DEFAULTS: dict[str, str] = {
    "state_construction_permit": (
        "coverage under the state's general permit for stormwater from construction activity"
    ),
    "state_floor_applies": (
        "state general permit coverage for construction activity applies alongside the town "
        "permit; the town's rules are not less restrictive than the state's requirements"
    ),
    "state_floor_not_covered": (
        "the town permit addresses land not covered by a state construction stormwater permit; "
        "state requirements still apply where they reach further"
    ),
    "wetlands_consequence": "the town's wetland law and state or federal wetland permits may apply",
    "wetland_adjacent_area_consequence": "the town's wetland law may regulate the adjacent area",
    "water_bodies_consequence": "state and federal permits for work in or near waters may apply",
    "floodplain_consequence": "the town's flood damage prevention law applies",
    "impaired_waters": "an impaired water or TMDL watershed",
}
"""Keys of the ruleset's ``[wording]`` table SW1xx uses, with the neutral sentence (naming no
agency or chapter) each falls back to when a ruleset leaves it out."""


def _say(ctx: CheckContext, key: str) -> str:
    """The town's words for ``key`` (``[wording]``), or the neutral default."""
    return ctx.ruleset.wording(key, WORDING_DEFAULTS[key])


# -- formatting -------------------------------------------------------------------------------


def _limit(value: float) -> str:
    return f"{value:,g}"


def _sqft_pair(area_sqft: float, limit_sqft: float) -> tuple[str, str]:
    """Measured area (rounded to 0.01, as compared) and limit, decimals as the comparison needs."""
    return figure_pair(round(float(area_sqft), 2), limit_sqft)


def _acres_pair(area_sqft: float, limit_acres: float) -> tuple[str, str]:
    """``"43,559.99 sq ft (just under 1 acre)"`` and ``"1 acre (43,560.00 sq ft)"``.

    The figure reads in sq ft and acres; when the acres alone cannot show the two apart (a
    hundredth of a sq ft is a ten-millionth of an acre), the acres say "just under/over" and
    the limit adds its square feet.
    """
    area = round(float(area_sqft), 2)
    limit_sqft = limit_acres * SQFT_PER_ACRE
    sq, lim_sq = figure_pair(area, limit_sqft)
    ac, lim_ac = figure_pair(area / SQFT_PER_ACRE, limit_acres, base=2)
    unit = "acre" if limit_acres == 1 else "acres"
    if ac == lim_ac and area != round(limit_sqft, 2):
        side = "under" if area < limit_sqft else "over"
        return f"{sq} sq ft (just {side} {_limit(limit_acres)} {unit})", (
            f"{_limit(limit_acres)} {unit} ({lim_sq} sq ft)"
        )
    return f"{sq} sq ft ({ac} acres)", f"{_limit(limit_acres)} {unit}"


def _round2(values: Any) -> Any:
    """Measured figures to 0.01 (the precision they are compared at)."""
    return np.round(np.asarray(values, dtype="float64"), 2)


def _reached(area_sqft: float, limit_sqft: float) -> bool:
    return round(float(area_sqft), 2) >= limit_sqft


def _area(ctx: CheckContext) -> dict[str, float]:
    """Disturbed area of each proposal, sq ft, as a dict (fast lookups per proposal)."""
    return ctx.memo(
        "permits.area", lambda: {str(k): float(v) for k, v in ctx.disturbed_area_sqft.items()}
    )


def _union(ctx: CheckContext) -> dict[str, Any]:
    """Disturbance union of each proposal as a dict."""
    union = ctx.disturbance_union
    return ctx.memo(
        "permits.union",
        lambda: dict(zip(union.index.astype(str), union.to_numpy(), strict=True)),
    )


def _attr(ctx: CheckContext, column: str) -> dict[str, Any]:
    """One attribute column as a dict by proposal id."""
    attrs = ctx.proposals.attributes
    return ctx.memo(
        f"permits.attr.{column}",
        lambda: dict(
            zip(attrs.index.astype(str), attrs[column].to_numpy(dtype=object), strict=True)
        ),
    )


def _flag(value: Any) -> bool | None:
    """A nullable boolean attribute as True / False / None."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    return bool(value)


def _text(value: Any) -> str | None:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


# -- SW101: permit threshold --------------------------------------------------------------------


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
    decided_by: str  # "any", "low", "below", "unknown", "none"


def permit_areas(ctx: CheckContext) -> dict[str, PermitArea]:
    """Zone split and SW101 outcome of every proposal (cached on the context)."""
    return ctx.memo("permits.areas", lambda: _permit_areas(ctx))


def _permit_areas(ctx: CheckContext) -> dict[str, PermitArea]:
    params = ctx.ruleset.permit
    zone_col = ctx.ruleset.zones.zone_column
    unions = ctx.disturbance_union
    zoning = ctx.layers.get("zoning")
    problem: str | None = None
    split = pd.DataFrame(columns=["subject", "key", "area_sqft", "geometry"])
    if zoning is None:
        problem = "the zoning layer was not provided"
    elif zone_col not in zoning.columns:
        problem = f"the zoning layer has no column {zone_col!r}"
    else:
        split = area_by_key(unions, zoning, zone_col, keep_geometry=True)
    out: dict[str, PermitArea] = {}
    has_dist = set(ctx.proposals.disturbance["proposal_id"].astype(str))
    # one pass over the overlay rows, grouped by proposal (no per-proposal filtering)
    named = split[split["key"].notna()]
    zone_sums = named.groupby(["subject", "key"], sort=True)["area_sqft"].sum()
    by_zone_of: dict[str, list[tuple[str, float]]] = {}
    subjects = zone_sums.index.get_level_values(0).astype(str)
    zones = zone_sums.index.get_level_values(1).astype(str)
    for subject, zone, area in zip(subjects, zones, zone_sums.to_numpy(), strict=True):
        by_zone_of.setdefault(subject, []).append((zone, float(area)))
    low_rows = named[ctx.ruleset.low_threshold_mask(named["key"])]
    low_of = low_rows.groupby("subject")["area_sqft"].sum()
    low_part_of = {
        str(subject): shapely.union_all(group.to_numpy())
        for subject, group in low_rows.groupby("subject")["geometry"]
    }
    for pid in ctx.proposals.ids:
        total = _area(ctx)[pid]
        by_zone = tuple(by_zone_of.get(pid, ()))
        low = float(low_of.get(pid, 0.0))
        low_part = low_part_of.get(pid, _EMPTY)
        unzoned = max(total - sum(a for _, a in by_zone), 0.0) if problem is None else total
        if pid not in has_dist or total <= 0.0:
            outcome, decided = Outcome.REVIEW, "none"
        elif _reached(total, params.threshold_any_zone_sqft):
            outcome, decided = Outcome.REQUIRED, "any"
        elif _reached(low, params.threshold_low_zone_sqft):
            outcome, decided = Outcome.REQUIRED, "low"
        elif _reached(low + unzoned, params.threshold_low_zone_sqft):
            outcome, decided = Outcome.REVIEW, "unknown"
        else:
            outcome, decided = Outcome.PASS, "below"
        out[pid] = PermitArea(
            proposal_id=pid,
            total_sqft=total,
            low_sqft=low,
            unzoned_sqft=round(unzoned, 6),
            by_zone=by_zone,
            union=_union(ctx)[pid],
            low_part=low_part,
            zoning_problem=problem,
            outcome=outcome,
            decided_by=decided,
        )
    return out


def check_permit_threshold(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW101: 250 sq ft of disturbance in any zone, or 100 sq ft of it inside R-10."""
    params = ctx.ruleset.permit
    cite = ctx.citation("SW101")
    low_name = " / ".join(ctx.ruleset.zones.low_threshold_zones)
    t_any, t_low = params.threshold_any_zone_sqft, params.threshold_low_zone_sqft
    rows: dict[str, list[Any]] = {k: [] for k in ("pid", "out", "msg", "meas", "lim", "geom")}
    for pid, pa in permit_areas(ctx).items():
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
            meas, lim, geom = np.nan, t_any, pa.union
        elif pa.decided_by == "any":
            low_m, low_l = _sqft_pair(pa.low_sqft, t_low)
            also = (
                f", and {low_m} sq ft of it inside zone {low_name} reaches the "
                f"{low_l} sq ft threshold"
                if _reached(pa.low_sqft, t_low)
                else ""
            )
            m, lim_text = _sqft_pair(pa.total_sqft, t_any)
            msg = (
                f"Disturbance of {m} sq ft{split} reaches the {lim_text} sq ft threshold for all "
                f"zones{also}: {permit}"
            )
            meas, lim, geom = pa.total_sqft, t_any, pa.union
        elif pa.decided_by == "low":
            of_total = (
                f" (of {fmt_sqft(pa.total_sqft)} sq ft in all)"
                if pa.total_sqft - pa.low_sqft >= 0.05
                else ""
            )
            m, lim_text = _sqft_pair(pa.low_sqft, t_low)
            msg = (
                f"Disturbance of {m} sq ft inside zone {low_name}{of_total} "
                f"reaches the {lim_text} sq ft threshold: {permit}"
            )
            meas, lim, geom = pa.low_sqft, t_low, pa.low_part
        elif pa.decided_by == "unknown":
            why = pa.zoning_problem or (
                f"{fmt_sqft(pa.unzoned_sqft)} sq ft lies outside any named zone of the zoning layer"
            )
            m, lim_text = _sqft_pair(pa.total_sqft, t_any)
            msg = (
                f"Disturbance of {m} sq ft is below the {lim_text} sq ft threshold for all zones, "
                f"but {why}, so whether {_limit(t_low)} sq ft or more lies inside zone {low_name} "
                f"is unknown: review against the zoning map ({cite})."
            )
            meas, lim, geom = pa.total_sqft, t_low, pa.union
        else:
            m, lim_text = _sqft_pair(pa.total_sqft, t_any)
            low_m, low_l = _sqft_pair(pa.low_sqft, t_low)
            msg = (
                f"Disturbance of {m} sq ft{split} is below the {lim_text} sq ft threshold for all "
                f"zones, and {low_m} sq ft inside zone {low_name} is below the {low_l} sq ft "
                f"threshold: no stormwater management control permit is required ({cite})."
            )
            meas, lim, geom = pa.total_sqft, t_any, pa.union
        for k, v in zip(rows, (pid, pa.outcome, msg, meas, lim, geom), strict=True):
            rows[k].append(v)
    if not rows["pid"]:
        return empty_findings(ctx.crs)
    return make_findings(
        "SW101",
        ctx.crs,
        proposal_id=rows["pid"],
        subject_id=rows["pid"],
        outcome=rows["out"],
        message=rows["msg"],
        measured=_round2(rows["meas"]),
        threshold=rows["lim"],
        unit="sq ft",
        geometry=rows["geom"],
    )


# -- SW102: land development activity -----------------------------------------------------------


def land_development(ctx: CheckContext) -> dict[str, bool | None]:
    """Whether each proposal is a land development activity (None: unknown)."""

    def compute() -> dict[str, bool | None]:
        limit_sqft = ctx.ruleset.permit.land_development_acres * SQFT_PER_ACRE
        larger = _attr(ctx, "part_of_larger_plan")
        out: dict[str, bool | None] = {}
        for pid in ctx.proposals.ids:
            flag = _flag(larger.get(pid))
            acres = _plan_acres(ctx, pid)
            stated = acres is not None and round(acres * SQFT_PER_ACRE, 2) > round(
                _area(ctx)[pid], 2
            )
            if _reached(_area(ctx)[pid], limit_sqft):
                out[pid] = True
            elif stated or (flag is None and acres is not None):
                # a larger plan's total beyond the proposal's own area is stated: the proposal
                # is part of one, whatever part_of_larger_plan says (the stricter reading)
                out[pid] = True
            else:
                out[pid] = flag
        return out

    return ctx.memo("permits.land_development", compute)


def check_land_development(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW102: 1 acre or more, or part of a larger common plan: a SWPPP and SPDES coverage."""
    params = ctx.ruleset.permit
    cite = ctx.citation("SW102")
    limit_sqft = params.land_development_acres * SQFT_PER_ACRE
    lda = land_development(ctx)
    approved = _attr(ctx, "approved_swppp")
    rows: dict[str, list[Any]] = {k: [] for k in ("pid", "out", "msg")}
    state_permit = _say(ctx, "state_construction_permit")
    for pid in ctx.proposals.ids:
        area = _area(ctx)[pid]
        measured, acre = _acres_pair(area, params.land_development_acres)
        figure = f"Disturbance of {measured}"
        need = (
            "a land development activity: a stormwater pollution prevention plan (SWPPP) and "
            f"{state_permit} are required ({cite})"
        )
        swppp = _flag(approved.get(pid))
        note = " The application states an approved SWPPP." if swppp else ""
        if _reached(area, limit_sqft):
            outcome = Outcome.REQUIRED
            msg = f"{figure} reaches the {acre} threshold: this is {need}.{note}"
        elif lda[pid] is True:
            outcome = Outcome.REQUIRED
            msg = (
                f"{figure} is below {acre} but is part of a larger common plan of development "
                f"or sale: this is {need}.{note}"
            )
        elif lda[pid] is None:
            outcome = Outcome.REVIEW
            msg = (
                f"{figure} is below {acre}; the attribute part_of_larger_plan is not given, so "
                f"whether this is a land development activity needing a SWPPP is unknown ({cite})."
            )
        else:
            outcome = Outcome.PASS
            msg = (
                f"{figure} is below {acre} and is not part of a larger common plan: not a land "
                f"development activity; no SWPPP is required ({cite})."
            )
        rows["pid"].append(pid)
        rows["out"].append(outcome)
        rows["msg"].append(msg)
    if not rows["pid"]:
        return empty_findings(ctx.crs)
    areas = [_area(ctx)[p] for p in rows["pid"]]
    return make_findings(
        "SW102",
        ctx.crs,
        proposal_id=rows["pid"],
        subject_id=rows["pid"],
        outcome=rows["out"],
        message=rows["msg"],
        measured=_round2(areas),
        threshold=limit_sqft,
        unit="sq ft",
        geometry=[_union(ctx)[p] for p in rows["pid"]],
    )


# -- SW103: post-construction controls, Conditions A, B, C ---------------------------------------


def _plan_acres(ctx: CheckContext, pid: str) -> float | None:
    """``larger_plan_acres`` when given as a finite number of 0 or more, else None."""
    value = _attr(ctx, "larger_plan_acres").get(pid)
    if value is None or value is pd.NA:
        return None
    try:
        acres = float(value)
    except (TypeError, ValueError):
        return None
    return acres if math.isfinite(acres) and acres >= 0 else None


@dataclass(frozen=True, slots=True)
class ProjectArea:
    """The area Conditions B and C count: the project's, which may be a larger plan's.

    ``total_sqft`` is None when the proposal is (or may be) part of a larger common plan
    whose total is not given: the total is then at least ``own_sqft``, no more is known.
    """

    own_sqft: float
    total_sqft: float | None
    basis: str  # "" for the proposal's own area, else the clause naming the plan


def project_area(ctx: CheckContext) -> dict[str, ProjectArea]:
    """Each proposal's area for Conditions B and C (and exemption C's five acres)."""

    def compute() -> dict[str, ProjectArea]:
        larger = _attr(ctx, "part_of_larger_plan")
        out = {}
        for pid in ctx.proposals.ids:
            own = _area(ctx)[pid]
            acres = _plan_acres(ctx, pid)
            part = _flag(larger.get(pid))
            if acres is not None:
                total = max(own, round(acres * SQFT_PER_ACRE, 2))
                basis = f"the whole larger common plan (larger_plan_acres = {acres:,g})"
                if total > round(acres * SQFT_PER_ACRE, 2):
                    basis = (
                        f"its own area, as the larger common plan's stated total "
                        f"(larger_plan_acres = {acres:,g}) is less"
                    )
                out[pid] = ProjectArea(own, total, basis)
            elif part is True:
                out[pid] = ProjectArea(
                    own,
                    None,
                    "part of a larger common plan whose total area (larger_plan_acres) is not "
                    "given",
                )
            elif part is None:
                out[pid] = ProjectArea(
                    own, None, "whether it is part of a larger common plan is not given"
                )
            else:
                out[pid] = ProjectArea(own, own, "")
        return out

    return ctx.memo("permits.project_area", compute)


def _condition_a(ctx: CheckContext, lda: dict[str, bool | None]) -> dict[str, tuple[Any, ...]]:
    """Condition A of every proposal: (outcome, clause, geometry)."""
    cite = f"({ctx.citation('SW103')}(a))."
    impaired = _say(ctx, "impaired_waters")
    controls = _CONTROLS
    flags = _attr(ctx, "discharges_to_impaired_water")
    need_layers = [
        p for p in ctx.proposals.ids if lda[p] is not False and _flag(flags.get(p)) is None
    ]
    read = impaired_discharge(ctx, need_layers) if need_layers else {}
    out: dict[str, tuple[Any, ...]] = {}
    for pid in ctx.proposals.ids:
        union = _union(ctx)[pid]
        flag = _flag(flags.get(pid))
        if lda[pid] is False:
            out[pid] = (
                Outcome.PASS,
                f"not a land development activity, so it does not apply {cite}",
                union,
            )
            continue
        if flag is not None:
            stated = "discharges" if flag else "does not discharge"
            why = (
                f"the application states (discharges_to_impaired_water, which decides over the "
                f"layers) that runoff {stated} to {impaired}"
            )
            reach, geom = (Reach.REACHES if flag else Reach.MISSES), union
        else:
            found = read[pid]
            why, reach, geom = found.why, found.reach, found.geometry
        if reach is Reach.REACHES and lda[pid] is None:
            outcome = Outcome.REVIEW
            msg = f"{why}; if this is a land development activity (see SW102), {controls} {cite}"
        elif reach is Reach.REACHES:
            outcome, msg = Outcome.REQUIRED, f"{why}: {controls} {cite}"
        elif reach is Reach.MISSES:
            outcome, msg = Outcome.PASS, f"{why}, so it does not apply {cite}"
        else:
            outcome = Outcome.REVIEW
            msg = (
                f"the attribute discharges_to_impaired_water is not given and {why}: whether "
                f"runoff reaches {impaired} is unknown {cite}"
            )
        out[pid] = (outcome, msg, geom)
    return out


_CONTROLS = "post-construction stormwater runoff controls (water quantity and quality) are required"


def _condition_b(ctx: CheckContext, proj: ProjectArea) -> tuple[Outcome, str, float]:
    """Condition B: five acres or more disturbed by the project."""
    cite = f"({ctx.citation('SW103')}(b))."
    b_acres = ctx.ruleset.permit.condition_b_acres
    b_sqft = b_acres * SQFT_PER_ACRE
    known = proj.total_sqft is not None
    of_plan = f", counting {proj.basis}," if proj.basis and known else ""
    area = proj.total_sqft if proj.total_sqft is not None else proj.own_sqft
    figure, limit = _acres_pair(area, b_acres)
    if _reached(area, b_sqft):
        outcome = Outcome.REQUIRED
        msg = f"disturbance of {figure}{of_plan} reaches {limit}: {_CONTROLS} {cite}"
    elif not known:
        outcome = Outcome.REVIEW
        msg = (
            f"disturbance of {figure} is below {limit} on its own, but {proj.basis}: whether the "
            f"project disturbs {limit} or more is unknown {cite}"
        )
    else:
        outcome = Outcome.PASS
        msg = f"disturbance of {figure}{of_plan} is below {limit} {cite}"
    return outcome, msg, area


def _condition_c(ctx: CheckContext, pid: str, proj: ProjectArea) -> tuple[Outcome, str, float]:
    """Condition C: one to five acres during the project, except the excluded land uses."""
    params = ctx.ruleset.permit
    cite = f"({ctx.citation('SW103')}(c))."
    c_min = params.condition_c_min_acres * SQFT_PER_ACRE
    c_max = params.condition_c_max_acres * SQFT_PER_ACRE
    c_range = (
        f"{_limit(params.condition_c_min_acres)} to {_limit(params.condition_c_max_acres)} acres"
    )
    land_use = _text(_attr(ctx, "land_use").get(pid))
    known = proj.total_sqft is not None
    area = proj.total_sqft if proj.total_sqft is not None else proj.own_sqft
    of_plan = f", counting {proj.basis}," if proj.basis and known else ""
    below = not _reached(area, c_min)
    figure, limit = _acres_pair(
        area, params.condition_c_min_acres if below else params.condition_c_max_acres
    )
    instead = (
        ""
        if known
        else f" ({proj.basis}: if the project's total reaches "
        f"{_limit(params.condition_b_acres)} acres, Condition B applies instead; controls are "
        "required either way)"
    )
    outcome = Outcome.PASS
    if land_use is not None and land_use in set(params.condition_c_excluded_land_uses):
        msg = (
            f"disturbance of {figure}{of_plan.rstrip(',')}: land use {land_use} is excluded from "
            "Condition C"
        )
    elif _reached(area, c_max):
        msg = (
            f"disturbance of {figure}{of_plan} reaches {limit}, the top of the {c_range} range "
            "(Condition B applies instead)"
        )
    elif below and known:
        msg = (
            f"disturbance of {figure}{of_plan} is below {limit}, the bottom of the {c_range} range"
        )
    elif below:
        outcome = Outcome.REVIEW
        msg = (
            f"disturbance of {figure} is below {limit} on its own, but {proj.basis}: whether the "
            f"project disturbs {c_range} is unknown"
        )
    elif land_use is None:
        outcome = Outcome.REVIEW
        msg = (
            f"disturbance of {figure}{of_plan} is within {c_range}, but the attribute land_use "
            "is not given, so the exclusion of single-family residences and agricultural "
            f"properties cannot be decided{instead}"
        )
    else:
        outcome = Outcome.REQUIRED
        msg = (
            f"disturbance of {figure}{of_plan} is within {c_range} and land use {land_use} is "
            f"not excluded{instead}: {_CONTROLS}"
        )
    return outcome, f"{msg} {cite}", area


def check_post_construction(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW103: Conditions A (discharge to impaired waters), B (5 acres or more), C (1 to 5)."""
    params = ctx.ruleset.permit
    lda = land_development(ctx)
    cond_a = _condition_a(ctx, lda)
    projects = project_area(ctx)
    b_sqft = params.condition_b_acres * SQFT_PER_ACRE
    c_min = params.condition_c_min_acres * SQFT_PER_ACRE
    names = ("pid", "sub", "out", "msg", "meas", "lim", "geom")
    cols: dict[str, list[Any]] = {k: [] for k in names}
    for pid in ctx.proposals.ids:
        union = _union(ctx)[pid]
        out_a, msg_a, geom_a = cond_a[pid]
        out_b, msg_b, area_b = _condition_b(ctx, projects[pid])
        out_c, msg_c, area_c = _condition_c(ctx, pid, projects[pid])
        for cond, out, msg, meas, lim, geom in (
            ("A", out_a, msg_a, np.nan, np.nan, geom_a),
            ("B", out_b, msg_b, area_b, b_sqft, union),
            ("C", out_c, msg_c, area_c, c_min, union),
        ):
            values = (
                pid,
                f"{pid}:condition-{cond}",
                out,
                f"Condition {cond}: {msg}",
                meas,
                lim,
                geom,
            )
            for k, v in zip(names, values, strict=True):
                cols[k].append(v)
    if not cols["pid"]:
        return empty_findings(ctx.crs)
    return make_findings(
        "SW103",
        ctx.crs,
        proposal_id=cols["pid"],
        subject_id=cols["sub"],
        outcome=cols["out"],
        message=cols["msg"],
        measured=_round2(cols["meas"]),
        threshold=cols["lim"],
        unit="sq ft",
        geometry=cols["geom"],
    )


# -- SW104: exemptions ----------------------------------------------------------------------------


def exemption_letter(
    claim: str, exemptions: dict[str, str], citation: str = "§ 183-5"
) -> str | None:
    """The letter a claim names (:func:`gis_sw.layers.exemptions.parse_exemption`)."""
    return parse_exemption(claim, exemptions, citation=citation)


def _exemption_rules(ctx: CheckContext) -> dict[str, Any]:
    """``[exemption_conditions]``: which letter carries which condition of its own."""
    table = ctx.ruleset.section("exemption_conditions")
    return {str(k): v for k, v in table.items()}


def _structures_on_lots(ctx: CheckContext, union: Any) -> tuple[str | None, list[str], list[str]]:
    """(problem, lots the disturbance lies on, buildings on those lots) for exemption K."""
    parcels, buildings = ctx.layers.get("parcels"), ctx.layers.get("buildings")
    if buildings is None:
        return "the buildings layer was not provided", [], []
    if parcels is None:
        return "the parcels layer was not provided", [], []
    lots = parcels.iloc[parcels.sindex.query(union, predicate="intersects")]
    lots = lots[shapely.area(shapely.intersection(lots.geometry.to_numpy(), union)) >= 0.005]
    if len(lots) == 0:
        return "the disturbance lies on no parcel of the parcels layer", [], []
    lot_union = shapely.union_all(lots.geometry.to_numpy())
    near = buildings.iloc[buildings.sindex.query(lot_union, predicate="intersects")]
    on = near[shapely.area(shapely.intersection(near.geometry.to_numpy(), lot_union)) >= 0.005]
    lot_ids = sorted(str(v) for v in lots["parcel_id"]) if "parcel_id" in lots else []
    ids = sorted(str(v) for v in on["building_id"]) if "building_id" in on else []
    if len(on) and not ids:
        ids = [f"{len(on)} footprint(s)"]
    return None, lot_ids, ids


def _new_structures(ctx: CheckContext, pid: str, surfaces: list[str]) -> tuple[int, float]:
    """Count and area (sq ft) of the proposal's new structures (roofs) in ``impervious``."""
    imp = ctx.proposals.impervious
    if imp is None or len(imp) == 0 or not surfaces:
        return 0, 0.0
    kinds = imp["surface"].map(lambda v: "" if v is None or pd.isna(v) else str(v).lower())
    mine = imp[(imp["proposal_id"].astype(str) == pid) & kinds.isin([s.lower() for s in surfaces])]
    if len(mine) == 0:
        return 0, 0.0
    return len(mine), float(shapely.area(shapely.union_all(mine.geometry.to_numpy())))


def _exemption_finding(
    ctx: CheckContext, pid: str, letter: str, heading: str
) -> tuple[Outcome, str]:
    """SW104 for a claim naming a letter: its own conditions first (§ 183-5C, K, A)."""
    cite = ctx.citation("SW104")
    decider = ctx.ruleset.decision_maker
    rules = _exemption_rules(ctx)
    proj = project_area(ctx)[pid]
    area = max(proj.own_sqft, proj.total_sqft or 0.0)
    named = f"Exemption {cite}{letter} ({heading}) is claimed"
    still = f"every rule was still checked, and the {decider} decides whether the exemption applies"
    if letter == str(rules.get("routine_maintenance", "")).upper():
        limit_acres = float(rules.get("routine_maintenance_max_acres", 5.0))
        figure, limit = _acres_pair(area, limit_acres)
        counted = f", counting {proj.basis}," if proj.basis and proj.total_sqft is not None else ""
        if _reached(area, limit_acres * SQFT_PER_ACRE):
            return Outcome.FAIL, (
                f"{named}, but the disturbance of {figure}{counted} reaches {limit}: routine "
                f"maintenance is exempt only when it disturbs less than {limit}, so it is not "
                "exempt; every rule applies."
            )
        return Outcome.REVIEW, f"{named} for {figure} of disturbance (less than {limit}): {still}."
    if letter == str(rules.get("landscaping_existing_structure", "")).upper():
        problem, lots, found = _structures_on_lots(ctx, _union(ctx)[pid])
        if problem is not None:
            return Outcome.REVIEW, (
                f"{named}; it needs an existing structure on the lot, but {problem}, so that "
                f"cannot be confirmed: {still}."
            )
        on = ", ".join(lots[:5]) + (", ..." if len(lots) > 5 else "")
        if not found:
            return Outcome.FAIL, (
                f"{named}, but no building stands on lot {on} (buildings layer): landscaping is "
                "exempt only in connection with an existing structure, so it is not exempt; "
                "every rule applies."
            )
        shown = ", ".join(found[:5]) + (", ..." if len(found) > 5 else "")
        return Outcome.REVIEW, (f"{named}; building {shown} stands on lot {on}: {still}.")
    if letter == str(rules.get("agricultural", "")).upper():
        surfaces = [str(v) for v in rules.get("new_structure_surfaces", ["roof"])]
        count, roof_sqft = _new_structures(ctx, pid, surfaces)
        if count:
            return Outcome.REVIEW, (
                f"{named}, but the proposal draws {count} new structure(s) ({', '.join(surfaces)}: "
                f"{fmt_sqft(roof_sqft)} sq ft); agricultural activity does not include the "
                f"construction of new structures, which are not exempt: {still}."
            )
    return Outcome.REVIEW, f"{named} for {fmt_acres(area)} acres of disturbance: {still}."


def check_exemption(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW104: a claimed § 183-5 exemption and its own conditions; the checks still run."""
    cite = ctx.citation("SW104")
    exemptions = dict(ctx.ruleset.exemptions)
    decider = ctx.ruleset.decision_maker
    rules = _exemption_rules(ctx)
    routine = str(rules.get("routine_maintenance", "")).upper()
    routine_sqft = float(rules.get("routine_maintenance_max_acres", 5.0)) * SQFT_PER_ACRE
    cols: dict[str, list[Any]] = {k: [] for k in ("pid", "out", "msg", "meas", "lim")}
    for pid in ctx.proposals.ids:
        claim = _text(_attr(ctx, "exemption").get(pid))
        letter = None
        if claim is None:
            out, msg = Outcome.PASS, f"No exemption under {cite} is claimed; every rule applies."
        else:
            letter = parse_exemption(claim, exemptions, citation=ctx.ruleset.exemptions_citation)
            if letter is None:
                out = Outcome.REVIEW
                msg = (
                    f"The claimed exemption {claim!r} is not one of {cite}"
                    f"{min(exemptions, default='A')}-{max(exemptions, default='K')}; every rule "
                    f"was checked and the {decider} decides."
                )
            else:
                out, msg = _exemption_finding(ctx, pid, letter, exemptions[letter])
        proj = project_area(ctx)[pid]
        if letter is not None and letter == routine:  # the area § 183-5C is judged on
            meas, lim = max(proj.own_sqft, proj.total_sqft or 0.0), routine_sqft
        else:
            meas, lim = proj.own_sqft, np.nan
        for k, v in zip(cols, (pid, out, msg, meas, lim), strict=True):
            cols[k].append(v)
    if not cols["pid"]:
        return empty_findings(ctx.crs)
    return make_findings(
        "SW104",
        ctx.crs,
        proposal_id=cols["pid"],
        subject_id=cols["pid"],
        outcome=cols["out"],
        message=cols["msg"],
        measured=_round2(cols["meas"]),
        threshold=cols["lim"],
        unit="sq ft",
        geometry=[_union(ctx)[p] for p in cols["pid"]],
    )


# -- SW105: application items and fees ---------------------------------------------------------


def check_application(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW105: the § 183-12C(1) forms (a)-(h), $150 fee and 0.5% inspection fee."""
    params = ctx.ruleset.permit
    cite = ctx.citation("SW105")
    items = "; ".join(params.application_items)
    pct = f"{params.inspection_fee_fraction * 100:g}%"
    areas = permit_areas(ctx)
    cols: dict[str, list[Any]] = {k: [] for k in ("pid", "out", "msg", "meas")}
    for pid in ctx.proposals.ids:
        cost = _attr(ctx, "construction_cost_usd").get(pid)
        cost = None if cost is None or pd.isna(cost) else float(cost)
        permit = areas[pid].outcome
        if permit is Outcome.PASS:
            out, meas = Outcome.PASS, np.nan
            msg = (
                "No stormwater management control permit is required (SW101), so no "
                f"application or fees are due ({cite})."
            )
        elif cost is None:
            out, meas = Outcome.REVIEW, params.application_fee_usd
            msg = (
                f"The permit application ({cite}) must carry, in triplicate: {items}. Fees: "
                f"{fmt_usd(params.application_fee_usd)} application fee plus an inspection fee of "
                f"{pct} of the construction cost estimate, which is not given "
                "(attribute construction_cost_usd), so the inspection fee cannot be computed."
            )
        else:
            inspection = cost * params.inspection_fee_fraction
            meas = params.application_fee_usd + inspection
            out = Outcome.REQUIRED if permit is Outcome.REQUIRED else Outcome.REVIEW
            lead = (
                f"The permit application ({cite})"
                if permit is Outcome.REQUIRED
                else f"Whether a permit is required is under review (SW101); if it is, the "
                f"application ({cite})"
            )
            msg = (
                f"{lead} must carry, in triplicate: {items}. Fees: "
                f"{fmt_usd(params.application_fee_usd)} application fee plus an inspection fee of "
                f"{fmt_usd(inspection)} ({pct} of the {fmt_usd(cost)} construction cost estimate) "
                f"= {fmt_usd(meas)}."
            )
        for k, v in zip(cols, (pid, out, msg, meas), strict=True):
            cols[k].append(v)
    if not cols["pid"]:
        return empty_findings(ctx.crs)
    return make_findings(
        "SW105",
        ctx.crs,
        proposal_id=cols["pid"],
        subject_id=cols["pid"],
        outcome=cols["out"],
        message=cols["msg"],
        measured=_round2(cols["meas"]),
        unit="USD",
        geometry=[_union(ctx)[p] for p in cols["pid"]],
    )


# -- SW106: mapped resources ------------------------------------------------------------------


_RESOURCES: tuple[tuple[str, str, str], ...] = (
    ("wetlands", "mapped wetlands", "wetlands_consequence"),
    ("wetland_adjacent_area", "the wetland adjacent area", "wetland_adjacent_area_consequence"),
    ("water_bodies", "mapped water bodies", "water_bodies_consequence"),
    ("floodplain", "the 100-year floodplain", "floodplain_consequence"),
)
"""(resource, what the sentence calls it, the ``[wording]`` key of what follows from it)."""


def _resource_names(layer: gpd.GeoDataFrame, unions: gpd.GeoSeries, column: str) -> dict[str, str]:
    """Names of the features each proposal's disturbance touches: ``" (A, B)"`` by proposal."""
    if column not in layer.columns or len(layer) == 0:
        return {}
    tree = shapely.STRtree(layer.geometry.to_numpy())
    subject_pos, feature_pos = tree.query(unions.to_numpy(), predicate="intersects")
    values = layer[column].to_numpy(dtype=object)[feature_pos]
    found: dict[str, set[str]] = {}
    labels = unions.index.to_numpy()
    for pos, value in zip(subject_pos, values, strict=True):
        if value is not None and not pd.isna(value):
            found.setdefault(str(labels[pos]), set()).add(str(value))
    out = {}
    for pid, names in found.items():
        ordered = sorted(names)
        more = ", ..." if len(ordered) > 5 else ""
        out[pid] = f" ({', '.join(ordered[:5])}{more})"
    return out


def check_mapped_resources(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW106: disturbance overlapping wetlands, their adjacent area, water bodies, floodplain."""
    cite = ctx.citation("SW106")
    buffer_ft = ctx.ruleset.resources.wetland_adjacent_area_ft
    unions = ctx.disturbance_union
    wetlands = ctx.layers.get("wetlands")
    layers: dict[str, gpd.GeoDataFrame | None] = {
        "wetlands": wetlands,
        "water_bodies": ctx.layers.get("water_bodies"),
        "floodplain": ctx.layers.get("floodplain"),
        "wetland_adjacent_area": None,
    }
    overlaps: dict[str, dict[str, tuple[float, Any]]] = {}
    for kind in ("wetlands", "water_bodies", "floodplain"):
        layer = layers[kind]
        if layer is not None:
            hits = area_by_key(unions, layer, None, keep_geometry=True)
            overlaps[kind] = {
                str(s): (float(a), g)
                for s, a, g in zip(
                    hits["subject"], hits["area_sqft"], hits["geometry"], strict=True
                )
            }
    if wetlands is not None:
        zone = adjacent_band_near(wetlands.geometry.to_numpy(), unions.to_numpy(), buffer_ft)
        adjacent = gpd.GeoDataFrame(geometry=gpd.GeoSeries([zone], crs=ctx.crs), crs=ctx.crs)
        layers["wetland_adjacent_area"] = adjacent
        hits = area_by_key(unions, adjacent, None, keep_geometry=True)
        overlaps["wetland_adjacent_area"] = {
            str(s): (float(a), g)
            for s, a, g in zip(hits["subject"], hits["area_sqft"], hits["geometry"], strict=True)
        }
    name_cols = {"wetlands": "name", "water_bodies": "name", "floodplain": "flood_zone"}
    names_of = {
        kind: _resource_names(layer, unions, name_cols[kind])
        for kind, layer in layers.items()
        if layer is not None and kind in name_cols
    }
    cols: dict[str, list[Any]] = {k: [] for k in ("pid", "sub", "out", "msg", "meas", "geom")}
    for pid in ctx.proposals.ids:
        union = _union(ctx)[pid]
        for kind, label, wording_key in _RESOURCES:
            consequence = _say(ctx, wording_key)
            if kind not in overlaps:
                source = "wetlands" if kind == "wetland_adjacent_area" else kind
                out, meas, geom = Outcome.REVIEW, np.nan, union
                msg = (
                    f"The {source} layer was not provided, so overlap of the disturbance with "
                    f"{label} cannot be checked; the plan must show it ({cite})."
                )
            else:
                area, piece = overlaps[kind].get(pid, (0.0, _EMPTY))
                if round(area, 2) > 0.0:
                    names = names_of.get(kind, {}).get(pid, "")
                    extent = (
                        f" (within {_limit(buffer_ft)} ft of a wetland)"
                        if kind == "wetland_adjacent_area"
                        else ""
                    )
                    out, meas, geom = Outcome.REQUIRED, area, piece
                    msg = (
                        f"{fmt_sqft(area)} sq ft of the disturbance lies in {label}{names}"
                        f"{extent}: the plan must show it and {consequence} ({cite})."
                    )
                else:
                    out, meas, geom = Outcome.PASS, 0.0, union
                    msg = f"The disturbance does not overlap {label} ({cite})."
            for k, v in zip(cols, (pid, f"{pid}:{kind}", out, msg, meas, geom), strict=True):
                cols[k].append(v)
    if not cols["pid"]:
        return empty_findings(ctx.crs)
    found = make_findings(
        "SW106",
        ctx.crs,
        proposal_id=cols["pid"],
        subject_id=cols["sub"],
        outcome=cols["out"],
        message=cols["msg"],
        measured=_round2(cols["meas"]),
        threshold=0.0,
        unit="sq ft",
        geometry=cols["geom"],
    )
    streams = _stream_findings(ctx)
    if streams is None:
        return found
    return gpd.GeoDataFrame(pd.concat([found, streams], ignore_index=True), crs=found.crs)


def _stream_findings(ctx: CheckContext) -> gpd.GeoDataFrame | None:
    """SW106 ``<proposal>:streams``: disturbance crossing or touching a mapped stream line.

    Streams count as water bodies.  A line has no area, so the test is buffer-free: the
    disturbance intersects the line, or comes within the distance tolerance of it (a stream
    along the edge of the limits of disturbance is touched).  The measured figure is the
    length of stream inside the disturbance, in ft.  Nothing is reported when the layer is
    not given (the ``water_bodies`` row already says what is mapped).
    """
    streams = ctx.layers.get("streams")
    if streams is None:
        return None
    cite = ctx.citation("SW106")
    consequence = _say(ctx, "water_bodies_consequence")
    tol = ctx.ruleset.devices.distance_tolerance_ft
    ids = ctx.proposals.ids
    unions = ctx.disturbance_union.loc[ids]
    lines = streams.geometry.to_numpy()
    tree = shapely.STRtree(lines)
    pos_s, pos_f = tree.query(unions.to_numpy(), predicate="dwithin", distance=tol)
    named = _resource_names(streams, unions, "name")
    cols: dict[str, list[Any]] = {k: [] for k in ("pid", "sub", "out", "msg", "meas", "geom")}
    for i, pid in enumerate(ids):
        union = unions.iloc[i]
        hit = pos_f[pos_s == i]
        if len(hit):
            inside = shapely.intersection(shapely.union_all(lines[hit]), union)
            length_ft = float(shapely.length(inside))
            how = (
                f"{length_ft:,.2f} ft of mapped stream{named.get(pid, '')} runs through the "
                "disturbance"
                if round(length_ft, 2) > 0
                else f"the disturbance touches a mapped stream{named.get(pid, '')}"
            )
            out, meas = Outcome.REQUIRED, length_ft
            geom = inside if not shapely.is_empty(inside) else union
            msg = f"{how}: the plan must show it and {consequence} ({cite})."
        else:
            out, meas, geom = Outcome.PASS, 0.0, union
            msg = f"The disturbance does not cross or touch a mapped stream ({cite})."
        for k, v in zip(cols, (pid, f"{pid}:streams", out, msg, meas, geom), strict=True):
            cols[k].append(v)
    if not cols["pid"]:
        return None
    return make_findings(
        "SW106",
        ctx.crs,
        proposal_id=cols["pid"],
        subject_id=cols["sub"],
        outcome=cols["out"],
        message=cols["msg"],
        measured=_round2(cols["meas"]),
        threshold=0.0,
        unit="ft",
        geometry=cols["geom"],
    )


# -- SW107: state floor -----------------------------------------------------------------------


def check_state_floor(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW107: the town's law is no less restrictive than the state's; state permits apply too."""
    cite = ctx.citation("SW107")
    limit_sqft = ctx.ruleset.permit.land_development_acres * SQFT_PER_ACRE
    lda = land_development(ctx)
    ids = ctx.proposals.ids
    applies = _say(ctx, "state_floor_applies")
    not_covered = _say(ctx, "state_floor_not_covered")
    acre = ctx.ruleset.permit.land_development_acres
    msgs = [
        f"Disturbance of {_acres_pair(_area(ctx)[pid], acre)[0]}: "
        f"{applies if lda[pid] else not_covered} ({cite})."
        for pid in ids
    ]
    if not ids:
        return empty_findings(ctx.crs)
    return make_findings(
        "SW107",
        ctx.crs,
        proposal_id=ids,
        subject_id=ids,
        outcome=Outcome.INFO,
        message=msgs,
        measured=_round2([_area(ctx)[p] for p in ids]),
        threshold=limit_sqft,
        unit="sq ft",
        geometry=[_union(ctx)[p] for p in ids],
    )
