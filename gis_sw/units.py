"""Units: the one place where units are converted.

Computation happens in the ruleset's working CRS, whose linear unit is read from the CRS
itself (``pyproj``), never assumed.  Names in the code carry their unit (``area_sqft``).
"""

from __future__ import annotations

from pyproj import CRS

from gis_sw.errors import CRSError

SQFT_PER_ACRE = 43_560.0
"""Square feet in one acre (international and survey acre differ by 4 ppm; the law uses 43,560)."""

FT_PER_M_INTERNATIONAL = 1.0 / 0.3048
FT_PER_M_US_SURVEY = 3937.0 / 1200.0  # US survey feet in one metre


def sqft_to_acres(area_sqft: float) -> float:
    """Convert square feet to acres."""
    return area_sqft / SQFT_PER_ACRE


def acres_to_sqft(area_acres: float) -> float:
    """Convert acres to square feet."""
    return area_acres * SQFT_PER_ACRE


def metres_per_unit(crs: CRS) -> float:
    """Length of one unit of a projected CRS's first axis, in metres.

    Raises
    ------
    CRSError
        If the CRS is geographic or has no linear unit.
    """
    if crs.is_geographic:
        raise CRSError(f"CRS {crs.to_string()} is geographic (degrees); a projected CRS is needed.")
    axes = crs.axis_info
    if not axes or axes[0].unit_conversion_factor in (None, 0):
        raise CRSError(f"CRS {crs.to_string()} has no linear unit.")
    return float(axes[0].unit_conversion_factor)


def feet_per_unit(crs: CRS) -> float:
    """How many feet one CRS unit is, for a projected CRS.

    For US survey feet this is 1.000002 international feet; for EPSG:2260 work is done in
    the CRS's own unit and this factor is only used to label and convert results.
    """
    return metres_per_unit(crs) / 0.3048


def is_feet(crs: CRS) -> bool:
    """True when the CRS's linear unit is a foot (international or US survey)."""
    name = (crs.axis_info[0].unit_name or "").lower() if crs.axis_info else ""
    return "foot" in name or "feet" in name
