"""The runoff of thousands of drainage areas at once (:func:`compute_all`).

The same figures as :func:`~gis_sw.analysis.runoff.site.compute_drainage` of each area
alone, with no call per area on the hot path: the levels and soil groups of every area from
:mod:`gis_sw.analysis.runoff.levels`, the cover pieces and their soil-group areas from
:mod:`gis_sw.analysis.runoff.bulk`, and the figures of every scenario as columns.  Each sum
of a table is taken as numpy takes it over that table alone (tables of one length summed
as the rows of one matrix, so in the same order), hence the same floats; S, Q, qu and the
Rational intensity are computed once per distinct composite CN and Tc.  An area with a
cover level of many small parts (100,000 lots) is summed by areas of unions, alone
(:mod:`gis_sw.analysis.runoff.areas`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.runoff import rational, tr55
from gis_sw.analysis.runoff.bulk import (
    Known,
    split_cover_bulk,
    split_levels_bulk,
    subarea_columns_bulk,
)
from gis_sw.analysis.runoff.cover import SUBAREA_COLUMNS, CoverLevel, Layer, subarea_columns
from gis_sw.analysis.runoff.levels import Prepared, many_small_flags, prepare_all, same_areas
from gis_sw.analysis.runoff.params import HydrologyParams
from gis_sw.analysis.runoff.site import (
    DrainageJob,
    DrainageResult,
    Scenario,
    _storm_core,
    _subarea_table,
)
from gis_sw.units import SQFT_PER_ACRE

__all__ = ["compute_all", "segment_sums"]

Table = dict[str, np.ndarray]


def segment_sums(values: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """Return the sum of each run of ``lens`` consecutive values, as ``run.sum()`` gives it.

    Runs of one length are summed as the rows of one matrix (numpy sums each row as it
    sums that run alone), so the floats are the same; an empty run sums to 0.
    """
    out = np.zeros(len(lens))
    starts = np.cumsum(lens) - lens
    for size in np.unique(lens[lens > 0]).tolist():
        rows = np.flatnonzero(lens == size)
        out[rows] = values[starts[rows][:, None] + np.arange(size)].sum(axis=1)
    return out


def _joined(tables: Sequence[Mapping[str, np.ndarray]], column: str, dtype: Any) -> np.ndarray:
    """Return one column of every table, end to end."""
    if not tables:
        return np.empty(0, dtype=dtype)
    return np.concatenate([np.asarray(t[column]).astype(dtype) for t in tables])


def _masked_sums(values: np.ndarray, mask: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Return, per table, the sum of its values where ``mask`` (``values[mask].sum()``)."""
    return segment_sums(values[mask], np.bincount(owner[mask], minlength=n))


def _storm_matrices(
    cn_used: np.ndarray, tc_used: np.ndarray, p: np.ndarray, params: HydrologyParams, dist: str
) -> tuple[np.ndarray, ...]:
    """Return S, Q, qu and i of every scenario (one row each), once per distinct CN and Tc."""
    index: dict[tuple[bool, float, float], int] = {}
    codes = np.array(
        [
            index.setdefault((bool(nan), 0.0 if nan else c, t), len(index))
            for nan, c, t in zip(
                np.isnan(cn_used).tolist(), cn_used.tolist(), tc_used.tolist(), strict=True
            )
        ],
        dtype="int64",
    )
    depths = tuple(p.tolist())
    found = [
        _storm_core(
            depths,
            float("nan") if nan else cn,
            tc,
            table=params.unit_peak.get(dist),
            tc_limits=(params.min_tc_hr, params.max_tc_hr),
            mass_curve=params.mass_curve,
        )
        for nan, cn, tc in index
    ]
    return tuple(np.stack([f[k] for f in found])[codes] for k in range(4))


def scenarios(
    name: str,
    tables: Sequence[Mapping[str, np.ndarray]],
    area_sqft: np.ndarray,
    tc_hr: np.ndarray,
    *,
    storms_in: Mapping[int, float],
    params: HydrologyParams,
    distribution: str,
) -> list[Scenario]:
    """Return :func:`~gis_sw.analysis.runoff.site.scenario_figures` of every table."""
    n = len(tables)
    if n == 0:
        return []
    cols = [{c: np.asarray(t[c]) for c in SUBAREA_COLUMNS} for t in tables]
    owner = np.repeat(np.arange(n), [len(c["area_sqft"]) for c in cols])
    areas = _joined(cols, "area_sqft", "float64")
    mapped = ~pd.isna(_joined(cols, "hsg", object))
    mapped_area = _masked_sums(areas, mapped, owner, n)
    imp_area = _masked_sums(areas, _joined(cols, "impervious", bool), owner, n)
    cn_area = _masked_sums(_joined(cols, "cn", "float64") * areas, mapped, owner, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        cn_w = np.where(mapped_area > 0, cn_area / mapped_area, np.nan)
        c_sum = segment_sums(_joined(cols, "c", "float64") * areas, np.bincount(owner, minlength=n))
        c_w = np.where(area_sqft > 0, c_sum / area_sqft, np.nan)
    cn_used = cn_w
    if params.round_composite_cn:
        cn_used = np.where(np.isnan(cn_w), cn_w, np.floor(cn_w + 0.5 + 1e-9))  # round_half_up
    tc_used = np.minimum(np.maximum(tc_hr, params.min_tc_hr), params.max_tc_hr)
    p = np.array(list(storms_in.values()), dtype="float64")
    s, q, qu, i = _storm_matrices(cn_used, tc_used, p, params, distribution)
    k = len(p)
    col = np.ones((1, k))
    sqmi = (area_sqft / tr55.SQFT_PER_SQMI)[:, None]
    storms = {
        "storm_yr": np.tile(np.array(list(storms_in), dtype="int64"), (n, 1)),
        "p_in": np.tile(p, (n, 1)),
        "cn": cn_used[:, None] * col,
        "s_in": s,
        "ia_in": 0.2 * s,
        "ia_p": 0.2 * s / p,
        "q_in": q,
        "volume_cf": q / 12.0 * area_sqft[:, None],
        "tc_hr": tc_used[:, None] * col,
        "qu_csm_in": qu,
        "qp_cfs": qu * sqmi * q * params.pond_swamp_factor,
        "c": c_w[:, None] * col,
        "i_in_hr": i,
        "qp_rational_cfs": c_w[:, None] * i * (area_sqft / SQFT_PER_ACRE)[:, None],
    }
    figures = zip(
        *(a.tolist() for a in (area_sqft, mapped_area, imp_area, cn_w, cn_used, c_w)), strict=True
    )
    return [
        Scenario(name, cols[j], a, mapped, imp, w, used, c, {k: m[j] for k, m in storms.items()})
        for j, (a, mapped, imp, w, used, c) in enumerate(figures)
    ]


def _soil_problems(
    tables: Sequence[Table], area_sqft: np.ndarray, problems: list[list[str]]
) -> np.ndarray:
    """Add :func:`~gis_sw.analysis.runoff.cover.soil_problems` of every table; return unmapped."""
    n = len(tables)
    owner = np.repeat(np.arange(n), [len(t["area_sqft"]) for t in tables])
    areas = _joined(tables, "area_sqft", "float64")
    unmapped = _masked_sums(areas, pd.isna(_joined(tables, "hsg", object)), owner, n)
    twice = segment_sums(areas, np.bincount(owner, minlength=n)) - area_sqft
    for j in np.flatnonzero((unmapped > 0.5) | (twice > 0.5)).tolist():
        if unmapped[j] > 0.5:
            problems[j].append(
                f"{float(unmapped[j]):,.0f} sq ft of the drainage area has no soil group A-D "
                "in the soils layer; CN weighted over the mapped part only"
            )
        if twice[j] > 0.5:
            problems[j].append(
                f"soils polygons of different soil groups overlap inside the drainage area "
                f"({float(twice[j]):,.0f} sq ft mapped twice), so its curve numbers are not "
                "defined; fix the overlaps in the soils layer"
            )
    return unmapped


def _results(
    jobs: Sequence[DrainageJob],
    prepared: Sequence[Prepared],
    tables: tuple[list[Table], list[Table]],
    *,
    codes: np.ndarray,
    land_cover: Layer | None,
    soils: Layer | None,
    params: HydrologyParams,
    figures: Mapping[str, Any],
) -> list[DrainageResult]:
    """Return every job's result from its sub-area tables (``figures``: storms, distribution)."""
    n = len(jobs)
    geoms = np.empty(n, dtype=object)
    geoms[:] = [j.area for j in jobs]
    area_sqft = shapely.area(geoms)
    problems = [p.problems for p in prepared]
    pre: list[Scenario | None] = [None] * n
    post: list[Scenario | None] = [None] * n
    if soils is None:
        for p in problems:
            p.append("soils layer not provided: curve numbers cannot be chosen")
    else:
        unmapped = _soil_problems(tables[0], area_sqft, problems)
        done = np.flatnonzero(unmapped < area_sqft)
        tc = np.array([jobs[j].tc.tc_hr for j in done.tolist()], dtype="float64")
        for side, name in zip(tables, ("pre", "post"), strict=True):
            # pre-development once per distinct area and Tc: the same tables, the same figures
            keys = codes[done] if name == "pre" else np.arange(len(done))
            index: dict[tuple[int, float], int] = {}
            slot = [
                index.setdefault(k, len(index))
                for k in zip(keys.tolist(), tc.tolist(), strict=True)
            ]
            reps = np.unique(np.array(slot, dtype="int64"), return_index=True)[1]
            found = scenarios(
                name,
                [side[j] for j in done[reps].tolist()],
                area_sqft[done[reps]],
                tc[reps],
                params=params,
                **figures,
            )
            out = pre if name == "pre" else post
            for j, k in zip(done.tolist(), slot, strict=True):
                out[j] = found[k]
    owner = np.repeat(np.arange(n), [len(t["area_sqft"]) for t in tables[1]])
    imp = _joined(tables[1], "area_sqft", "float64")
    imp_post = _masked_sums(imp, _joined(tables[1], "impervious", bool), owner, n)
    with np.errstate(invalid="ignore", divide="ignore"):
        imp_pct = np.where(area_sqft > 0, 100.0 * imp_post / area_sqft, 0.0)
    columns: Any = (imp_pct, area_sqft)  # the one-area formulas, applied to columns
    rv: Any = rational.volumetric_runoff_coefficient(columns[0])
    wqv: Any = rational.water_quality_volume_cf(params.wqv_rainfall_in, *columns)
    cover_note = [f"no land_cover layer: pervious ground counted as {params.default_cover}"]
    return [
        DrainageResult(
            proposal_id=job.proposal_id,
            drainage_id=job.drainage_id,
            geometry=job.area,
            tc=job.tc,
            pre=pre[j],
            post=post[j],
            wqv_rainfall_in=params.wqv_rainfall_in,
            wqv_rv=float(rv[j]),
            wqv_cf=float(wqv[j]),
            problems=tuple(problems[j]),
            notes=(
                *(cover_note if land_cover is None else ()),
                *(
                    [f"Tc {job.tc.tc_hr:.2f} h is the ruleset default (no DEM or tc_min)"]
                    if job.tc.source == "default"
                    else ()
                ),
            ),
        )
        for j, job in enumerate(jobs)
    ]


def _pieces(
    jobs: Sequence[DrainageJob],
    prepared: Sequence[Prepared],
    codes: np.ndarray,
    which: tuple[np.ndarray, np.ndarray],
    default: str,
) -> tuple[list[list[CoverLevel]], list[list[CoverLevel]]]:
    """Return the pre-development pieces of ``which[0]``, the post-development of ``which[1]``.

    A proposal with no new impervious surface has the post-development levels of its area
    with the disturbed ground after the existing buildings and pavement: those two are cut
    as before the proposal, so its pieces go on from its area's state after them.
    """
    firsts, every = which
    pre = [prepared[i].pre for i in firsts.tolist()]
    areas = [jobs[i].area for i in firsts.tolist()]
    state = split_levels_bulk(areas, [lv[:2] for lv in pre])
    pre_pieces = split_cover_bulk(areas, [lv[2:] for lv in pre], default, start=state)
    at = {k: n for n, k in enumerate(codes[firsts].tolist())}
    post: list[list[CoverLevel]] = [[] for _ in range(len(every))]
    go_on = [  # no new surface: the post levels begin with the area's two existing ones
        n
        for n, i in enumerate(every.tolist())
        if len(prepared[i].pre) >= 2
        and prepared[i].post[0] is prepared[i].pre[0]
        and prepared[i].post[1] is prepared[i].pre[1]
    ]
    rest = sorted(set(range(len(every))) - set(go_on))
    if go_on:
        rows = [at[int(codes[every[n]])] for n in go_on]
        start = (state[0][rows], [state[1][r] for r in rows])
        levels = [prepared[every[n]].post[2:] for n in go_on]
        areas = [jobs[every[n]].area for n in go_on]  # (the state is what is left of them)
        done = split_cover_bulk(areas, levels, default, start=start)
        for n, ps in zip(go_on, done, strict=True):
            post[n] = ps
    if rest:
        levels = [prepared[every[n]].post for n in rest]
        done = split_cover_bulk([jobs[every[n]].area for n in rest], levels, default)
        for n, ps in zip(rest, done, strict=True):
            post[n] = ps
    return pre_pieces, post


def compute_all(
    jobs: Sequence[DrainageJob],
    params: HydrologyParams,
    figures: Mapping[str, Any],
    town: Mapping[str, Layer | None],
) -> list[DrainageResult]:
    """Return :func:`~gis_sw.analysis.runoff.site.compute_drainage` of every job at once.

    ``figures``: ``storms_in`` and ``distribution``; ``town``: the ``soils``,
    ``buildings``, ``pavement`` and ``land_cover`` layers (None where missing).
    """
    layers = (town["buildings"], town["pavement"], town["land_cover"])
    soils = town["soils"]
    prepared = prepare_all(
        [j.area for j in jobs],
        [j.impervious for j in jobs],
        [j.disturbance for j in jobs],
        layers=layers,
        soils=soils,
        params=params,
    )
    groups = [p.groups for p in prepared]
    owner = np.repeat(np.arange(len(jobs)), [len(p.pre) + len(p.post) for p in prepared])
    many = many_small_flags([lv.geometry for p in prepared for lv in (*p.pre, *p.post)])
    plain = np.bincount(owner[many], minlength=len(jobs)) == 0
    tables: list[list[Table | None]] = [[None] * len(jobs) for _ in range(2)]
    codes, _ = same_areas([j.area for j in jobs])
    every = np.flatnonzero(plain)
    firsts = every[np.unique(codes[every], return_index=True)[1]]
    pieces = _pieces(jobs, prepared, codes, (firsts, every), params.default_cover)
    known: Known = {}  # the pieces of the existing buildings and pavement: split once
    for side, which in ((0, firsts.tolist()), (1, every.tolist())):
        found = subarea_columns_bulk(pieces[side], [groups[i] for i in which], params, known=known)
        for i, ps, cols in zip(which, pieces[side], found, strict=True):
            tables[side][i] = (
                cols
                if cols is not None
                else subarea_columns(ps, soils, jobs[i].area, params, groups=groups[i])
            )
    first_of = dict(zip(codes[firsts].tolist(), firsts.tolist(), strict=True))
    for i in every.tolist():
        tables[0][i] = tables[0][first_of[int(codes[i])]]
    for i in np.flatnonzero(~plain).tolist():  # many small parts: by areas of unions
        for side in (0, 1):
            levels = prepared[i].pre if side == 0 else prepared[i].post
            tables[side][i] = _subarea_table(jobs[i].area, levels, soils, groups[i], params)
    pre_tables = [t for t in tables[0] if t is not None]
    post_tables = [t for t in tables[1] if t is not None]
    return _results(
        jobs,
        prepared,
        (pre_tables, post_tables),
        codes=codes,
        land_cover=layers[2],
        soils=soils,
        params=params,
        figures=figures,
    )
