"""Permits and plans, SW101-SW107: what an application must carry under Chapter 183.

Modules: :mod:`~.threshold` (SW101 permit threshold, SW102 land development),
:mod:`~.conditions` (SW103 post-construction Conditions A, B, C), :mod:`~.application`
(SW104 exemptions, SW105 application and fees, SW107 state floor), :mod:`~.resources`
(SW106 mapped resources) and :mod:`~.common` (wording, figures, per-proposal lookups).

Every number (thresholds, acres, fees, zone names, the wetland adjacent area) comes from the
ruleset.  Areas are those of each proposal's disturbance *union* (overlaps counted once) in
the working CRS, split by the zoning overlay (:func:`gis_sw.analysis.overlay.area_by_key`).
Areas are compared with the limits after rounding to 0.01 sq ft, so a polygon drawn at
exactly 250 sq ft and carried through a reprojection still meets a 250 sq ft threshold.

Subjects: SW101, SW102, SW104, SW105 and SW107 give one row per proposal (``subject_id`` is
the proposal id); SW103 one row per condition (``P-1:condition-A``) and SW106 one row per
mapped resource (``P-1:wetlands``, ``P-1:wetland_adjacent_area``, ``P-1:water_bodies``,
``P-1:floodplain``, and ``P-1:streams`` when a ``streams`` line layer is given).

Readings (issue 13; docs/check.md states them for users):

- Condition A (§ 183-7B(2)(a)) is about where runoff *goes*: the applicant's
  ``discharges_to_impaired_water`` decides when given; otherwise a TMDL watershed
  (``impaired_waters.listing`` naming one of ``[condition_a] watershed_listings``) is met by
  overlap, and an impaired water body by overlap or by a D8 flow path over the DEM reaching
  it (:mod:`gis_sw.analysis.discharge`); anything the layers cannot show is ``review``.
- Conditions B and C count the project: the larger of the proposal's own area and its
  ``larger_plan_acres``.  A part of a larger plan whose total is not given (or whose
  ``part_of_larger_plan`` is not given) is never passed on its own area.
- A claimed exemption is read by :func:`gis_sw.layers.exemptions.parse_exemption` (letter,
  citation or heading) and its own conditions are checked (``[exemption_conditions]``):
  routine maintenance at 5 acres or more and landscaping on a lot with no building fail;
  agricultural activity with new roofs is review.
- Sentences naming a state programme, another chapter or an agency come from the ruleset's
  ``[wording]`` (:data:`WORDING_DEFAULTS` names the keys and their neutral fallbacks); a
  measured figure beside its limit is written by :mod:`gis_sw.analysis.wording`.
"""

from __future__ import annotations

from gis_sw.analysis.permits.application import (
    check_application,
    check_exemption,
    check_state_floor,
    exemption_letter,
)
from gis_sw.analysis.permits.common import WORDING_DEFAULTS
from gis_sw.analysis.permits.conditions import ProjectArea, check_post_construction, project_area
from gis_sw.analysis.permits.resources import check_mapped_resources
from gis_sw.analysis.permits.threshold import (
    PermitArea,
    check_land_development,
    check_permit_threshold,
    land_development,
    permit_areas,
)
from gis_sw.analysis.wording import fmt_acres, fmt_sqft, fmt_usd

__all__ = [
    "WORDING_DEFAULTS",
    "PermitArea",
    "ProjectArea",
    "check_application",
    "check_exemption",
    "check_land_development",
    "check_mapped_resources",
    "check_permit_threshold",
    "check_post_construction",
    "check_state_floor",
    "exemption_letter",
    "fmt_acres",
    "fmt_sqft",
    "fmt_usd",
    "land_development",
    "permit_areas",
    "project_area",
]
