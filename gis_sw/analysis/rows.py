"""Check rows as plain arrays: what the engine takes from each rule, without a frame.

A check's builder (:class:`~gis_sw.analysis.findings.Findings`) holds its rows as lists;
:func:`plain_columns` turns them into one array per column of
:data:`~gis_sw.analysis.findings.CHECK_COLUMNS`, with the dtype each column would have in
the builder's frame, so the one findings frame the engine builds at the end is the one a
frame per rule gave (``gis-sw serve`` re-checks on every edit: 26 frames cost more than most
checks).  Rows holding values pandas must convert (a missing message, a number as an id, a
figure given as text) are left to the frame.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from gis_sw.analysis.findings import CHECK_COLUMNS, NUMBER_TYPES, Findings, Outcome, make_findings

__all__ = ["RowColumns", "columns_of", "plain_columns"]


@dataclass(frozen=True, slots=True)
class RowColumns:
    """Check rows as plain arrays, one per column of :data:`CHECK_COLUMNS`.

    Each keeps the dtype its column has in the rows' frame, so the one findings frame the
    engine builds at the end has the same dtypes as frames of the rows would give.
    """

    arrays: dict[str, np.ndarray]
    dtypes: dict[str, Any]

    def __len__(self) -> int:
        """Return the number of rows."""
        return len(self.arrays["rule_id"])


def columns_of(rows: pd.DataFrame) -> RowColumns:
    """Return the columns :data:`CHECK_COLUMNS` of a frame of check rows as plain arrays."""
    arrays, dtypes = {}, {}
    for name in CHECK_COLUMNS:
        column = rows[name]
        arrays[name] = np.asarray(column.to_numpy(), dtype=object if name == "geometry" else None)
        dtypes[name] = column.dtype
    return RowColumns(arrays, dtypes)


@functools.cache
def _plain_dtypes() -> dict[str, Any]:
    """Return the dtypes a frame of check rows gives plain text, floats and geometries."""
    one = make_findings(
        "SW000",
        CRS.from_epsg(2260),  # any: a dtype does not hold the CRS
        proposal_id=["p"],
        subject_id=["s"],
        outcome=["pass"],
        message=["m"],
        measured=[1.0],
        threshold=[1.0],
        unit=["ft"],
        geometry=[None],
    )
    return {name: one[name].dtype for name in CHECK_COLUMNS}


def _plain_text(*columns: list[Any]) -> bool:
    """Whether every value is a ``str`` (not a subclass): pandas keeps such a column as is."""
    return all(type(v) is str for column in columns for v in column)


def _plain_numbers(values: list[Any]) -> bool:
    """Whether :func:`_numbers` takes ``values`` as floats without pandas' coercion."""
    return all(isinstance(v, NUMBER_TYPES) and not isinstance(v, bool) for v in values)


def _plain_geometries(values: list[Any]) -> bool:
    return all(v is None or isinstance(v, shapely.Geometry) for v in values)


def plain_columns(rows: Findings) -> RowColumns | None:
    """Return a builder's rows as arrays, as :func:`columns_of` of its frame gives them.

    Without building a frame, when there are rows, every text is a ``str``, every figure a
    number and every geometry a shapely geometry or None (what checks add).  None otherwise:
    other values need :meth:`Findings.frame`, so pandas converts them as it always has.
    """
    n = len(rows)
    if not n:
        return None
    cols = rows.added()
    thresholds, units = cols["threshold"], cols["unit"]
    outcomes = [str(Outcome(o)) for o in cols["outcome"]]
    plain = (
        _plain_text(cols["proposal_id"], cols["subject_id"], cols["message"], units)
        and _plain_numbers(cols["measured"])
        and _plain_numbers(thresholds)
        and _plain_geometries(cols["geometry"])
    )
    if not plain:
        return None
    measured = np.asarray(cols["measured"], dtype="float64")
    if rows.decimals is not None:
        measured = np.round(measured, rows.decimals)

    def objects(values: list[Any]) -> np.ndarray:
        out = np.empty(n, dtype=object)
        out[:] = values
        return out

    arrays = {
        "rule_id": objects([rows.rule_id] * n),
        "proposal_id": objects(cols["proposal_id"]),
        "subject_id": objects(cols["subject_id"]),
        "outcome": objects(outcomes),
        "message": objects(cols["message"]),
        "measured": measured,
        "threshold": np.asarray(thresholds, dtype="float64"),
        "unit": objects(units),
        "geometry": objects(cols["geometry"]),
    }
    return RowColumns(arrays, dict(_plain_dtypes()))
