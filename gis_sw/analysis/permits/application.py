"""What the application claims, carries and pays, and the state floor (SW104, SW105, SW107).

A claimed exemption is read by :func:`gis_sw.layers.exemptions.parse_exemption` (letter,
citation or heading) and its own conditions are checked (``[exemption_conditions]``):
routine maintenance at 5 acres or more and landscaping on a lot with no building fail;
agricultural activity with new roofs is review.  Every other rule still runs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.permits.common import (
    area,
    attr,
    reached,
    say,
    text,
    union,
)
from gis_sw.analysis.permits.conditions import project_area
from gis_sw.analysis.permits.threshold import land_development, permit_areas
from gis_sw.analysis.wording import fmt_acres, fmt_sqft, fmt_usd, sqft_acres_pair
from gis_sw.layers.exemptions import parse_exemption
from gis_sw.units import SQFT_PER_ACRE


def exemption_letter(
    claim: str, exemptions: dict[str, str], citation: str = "§ 183-5"
) -> str | None:
    """Return the letter a claim names (:func:`gis_sw.layers.exemptions.parse_exemption`)."""
    return parse_exemption(claim, exemptions, citation=citation)


def _exemption_rules(ctx: CheckContext) -> dict[str, Any]:
    """Return ``[exemption_conditions]``: which letter carries which condition of its own."""
    table = ctx.ruleset.section("exemption_conditions")
    return {str(k): v for k, v in table.items()}


def _structures_on_lots(
    ctx: CheckContext, disturbance: Any
) -> tuple[str | None, list[str], list[str]]:
    """Return (problem, lots the disturbance lies on, buildings on them) for exemption K."""
    parcels, buildings = ctx.layers.get("parcels"), ctx.layers.get("buildings")
    if buildings is None:
        return "the buildings layer was not provided", [], []
    if parcels is None:
        return "the parcels layer was not provided", [], []
    lots = parcels.iloc[parcels.sindex.query(disturbance, predicate="intersects")]
    lots = lots[shapely.area(shapely.intersection(lots.geometry.to_numpy(), disturbance)) >= 0.005]
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
    """Return count and area (sq ft) of the proposal's new structures (roofs) in ``impervious``."""
    imp = ctx.proposals.impervious
    if imp is None or len(imp) == 0 or not surfaces:
        return 0, 0.0
    kinds = imp["surface"].map(lambda v: "" if v is None or pd.isna(v) else str(v).lower())
    mine = imp[(imp["proposal_id"].astype(str) == pid) & kinds.isin([s.lower() for s in surfaces])]
    if len(mine) == 0:
        return 0, 0.0
    return len(mine), float(shapely.area(shapely.union_all(mine.geometry.to_numpy())))


def _exemption_finding(
    ctx: CheckContext, pid: str, letter: str, heading: str, cite: str
) -> tuple[Outcome, str]:
    """Return SW104 for a claim naming a letter: its own conditions first (§ 183-5C, K, A)."""
    decider = ctx.ruleset.decision_maker
    rules = _exemption_rules(ctx)
    proj = project_area(ctx)[pid]
    counted = max(proj.own_sqft, proj.total_sqft or 0.0)
    named = f"Exemption {cite}{letter} ({heading}) is claimed"
    still = f"every rule was still checked, and the {decider} decides whether the exemption applies"
    if letter == str(rules.get("routine_maintenance", "")).upper():
        limit_acres = float(rules.get("routine_maintenance_max_acres", 5.0))
        figure, limit = sqft_acres_pair(counted, limit_acres)
        of_plan = f", counting {proj.basis}," if proj.basis and proj.total_sqft is not None else ""
        if reached(counted, limit_acres * SQFT_PER_ACRE):
            return Outcome.FAIL, (
                f"{named}, but the disturbance of {figure}{of_plan} reaches {limit}: routine "
                f"maintenance is exempt only when it disturbs less than {limit}, so it is not "
                "exempt; every rule applies."
            )
        return Outcome.REVIEW, f"{named} for {figure} of disturbance (less than {limit}): {still}."
    if letter == str(rules.get("landscaping_existing_structure", "")).upper():
        problem, lots, found = _structures_on_lots(ctx, union(ctx)[pid])
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
    return Outcome.REVIEW, f"{named} for {fmt_acres(counted)} acres of disturbance: {still}."


def _claim_row(ctx: CheckContext, pid: str, cite: str) -> tuple[Outcome, str, str | None]:
    """Return the SW104 outcome, message and exemption letter (None: none named) of one claim."""
    exemptions = dict(ctx.ruleset.exemptions)
    claim = text(attr(ctx, "exemption").get(pid))
    if claim is None:
        return Outcome.PASS, f"No exemption under {cite} is claimed; every rule applies.", None
    letter = parse_exemption(claim, exemptions, citation=ctx.ruleset.exemptions_citation)
    if letter is None:
        return (
            Outcome.REVIEW,
            (
                f"The claimed exemption {claim!r} is not one of {cite}"
                f"{min(exemptions, default='A')}-{max(exemptions, default='K')}; every rule "
                f"was checked and the {ctx.ruleset.decision_maker} decides."
            ),
            None,
        )
    return (*_exemption_finding(ctx, pid, letter, exemptions[letter], cite), letter)


@rule_check
def check_exemption(ctx: CheckContext, rows: Findings) -> None:
    """Check SW104: a claimed § 183-5 exemption and its own conditions; the checks still run."""
    rules = _exemption_rules(ctx)
    routine = str(rules.get("routine_maintenance", "")).upper()
    routine_sqft = float(rules.get("routine_maintenance_max_acres", 5.0)) * SQFT_PER_ACRE
    rows.unit, rows.decimals = "sq ft", 2
    for pid in ctx.proposal_ids:
        out, msg, letter = _claim_row(ctx, pid, rows.citation)
        proj = project_area(ctx)[pid]
        if letter is not None and letter == routine:  # the area § 183-5C is judged on
            meas, lim = max(proj.own_sqft, proj.total_sqft or 0.0), routine_sqft
        else:
            meas, lim = proj.own_sqft, np.nan
        rows.add(pid, out, msg, measured=meas, threshold=lim, geometry=union(ctx)[pid])


def _application_row(
    ctx: CheckContext, permit: Outcome, cost: float | None, cite: str
) -> tuple[Outcome, str, float]:
    """Return the SW105 outcome, message and fees due (USD) of one proposal."""
    params = ctx.ruleset.permit
    items = "; ".join(params.application_items)
    pct = f"{params.inspection_fee_fraction * 100:g}%"
    if permit is Outcome.PASS:
        return (
            Outcome.PASS,
            (
                "No stormwater management control permit is required (SW101), so no "
                f"application or fees are due ({cite})."
            ),
            np.nan,
        )
    if cost is None:
        return (
            Outcome.REVIEW,
            (
                f"The permit application ({cite}) must carry, in triplicate: {items}. Fees: "
                f"{fmt_usd(params.application_fee_usd)} application fee plus an inspection fee of "
                f"{pct} of the construction cost estimate, which is not given "
                "(attribute construction_cost_usd), so the inspection fee cannot be computed."
            ),
            params.application_fee_usd,
        )
    inspection = cost * params.inspection_fee_fraction
    due = params.application_fee_usd + inspection
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
        f"= {fmt_usd(due)}."
    )
    return (Outcome.REQUIRED if permit is Outcome.REQUIRED else Outcome.REVIEW), msg, due


@rule_check
def check_application(ctx: CheckContext, rows: Findings) -> None:
    """Check SW105: the § 183-12C(1) forms (a)-(h), $150 fee and 0.5% inspection fee."""
    areas = permit_areas(ctx)
    rows.unit, rows.decimals = "USD", 2
    for pid in ctx.proposal_ids:
        cost = attr(ctx, "construction_cost_usd").get(pid)
        cost = None if cost is None or pd.isna(cost) else float(cost)
        if cost is not None and not (math.isfinite(cost) and cost >= 0):
            cost = None  # not a cost estimate: the inspection fee cannot be computed
        out, msg, due = _application_row(ctx, areas[pid].outcome, cost, rows.citation)
        rows.add(pid, out, msg, measured=due, geometry=union(ctx)[pid])


@rule_check
def check_state_floor(ctx: CheckContext, rows: Findings) -> None:
    """Check SW107: the town's law is not less restrictive than the state's, which applies too."""
    acre = ctx.ruleset.permit.land_development_acres
    rows.threshold, rows.unit, rows.decimals = acre * SQFT_PER_ACRE, "sq ft", 2
    lda = land_development(ctx)
    applies = say(ctx, "state_floor_applies")
    not_covered = say(ctx, "state_floor_not_covered")
    for pid in ctx.proposal_ids:
        msg = (
            f"Disturbance of {sqft_acres_pair(area(ctx)[pid], acre)[0]}: "
            f"{applies if lda[pid] else not_covered} ({rows.citation})."
        )
        rows.add(pid, Outcome.INFO, msg, measured=area(ctx)[pid], geometry=union(ctx)[pid])
