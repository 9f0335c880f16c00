"""The calculation sheet: every figure of the runoff calculation as rows an engineer checks.

One frame, one row per line of a hand calculation (``line`` says which):

- ``subarea``: a cover x soil-group piece (source, cover, hsg, area, CN, CN x A, C);
- ``composite``: the weighted CN (unrounded in ``cn_weighted``, used in ``cn``) and C;
- ``tc_segment`` / ``tc``: travel time of each flow segment and the Tc used;
- ``storm``: per design storm P, S, Ia, Ia/P, Q, volume, qu, qp, i and Rational Q;
- ``wqv``: impervious percent, Rv and the water quality volume (post-development).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.runoff.site import STORM_COLUMNS, DrainageResult, Scenario
from gis_sw.units import SQFT_PER_ACRE

SHEET_COLUMNS: tuple[str, ...] = (
    "proposal_id",
    "drainage_id",
    "scenario",
    "line",
    "source",
    "cover",
    "hsg",
    "area_sqft",
    "area_acres",
    "cn",
    "cn_weighted",
    "cn_x_area_acres",
    "c",
    "storm_yr",
    "p_in",
    "s_in",
    "ia_in",
    "ia_p",
    "q_in",
    "volume_cf",
    "tc_hr",
    "qu_csm_in",
    "qp_cfs",
    "i_in_hr",
    "qp_rational_cfs",
    "length_ft",
    "slope_ft_ft",
    "velocity_fps",
    "travel_time_hr",
    "impervious_percent",
    "rv",
    "wqv_cf",
    "note",
)


def _records(columns: Mapping[str, np.ndarray]) -> list[dict[str, Any]]:
    """One dict of native Python values per row of a scenario's column arrays."""
    names = list(columns)
    values = [np.asarray(v).tolist() for v in columns.values()]
    return [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def _scenario_rows(head: dict[str, Any], sc: Scenario) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for sub in _records(sc.subarea_columns):
        acres = float(sub["area_sqft"]) / SQFT_PER_ACRE
        cn = float(sub["cn"])
        rows.append(
            head
            | {
                "scenario": sc.name,
                "line": "subarea",
                "source": sub["source"],
                "cover": sub["cover"],
                "hsg": sub["hsg"] if sub["hsg"] is not None else "",
                "area_sqft": float(sub["area_sqft"]),
                "area_acres": acres,
                "cn": cn,
                "cn_x_area_acres": cn * acres if not math.isnan(cn) else math.nan,
                "c": float(sub["c"]),
                "note": "" if sub["hsg"] is not None else "no soil group: left out of the CN",
            }
        )
    rows.append(
        head
        | {
            "scenario": sc.name,
            "line": "composite",
            "area_sqft": sc.area_sqft,
            "area_acres": sc.area_sqft / SQFT_PER_ACRE,
            "cn": sc.cn_used,
            "cn_weighted": sc.cn_weighted,
            "c": sc.c_weighted,
            "impervious_percent": sc.impervious_percent,
        }
    )
    for storm in _records(sc.storm_columns):
        rows.append(
            head
            | {"scenario": sc.name, "line": "storm", "area_sqft": sc.area_sqft}
            | {str(k): v for k, v in storm.items()}
        )
    return rows


def sheet_rows(result: DrainageResult) -> list[dict[str, Any]]:
    """Return the lines of the calculation sheet for one drainage area."""
    head: dict[str, Any] = {"proposal_id": result.proposal_id, "drainage_id": result.drainage_id}
    rows: list[dict[str, Any]] = []
    for seg in result.tc.segments:
        rows.append(
            head
            | {
                "scenario": "both",
                "line": "tc_segment",
                "source": str(seg.kind),
                "length_ft": seg.length_ft,
                "slope_ft_ft": seg.slope_ft_ft,
                "velocity_fps": seg.velocity_fps,
                "travel_time_hr": seg.travel_time_hr,
            }
        )
    rows.append(
        head
        | {"scenario": "both", "line": "tc", "tc_hr": result.tc.tc_hr, "note": result.tc.source}
    )
    for sc in (result.pre, result.post):
        if sc is not None:
            rows.extend(_scenario_rows(head, sc))
    area = float(shapely.area(result.geometry))
    imp_pct = (result.wqv_rv - 0.05) / 0.009
    rows.append(
        head
        | {
            "scenario": "post",
            "line": "wqv",
            "area_sqft": area,
            "area_acres": area / SQFT_PER_ACRE,
            "p_in": result.wqv_rainfall_in,
            "impervious_percent": imp_pct,
            "rv": result.wqv_rv,
            "wqv_cf": result.wqv_cf,
            "note": "; ".join([*result.problems, *result.notes]),
        }
    )
    return rows


def calculation_sheet_by_rows(results: Iterable[DrainageResult]) -> pd.DataFrame:
    """Return :func:`calculation_sheet` built row by row from :func:`sheet_rows` (reference)."""
    rows = [row for result in results for row in sheet_rows(result)]
    # column by column: a frame from 100,000 dicts of differing keys costs seconds; each
    # row holds a few of the columns, so each value is placed once, NaN everywhere else
    at: dict[str, list[int]] = {c: [] for c in SHEET_COLUMNS}
    values: dict[str, list[Any]] = {c: [] for c in SHEET_COLUMNS}
    for i, row in enumerate(rows):
        for key, value in row.items():
            if key in at:
                at[key].append(i)
                values[key].append(value)
    nan = float("nan")
    data: dict[str, list[Any]] = {}
    for c in SHEET_COLUMNS:
        column = np.full(len(rows), nan, dtype=object)
        column[at[c]] = values[c]
        data[c] = column.tolist()  # a list: pandas infers the dtype as from the rows' values
    return _typed(pd.DataFrame(data, columns=list(SHEET_COLUMNS)))


_TEXT = ("proposal_id", "drainage_id", "scenario", "line", "source", "cover", "hsg", "note")


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Return the sheet with its text columns as text (``""`` where empty), storm years Int64."""
    for col in _TEXT:
        frame[col] = frame[col].astype(object).where(frame[col].notna(), "").astype(str)
    frame["storm_yr"] = frame["storm_yr"].astype("Int64")
    return frame


_BLOCKS = 9
"""A drainage area's lines in order: Tc segments, Tc, then for pre and post the sub-areas,
the composite and the storms, then the WQv line."""


def _rows_of(lens: np.ndarray, starts: np.ndarray, block: int) -> np.ndarray:
    """Return the sheet rows of one block of every drainage area, in order."""
    n = lens[:, block]
    within = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    return np.repeat(starts[:, block], n) + within


def _joined(parts: list[np.ndarray], dtype: str | None = None) -> np.ndarray:
    """Return the arrays joined end to end (an empty one for none)."""
    if not parts:
        return np.empty(0, dtype=dtype or object)
    return np.concatenate([np.asarray(p) for p in parts]).astype(dtype or object)


class _Sheet:
    """The sheet's columns, filled block by block."""

    def __init__(self, total: int) -> None:
        text = set(_TEXT)
        self.columns: dict[str, np.ndarray] = {
            c: np.full(total, "", dtype=object) if c in text else np.full(total, np.nan)
            for c in SHEET_COLUMNS
        }

    def put(self, rows: np.ndarray, **values: Any) -> None:
        """Set columns at ``rows`` (arrays as long as ``rows``, or one value for all)."""
        for name, value in values.items():
            self.columns[name][rows] = value


def _scenario_blocks(sheet: _Sheet, side: list[Scenario | None], name: str, at: tuple) -> None:
    """Fill the sub-area, composite and storm lines of one scenario of every area."""
    lens, starts, first = at
    scs = [sc for sc in side if sc is not None]
    rows = _rows_of(lens, starts, first)
    sub = {c: _joined([sc.subarea_columns[c] for sc in scs]) for c in ("source", "cover", "hsg")}
    area = _joined([sc.subarea_columns["area_sqft"] for sc in scs], "float64")
    cn = _joined([sc.subarea_columns["cn"] for sc in scs], "float64")
    unmapped = np.array([h is None for h in sub["hsg"].tolist()], dtype=bool)
    hsg = sub["hsg"].copy()
    hsg[unmapped] = ""
    acres = area / SQFT_PER_ACRE
    sheet.put(rows, scenario=name, line="subarea", source=sub["source"], cover=sub["cover"])
    sheet.put(rows, hsg=hsg, area_sqft=area, area_acres=acres, cn=cn, cn_x_area_acres=cn * acres)
    sheet.put(rows, c=_joined([sc.subarea_columns["c"] for sc in scs], "float64"))
    sheet.put(rows, note=np.where(unmapped, "no soil group: left out of the CN", ""))
    rows = _rows_of(lens, starts, first + 1)
    area = np.array([sc.area_sqft for sc in scs], dtype="float64")
    sheet.put(rows, scenario=name, line="composite", area_sqft=area)
    sheet.put(rows, area_acres=area / SQFT_PER_ACRE, cn=[sc.cn_used for sc in scs])
    sheet.put(rows, cn_weighted=[sc.cn_weighted for sc in scs], c=[sc.c_weighted for sc in scs])
    sheet.put(rows, impervious_percent=[sc.impervious_percent for sc in scs])
    rows = _rows_of(lens, starts, first + 2)
    storms = {c: _joined([sc.storm_columns[c] for sc in scs], "float64") for c in STORM_COLUMNS}
    sheet.put(rows, scenario=name, line="storm", **storms)
    sheet.put(rows, area_sqft=np.repeat(area, lens[:, first + 2][lens[:, first + 1] > 0]))


def calculation_sheet(results: Iterable[DrainageResult]) -> pd.DataFrame:
    """Return all lines of all drainage areas, columns :data:`SHEET_COLUMNS`.

    Built column by column for all areas at once (the same frame as
    :func:`calculation_sheet_by_rows`, without a dict per line).
    """
    results = list(results)
    if not results:
        return calculation_sheet_by_rows(results)
    sides = ([r.pre for r in results], [r.post for r in results])
    lens = np.zeros((len(results), _BLOCKS), dtype="int64")
    lens[:, 0] = [len(r.tc.segments) for r in results]
    lens[:, 1] = lens[:, 8] = 1
    for side, first in zip(sides, (2, 5), strict=True):
        lens[:, first] = [0 if s is None else len(s.subarea_columns["area_sqft"]) for s in side]
        lens[:, first + 1] = [s is not None for s in side]
        lens[:, first + 2] = [0 if s is None else len(s.storm_columns["storm_yr"]) for s in side]
    flat = lens.ravel()
    starts = (np.cumsum(flat) - flat).reshape(lens.shape)
    sheet = _Sheet(int(flat.sum()))
    each = lens.sum(axis=1)
    sheet.put(
        np.arange(int(flat.sum())),
        proposal_id=np.repeat(np.array([r.proposal_id for r in results], dtype=object), each),
        drainage_id=np.repeat(np.array([r.drainage_id for r in results], dtype=object), each),
    )
    segs = [seg for r in results for seg in r.tc.segments]
    rows = _rows_of(lens, starts, 0)
    sheet.put(rows, scenario="both", line="tc_segment", source=[str(s.kind) for s in segs])
    sheet.put(
        rows, length_ft=[s.length_ft for s in segs], slope_ft_ft=[s.slope_ft_ft for s in segs]
    )
    sheet.put(rows, velocity_fps=[s.velocity_fps for s in segs])
    sheet.put(rows, travel_time_hr=[s.travel_time_hr for s in segs])
    rows = starts[:, 1]
    sheet.put(rows, scenario="both", line="tc", tc_hr=[r.tc.tc_hr for r in results])
    sheet.put(rows, note=np.array([r.tc.source for r in results], dtype=object))
    for side, name, first in zip(sides, ("pre", "post"), (2, 5), strict=True):
        _scenario_blocks(sheet, side, name, (lens, starts, first))
    rows = starts[:, 8]
    area = shapely.area(np.array([r.geometry for r in results], dtype=object))
    rv = np.array([r.wqv_rv for r in results], dtype="float64")
    sheet.put(rows, scenario="post", line="wqv", area_sqft=area, area_acres=area / SQFT_PER_ACRE)
    sheet.put(
        rows, p_in=[r.wqv_rainfall_in for r in results], impervious_percent=(rv - 0.05) / 0.009
    )
    sheet.put(rows, rv=rv, wqv_cf=[r.wqv_cf for r in results])
    notes = ["; ".join([*r.problems, *r.notes]) for r in results]
    sheet.put(rows, note=np.array(notes, dtype=object))
    return _typed(pd.DataFrame(sheet.columns, columns=list(SHEET_COLUMNS)))
