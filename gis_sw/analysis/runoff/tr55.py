"""TR-55 (USDA NRCS, Urban Hydrology for Small Watersheds, 2nd ed., June 1986) formulas.

Pure functions of numbers: curve-number runoff (chapter 2), travel time and time of
concentration (chapter 3), and the graphical peak discharge method (chapter 4, with the
unit peak discharge of Appendix F, Table F-1).  The tables themselves live in the ruleset.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from gis_sw.analysis.runoff.params import HSG_ORDER, UnitPeakTable

SQFT_PER_SQMI = 5280.0**2
ACRES_PER_SQMI = 640.0


def potential_retention_in(cn: float) -> float:
    """S = 1000 / CN - 10 (TR-55 eq. 2-4), inches.

    Raises
    ------
    ValueError
        If CN is not in (0, 100].
    """
    if not 0 < cn <= 100:
        raise ValueError(f"curve number {cn} should lie in (0, 100]")
    return 1000.0 / cn - 10.0


def initial_abstraction_in(cn: float) -> float:
    """Ia = 0.2 S (TR-55 eq. 2-2), inches."""
    return 0.2 * potential_retention_in(cn)


def runoff_depth_in(rainfall_in: float, cn: float) -> float:
    """Q = (P - Ia)^2 / (P - Ia + S) for P > Ia, else 0 (TR-55 eq. 2-1 to 2-3), inches."""
    s = potential_retention_in(cn)
    ia = 0.2 * s
    if rainfall_in <= ia:
        return 0.0
    return (rainfall_in - ia) ** 2 / (rainfall_in - ia + s)


def weighted_cn(cns: Sequence[float], areas: Sequence[float]) -> float:
    """Area-weighted curve number, sum(CN x A) / sum(A) (TR-55 Worksheet 2).

    Raises
    ------
    ValueError
        If the areas sum to zero or the sequences differ in length.
    """
    cn_arr = np.asarray(cns, dtype="float64")
    a_arr = np.asarray(areas, dtype="float64")
    if cn_arr.shape != a_arr.shape:
        raise ValueError("curve numbers and areas differ in length")
    total = float(a_arr.sum())
    if total <= 0:
        raise ValueError("the sub-areas have no area")
    return float((cn_arr * a_arr).sum() / total)


def round_half_up(value: float) -> float:
    """Round to a whole number, halves up (TR-55 rounds CN 74.5 to 75)."""
    return float(math.floor(value + 0.5 + 1e-9))  # 1e-9: 54.4999999999 from float sums is 54.5


def soil_group(value: object, *, dual: str = "undrained") -> str | None:
    """Hydrologic soil group letter from a soils attribute; None when not A-D.

    Dual groups (``B/D``) take the second letter when ``dual="undrained"`` (TR-55 ch. 2:
    the undrained condition), the first when ``"drained"``.
    """
    if value is None:
        return None
    text = str(value).strip().upper().replace(" ", "")
    if not text or text in ("NAN", "NONE"):
        return None
    parts = text.split("/")
    letter = parts[-1] if dual == "undrained" else parts[0]
    return letter if letter in HSG_ORDER else None


# -- Chapter 3: travel time ------------------------------------------------------------------


class FlowKind(StrEnum):
    """Kind of a flow path segment (TR-55 chapter 3)."""

    SHEET = "sheet"
    SHALLOW = "shallow_concentrated"
    CHANNEL = "channel"


@dataclass(frozen=True, slots=True)
class FlowSegment:
    """One segment of a flow path with its travel time."""

    kind: FlowKind
    length_ft: float
    slope_ft_ft: float
    velocity_fps: float
    travel_time_hr: float


def sheet_flow_time_hr(n: float, length_ft: float, p2_in: float, slope_ft_ft: float) -> float:
    """Tt = 0.007 (n L)^0.8 / (P2^0.5 s^0.4) (TR-55 eq. 3-3), hours."""
    return 0.007 * (n * length_ft) ** 0.8 / (p2_in**0.5 * slope_ft_ft**0.4)


def shallow_flow_velocity_fps(slope_ft_ft: float, k: float) -> float:
    """V = k s^0.5 (TR-55 Appendix F: k = 16.1345 unpaved, 20.3282 paved), ft/s."""
    return k * slope_ft_ft**0.5


def channel_velocity_fps(
    area_sqft: float, wetted_perimeter_ft: float, slope_ft_ft: float, n: float
) -> float:
    """Manning: V = 1.49 r^(2/3) s^(1/2) / n with r = a / pw (TR-55 eq. 3-4), ft/s."""
    r = area_sqft / wetted_perimeter_ft
    return 1.49 * r ** (2.0 / 3.0) * slope_ft_ft**0.5 / n


def travel_time_hr(length_ft: float, velocity_fps: float) -> float:
    """Tt = L / (3600 V) (TR-55 eq. 3-1), hours."""
    return length_ft / (3600.0 * velocity_fps)


def flow_path_segments(
    length_ft: float,
    slope_ft_ft: float,
    *,
    sheet_n: float,
    sheet_max_ft: float,
    p2_in: float,
    shallow_k: float,
) -> tuple[FlowSegment, ...]:
    """Split a flow path into sheet flow (first ``sheet_max_ft``) and shallow concentrated flow.

    Raises
    ------
    ValueError
        If the length or slope is not positive.
    """
    if length_ft <= 0 or slope_ft_ft <= 0:
        raise ValueError(f"flow path {length_ft} ft at slope {slope_ft_ft} should be positive")
    sheet_len = min(length_ft, sheet_max_ft)
    sheet_tt = sheet_flow_time_hr(sheet_n, sheet_len, p2_in, slope_ft_ft)
    segments = [
        FlowSegment(
            FlowKind.SHEET,
            sheet_len,
            slope_ft_ft,
            sheet_len / (3600.0 * sheet_tt) if sheet_tt > 0 else math.inf,
            sheet_tt,
        )
    ]
    rest = length_ft - sheet_len
    if rest > 0:
        v = shallow_flow_velocity_fps(slope_ft_ft, shallow_k)
        segments.append(
            FlowSegment(FlowKind.SHALLOW, rest, slope_ft_ft, v, travel_time_hr(rest, v))
        )
    return tuple(segments)


# -- Chapter 4: graphical peak discharge ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnitPeak:
    """Unit peak discharge and the figures that gave it."""

    qu_csm_in: float
    ia_p_used: float
    tc_hr_used: float
    c0: float
    c1: float
    c2: float


def unit_peak_discharge(
    tc_hr: float,
    ia_p: float,
    table: UnitPeakTable,
    *,
    min_tc_hr: float = 0.1,
    max_tc_hr: float = 10.0,
) -> UnitPeak:
    """Return qu from log10(qu) = C0 + C1 log10(Tc) + C2 (log10 Tc)^2 (TR-55 Appendix F), csm/in.

    Ia/P outside the table is held at the nearest row (TR-55 ch. 4: "use the limiting
    values"); between rows the coefficients are interpolated linearly.  Tc is held within
    [min_tc_hr, max_tc_hr].
    """
    ia_p_used = float(np.clip(ia_p, table.ia_p[0], table.ia_p[-1]))
    tc_used = float(np.clip(tc_hr, min_tc_hr, max_tc_hr))
    c0 = float(np.interp(ia_p_used, table.ia_p, table.c0))
    c1 = float(np.interp(ia_p_used, table.ia_p, table.c1))
    c2 = float(np.interp(ia_p_used, table.ia_p, table.c2))
    log_tc = math.log10(tc_used)
    qu = 10.0 ** (c0 + c1 * log_tc + c2 * log_tc**2)
    return UnitPeak(qu, ia_p_used, tc_used, c0, c1, c2)


def peak_discharge_cfs(
    qu_csm_in: float, area_sqmi: float, runoff_in: float, pond_factor: float = 1.0
) -> float:
    """Return qp = qu Am Q Fp (TR-55 eq. 4-1), cfs."""
    return qu_csm_in * area_sqmi * runoff_in * pond_factor
