"""Rational Method peak (Q = C i A) and the NYSDEC water quality volume.

The intensity ``i`` at the time of concentration is read off the 24-hour design storm
itself: the greatest depth falling in any window of length Tc of the Type III mass curve,
divided by Tc.  The mass curve is the smooth fit of the NRCS Type III distribution by Haan,
Barfield and Hayes (1994), P(t)/P24 = a + ((t-b)/c) (d / (e|t-b| + f))^g, coefficients in
the ruleset.  A design professional with a local intensity-duration-frequency curve (NOAA
Atlas 14) should prefer it; this figure is a screening estimate.
"""

from __future__ import annotations

from gis_sw.analysis.runoff.params import MassCurve


def mass_curve_fraction(t_hr: float, curve: MassCurve) -> float:
    """Fraction of the 24-hour depth fallen by hour ``t_hr`` (0 to 24), clipped to [0, 1]."""
    t = min(max(t_hr, 0.0), 24.0)
    dt = t - curve.b
    value = curve.a + (dt / curve.c) * (curve.d / (curve.e * abs(dt) + curve.f)) ** curve.g
    return min(max(value, 0.0), 1.0)


def peak_window_fraction(duration_hr: float, curve: MassCurve) -> float:
    """Fraction of the 24-hour depth in the window of ``duration_hr`` centred on the peak."""
    half = duration_hr / 2.0
    return mass_curve_fraction(curve.b + half, curve) - mass_curve_fraction(curve.b - half, curve)


def intensity_in_hr(depth_24h_in: float, tc_hr: float, curve: MassCurve) -> float:
    """Average intensity over the steepest Tc-long window of the design storm, in/hr.

    Raises
    ------
    ValueError
        If Tc is not positive.
    """
    if tc_hr <= 0:
        raise ValueError(f"time of concentration {tc_hr} h should be above 0")
    return depth_24h_in * peak_window_fraction(tc_hr, curve) / tc_hr


def rational_peak_cfs(c: float, intensity: float, area_acres: float) -> float:
    """Q = C i A, cfs (1 acre-inch per hour = 1.008 cfs, taken as 1.0 by convention)."""
    return c * intensity * area_acres


def volumetric_runoff_coefficient(impervious_percent: float) -> float:
    """Rv = 0.05 + 0.009 I, I in percent (NYS SMDM Table 4.1)."""
    return 0.05 + 0.009 * impervious_percent


def water_quality_volume_cf(
    rainfall_in: float, impervious_percent: float, area_sqft: float
) -> float:
    """WQv = P Rv A / 12 (NYS SMDM Table 4.1) with A in sq ft, giving cubic feet."""
    return rainfall_in * volumetric_runoff_coefficient(impervious_percent) * area_sqft / 12.0
