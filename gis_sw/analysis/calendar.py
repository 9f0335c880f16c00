"""Inspection and notice calendar of a construction period (pure; no files, no clock).

§ 183-9A(2) and § 183-12C(4)(a)[4]: inspection reports are completed every seven days and
within 24 hours of any storm event producing 0.5 inch of precipitation or more.
§ 183-10A(1) and § 183-12C(4)(b)[2]: the applicant notifies the Town (the enforcement
official; the Town Engineer) at least 48 hours before each milestone.
The numbers come from ``ruleset.construction``.

How the dates are set (days are calendar days; rainfall comes as daily totals):

- Weekly reports fall due on ``start + 7``, ``start + 14`` ... up to and including ``end``.
  The weekly cycle is fixed from the start and is not reset by storm reports.
- **A storm is not a day.**  Consecutive wet days are one storm event: a day with at least
  ``storm_wet_day_in`` (0.01 in) of rain is wet, and an event ends after
  ``storm_dry_gap_days`` (1) dry days in a row; the rain of dry days inside a longer gap
  setting still counts toward the event.  Why these numbers: practice separates storm
  events by a dry interval of a few hours (a 4-hour break in Florida's construction
  inspections, a 6-hour minimum inter-event time in EPA's rainfall statistics and SWMM);
  daily totals cannot show a gap shorter than a day, so two wet days in a row may be one
  storm and are counted as one, while a whole day without measurable rain (0.01 in is the
  least the National Weather Service records as measurable) is longer than any of those
  intervals and ends the event.  Reading toward the event being longer gives more reports,
  never fewer: 0.30 in followed by 0.30 in is a 0.60 in storm.
- The report of an event is dated from the day its running total reaches
  ``storm_threshold_in`` (0.5 in): due by that day ``+ 1`` (24 hours after a storm that
  may end late that day).  If the event goes on and the rain since that day again reaches
  the threshold, that day gets a report of its own (a report made during a storm cannot
  show the effect of the rain after it); so a 0.50 in day followed by a 1.20 in day gives
  two reports, 0.30 + 0.30 in one, dated the second day.
- A storm report on a weekly inspection day still gets its own report the next day: the
  weekly inspection may have been done before the rain.
- Duties falling on the same date are one entry: a storm report due on a weekly due date is
  one inspection that satisfies both (``kind`` ``weekly+storm``), and lists every storm it
  covers.
- 48-hour notices: due two days before a milestone whose date is known.  Only the start of
  construction has a date in the data (the first milestone of the ruleset's list); the others
  are listed without a date for the applicant to schedule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
        For each storm the report answers, the day its rain reached the threshold (the day
        the report is dated from), oldest first.
    rain_in
        Rain of each storm up to and including that day, inches (since its previous report
        for a storm long enough to have two).
    storm_began
        First wet day of each storm (same order); empty when every storm is one day.
    interval_days, within_hours
        The ruleset's weekly interval and storm report delay (for the description).
    """

    due: date
    weekly: bool
    storm_days: tuple[date, ...] = ()
    rain_in: tuple[float, ...] = ()
    interval_days: int = 7
    within_hours: int = 24
    storm_began: tuple[date, ...] = field(default=(), compare=False)

    @property
    def kind(self) -> str:
        """``weekly``, ``storm`` or ``weekly+storm``."""
        if self.weekly and self.storm_days:
            return "weekly+storm"
        return "weekly" if self.weekly else "storm"

    def describe(self) -> str:
        """Return a sentence for a calendar entry."""
        parts = []
        if self.weekly:
            parts.append(f"{self.interval_days}-day erosion and sediment control inspection report")
        began = self.storm_began or self.storm_days
        for first, day, rain in zip(began, self.storm_days, self.rain_in, strict=True):
            when = day.isoformat() if first == day else f"{first.isoformat()} to {day.isoformat()}"
            parts.append(
                f"report within {self.within_hours} hours of the {rain:.2f} in storm of {when}"
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
        """Return the number of weekly inspection reports."""
        return sum(1 for i in self.inspections if i.weekly)

    @property
    def storm_count(self) -> int:
        """Return the number of storm reports."""
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


@dataclass(frozen=True, slots=True)
class StormReport:
    """One storm report's trigger.

    The first wet day it counts (the storm's, or the day after its previous report), the
    day the rain reached the threshold, and that rain (in).
    """

    began: date
    reached: date
    rain_in: float


def storm_events(
    rainfall: Mapping[date, float],
    start: date,
    end: date,
    *,
    threshold_in: float,
    wet_day_in: float = 0.01,
    dry_gap_days: int = 1,
) -> list[StormReport]:
    """Storm reports from daily rain within ``start``..``end`` (rules in the module docstring).

    Consecutive wet days (at least ``wet_day_in``) are one event; ``dry_gap_days`` dry days
    in a row (a missing day counts as dry) end it.  Rain before ``start`` counts toward a
    storm going on when construction starts; reports are only triggered from ``start``.
    Each time the event's rain since its last report reaches ``threshold_in`` a report is
    triggered that day.

    Raises
    ------
    ValueError
        If ``dry_gap_days`` is not positive.
    """
    if dry_gap_days <= 0:
        raise ValueError(f"storm dry gap must be at least 1 day, got {dry_gap_days}")
    # rain before the start counts toward a storm still going on when construction starts
    days = sorted((d, float(r)) for d, r in rainfall.items() if d <= end)
    out: list[StormReport] = []
    began: date | None = None
    last_wet: date | None = None
    running = 0.0
    for day, rain in days:
        wet = rain >= wet_day_in
        if last_wet is not None and (day - last_wet).days > dry_gap_days:
            began, running = None, 0.0  # enough dry days in between: the event is over
        if not wet and began is None:
            continue
        if began is None:
            began = day
        running += rain
        if wet:
            last_wet = day
        # compare at a millionth of an inch: 0.2 + 0.3 must reach 0.5
        if round(running, 6) >= threshold_in:
            if day >= start:
                out.append(StormReport(began=began, reached=day, rain_in=round(running, 6)))
            # the event may go on: its rain from here on counts toward a further report
            began, running = None, 0.0
    return out


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
    wet_day_in: float = 0.01,
    dry_gap_days: int = 1,
) -> tuple[InspectionDue, ...]:
    """Inspection reports due over a construction period (rules in the module docstring).

    Raises
    ------
    ValueError
        If ``end`` is before ``start`` or the interval or dry gap is not positive.
    """
    weekly = weekly_due_dates(start, end, interval_days=interval_days)
    lag = timedelta(days=max(1, math.ceil(storm_within_hours / 24)))
    entries: dict[date, tuple[bool, list[StormReport]]] = {d: (True, []) for d in weekly}
    storms = storm_events(
        rainfall or {},
        start,
        end,
        threshold_in=storm_threshold_in,
        wet_day_in=wet_day_in,
        dry_gap_days=dry_gap_days,
    )
    for storm in storms:
        is_weekly, found = entries.get(storm.reached + lag, (False, []))
        entries[storm.reached + lag] = (is_weekly, [*found, storm])
    return tuple(
        InspectionDue(
            due=d,
            weekly=w,
            storm_days=tuple(s.reached for s in found),
            rain_in=tuple(s.rain_in for s in found),
            interval_days=interval_days,
            within_hours=storm_within_hours,
            storm_began=(
                tuple(s.began for s in found) if any(s.began != s.reached for s in found) else ()
            ),
        )
        for d, (w, found) in sorted(entries.items())
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
        wet_day_in=construction.storm_wet_day_in,
        dry_gap_days=construction.storm_dry_gap_days,
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
