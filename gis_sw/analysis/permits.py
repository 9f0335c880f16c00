"""Permits and plans, SW101-SW107: what an application must carry under Chapter 183.

Every number (thresholds, acres, fees, zone names, the wetland adjacent area) comes from the
ruleset.  Areas are those of each proposal's disturbance *union* (overlaps counted once) in
the working CRS, split by the zoning overlay (:func:`gis_sw.analysis.overlay.area_by_key`).
Areas are compared with the limits after rounding to 0.01 sq ft, so a polygon drawn at
exactly 250 sq ft and carried through a reprojection still meets a 250 sq ft threshold.

Subjects: SW101, SW102, SW104, SW105 and SW107 give one row per proposal (``subject_id`` is
the proposal id); SW103 one row per condition (``P-1:condition-A``) and SW106 one row per
mapped resource (``P-1:wetlands``, ``P-1:wetland_adjacent_area``, ``P-1:water_bodies``,
``P-1:floodplain``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.bands import adjacent_band_near
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Outcome, empty_findings, make_findings
from gis_sw.analysis.overlay import area_by_key
from gis_sw.units import SQFT_PER_ACRE

_EMPTY = shapely.Polygon()


# -- formatting -------------------------------------------------------------------------------


def fmt_sqft(area_sqft: float) -> str:
    """``134``, ``249.9``, ``43,560``: whole square feet unless the tenth matters."""
    value = round(float(area_sqft), 1)
    return f"{value:,.0f}" if value == round(value) else f"{value:,.1f}"


def fmt_acres(area_sqft: float) -> str:
    """Acres to 2 decimals: ``1.00``."""
    return f"{float(area_sqft) / SQFT_PER_ACRE:,.2f}"


def fmt_usd(amount: float) -> str:
    return f"${float(amount):,.2f}"


def _limit(value: float) -> str:
    return f"{value:,g}"


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
            also = (
                f", and {fmt_sqft(pa.low_sqft)} sq ft of it inside zone {low_name} reaches the "
                f"{_limit(t_low)} sq ft threshold"
                if _reached(pa.low_sqft, t_low)
                else ""
            )
            msg = (
                f"Disturbance of {fmt_sqft(pa.total_sqft)} sq ft{split} reaches the "
                f"{_limit(t_any)} sq ft threshold for all zones{also}: {permit}"
            )
            meas, lim, geom = pa.total_sqft, t_any, pa.union
        elif pa.decided_by == "low":
            of_total = (
                f" (of {fmt_sqft(pa.total_sqft)} sq ft in all)"
                if pa.total_sqft - pa.low_sqft >= 0.05
                else ""
            )
            msg = (
                f"Disturbance of {fmt_sqft(pa.low_sqft)} sq ft inside zone {low_name}{of_total} "
                f"reaches the {_limit(t_low)} sq ft threshold: {permit}"
            )
            meas, lim, geom = pa.low_sqft, t_low, pa.low_part
        elif pa.decided_by == "unknown":
            why = pa.zoning_problem or (
                f"{fmt_sqft(pa.unzoned_sqft)} sq ft lies outside any named zone of the zoning layer"
            )
            msg = (
                f"Disturbance of {fmt_sqft(pa.total_sqft)} sq ft is below the {_limit(t_any)} "
                f"sq ft threshold for all zones, but {why}, so whether {_limit(t_low)} sq ft or "
                f"more lies inside zone {low_name} is unknown: review against the zoning map "
                f"({cite})."
            )
            meas, lim, geom = pa.total_sqft, t_low, pa.union
        else:
            msg = (
                f"Disturbance of {fmt_sqft(pa.total_sqft)} sq ft{split} is below the "
                f"{_limit(t_any)} sq ft threshold for all zones, and {fmt_sqft(pa.low_sqft)} sq ft "
                f"inside zone {low_name} is below the {_limit(t_low)} sq ft threshold: no "
                f"stormwater management control permit is required ({cite})."
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
            if _reached(_area(ctx)[pid], limit_sqft):
                out[pid] = True
            else:
                out[pid] = _flag(larger.get(pid))
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
    for pid in ctx.proposals.ids:
        area = _area(ctx)[pid]
        figure = f"Disturbance of {fmt_sqft(area)} sq ft ({fmt_acres(area)} acres)"
        acre = f"{_limit(params.land_development_acres)} acre"
        need = (
            "a land development activity: a stormwater pollution prevention plan (SWPPP) and "
            "coverage under the NYSDEC SPDES general permit for construction activity are "
            f"required ({cite})"
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


def _impaired_overlap(ctx: CheckContext) -> tuple[dict[str, shapely.Geometry], str | None]:
    layer = ctx.layers.get("impaired_waters")
    if layer is None:
        return {}, "the impaired_waters layer was not provided"
    hits = area_by_key(ctx.disturbance_union, layer, None, keep_geometry=True)
    geoms = dict(zip(hits["subject"].astype(str), hits["geometry"], strict=True))
    # a disturbance that only touches a listed water still discharges to it; touching is
    # judged at the distance tolerance, so a float bit of gap (a reprojection) cannot decide it
    tol = ctx.ruleset.devices.distance_tolerance_ft
    touching = ctx.disturbance_union[ctx.disturbance_union.dwithin(layer.union_all(), tol)]
    for pid in touching.index:
        geoms.setdefault(str(pid), touching.loc[pid])
    return geoms, None


def check_post_construction(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW103: Conditions A (impaired waters), B (5 acres or more), C (1 to 5 acres)."""
    params = ctx.ruleset.permit
    cite = ctx.citation("SW103")
    lda = land_development(ctx)
    impaired_geoms, impaired_problem = _impaired_overlap(ctx)
    b_sqft = params.condition_b_acres * SQFT_PER_ACRE
    c_min = params.condition_c_min_acres * SQFT_PER_ACRE
    c_max = params.condition_c_max_acres * SQFT_PER_ACRE
    b_acres = _limit(params.condition_b_acres)
    c_range = (
        f"{_limit(params.condition_c_min_acres)} to {_limit(params.condition_c_max_acres)} acres"
    )
    excluded = set(params.condition_c_excluded_land_uses)
    controls = (
        "post-construction stormwater runoff controls (water quantity and quality) are required"
    )
    impaired = "a 303(d)-impaired water or TMDL watershed"
    names = ("pid", "sub", "out", "msg", "meas", "lim", "geom")
    cols: dict[str, list[Any]] = {k: [] for k in names}

    def add(
        cond: str,
        out: Outcome,
        msg: str,
        *,
        meas: float = np.nan,
        lim: float = np.nan,
        geom: Any = None,
    ) -> None:
        values = (pid, f"{pid}:condition-{cond}", out, f"Condition {cond}: {msg}", meas, lim, geom)
        for k, v in zip(names, values, strict=True):
            cols[k].append(v)

    for pid in ctx.proposals.ids:
        area = _area(ctx)[pid]
        union = _union(ctx)[pid]
        acres = f"{fmt_acres(area)} acres"
        # Condition A: 303(d) list or TMDL watershed
        flag = _flag(_attr(ctx, "discharges_to_impaired_water").get(pid))
        cite_a = f"({cite}(a))."
        if lda[pid] is False:
            add(
                "A",
                Outcome.PASS,
                f"not a land development activity, so it does not apply {cite_a}",
                geom=union,
            )
        elif flag is True or (flag is None and pid in impaired_geoms):
            why = (
                f"the application states that runoff discharges to {impaired}"
                if flag
                else f"the disturbance lies in {impaired} (impaired_waters layer)"
            )
            geom = impaired_geoms.get(pid, union)
            if lda[pid] is None:
                add(
                    "A",
                    Outcome.REVIEW,
                    f"{why}; if this is a land development activity (see SW102), {controls} "
                    f"{cite_a}",
                    geom=geom,
                )
            else:
                add("A", Outcome.REQUIRED, f"{why}: {controls} {cite_a}", geom=geom)
        elif flag is False:
            add(
                "A",
                Outcome.PASS,
                f"the application states that runoff does not discharge to {impaired}, so it "
                f"does not apply {cite_a}",
                geom=union,
            )
        elif impaired_problem is None:
            add(
                "A",
                Outcome.PASS,
                f"the disturbance lies in no mapped {impaired.removeprefix('a ')}, so it does not "
                f"apply {cite_a}",
                geom=union,
            )
        else:
            add(
                "A",
                Outcome.REVIEW,
                f"the attribute discharges_to_impaired_water is not given and {impaired_problem}: "
                f"whether runoff reaches {impaired} is unknown {cite_a}",
                geom=union,
            )
        # Condition B: five acres or more
        if _reached(area, b_sqft):
            add(
                "B",
                Outcome.REQUIRED,
                f"disturbance of {acres} reaches {b_acres} acres: {controls} ({cite}(b)).",
                meas=area,
                lim=b_sqft,
                geom=union,
            )
        else:
            add(
                "B",
                Outcome.PASS,
                f"disturbance of {acres} is below {b_acres} acres ({cite}(b)).",
                meas=area,
                lim=b_sqft,
                geom=union,
            )
        # Condition C: one to five acres, except single-family and agricultural
        land_use = _text(_attr(ctx, "land_use").get(pid))
        c_msg = f"disturbance of {acres} is within {c_range}"
        if not _reached(area, c_min) or _reached(area, c_max):
            side = "below" if not _reached(area, c_min) else "at or above the top of"
            add(
                "C",
                Outcome.PASS,
                f"disturbance of {acres} is {side} the {c_range} range ({cite}(c)).",
                meas=area,
                lim=c_min,
                geom=union,
            )
        elif land_use is None:
            add(
                "C",
                Outcome.REVIEW,
                f"{c_msg}, but the attribute land_use is not given, so the exclusion of "
                f"single-family residences and agricultural properties cannot be decided "
                f"({cite}(c)).",
                meas=area,
                lim=c_min,
                geom=union,
            )
        elif land_use in excluded:
            add(
                "C",
                Outcome.PASS,
                f"{c_msg}, but land use {land_use} is excluded from Condition C ({cite}(c)).",
                meas=area,
                lim=c_min,
                geom=union,
            )
        else:
            add(
                "C",
                Outcome.REQUIRED,
                f"{c_msg} and land use {land_use} is not excluded: {controls} ({cite}(c)).",
                meas=area,
                lim=c_min,
                geom=union,
            )
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

_LETTER = re.compile(r"^\s*(?:§\s*)?(?:183-5\s*)?\(?\s*([A-Ka-k])\s*\)?\s*[.:)-]?(?:\s.*)?$")


def exemption_letter(claim: str, exemptions: dict[str, str]) -> str | None:
    """The § 183-5 letter a claim names: ``"C"``, ``"183-5C"``, ``"(c) ..."`` or the text."""
    match = _LETTER.match(claim)
    if match and match.group(1).upper() in exemptions:
        return match.group(1).upper()
    lowered = claim.strip().lower()
    for letter, text in exemptions.items():
        if text.lower().startswith(lowered) or lowered.startswith(text.lower()):
            return letter
    return None


def check_exemption(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW104: a claimed § 183-5 exemption is shown; the checks still run; the Town decides."""
    cite = ctx.citation("SW104")
    exemptions = dict(ctx.ruleset.exemptions)
    decider = ctx.ruleset.decision_maker
    cols: dict[str, list[Any]] = {k: [] for k in ("pid", "out", "msg")}
    for pid in ctx.proposals.ids:
        claim = _text(_attr(ctx, "exemption").get(pid))
        area = _area(ctx)[pid]
        if claim is None:
            out, msg = Outcome.PASS, f"No exemption under {cite} is claimed; every rule applies."
        else:
            letter = exemption_letter(claim, exemptions)
            if letter is None:
                out = Outcome.REVIEW
                msg = (
                    f"The claimed exemption {claim!r} is not one of {cite}"
                    f"{min(exemptions, default='A')}-{max(exemptions, default='K')}; every rule "
                    f"was checked and the {decider} decides."
                )
            else:
                out = Outcome.REVIEW
                msg = (
                    f"Exemption {cite}{letter} ({exemptions[letter]}) is claimed for "
                    f"{fmt_acres(area)} acres of disturbance: every rule was still checked, and "
                    f"the {decider} decides whether the exemption applies."
                )
        cols["pid"].append(pid)
        cols["out"].append(out)
        cols["msg"].append(msg)
    if not cols["pid"]:
        return empty_findings(ctx.crs)
    return make_findings(
        "SW104",
        ctx.crs,
        proposal_id=cols["pid"],
        subject_id=cols["pid"],
        outcome=cols["out"],
        message=cols["msg"],
        measured=_round2([_area(ctx)[p] for p in cols["pid"]]),
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
    (
        "wetlands",
        "mapped wetlands",
        "Chapter 111 (Freshwater Wetlands) and NYSDEC/USACE wetland permits may apply",
    ),
    (
        "wetland_adjacent_area",
        "the wetland adjacent area",
        "Chapter 111 (Freshwater Wetlands) regulates the adjacent area",
    ),
    (
        "water_bodies",
        "mapped water bodies",
        "NYSDEC protection-of-waters and other permits may apply",
    ),
    ("floodplain", "the 100-year floodplain", "Chapter 108 (Flood Damage Prevention) applies"),
)


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
        for kind, label, consequence in _RESOURCES:
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
    return make_findings(
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


# -- SW107: state floor -----------------------------------------------------------------------


def check_state_floor(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW107: Chapter 183 is no less restrictive than NYSDEC; SPDES applies alongside."""
    cite = ctx.citation("SW107")
    limit_sqft = ctx.ruleset.permit.land_development_acres * SQFT_PER_ACRE
    lda = land_development(ctx)
    ids = ctx.proposals.ids
    msgs = []
    for pid in ids:
        area = _area(ctx)[pid]
        if lda[pid]:
            msgs.append(
                f"Disturbance of {fmt_acres(area)} acres: NYSDEC SPDES general permit coverage "
                f"for construction activity applies alongside the town permit; the town's rules "
                f"are not less restrictive than NYSDEC requirements ({cite})."
            )
        else:
            msgs.append(
                f"Disturbance of {fmt_acres(area)} acres: the town permit addresses land not "
                f"covered by a NYSDEC SPDES permit; state requirements still apply where they "
                f"reach further ({cite})."
            )
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
