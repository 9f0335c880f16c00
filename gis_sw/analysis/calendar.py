"""Inspection and notice calendar of a construction period (pure; no files, no clock).

§ 183-9A(2) and § 183-12C(4)(a)[4]: inspection reports are completed every seven days and
within 24 hours of any storm event producing 0.5 inch of precipitation or more.
§ 183-10A(1): the applicant notifies the Town at least 48 hours before each milestone.
The numbers come from ``ruleset.construction``.

How the dates are set (days are calendar days; a daily rainfall total stands for the storm):

- Weekly reports fall due on ``start + 7``, ``start + 14`` ... up to and including ``end``.
  The weekly cycle is fixed from the start and is not reset by storm reports.
- A storm day ``D`` (rain >= 0.5 in, ``start <= D <= end``) makes a report due by
  ``D + 1`` (24 hours after the storm, which may end late on ``D``).
- A storm on a weekly inspection day still gets its own report the next day: the weekly
  inspection may have been done before the rain.
- Two storm days in a row, ``D`` and ``D + 1``, give reports due ``D + 1`` and ``D + 2``:
  daily totals cannot tell one long storm from two, and a report on ``D + 1`` may be done
  before that day's rain.
- Duties falling on the same date are one entry: a storm report due on a weekly due date is
  one inspection that satisfies both (``kind`` ``weekly+storm``), and lists every storm day
  it covers.
- 48-hour notices: due two days before a milestone whose date is known.  Only the start of
  construction has a date in the data (the first milestone of the ruleset's list); the others
  are listed without a date for the applicant to schedule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from gis_sw.ruleset import ConstructionParams


@dataclass(frozen=True, slots=True)
class InspectionDue:
    """One inspection report and the latest day it is due.

    Attributes
    ----------
    due
        Latest day the report must be completed.
    weekly
        True when a seven-day report falls due that day.
    storm_days
        Storm days (rain at or above the threshold) the report answers, oldest first.
    rain_in
        Rainfall of each storm day, inches.
    interval_days, within_hours
        The ruleset's weekly interval and storm report delay (for the description).
    """

    due: date
    weekly: bool
    storm_days: tuple[date, ...] = ()
    rain_in: tuple[float, ...] = ()
    interval_days: int = 7
    within_hours: int = 24

    @property
    def kind(self) -> str:
        """``weekly``, ``storm`` or ``weekly+storm``."""
        if self.weekly and self.storm_days:
            return "weekly+storm"
        return "weekly" if self.weekly else "storm"

    def describe(self) -> str:
        """A sentence for a calendar entry."""
        parts = []
        if self.weekly:
            parts.append(f"{self.interval_days}-day erosion and sediment control inspection report")
        for day, rain in zip(self.storm_days, self.rain_in, strict=True):
            parts.append(
                f"report within {self.within_hours} hours of the {rain:.2f} in storm of "
                f"{day.isoformat()}"
            )
        return "; ".join(parts).capitalize() + "."


@dataclass(frozen=True, slots=True)
class NoticeDue:
    """A 48-hour notice before a milestone of § 183-10A(1).

    Attributes
    ----------
    milestone
        The milestone as the ruleset words it.
    due
        Latest day to notify the Town (None when the milestone's date is not known).
    milestone_date
        Date of the milestone when known.
    notice_hours
        How long before the milestone the Town must be told.
    """

    milestone: str
    due: date | None
    milestone_date: date | None
    notice_hours: int = 48


@dataclass(frozen=True, slots=True)
class ConstructionCalendar:
    """Every dated duty of a construction period.

    Attributes
    ----------
    start, end
        The construction period (both days included).
    inspections
        Inspection reports, by due date.
    notices
        48-hour notices, in the ruleset's milestone order.
    rainfall_given
        False when no rainfall series was supplied (only weekly reports are listed).
    rain_days_missing
        Days of the period with no rainfall value, when a series was supplied.
    """

    start: date
    end: date
    inspections: tuple[InspectionDue, ...]
    notices: tuple[NoticeDue, ...]
    rainfall_given: bool
    rain_days_missing: int

    @property
    def weekly_count(self) -> int:
        return sum(1 for i in self.inspections if i.weekly)

    @property
    def storm_count(self) -> int:
        return sum(len(i.storm_days) for i in self.inspections)


def weekly_due_dates(start: date, end: date, *, interval_days: int = 7) -> list[date]:
    """``start + k * interval_days`` for k = 1, 2, ... while not after ``end``.

    Raises
    ------
    ValueError
        If ``end`` is before ``start`` or the interval is not positive.
    """
    if end < start:
        raise ValueError(f"construction end {end} is before its start {start}")
    if interval_days <= 0:
        raise ValueError(f"inspection interval must be positive, got {interval_days}")
    count = (end - start).days // interval_days
    return [start + timedelta(days=interval_days * k) for k in range(1, count + 1)]


def storm_days(
    rainfall: Mapping[date, float], start: date, end: date, *, threshold_in: float
) -> list[tuple[date, float]]:
    """Days from ``start`` to ``end`` (included) with rainfall at or above ``threshold_in``."""
    return sorted(
        (day, float(rain))
        for day, rain in rainfall.items()
        if start <= day <= end and rain >= threshold_in
    )


def inspection_schedule(
    start: date,
    end: date,
    *,
    rainfall: Mapping[date, float] | None = None,
    interval_days: int = 7,
    storm_threshold_in: float = 0.5,
    storm_within_hours: int = 24,
) -> tuple[InspectionDue, ...]:
    """Inspection reports due over a construction period (rules in the module docstring).

    Raises
    ------
    ValueError
        If ``end`` is before ``start`` or the interval is not positive.
    """
    weekly = weekly_due_dates(start, end, interval_days=interval_days)
    lag = timedelta(days=max(1, math.ceil(storm_within_hours / 24)))
    entries: dict[date, tuple[bool, list[date], list[float]]] = {d: (True, [], []) for d in weekly}
    for day, rain in storm_days(rainfall or {}, start, end, threshold_in=storm_threshold_in):
        is_weekly, days, rains = entries.get(day + lag, (False, [], []))
        entries[day + lag] = (is_weekly, [*days, day], [*rains, rain])
    return tuple(
        InspectionDue(
            due=d,
            weekly=w,
            storm_days=tuple(s),
            rain_in=tuple(r),
            interval_days=interval_days,
            within_hours=storm_within_hours,
        )
        for d, (w, s, r) in sorted(entries.items())
    )


def notice_schedule(
    milestones: Sequence[str], *, construction_start: date | None, notice_hours: int = 48
) -> tuple[NoticeDue, ...]:
    """48-hour notices: the first milestone is dated by the construction start."""
    lead = timedelta(days=math.ceil(notice_hours / 24))
    out = []
    for k, milestone in enumerate(milestones):
        when = construction_start if k == 0 else None
        due = None if when is None else when - lead
        out.append(NoticeDue(milestone, due=due, milestone_date=when, notice_hours=notice_hours))
    return tuple(out)


def build_calendar(
    start: date,
    end: date,
    *,
    construction: ConstructionParams,
    rainfall: Mapping[date, float] | None = None,
) -> ConstructionCalendar:
    """Inspections and notices of one construction period with the ruleset's numbers.

    Raises
    ------
    ValueError
        If ``end`` is before ``start``.
    """
    inspections = inspection_schedule(
        start,
        end,
        rainfall=rainfall,
        interval_days=construction.inspection_interval_days,
        storm_threshold_in=construction.storm_threshold_in,
        storm_within_hours=construction.storm_report_within_hours,
    )
    notices = notice_schedule(
        construction.notice_milestones,
        construction_start=start,
        notice_hours=construction.notice_hours,
    )
    missing = 0
    if rainfall is not None:
        period_days = (end - start).days + 1
        missing = period_days - sum(1 for d in rainfall if start <= d <= end)
    return ConstructionCalendar(
        start=start,
        end=end,
        inspections=inspections,
        notices=notices,
        rainfall_given=rainfall is not None,
        rain_days_missing=missing,
    )
