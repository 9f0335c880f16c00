"""phasing: SW301, not more than five acres disturbed at any one time (§ 183-7B(1)(d)).

Each disturbance polygon is *open* from its ``start_date`` through its ``end_date`` (the day
of final stabilisation), both days included: the ground is disturbed on the first and on the
last day, so a phase that ends on the day the next one starts overlaps it by one day.  This
is the conservative reading; plans that hand over on the same day should end the first phase
the day before.  Disturbed area on a day is the area of the union of the polygons open that
day: overlapping polygons count once, and a polygon re-disturbed in a later phase (a second
row with later dates) counts again only while it is open.

Speed (see ``benchmarks/bench_phasing.py``): the area can only rise on a day some polygon
starts, so the peak is looked for on start days only.  Polygons are grouped once into
clusters that overlap both in space (positive intersection area, found with an STRtree) and
in time; on a given day the disturbed area is the sum of the areas of open polygons that
overlap nothing, plus one union per cluster with two or more open members, cached by the set
of open members.  A plan of disjoint lots therefore needs no union at all, and a union is
never recomputed for a set of polygons already seen.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.permits.common import GAP_FIX, disturbance_gap
from gis_sw.analysis.wording import acres_sqft_pair
from gis_sw.layers.proposals import Proposals
from gis_sw.units import SQFT_PER_ACRE

log = logging.getLogger(__name__)

OVERLAP_TOLERANCE_SQFT = 1e-6
"""Pairs whose intersection is smaller than this are treated as disjoint (edge neighbours)."""
AREA_DECIMALS = 2
"""Areas are compared with the limit after rounding to 0.01 sq ft (exactly 5.00 acres passes)."""
MAX_LISTED = 12

_EPOCH = np.datetime64("1970-01-01", "D")


MISSING_DAY = int(np.iinfo(np.int64).min)
"""Day number standing for a missing date."""


def to_day_numbers(values: Any) -> np.ndarray:
    """Days since 1970-01-01 (int64) of date-likes; :data:`MISSING_DAY` for a missing one."""
    array = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values)
    if not np.issubdtype(array.dtype, np.datetime64):
        stamps = pd.to_datetime(pd.Series(list(array), dtype="object"), errors="coerce")
        array = stamps.to_numpy(dtype="datetime64[ns]")
    days = array.astype("datetime64[D]")
    out = (days - _EPOCH).astype("int64")
    out[np.isnat(days)] = MISSING_DAY
    return out


def day_to_date(day: int) -> date:
    """Return the calendar date of a day number."""
    return (_EPOCH + np.timedelta64(int(day), "D")).astype(object)


@dataclass(frozen=True, slots=True)
class Timeline:
    """Disturbed area as a step function of the day.

    Attributes
    ----------
    days
        Sorted dates on which the set of open polygons changes.
    area_sqft
        Disturbed area from ``days[k]`` through the day before ``days[k + 1]``; the last
        value (after the final stabilisation) is 0.
    """

    days: tuple[date, ...]
    area_sqft: np.ndarray

    @property
    def acres(self) -> np.ndarray:
        """The areas in acres."""
        return self.area_sqft / SQFT_PER_ACRE


@dataclass(frozen=True, slots=True)
class Peak:
    """The largest disturbed area and when it holds.

    Attributes
    ----------
    area_sqft
        Peak disturbed area.
    first_day, last_day
        First period over which the peak holds (both days included).
    members
        Positions (in the input order) of the polygons open on ``first_day``.
    geometry
        Union of those polygons.
    """

    area_sqft: float
    first_day: date
    last_day: date
    members: np.ndarray
    geometry: Any

    @property
    def acres(self) -> float:
        """Return the peak area in acres."""
        return self.area_sqft / SQFT_PER_ACRE


def _overlap_clusters(geoms: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Label polygons so that any two open together and overlapping share a label."""
    n = len(geoms)
    labels = np.arange(n)
    if n < 2:
        return labels
    tree = shapely.STRtree(geoms)
    left, right = tree.query(geoms, predicate="intersects")
    keep = left < right
    left, right = left[keep], right[keep]
    keep = (start[left] <= end[right]) & (start[right] <= end[left])
    left, right = left[keep], right[keep]
    if len(left):
        overlap = shapely.area(shapely.intersection(geoms[left], geoms[right]))
        keep = overlap > OVERLAP_TOLERANCE_SQFT
        left, right = left[keep], right[keep]
    while len(left):  # label propagation with pointer jumping
        low = np.minimum(labels[left], labels[right])
        new = labels.copy()
        np.minimum.at(new, left, low)
        np.minimum.at(new, right, low)
        new = new[new]
        if np.array_equal(new, labels):
            break
        labels = new
    return labels


@dataclass(eq=False)
class DisturbanceSweep:
    """Disturbed area of a set of dated polygons on any day (see the module docstring).

    Parameters
    ----------
    geometries
        Polygons in a projected CRS in feet.
    start_day, end_day
        Day numbers (:func:`to_day_numbers`) of the first and last day each polygon is open;
        every value must be present and ``end_day >= start_day``.

    Raises
    ------
    ValueError
        If lengths differ, a day is missing, or a polygon ends before it starts.
    """

    geometries: np.ndarray
    start_day: np.ndarray
    end_day: np.ndarray
    _areas: np.ndarray = field(init=False, repr=False)
    _labels: np.ndarray = field(init=False, repr=False)
    _clustered: np.ndarray = field(init=False, repr=False)
    _cache: dict[tuple[int, ...], float] = field(init=False, repr=False, default_factory=dict)
    unions_computed: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        """Hold the inputs as arrays."""
        self.geometries = np.asarray(self.geometries, dtype=object)
        self.start_day = np.asarray(self.start_day, dtype="int64")
        self.end_day = np.asarray(self.end_day, dtype="int64")
        n = len(self.geometries)
        if len(self.start_day) != n or len(self.end_day) != n:
            raise ValueError("geometries, start_day and end_day must have the same length")
        if (self.start_day == MISSING_DAY).any() or (self.end_day == MISSING_DAY).any():
            raise ValueError("every polygon needs a start and an end day")
        if (self.end_day < self.start_day).any():
            raise ValueError("a polygon ends before it starts")
        self._areas = shapely.area(self.geometries).astype("float64")
        self._labels = _overlap_clusters(self.geometries, self.start_day, self.end_day)
        sizes = np.bincount(self._labels, minlength=n)
        self._clustered = sizes[self._labels] > 1

    def open_on(self, day: int) -> np.ndarray:
        """Positions of the polygons open on ``day``."""
        return np.flatnonzero((self.start_day <= day) & (self.end_day >= day))

    def area_on(self, day: int) -> float:
        """Disturbed area (sq ft) on ``day``."""
        is_open = (self.start_day <= day) & (self.end_day >= day)
        total = float(self._areas[is_open & ~self._clustered].sum())
        members = np.flatnonzero(is_open & self._clustered)
        if len(members) == 0:
            return total
        order = np.argsort(self._labels[members], kind="stable")
        members = members[order]
        cuts = np.flatnonzero(np.diff(self._labels[members])) + 1
        for group in np.split(members, cuts):
            if len(group) == 1:
                total += float(self._areas[group[0]])
            else:
                total += self._union_area(tuple(int(i) for i in group))
        return total

    def _union_area(self, key: tuple[int, ...]) -> float:
        cached = self._cache.get(key)
        if cached is None:
            union = shapely.disjoint_subset_union_all(self.geometries[list(key)])
            cached = float(shapely.area(union))
            self._cache[key] = cached
            self.unions_computed += 1
        return cached

    def event_days(self) -> np.ndarray:
        """Days on which the open set changes: each start, and the day after each end."""
        return np.unique(np.concatenate([self.start_day, self.end_day + 1]))

    def timeline(self) -> Timeline:
        """Return the whole step function, for charts and maps."""
        days = self.event_days()
        areas = np.array([self.area_on(int(d)) for d in days], dtype="float64")
        return Timeline(days=tuple(day_to_date(int(d)) for d in days), area_sqft=areas)

    def peak(self) -> Peak | None:
        """Return the largest disturbed area, looked for on start days only (None if empty)."""
        if len(self.geometries) == 0:
            return None
        starts = np.unique(self.start_day)
        areas = np.array([self.area_on(int(d)) for d in starts], dtype="float64")
        rounded = np.round(areas, AREA_DECIMALS)
        best = int(np.argmax(rounded))
        first = int(starts[best])
        peak_area = float(areas[best])
        events = self.event_days()
        last = int(events[events > first][0]) - 1  # the open set changes the day after
        members = self.open_on(first)
        geometry = shapely.disjoint_subset_union_all(self.geometries[members])
        return Peak(
            area_sqft=peak_area,
            first_day=day_to_date(first),
            last_day=day_to_date(last),
            members=members,
            geometry=geometry,
        )


def disturbance_timeline(
    geometries: Sequence[Any] | np.ndarray, start_dates: Any, end_dates: Any
) -> Timeline:
    """Disturbed area over time of dated polygons (pure; polygons without dates are skipped).

    Parameters
    ----------
    geometries
        Polygons in a projected CRS in feet.
    start_dates, end_dates
        Date-likes, first and last day each polygon is open (both included).

    Raises
    ------
    ValueError
        If a polygon ends before it starts.
    """
    geoms = np.asarray(list(geometries), dtype=object)
    start, end = to_day_numbers(start_dates), to_day_numbers(end_dates)
    dated = (start != MISSING_DAY) & (end != MISSING_DAY)
    return DisturbanceSweep(geoms[dated], start[dated], end[dated]).timeline()


def naive_timeline(
    geometries: Sequence[Any] | np.ndarray, start_dates: Any, end_dates: Any
) -> Timeline:
    """Return the timeline by ``union_all`` of every open polygon at every event.

    Slow on large plans; kept to test and time :class:`DisturbanceSweep` against.
    """
    geoms = np.asarray(list(geometries), dtype=object)
    start, end = to_day_numbers(start_dates), to_day_numbers(end_dates)
    dated = (start != MISSING_DAY) & (end != MISSING_DAY)
    geoms, start, end = geoms[dated], start[dated], end[dated]
    days = np.unique(np.concatenate([start, end + 1]))
    areas = [float(shapely.area(shapely.union_all(geoms[(start <= d) & (end >= d)]))) for d in days]
    return Timeline(
        days=tuple(day_to_date(int(d)) for d in days), area_sqft=np.array(areas, dtype="float64")
    )


def proposal_timeline(proposals: Proposals, proposal_id: str) -> Timeline | None:
    """Timeline of one proposal's dated disturbance polygons (None when none is dated).

    Polygons without both dates, or ending before they start, are left out (SW301 reports
    them).
    """
    dist = proposals.disturbance
    rows = dist[dist["proposal_id"].astype(str) == str(proposal_id)]
    start, end = to_day_numbers(rows["start_date"]), to_day_numbers(rows["end_date"])
    dated = (start != MISSING_DAY) & (end != MISSING_DAY) & (end >= start)
    if not dated.any():
        return None
    geoms = rows.geometry.to_numpy()[dated]
    return DisturbanceSweep(geoms, start[dated], end[dated]).timeline()


def _listed(values: Sequence[str]) -> str:
    shown = ", ".join(values[:MAX_LISTED])
    more = len(values) - MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def _approved(value: Any) -> bool:
    return bool(value) if not pd.isna(value) else False


@dataclass(frozen=True, slots=True)
class _Plan:
    """One proposal's disturbance polygons as arrays (ids, phases, geometries, day numbers)."""

    ids: np.ndarray
    phases: np.ndarray
    geoms: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @property
    def backwards(self) -> np.ndarray:
        """Return which polygons end before they start."""
        return self.has_both & (self.end < self.start)

    @property
    def has_both(self) -> np.ndarray:
        """Return which polygons have both dates."""
        return (self.start != MISSING_DAY) & (self.end != MISSING_DAY)

    @property
    def dated(self) -> np.ndarray:
        """Return which polygons have both dates, in order."""
        return self.has_both & ~self.backwards


def _peak(plan: _Plan) -> Peak | None:
    """Return the peak of the dated polygons, None when none is dated."""
    dated = plan.dated
    if dated.sum() == 1:  # one dated polygon: no sweep needed
        i = int(np.flatnonzero(dated)[0])
        geom = plan.geoms[i]
        return Peak(
            area_sqft=float(shapely.area(geom)),
            first_day=day_to_date(int(plan.start[i])),
            last_day=day_to_date(int(plan.end[i])),
            members=np.array([0]),
            geometry=geom,
        )
    if dated.any():
        return DisturbanceSweep(plan.geoms[dated], plan.start[dated], plan.end[dated]).peak()
    return None


def _undated_row(total_sqft: float, limit_acres: float) -> tuple[Outcome, str]:
    """Return SW301 for a plan with no dates: the whole disturbance against the limit."""
    shown, limit_shown = acres_sqft_pair(total_sqft, limit_acres)
    if round(total_sqft, AREA_DECIMALS) <= limit_acres * SQFT_PER_ACRE:
        return Outcome.PASS, (
            f"Whole disturbance {shown} is not more than {limit_shown}, so no phasing "
            "can exceed the limit (the plan gives no dates)."
        )
    return Outcome.REVIEW, (
        f"Phasing plan gives no dates: whole disturbance {shown} exceeds "
        f"{limit_shown}, so whether more than {limit_acres:.2f} acres are "
        "disturbed at one time cannot be told. Add start_date and end_date to each "
        "disturbance polygon."
    )


def _where(plan: _Plan, peak: Peak) -> str:
    """Return when the peak holds, with its phases and polygons."""
    dated = plan.dated
    phases = plan.phases[dated][peak.members]
    phase_names = sorted({str(p) for p in phases if not pd.isna(p)})
    return (
        f"from {peak.first_day.isoformat()} to {peak.last_day.isoformat()}"
        f" ({'phase' if len(phase_names) == 1 else 'phases'}"
        f" {_listed(phase_names) or 'not named'};"
        f" polygons {_listed(sorted(plan.ids[dated][peak.members]))})"
    )


def _dated_row(
    plan: _Plan, peak: Peak, total_sqft: float, limit_acres: float, approved: bool
) -> tuple[Outcome, str]:
    """Return SW301 for a plan with dates: the peak against the limit."""
    limit_sqft = limit_acres * SQFT_PER_ACRE
    undated = ~plan.dated
    problem = ""
    if undated.any():
        what = "no start_date/end_date" if not plan.backwards.any() else "missing or reversed dates"
        problem = f"polygon(s) {_listed(list(plan.ids[undated]))} have {what}"
    over = round(peak.area_sqft, AREA_DECIMALS) > limit_sqft
    shown, limit_shown = acres_sqft_pair(peak.area_sqft, limit_acres)
    head = f"Peak disturbed area {shown} {_where(plan, peak)}"
    if over and approved:
        outcome = Outcome.REVIEW
        msg = (
            f"{head} exceeds {limit_shown}; allowed only pursuant to an approved "
            "SWPPP (approved_swppp is true): the Town Engineer confirms the approval covers "
            "this phasing."
        )
    elif over:
        outcome = Outcome.FAIL
        msg = (
            f"{head} exceeds {limit_shown} disturbed at any one time, with no "
            "approved SWPPP. Re-phase so less is open at once, or obtain SWPPP approval."
        )
    elif problem and round(total_sqft, AREA_DECIMALS) > limit_sqft:
        outcome = Outcome.REVIEW
        msg = (
            f"Phasing plan gives no dates for some polygons: {problem}. {head} among "
            f"the dated polygons; with the undated ones it could reach "
            f"{acres_sqft_pair(total_sqft, limit_acres)[0]}, over {limit_shown}."
        )
    else:
        outcome = Outcome.PASS
        msg = f"{head} is not more than {limit_shown}."
        if problem:
            msg += f" {problem}, but the whole disturbance is within the limit."
    if over and problem:
        msg += f" Also, {problem}."
    return outcome, msg


@rule_check
def check_five_acre_limit(ctx: CheckContext, rows: Findings) -> None:
    """Check SW301: one row per proposal with disturbance.

    ``pass`` when the peak (or, without dates, the whole disturbance) is at most the limit;
    ``fail`` above it; ``review`` above it under an approved SWPPP, or when polygons without
    dates could push the peak over the limit.  ``measured`` is the peak in acres.
    """
    dist = ctx.proposals.disturbance
    if len(dist) == 0:
        return
    limit_acres = ctx.ruleset.phasing.max_disturbed_acres
    rows.threshold, rows.unit = limit_acres, "acres"
    approvals = ctx.proposals.attributes["approved_swppp"].to_dict()
    gaps = disturbance_gap(ctx)
    totals = {str(k): float(v) for k, v in ctx.disturbed_area_sqft.items()}
    unions = ctx.disturbance_union.to_dict()
    # Whole columns as arrays once; each proposal is a slice (no per-group pandas work).
    pids = dist["proposal_id"].astype(str).to_numpy()
    order = np.argsort(pids, kind="stable")
    names, firsts = np.unique(pids[order], return_index=True)
    bounds = [*firsts.tolist(), len(order)]
    whole = _Plan(
        dist["disturbance_id"].astype(str).to_numpy(),
        dist["phase"].to_numpy(),
        dist.geometry.to_numpy(),
        to_day_numbers(dist["start_date"]),
        to_day_numbers(dist["end_date"]),
    )
    for k, pid in enumerate(names.tolist()):
        sel = order[bounds[k] : bounds[k + 1]]
        plan = _Plan(
            whole.ids[sel], whole.phases[sel], whole.geoms[sel], whole.start[sel], whole.end[sel]
        )
        total_sqft = totals.get(pid, 0.0)
        peak = _peak(plan)
        if peak is None:
            outcome, msg = _undated_row(total_sqft, limit_acres)
            acres, geom = total_sqft / SQFT_PER_ACRE, unions.get(pid)
        else:
            approved = _approved(approvals.get(pid))
            outcome, msg = _dated_row(plan, peak, total_sqft, limit_acres, approved)
            acres, geom = peak.acres, peak.geometry
        if outcome is Outcome.PASS and pid in gaps:
            outcome = Outcome.REVIEW
            msg = (
                f"The area disturbed at one time cannot be checked: {gaps[pid]}. Fix: {GAP_FIX} "
                f"({rows.citation})."
            )
        rows.add(pid, outcome, msg, measured=round(acres, 6), geometry=geom)
