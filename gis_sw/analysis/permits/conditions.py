"""Post-construction controls, Conditions A, B and C of § 183-7B(2) (SW103).

Condition A is about where runoff *goes*: the applicant's ``discharges_to_impaired_water``
decides when given; otherwise the impaired-waters layer and a D8 flow path over the DEM
(:func:`gis_sw.analysis.discharge.impaired_discharge`).  Conditions B and C count the project:
the larger of the proposal's own area and its ``larger_plan_acres``
(:func:`project_area`); a part of a larger plan whose total is not given is never passed
on its own area.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.discharge import Reach, impaired_discharge
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.permits.common import (
    CONTROLS,
    WORDING_DEFAULTS,
    area,
    attr,
    disturbance_gap,
    flag,
    plan_acres,
    plan_acres_problem,
    reached,
    text,
    union,
)
from gis_sw.analysis.permits.threshold import land_development
from gis_sw.analysis.wording import fmt_limit, sqft_acres_pair
from gis_sw.units import SQFT_PER_ACRE


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
    """Return each proposal's area for Conditions B and C (and exemption C's five acres)."""

    def compute() -> dict[str, ProjectArea]:
        larger = attr(ctx, "part_of_larger_plan")
        out = {}
        for pid in ctx.proposal_ids:
            own = area(ctx)[pid]
            acres = plan_acres(ctx, pid)
            part = flag(larger.get(pid))
            if acres is not None:
                total = max(own, round(acres * SQFT_PER_ACRE, 2))
                basis = f"the whole larger common plan (larger_plan_acres = {acres:,g})"
                if total > round(acres * SQFT_PER_ACRE, 2):
                    basis = (
                        f"its own area, as the larger common plan's stated total "
                        f"(larger_plan_acres = {acres:,g}) is less"
                    )
                out[pid] = ProjectArea(own, total, basis)
            elif pid in disturbance_gap(ctx) or plan_acres_problem(ctx, pid):
                why = disturbance_gap(ctx).get(pid) or plan_acres_problem(ctx, pid)
                out[pid] = ProjectArea(own, None, str(why))
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


def _condition_a(
    ctx: CheckContext, lda: dict[str, bool | None], citation: str
) -> dict[str, tuple[Any, ...]]:
    """Return Condition A of every proposal: (outcome, clause, geometry)."""
    cite = f"({citation}(a))."
    impaired = ctx.ruleset.wording("impaired_waters", WORDING_DEFAULTS["impaired_waters"])
    controls = CONTROLS
    flags = attr(ctx, "discharges_to_impaired_water")
    need_layers = [
        p for p in ctx.proposal_ids if lda[p] is not False and flag(flags.get(p)) is None
    ]
    read = impaired_discharge(ctx, need_layers) if need_layers else {}
    out: dict[str, tuple[Any, ...]] = {}
    for pid in ctx.proposal_ids:
        whole = union(ctx)[pid]
        stated_flag = flag(flags.get(pid))
        if lda[pid] is False:
            out[pid] = (
                Outcome.PASS,
                f"not a land development activity, so it does not apply {cite}",
                whole,
            )
            continue
        if stated_flag is not None:
            stated = "discharges" if stated_flag else "does not discharge"
            why = (
                f"the application states (discharges_to_impaired_water, which decides over the "
                f"layers) that runoff {stated} to {impaired}"
            )
            reach, geom = (Reach.REACHES if stated_flag else Reach.MISSES), whole
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


def _condition_b(proj: ProjectArea, b_acres: float, cite: str) -> tuple[Outcome, str, float]:
    """Return Condition B: five acres or more disturbed by the project."""
    known = proj.total_sqft is not None
    of_plan = f", counting {proj.basis}," if proj.basis and known else ""
    counted = proj.total_sqft if proj.total_sqft is not None else proj.own_sqft
    figure, limit = sqft_acres_pair(counted, b_acres)
    if reached(counted, b_acres * SQFT_PER_ACRE):
        outcome = Outcome.REQUIRED
        msg = f"disturbance of {figure}{of_plan} reaches {limit}: {CONTROLS} {cite}"
    elif not known:
        outcome = Outcome.REVIEW
        msg = (
            f"disturbance of {figure} is below {limit} on its own, but {proj.basis}: whether the "
            f"project disturbs {limit} or more is unknown {cite}"
        )
    else:
        outcome = Outcome.PASS
        msg = f"disturbance of {figure}{of_plan} is below {limit} {cite}"
    return outcome, msg, counted


def _condition_c(ctx: CheckContext, pid: str, proj: ProjectArea) -> tuple[Outcome, str, float]:
    """Return Condition C: one to five acres during the project, except excluded land uses.

    The clause ends without its citation: the caller adds it.
    """
    params = ctx.ruleset.permit
    c_min = params.condition_c_min_acres * SQFT_PER_ACRE
    c_max = params.condition_c_max_acres * SQFT_PER_ACRE
    c_range = (
        f"{fmt_limit(params.condition_c_min_acres)} to "
        f"{fmt_limit(params.condition_c_max_acres)} acres"
    )
    land_use = text(attr(ctx, "land_use").get(pid))
    known = proj.total_sqft is not None
    counted = proj.total_sqft if proj.total_sqft is not None else proj.own_sqft
    of_plan = f", counting {proj.basis}," if proj.basis and known else ""
    below = not reached(counted, c_min)
    figure, limit = sqft_acres_pair(
        counted, params.condition_c_min_acres if below else params.condition_c_max_acres
    )
    instead = (
        ""
        if known
        else f" ({proj.basis}: if the project's total reaches "
        f"{fmt_limit(params.condition_b_acres)} acres, Condition B applies instead; controls "
        "are required either way)"
    )
    outcome = Outcome.PASS
    if land_use is not None and land_use in set(params.condition_c_excluded_land_uses):
        msg = (
            f"disturbance of {figure}{of_plan.rstrip(',')}: land use {land_use} is excluded from "
            "Condition C"
        )
    elif reached(counted, c_max):
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
            f"not excluded{instead}: {CONTROLS}"
        )
    return outcome, msg, counted


@rule_check
def check_post_construction(ctx: CheckContext, rows: Findings) -> None:
    """Check SW103: Conditions A (discharge to impaired waters), B (5 acres or more), C (1 to 5)."""
    params = ctx.ruleset.permit
    rows.unit, rows.decimals = "sq ft", 2
    cond_a = _condition_a(ctx, land_development(ctx), rows.citation)
    projects = project_area(ctx)
    b_sqft = params.condition_b_acres * SQFT_PER_ACRE
    c_min = params.condition_c_min_acres * SQFT_PER_ACRE
    for pid in ctx.proposal_ids:
        whole = union(ctx)[pid]
        out_a, msg_a, geom_a = cond_a[pid]
        out_b, msg_b, area_b = _condition_b(
            projects[pid], params.condition_b_acres, f"({rows.citation}(b))."
        )
        out_c, msg_c, area_c = _condition_c(ctx, pid, projects[pid])
        msg_c = f"{msg_c} ({rows.citation}(c))."
        for cond, out, msg, meas, lim, geom in (
            ("A", out_a, msg_a, np.nan, np.nan, geom_a),
            ("B", out_b, msg_b, area_b, b_sqft, whole),
            ("C", out_c, msg_c, area_c, c_min, whole),
        ):
            rows.add(
                pid,
                out,
                f"Condition {cond}: {msg}",
                subject_id=f"{pid}:condition-{cond}",
                measured=meas,
                threshold=lim,
                geometry=geom,
            )
