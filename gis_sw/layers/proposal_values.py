"""Proposal values as exports write them: float ids, time-zone dates, far dates, inf.

* **Ids** (:func:`id_strings`): a numeric column read as floats (``101.0``, what a
  Shapefile or an Excel-made table gives) is the id ``101``, the same in every layer and in
  the attribute table, so one proposal is never split in two.  Integral floats become their
  integer text, other values keep their text.
* **Dates** (:func:`normalise_dates`): GeoPackage DATETIME fields in UTC (what QGIS and
  ArcGIS write, read as a time-zone-aware dtype), text ending in ``Z`` and ISO dates with
  several offsets in one column are all read in UTC, as GDAL itself reads a GeoJSON or
  GeoPackage datetime (``2026-05-01T00:00:00-04:00`` is 04:00 on 1 May; naive values stay
  as written).
  A date pandas cannot hold (before 1677-09-22 or after 2262-04-11) is a problem naming the
  feature, never a crash or a silently missing date.  Values that are not ISO dates are
  left as they are, for the layer's validation to name.
* **Numbers** (:func:`number_problems`): ``inf`` is refused in every number column, and
  a negative value where the quantity cannot be negative (a construction cost).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

import numpy as np
import pandas as pd

from gis_sw.errors import Problem
from gis_sw.layers.validate import listing

_EXACT_FLOAT_INT = 2**53
"""Floats above this are not exact integers: their text is kept."""
FIRST_DAY = dt.datetime(1677, 9, 22)  # noqa: DTZ001  dates are naive wall-clock values
LAST_DAY = dt.datetime(2262, 4, 11)  # noqa: DTZ001
"""The first and last whole days pandas' nanosecond timestamps can hold."""


def id_strings(series: pd.Series) -> pd.Series:
    """Ids as text (object dtype, None for missing); integral floats as integer text."""
    if pd.api.types.is_float_dtype(series):
        values = series.to_numpy(dtype="float64", na_value=np.nan)
        present = ~np.isnan(values)
        whole = present & (np.abs(values) < _EXACT_FLOAT_INT)
        whole[whole] = values[whole] == np.floor(values[whole])
        out = np.full(len(values), None, dtype=object)
        out[whole] = values[whole].astype("int64").astype(str)
        rest = present & ~whole
        out[rest] = [repr(float(v)) for v in values[rest]]
        return pd.Series(out, index=series.index, dtype=object)
    if pd.api.types.is_integer_dtype(series) or pd.api.types.is_bool_dtype(series):
        present = series.notna().to_numpy(dtype=bool)
        out = np.full(len(series), None, dtype=object)
        out[present] = [str(v) for v in series[present]]
        return pd.Series(out, index=series.index, dtype=object)

    def one(value: object) -> object:
        if value is None or (not isinstance(value, str) and pd.isna(value)):  # type: ignore[call-overload]
            return None
        if isinstance(value, float) and value.is_integer() and abs(value) < _EXACT_FLOAT_INT:
            return str(int(value))
        return value if isinstance(value, str) else str(value)

    values = np.empty(len(series), dtype=object)
    values[:] = [one(v) for v in series.astype(object)]
    return pd.Series(values, index=series.index, dtype=object)


def _parse_date(value: object) -> dt.datetime | None:
    """Return a wall-clock datetime from a date, datetime or ISO text; None when not one."""
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        return _utc_wall_clock(value)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)  # noqa: DTZ001  naive by design
    if isinstance(value, np.datetime64):
        text = str(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        return None
    if len(text) < 8 or not text[:4].isdigit():  # fromisoformat also takes "20260501"
        return None
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return _utc_wall_clock(parsed)


def _utc_wall_clock(value: dt.datetime) -> dt.datetime:
    """Return a naive datetime: one with an offset in UTC (as GDAL reads GeoJSON, GeoPackage)."""
    if value.tzinfo is None:
        return value
    return value.astimezone(dt.UTC).replace(tzinfo=None)


def _in_range(value: dt.datetime) -> bool:
    return FIRST_DAY <= value < LAST_DAY


def normalise_dates(series: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """Return a date column as naive ``datetime64[ns]``, and the rows pandas cannot hold.

    Returns
    -------
    (series, out_of_range)
        The column as ``datetime64[ns]`` (wall-clock, no time zone) when every present value
        is a date in range; otherwise the column with every readable date as ISO text and the
        rest untouched, for validation to name.  ``out_of_range`` marks dates before
        :data:`FIRST_DAY` or from :data:`LAST_DAY` on.
    """
    none = np.zeros(len(series), dtype=bool)
    if isinstance(series.dtype, pd.DatetimeTZDtype):
        series = series.dt.tz_convert("UTC").dt.tz_localize(None)
    if pd.api.types.is_datetime64_dtype(series):
        stamps = series.to_numpy()
        present = ~np.isnat(stamps)
        lo, hi = np.datetime64(FIRST_DAY, "s"), np.datetime64(LAST_DAY, "s")
        far = present & ((stamps < lo) | (stamps >= hi))
        if far.any():
            return series.astype(object), far
        return series.astype("datetime64[ns]"), none
    present = series.notna().to_numpy(dtype=bool)
    parsed: dict[object, dt.datetime | None] = {}
    for value in pd.unique(series[present].astype(object)):
        parsed[value] = _parse_date(value)
    values = series.astype(object)
    dates = values.map(lambda v: parsed.get(v) if v in parsed else None)
    readable = present & dates.notna().to_numpy(dtype=bool)
    far = readable & ~dates.map(lambda d: d is not None and _in_range(d)).to_numpy(dtype=bool)
    if bool((readable & ~far).sum() == present.sum()):
        out = pd.to_datetime(dates.where(readable, None)).astype("datetime64[ns]")
        return pd.Series(out, index=series.index), none
    text = values.where(
        ~(readable & ~far), dates.map(lambda d: None if d is None else d.isoformat())
    )
    return text.astype(object), far


def _date_text(value: object) -> str:
    """Write a far date as given: ISO text, midnight left out."""
    if isinstance(value, pd.Timestamp | dt.datetime | np.datetime64):
        text = (
            pd.Timestamp(value).isoformat()
            if not isinstance(value, dt.datetime)
            else value.isoformat()
        )
        return text.removesuffix("T00:00:00")
    return str(value)


def date_range_problem(
    frame: pd.DataFrame, column: str, far: np.ndarray, labels: pd.Series, name: str
) -> Problem:
    """Return the problem of dates pandas cannot hold, naming each feature and value."""
    shown = [
        f"{lab} = {_date_text(val)!r}"
        for lab, val in zip(labels[far], frame[column][far], strict=True)
    ]
    return Problem(
        name,
        f"column {column!r} has dates outside {FIRST_DAY:%Y-%m-%d} to "
        f"{LAST_DAY:%Y-%m-%d}, the dates gis-sw can compute with: {listing(shown)}.",
        "correct the year (a typo such as 2926 for 2026?), or leave the date empty when it "
        "is not known.",
    )


def number_problems(
    frame: pd.DataFrame,
    columns: Iterable[str],
    labels: pd.Series,
    name: str,
    *,
    not_negative: Iterable[str] = (),
) -> list[Problem]:
    """Infinite values in number columns, and negative ones where none can be."""
    problems = []
    positive = set(not_negative)
    for column in columns:
        if column not in frame.columns:
            continue
        numbers = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype="float64")
        infinite = np.isinf(numbers)
        negative = (numbers < 0) & ~infinite if column in positive else np.zeros_like(infinite)
        for mask, what, fix in (
            (infinite, "infinite", "give a finite number (empty when unknown)."),
            (negative, "negative", f"give {column} as a number of 0 or more (empty when unknown)."),
        ):
            if mask.any():
                values = frame[column][mask]
                shown = [f"{lab} = {val!r}" for lab, val in zip(labels[mask], values, strict=True)]
                problems.append(
                    Problem(name, f"column {column!r} has {what} values: {listing(shown)}.", fix)
                )
    return problems
