"""Units: the one place where units are converted.

The law's numbers are in feet, square feet and acres, and so is every figure a finding
reports.  Computation happens in the ruleset's working CRS, whose linear unit is read from
the CRS itself (``pyproj``), never assumed.  Names in the code carry their unit
(``area_sqft``).

A working CRS in metres (or any other linear unit) is not measured in metres and converted
figure by figure: :func:`foot_twin` builds its *foot twin*, the same projection (same datum,
same projection parameters, same area of use) whose axes are in feet, and every layer is
reprojected into the twin when it is read.  A reprojection between a CRS and its twin is an
exact scaling of the coordinates, so distances and areas measured in the twin are the metre
figures converted to feet, in one place, before any rule runs; no rule can forget to
convert.  Which foot (international, 0.3048 m, or US survey, 1200/3937 m) is the ruleset's
choice (``[ruleset] foot``); the two differ by 2 parts per million (0.0002 ft in 100 ft).

A geographic CRS (degrees) is refused: lengths in degrees are not lengths.
"""

from __future__ import annotations

from typing import Any

from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from gis_sw.errors import CRSError

SQFT_PER_ACRE = 43_560.0
"""Square feet in one acre (international and survey acre differ by 4 ppm; the law uses 43,560)."""

FT_PER_M_INTERNATIONAL = 1.0 / 0.3048
FT_PER_M_US_SURVEY = 3937.0 / 1200.0  # US survey feet in one metre

FOOT_UNITS: dict[str, tuple[str, float]] = {
    "international": ("foot", 0.3048),
    "us_survey": ("US survey foot", 1200.0 / 3937.0),
}
"""The feet a foot twin may use: ruleset word to (pyproj unit name, metres per foot)."""


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
    """Return True when the CRS's linear unit is the international or the US survey foot.

    Read from the unit's length in metres, not its name: a Clarke's or Indian foot is
    another length and gets a twin in the law's feet.
    """
    if not crs.axis_info or not crs.axis_info[0].unit_conversion_factor:
        return False
    metres = float(crs.axis_info[0].unit_conversion_factor)
    return any(abs(metres - length) < 1e-12 for _, length in FOOT_UNITS.values())


def foot_twin(crs: CRS, *, foot: str = "international") -> CRS:
    """Return the working CRS itself when its unit is a foot, else its twin in feet.

    The twin keeps the projection, its parameters (false easting and northing keep their own
    units) and the area of use, and changes only the unit of the two axes, so reprojecting
    into it scales coordinates exactly.  It has no authority code of its own; its name says
    what it is (``NAD83 / New York East (in international feet)``).

    Parameters
    ----------
    crs
        A projected CRS (a compound CRS's horizontal part is used).
    foot
        ``"international"`` (0.3048 m) or ``"us_survey"`` (1200/3937 m); used only when the
        CRS is not in feet already.

    Raises
    ------
    CRSError
        If the CRS is geographic, not projected, or ``foot`` is not a known foot.
    """
    if foot not in FOOT_UNITS:
        raise CRSError(
            f'foot = {foot!r} is not a foot gis_sw knows. Fix: write foot = "international" '
            'or foot = "us_survey" under [ruleset].'
        )
    if crs.is_compound and crs.sub_crs_list:
        crs = crs.sub_crs_list[0]
    if crs.is_geographic or not crs.is_projected:
        raise CRSError(
            f"CRS {_name(crs)} is not a projected CRS (its unit is "
            f"{_unit_name(crs)}); lengths and areas need one. Fix: use a projected CRS, "
            "e.g. the state plane of the town."
        )
    metres_per_unit(crs)
    if is_feet(crs):
        return crs
    unit_name, metres = FOOT_UNITS[foot]
    data: dict[str, Any] = crs.to_json_dict()
    axes = data.get("coordinate_system", {}).get("axis", [])
    for axis in axes:
        axis["unit"] = {"type": "LinearUnit", "name": unit_name, "conversion_factor": metres}
    data.pop("id", None)
    data.pop("ids", None)
    word = "international feet" if foot == "international" else "US survey feet"
    data["name"] = f"{data.get('name', crs.name)} (in {word})"
    try:
        twin = CRS.from_json_dict(data)
    except PyprojCRSError as exc:
        raise CRSError(
            f"cannot build a CRS in feet from {_name(crs)} ({exc}). Fix: use a projected CRS "
            "in feet for working_crs."
        ) from exc
    if not twin.is_projected or abs(metres_per_unit(twin) - metres) > 1e-12:
        raise CRSError(f"cannot build a CRS in feet from {_name(crs)}.")
    return twin


def _name(crs: CRS) -> str:
    code = crs.to_authority()
    return f"{code[0]}:{code[1]}" if code else str(crs.name)


def _unit_name(crs: CRS) -> str:
    return str(crs.axis_info[0].unit_name) if crs.axis_info else "none"
