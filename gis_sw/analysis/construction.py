"""construction: duties during construction, SW401-SW403 (one row per proposal).

- SW401 (§ 183-9A(2), § 183-12C(4)(a)[4]): inspection reports every seven days and within
  24 hours of each storm event of 0.5 in or more, over the construction period.  A storm
  event is a run of consecutive wet days, not one day's total (the dry-gap rule is in the
  ruleset and :mod:`gis_sw.analysis.calendar`); its report is dated from the day its
  running total reaches 0.5 in.  The finding names the reports' recipients from the
  ruleset (``construction.report_recipients``: the Town Engineering Department of
  § 183-12C(4)(a)[4] and the Stormwater Management Officer and site log book of § 183-9A(2)).
- SW402 (§ 183-10A(1), § 183-12C(4)(b)[2]): 48 hours' notice before each inspection
  milestone, to the recipients of ``construction.notice_recipients``.
- SW403 (§ 183-9A(1), § 183-12C(4)(a)[2]): sediment removed from sediment traps and ponds
  whenever their design capacity has been reduced by 50%.

Rows are written for every proposal with disturbance.  The duties bind the holder of a town
permit (§ 183-12C(4)) and the developer of a land development activity (§ 183-9A), so each
rule answers ``required`` when SW101 says a permit is required or SW102 says the work is a
land development activity, ``pass`` ("do not attach") when SW101 passes and SW102 says it is
not one, and ``review`` when either is unknown.  The construction period is the
proposal's ``construction_start``/``construction_end`` attributes; a missing one is taken from
the disturbance polygons (earliest ``start_date``, latest ``end_date``).  With neither, SW401
answers ``review``: the duty still applies, but its dates cannot be listed.  The dated list
itself is :func:`gis_sw.analysis.calendar.build_calendar` (``gis-sw calendar``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import pandas as pd

from gis_sw.analysis.calendar import notice_schedule, weekly_due_dates
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.permits import land_development, permit_areas
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import ConstructionParams


@dataclass(frozen=True, slots=True)
class ConstructionPeriod:
    """First and last day of construction and where each came from."""

    start: date
    end: date
    source: str


def _as_date(value: Any) -> date | None:
    if value is None or pd.isna(value):
        return None
    return pd.Timestamp(value).date()


def construction_periods(proposals: Proposals) -> dict[str, ConstructionPeriod | None]:
    """Return the construction period of every proposal, computed in one pass (see below).

    Attributes ``construction_start``/``construction_end`` win; a missing end is taken from
    the disturbance polygons' earliest ``start_date`` or latest ``end_date``.  None when
    neither source gives both ends, or the end is before the start (the caller reports it).
    """
    dist = proposals.disturbance
    pids = dist["proposal_id"].astype(str)
    first = dist["start_date"].groupby(pids).min().to_dict()
    last = dist["end_date"].groupby(pids).max().to_dict()
    attrs = proposals.attributes
    attr_start = dict(zip(attrs.index.astype(str), attrs["construction_start"], strict=True))
    attr_end = dict(zip(attrs.index.astype(str), attrs["construction_end"], strict=True))
    out: dict[str, ConstructionPeriod | None] = {}
    for pid in proposals.ids:
        start, end = _as_date(attr_start.get(pid)), _as_date(attr_end.get(pid))
        sources = ["attributes" if start else "", "attributes" if end else ""]
        if start is None:
            start, sources[0] = _as_date(first.get(pid)), "disturbance dates"
        if end is None:
            end, sources[1] = _as_date(last.get(pid)), "disturbance dates"
        if start is None or end is None or end < start:
            out[pid] = None
            continue
        source = sources[0] if sources[0] == sources[1] else " and ".join(sources)
        out[pid] = ConstructionPeriod(start=start, end=end, source=source)
    return out


def construction_period(proposals: Proposals, proposal_id: str) -> ConstructionPeriod | None:
    """Return the construction period of one proposal (:func:`construction_periods`)."""
    return construction_periods(proposals.subset([str(proposal_id)])).get(str(proposal_id))


def _periods(ctx: CheckContext) -> dict[str, ConstructionPeriod | None]:
    return ctx.memo("construction.periods", lambda: construction_periods(ctx.proposals))


def _disturbed_ids(ctx: CheckContext) -> list[str]:
    dist = ctx.proposals.disturbance
    return sorted(set(dist["proposal_id"].astype(str)))


def duties_apply(ctx: CheckContext) -> dict[str, bool | None]:
    """Whether the construction duties bind each proposal (None: cannot tell).

    True when a town permit is required (SW101) or the work is a land development activity
    (SW102); False when SW101 passes and the work is not a land development activity.
    """

    def compute() -> dict[str, bool | None]:
        areas = permit_areas(ctx)
        developing = land_development(ctx)
        out: dict[str, bool | None] = {}
        for pid in ctx.proposal_ids:
            permit = areas[pid].outcome if pid in areas else Outcome.REVIEW
            activity = developing.get(pid)
            if permit == Outcome.REQUIRED or activity is True:
                out[pid] = True
            elif permit == Outcome.PASS and activity is False:
                out[pid] = False
            else:
                out[pid] = None
        return out

    return ctx.memo("construction.duties_apply", compute)


def _not_bound(cite: str, applies: bool | None) -> tuple[Outcome, str]:
    """Return the outcome and message of a duty that does not (or may not) bind the proposal."""
    if applies is False:
        return Outcome.PASS, (
            f"Does not attach: no town permit is required (SW101) and the work is not a land "
            f"development activity (SW102), so the construction duties of {cite} do not apply."
        )
    return Outcome.REVIEW, (
        f"The construction duties of {cite} apply if a town permit is required (SW101) or the "
        "work is a land development activity (SW102); one of them is undetermined (see those "
        "findings)."
    )


def _listed(items: tuple[str, ...]) -> str:
    """Return ``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _recipients(params: ConstructionParams) -> str:
    """`` Reports go to ...`` from the ruleset, or nothing when it names none."""
    named = _listed(params.report_recipients)
    return f" A copy of each report goes to {named}." if named else ""


def _storm_rule(params: ConstructionParams) -> str:
    """Return the storm-report duty and what a storm event is, in the ruleset's numbers."""
    gap = params.storm_dry_gap_days
    days = "a dry day" if gap == 1 else f"{gap} dry days in a row"
    return (
        f"within {params.storm_report_within_hours} hours of each storm event of "
        f"{params.storm_threshold_in:g} in or more (a storm event is consecutive wet days of "
        f"{params.storm_wet_day_in:g} in or more, ended by {days}; the report is due from "
        f"the day its total reaches {params.storm_threshold_in:g} in)"
    )


Duty = Callable[[str], tuple[Outcome, str, float]]
"""A duty's outcome, message and measured figure for one proposal it binds."""


def _each_proposal(ctx: CheckContext, rows: Findings, duty: Duty) -> None:
    """Add one row per disturbed proposal: ``duty`` where the duties bind, else why not."""
    bound = duties_apply(ctx)
    for pid in _disturbed_ids(ctx):
        if bound.get(pid) is True:
            outcome, message, measured = duty(pid)
        else:
            outcome, message = _not_bound(rows.citation, bound.get(pid))
            measured = float("nan")
        geometry = ctx.disturbance_union.get(pid)
        rows.add(pid, outcome, message, measured=measured, geometry=geometry)


@rule_check
def check_inspections(ctx: CheckContext, rows: Findings) -> None:
    """Check SW401: ``required`` with the period and first due date where the duties bind.

    ``review`` when the duties bind but no construction period is given.
    """
    params = ctx.ruleset.construction
    rows.threshold, rows.unit = float(params.inspection_interval_days), "weekly reports"

    def duty(pid: str) -> tuple[Outcome, str, float]:
        period = _periods(ctx).get(pid)  # only where the duties bind
        if period is None:
            return (
                Outcome.REVIEW,
                (
                    f"Inspection reports are due every {params.inspection_interval_days} days and "
                    f"{_storm_rule(params)}, but the proposal gives no valid "
                    "construction period: add construction_start and construction_end (or dates "
                    "on the disturbance polygons) to list the due dates."
                    f"{_recipients(params)}"
                ),
                float("nan"),
            )
        weekly = weekly_due_dates(
            period.start, period.end, interval_days=params.inspection_interval_days
        )
        first = weekly[0].isoformat() if weekly else "none (period shorter than the interval)"
        return (
            Outcome.REQUIRED,
            (
                f"Inspection reports every {params.inspection_interval_days} days from "
                f"{period.start.isoformat()} to {period.end.isoformat()} ({period.source}): "
                f"{len(weekly)} weekly reports, first due {first}; plus one {_storm_rule(params)}."
                f"{_recipients(params)} `gis-sw calendar` lists the dates."
            ),
            float(len(weekly)),
        )

    _each_proposal(ctx, rows, duty)


@rule_check
def check_notices(ctx: CheckContext, rows: Findings) -> None:
    """Check SW402: ``required`` where the duties bind, with the milestones and first date."""
    params = ctx.ruleset.construction
    milestones = "; ".join(params.notice_milestones)
    rows.threshold, rows.unit = float(params.notice_hours), "hours"

    def duty(pid: str) -> tuple[Outcome, str, float]:
        period = _periods(ctx).get(pid)  # only where the duties bind
        notices = notice_schedule(
            params.notice_milestones,
            construction_start=period.start if period else None,
            notice_hours=params.notice_hours,
        )
        first = notices[0] if notices else None
        when = (
            f" The first notice is due by {first.due.isoformat()}."
            if first is not None and first.due is not None
            else ""
        )
        return (
            Outcome.REQUIRED,
            (
                f"Notify {_listed(params.notice_recipients) or 'the Town'} at least "
                f"{params.notice_hours} hours before each of: {milestones}.{when}"
            ),
            float("nan"),
        )

    _each_proposal(ctx, rows, duty)


@rule_check
def check_sediment_cleanout(ctx: CheckContext, rows: Findings) -> None:
    """Check SW403: ``required`` where the construction duties bind (:func:`duties_apply`)."""
    percent = ctx.ruleset.construction.sediment_cleanout_fraction * 100.0
    duty_text = (
        "Remove sediment from sediment traps and sediment ponds whenever their design "
        f"capacity has been reduced by {percent:.0f}%, and keep every erosion and sediment "
        "control facility operating and maintained at all times."
    )
    rows.threshold, rows.unit = percent, "% of design capacity"
    _each_proposal(ctx, rows, lambda pid: (Outcome.REQUIRED, duty_text, float("nan")))
