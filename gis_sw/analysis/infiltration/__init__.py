"""Infiltration devices, § 183-12C(2)(c): SW201-SW210.

Modules: :mod:`~.septic` (SW201), :mod:`~.vehicle` (SW202, SW210), :mod:`~.records`
(SW203, SW204, SW207, SW209), :mod:`~.lots` (SW205, SW206), :mod:`~.report` (SW208) and
:mod:`~.common` (feature names, nearest features, one row per device).

One row per (rule, proposal, device).  Horizontal distances are exact (STRtree ``dwithin``
candidates, then ``shapely.distance``; :mod:`gis_sw.analysis.distances`) and compared after
rounding to 0.01 ft, so exactly at the limit passes (10.00 ft) and 9.99 ft fails.  A failing
finding's geometry is the shortest line from the device to the offending feature.  Missing
layers, rasters or attributes answer ``review`` naming what is missing.

SW201 (septic up-gradient, § 183-12C(2)(c)[3]): "up-gradient" is where the device sits on
the slope relative to the treatment system, so the comparison is ground with ground: the
device's highest DEM ground cell (``ground_max_ft`` of :func:`device_frame`) against the
lowest DEM ground cell of the part of the field within 20 ft of the device.  The device's
bottom (``bottom_elevation_ft`` or ``depth_ft``) plays no part, so one device described
either way gets one answer; the septic layer carries no bottom elevation to compare
bottoms with.  Both are rounded to 0.01 ft; a difference of
``ruleset.devices.upgradient_flat_tolerance_ft`` (0.33 ft) or less either way is flat
within what the DEM resolves (one value per cell; a lidar DEM's vertical accuracy) and is
``review``, more above is ``fail``, more below ``pass``.  The siting polygon
(:mod:`gis_sw.analysis.siting`) keeps only cells that would pass.

SW206 (§ 183-12C(2)(c)[7]) measures to the town's buildings and to the proposal's own new
roofs, with a habitable basement or a below-ground storage area; unknown is ``review``
naming the attribute, and structures of 100 sq ft or less are not buildings (§ 183-6):
see :mod:`gis_sw.analysis.buildings`.

SW202 and SW208 count a ``streams`` layer (centre lines), when given, as water bodies.

SW210 is an advisory from NYS DOH 10 NYCRR Appendix 5-B, not Chapter 183: a device taking
runoff from parking lots, roadways or driveways nearer a water well than 100 ft is
``review`` (advisory), never ``fail``, so a town-law run is not failed by state guidance.
"""

from __future__ import annotations

from gis_sw.analysis.infiltration.common import FEATURE_LAYERS, OPTIONAL_WATER, feature_names
from gis_sw.analysis.infiltration.lots import check_habitable_basement, check_property_line
from gis_sw.analysis.infiltration.records import (
    check_bedrock_separation,
    check_groundwater_separation,
    check_sedimentation_device,
    check_test_holes,
)
from gis_sw.analysis.infiltration.report import check_separation_report
from gis_sw.analysis.infiltration.septic import check_septic_upgradient
from gis_sw.analysis.infiltration.vehicle import check_state_well_advisory, check_vehicle_traffic

__all__ = [
    "FEATURE_LAYERS",
    "OPTIONAL_WATER",
    "check_bedrock_separation",
    "check_groundwater_separation",
    "check_habitable_basement",
    "check_property_line",
    "check_sedimentation_device",
    "check_separation_report",
    "check_septic_upgradient",
    "check_state_well_advisory",
    "check_test_holes",
    "check_vehicle_traffic",
    "feature_names",
]
