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

from gis_sw.analysis.runoff.site import DrainageResult, Scenario
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


def calculation_sheet(results: Iterable[DrainageResult]) -> pd.DataFrame:
    """Return all lines of all drainage areas, columns :data:`SHEET_COLUMNS`."""
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
    frame = pd.DataFrame(data, columns=list(SHEET_COLUMNS))
    text = ("proposal_id", "drainage_id", "scenario", "line", "source", "cover", "hsg", "note")
    for col in text:
        frame[col] = frame[col].astype(object).where(frame[col].notna(), "").astype(str)
    frame["storm_yr"] = frame["storm_yr"].astype("Int64")
    return frame
