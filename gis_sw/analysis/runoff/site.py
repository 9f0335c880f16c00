"""One drainage area's runoff calculation, pre- against post-development.

:func:`compute_drainage` takes plain geometries and frames (no LayerSet), so tests can build
a lot by hand; :func:`gis_sw.analysis.hydrology.runoff_results` feeds it from the layers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.runoff import rational, tr55
from gis_sw.analysis.runoff.areas import has_many_small_parts, level_area_columns
from gis_sw.analysis.runoff.cover import (
    SUBAREA_COLUMNS,
    CoverLevel,
    Layer,
    cover_levels_existing,
    cover_levels_new,
    soil_groups,
    soil_problems,
    split_cover,
    subarea_columns,
    subarea_frame,
)
from gis_sw.analysis.runoff.params import HydrologyParams, MassCurve, UnitPeakTable
from gis_sw.layers.raster import RasterLayer
from gis_sw.units import SQFT_PER_ACRE

STORM_COLUMNS = (
    "storm_yr",
    "p_in",
    "cn",
    "s_in",
    "ia_in",
    "ia_p",
    "q_in",
    "volume_cf",
    "tc_hr",
    "qu_csm_in",
    "qp_cfs",
    "c",
    "i_in_hr",
    "qp_rational_cfs",
)


@dataclass(frozen=True, slots=True)
class TimeOfConcentration:
    """Tc with where it came from and, for a DEM path, its segments and line."""

    tc_hr: float
    source: str
    segments: tuple[tr55.FlowSegment, ...] = ()
    path: shapely.Geometry | None = None


@dataclass(frozen=True, slots=True)
class Scenario:
    """Pre- or post-development figures of one drainage area."""

    name: str
    subarea_columns: Mapping[str, np.ndarray]
    area_sqft: float
    mapped_area_sqft: float
    impervious_sqft: float
    cn_weighted: float
    cn_used: float
    c_weighted: float
    storm_columns: Mapping[str, np.ndarray]
    """The tables as one array per column (:data:`~gis_sw.analysis.runoff.cover.SUBAREA_COLUMNS`,
    :data:`STORM_COLUMNS`): thousands of drainage areas are computed without building a
    pandas table for each; :attr:`subareas` and :attr:`storms` build them when asked."""

    @property
    def subareas(self) -> pd.DataFrame:
        """The cover x soil-group sub-areas (columns ``SUBAREA_COLUMNS``)."""
        return subarea_frame(self.subarea_columns)

    @property
    def storms(self) -> pd.DataFrame:
        """One row per design storm (columns :data:`STORM_COLUMNS`)."""
        return pd.DataFrame(dict(self.storm_columns), columns=list(STORM_COLUMNS))

    @property
    def impervious_percent(self) -> float:
        """Return the impervious share of the area in percent (NaN for no area)."""
        return 100.0 * self.impervious_sqft / self.area_sqft if self.area_sqft > 0 else math.nan

    def storm(self, year: int) -> Mapping[str, float]:
        """Return the row of :attr:`storms` for one return period."""
        hit = np.flatnonzero(self.storm_columns["storm_yr"] == year)
        if not len(hit):
            return {}
        i = int(hit[0])
        return {str(k): float(v[i]) for k, v in self.storm_columns.items()}


@dataclass(frozen=True, slots=True)
class DrainageResult:
    """Everything computed for one drainage area of one proposal."""

    proposal_id: str
    drainage_id: str
    geometry: shapely.Geometry
    tc: TimeOfConcentration
    pre: Scenario | None
    post: Scenario | None
    wqv_rainfall_in: float
    wqv_rv: float
    wqv_cf: float
    problems: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())


def dem_time_of_concentration(
    area: shapely.Geometry, dem: RasterLayer, params: HydrologyParams, p2_in: float
) -> TimeOfConcentration | None:
    """Tc along the straight line from the highest to the lowest DEM cell inside ``area``.

    A screening stand-in for the hydraulically most distant flow path: first
    ``sheet_flow_max_ft`` as sheet flow, the rest shallow concentrated flow, at the line's
    average slope (floored at ``min_slope_ft_ft``).  None when fewer than two cells fall
    inside the area.
    """
    minx, miny, maxx, maxy = shapely.bounds(area).tolist()
    inv = ~dem.transform
    c0, r0 = inv @ (minx, maxy)
    c1, r1 = inv @ (maxx, miny)
    nrows, ncols = dem.shape
    col_lo, col_hi = max(math.floor(min(c0, c1)), 0), min(math.ceil(max(c0, c1)), ncols)
    row_lo, row_hi = max(math.floor(min(r0, r1)), 0), min(math.ceil(max(r0, r1)), nrows)
    cols = np.arange(col_lo, col_hi)
    rows = np.arange(row_lo, row_hi)
    if len(cols) == 0 or len(rows) == 0:
        return None
    cc, rr = np.meshgrid(cols, rows)
    a, b, c, d, e, f = dem.transform[:6]
    xs = a * (cc.ravel() + 0.5) + b * (rr.ravel() + 0.5) + c
    ys = d * (cc.ravel() + 0.5) + e * (rr.ravel() + 0.5) + f
    values = dem.values[rr.ravel(), cc.ravel()]
    inside = shapely.contains_xy(area, xs, ys) & ~np.isnan(values)
    if inside.sum() < 2:
        return None
    xs, ys, values = xs[inside], ys[inside], values[inside]
    ends = int(np.argmax(values)), int(np.argmin(values))
    return flow_path_tc((xs, ys, values), ends, params, p2_in)


def flow_path_tc(
    cells: tuple[np.ndarray, np.ndarray, np.ndarray],
    ends: tuple[int, int],
    params: HydrologyParams,
    p2_in: float,
) -> TimeOfConcentration | None:
    """Return the Tc of the straight line from the highest to the lowest cell of an area.

    ``cells``: the x, y and value of the DEM cells inside the area; ``ends``: the index of
    the highest and of the lowest.  None when they are one point.
    """
    xs, ys, values = cells
    hi, lo = ends
    length = float(math.hypot(xs[hi] - xs[lo], ys[hi] - ys[lo]))
    if length <= 0:
        return None
    slope = max((float(values[hi]) - float(values[lo])) / length, params.min_slope_ft_ft)
    segments = tr55.flow_path_segments(
        length,
        slope,
        sheet_n=params.sheet_flow_n,
        sheet_max_ft=params.sheet_flow_max_ft,
        p2_in=p2_in,
        shallow_k=params.shallow_flow_k[params.shallow_flow_surface],
    )
    tc = sum(s.travel_time_hr for s in segments)
    path = shapely.LineString([(xs[hi], ys[hi]), (xs[lo], ys[lo])])
    return TimeOfConcentration(
        tc, "DEM: highest to lowest cell, sheet then shallow concentrated flow", segments, path
    )


@lru_cache(maxsize=65_536)
def _storm_core(
    depths_in: tuple[float, ...],
    cn: float,
    tc_hr: float,
    *,
    table: UnitPeakTable | None,
    tc_limits: tuple[float, float],
    mass_curve: MassCurve,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return S, Q, qu and the Rational intensity of each storm (S, Q, qu NaN for a NaN CN).

    They depend on the storms, the composite CN and Tc only, which thousands of drainage
    areas share (CNs are whole numbers, Tc often the default): computed once each.
    """
    i = np.array([rational.intensity_in_hr(p, tc_hr, mass_curve) for p in depths_in])
    nan = np.full(len(depths_in), np.nan)
    if math.isnan(cn):
        return nan, nan, nan, i
    if table is None:
        raise KeyError(f"no unit peak table for the storm distribution (cn {cn})")
    s = tr55.potential_retention_in(cn)
    q = [tr55.runoff_depth_in(p, cn) for p in depths_in]
    qu = [
        tr55.unit_peak_discharge(
            tc_hr, 0.2 * s / p, table, min_tc_hr=tc_limits[0], max_tc_hr=tc_limits[1]
        ).qu_csm_in
        for p in depths_in
    ]
    return np.full(len(depths_in), s), np.array(q), np.array(qu), i


def scenario_figures(
    name: str,
    table: pd.DataFrame | Mapping[str, np.ndarray],
    area_sqft: float,
    *,
    storms_in: Mapping[int, float],
    tc_hr: float,
    params: HydrologyParams,
    distribution: str,
) -> Scenario:
    """Composite CN and C, then S, Ia, Ia/P, Q, volume, qu, qp and Rational Q per storm.

    ``table``: the sub-areas, as a table or as :func:`subarea_columns`' arrays.
    """
    columns = {c: np.asarray(table[c]) for c in SUBAREA_COLUMNS}
    areas = columns["area_sqft"].astype("float64")
    mapped = ~pd.isna(columns["hsg"].astype(object))
    mapped_area = float(areas[mapped].sum())
    imp_area = float(areas[columns["impervious"].astype(bool)].sum())
    cns = columns["cn"].astype("float64")
    cn_w = (
        tr55.weighted_cn(cns[mapped].tolist(), areas[mapped].tolist())
        if mapped_area > 0
        else math.nan
    )
    cn_used = (
        tr55.round_half_up(cn_w) if params.round_composite_cn and not math.isnan(cn_w) else cn_w
    )
    c_arr = columns["c"].astype("float64")
    c_w = float((c_arr * areas).sum() / area_sqft) if area_sqft > 0 else math.nan
    tc_used = min(max(tc_hr, params.min_tc_hr), params.max_tc_hr)
    area_sqmi = area_sqft / tr55.SQFT_PER_SQMI
    area_acres = area_sqft / SQFT_PER_ACRE
    p = np.array(list(storms_in.values()), dtype="float64")
    s, q, qu, i = (  # copies: the cached arrays are shared
        a.copy()
        for a in _storm_core(
            tuple(p.tolist()),
            cn_used,
            tc_used,
            table=params.unit_peak.get(distribution),
            tc_limits=(params.min_tc_hr, params.max_tc_hr),
            mass_curve=params.mass_curve,
        )
    )
    n = len(p)
    storms = {  # plain arrays: a frame from a list of dicts cost ~2 ms per scenario
        "storm_yr": np.array(list(storms_in), dtype="int64"),
        "p_in": p,
        "cn": np.full(n, cn_used),
        "s_in": s,
        "ia_in": 0.2 * s,
        "ia_p": 0.2 * s / p,
        "q_in": q,
        "volume_cf": q / 12.0 * area_sqft,
        "tc_hr": np.full(n, tc_used),
        "qu_csm_in": qu,
        "qp_cfs": qu * area_sqmi * q * params.pond_swamp_factor,  # tr55.peak_discharge_cfs
        "c": np.full(n, c_w),
        "i_in_hr": i,
        "qp_rational_cfs": c_w * i * area_acres,  # rational.rational_peak_cfs
    }
    return Scenario(name, columns, area_sqft, mapped_area, imp_area, cn_w, cn_used, c_w, storms)


def cover_levels(
    area: shapely.Geometry,
    *,
    layers: tuple[Layer | None, Layer | None, Layer | None],
    impervious: gpd.GeoDataFrame | None,
    disturbance: shapely.Geometry,
    params: HydrologyParams,
    problems: list[str],
) -> tuple[list[CoverLevel], list[CoverLevel]]:
    """Return the pre- and post-development cover levels, highest priority first.

    ``layers``: buildings, pavement and land cover.  Post-development: the new impervious
    surfaces, the existing buildings and pavement, the disturbed ground, then land cover.
    """
    buildings, pavement, land_cover = layers
    existing = cover_levels_existing(
        area,
        buildings=buildings,
        pavement=pavement,
        land_cover=land_cover,
        params=params,
        problems=problems,
    )
    new, disturbed = cover_levels_new(
        area, impervious=impervious, disturbance=disturbance, params=params
    )
    return existing, [*new, *existing[:2], disturbed, *existing[2:]]


def _subarea_table(
    area: shapely.Geometry,
    levels: list[CoverLevel],
    soils: Layer | None,
    groups: dict[str, shapely.Geometry],
    params: HydrologyParams,
) -> dict[str, np.ndarray]:
    """Return the sub-areas of ``levels`` split by priority and soil group.

    By the overlay of pieces, or, when a level is of many small polygons (100,000 lots),
    by areas of unions alone (:mod:`gis_sw.analysis.runoff.areas`: no polygon with tens
    of thousands of holes is built).
    """
    if any(has_many_small_parts(level.geometry) for level in levels):
        return level_area_columns(
            area, levels, params.default_cover, soils=soils, groups=groups, params=params
        )
    pieces = split_cover(area, levels, params.default_cover)
    return subarea_columns(pieces, soils, area, params, groups=groups)


def compute_drainage(
    proposal_id: str,
    drainage_id: str,
    area: shapely.Geometry,
    *,
    params: HydrologyParams,
    storms_in: Mapping[int, float],
    distribution: str,
    soils: Layer | None,
    buildings: Layer | None,
    pavement: Layer | None,
    land_cover: Layer | None,
    impervious: gpd.GeoDataFrame | None,
    disturbance: shapely.Geometry,
    tc: TimeOfConcentration,
) -> DrainageResult:
    """Pre- and post-development runoff of one drainage area.

    ``problems`` lists what makes the result a ``review`` (missing soils, unmapped ground,
    unknown cover names); ``notes`` what the reader should know (defaults used).
    """
    job = DrainageJob(proposal_id, drainage_id, area, impervious, disturbance, tc)
    layers = (buildings, pavement, land_cover)
    problems: list[str] = []
    pre_levels, post_levels = cover_levels(
        area,
        layers=layers,
        impervious=impervious,
        disturbance=disturbance,
        params=params,
        problems=problems,
    )
    groups = soil_groups(soils, area, params)
    pre_table = _subarea_table(area, pre_levels, soils, groups, params)
    post_table = _subarea_table(area, post_levels, soils, groups, params)
    figures = {"storms_in": storms_in, "distribution": distribution}
    return _result(
        job,
        (pre_table, post_table),
        problems=problems,
        layers=layers,
        soils=soils,
        params=params,
        figures=figures,
    )


@dataclass(frozen=True, slots=True)
class DrainageJob:
    """What one drainage area's calculation needs besides the town's layers."""

    proposal_id: str
    drainage_id: str
    area: shapely.Geometry
    impervious: gpd.GeoDataFrame | None
    disturbance: shapely.Geometry
    tc: TimeOfConcentration


def compute_drainages(
    jobs: Sequence[DrainageJob],
    *,
    params: HydrologyParams,
    storms_in: Mapping[int, float],
    distribution: str,
    soils: Layer | None,
    buildings: Layer | None,
    pavement: Layer | None,
    land_cover: Layer | None,
) -> list[DrainageResult]:
    """Return :func:`compute_drainage` of every job, computed for all at once.

    The levels, cover pieces, soil-group areas and figures of every drainage area come from
    vectorised calls over all of them (:func:`gis_sw.analysis.runoff.drainages.compute_all`),
    the same figures as one area at a time.
    """
    from gis_sw.analysis.runoff.drainages import compute_all

    layers = {"soils": soils, "buildings": buildings, "pavement": pavement}
    figures = {"storms_in": storms_in, "distribution": distribution}
    return compute_all(jobs, params, figures, {**layers, "land_cover": land_cover})


def _result(
    job: DrainageJob,
    tables: tuple[dict[str, np.ndarray], dict[str, np.ndarray]],
    *,
    problems: list[str],
    layers: tuple[Layer | None, Layer | None, Layer | None],
    soils: Layer | None,
    params: HydrologyParams,
    figures: Mapping[str, Any],
) -> DrainageResult:
    """Return one area's result from its sub-area tables (``figures``: storms, distribution)."""
    pre_table, post_table = tables
    area, tc = job.area, job.tc
    notes: list[str] = []
    area_sqft = float(shapely.area(area))
    if layers[2] is None:
        notes.append(f"no land_cover layer: pervious ground counted as {params.default_cover}")
    if tc.source == "default":
        notes.append(f"Tc {tc.tc_hr:.2f} h is the ruleset default (no DEM or tc_min)")
    pre: Scenario | None = None
    post: Scenario | None = None
    if soils is None:
        problems.append("soils layer not provided: curve numbers cannot be chosen")
    else:
        unmapped = soil_problems(pre_table, area_sqft, problems)
        if unmapped < area_sqft:
            kw = {**figures, "tc_hr": tc.tc_hr, "params": params}
            pre = scenario_figures("pre", pre_table, area_sqft, **kw)
            post = scenario_figures("post", post_table, area_sqft, **kw)
    imp_post = float(post_table["area_sqft"][post_table["impervious"]].sum())
    imp_pct = 100.0 * imp_post / area_sqft if area_sqft > 0 else 0.0
    rv = rational.volumetric_runoff_coefficient(imp_pct)
    wqv = rational.water_quality_volume_cf(params.wqv_rainfall_in, imp_pct, area_sqft)
    return DrainageResult(
        proposal_id=job.proposal_id,
        drainage_id=job.drainage_id,
        geometry=area,
        tc=tc,
        pre=pre,
        post=post,
        wqv_rainfall_in=params.wqv_rainfall_in,
        wqv_rv=rv,
        wqv_cf=wqv,
        problems=tuple(problems),
        notes=tuple(notes),
    )
