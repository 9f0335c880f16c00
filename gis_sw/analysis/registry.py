"""The table of every rule: stable public ids, titles, severities and their checks.

Rule ids never change meaning: users write them in waivers and reports, like a linter's
codes.  Citations are not here: they come from the ruleset (``[citations]``), so a wrong
section number is corrected in one TOML file.  ``gis-sw rules`` prints this table.

SW1xx permits and plans, SW2xx infiltration devices, SW3xx phasing, SW4xx construction-time
duties, SW5xx design calculations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import geopandas as gpd

from gis_sw.analysis import construction, hydrology, infiltration, maintenance, permits, phasing
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Severity
from gis_sw.errors import RulesetError
from gis_sw.ruleset import Ruleset

Check = Callable[[CheckContext], gpd.GeoDataFrame]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of the law as the pipeline checks it.

    Attributes
    ----------
    rule_id
        Stable public id (``SW205``).
    title
        Short title a planner reads: a template over the ruleset's sections
        (``{devices.property_line_ft:g}``), filled by :func:`rule_title`; a ruleset's
        ``[titles]`` table may give a rule its own title in the town's words.
    severity
        Severity of its fail, review and required findings.
    check
        Pure, vectorised function of a :class:`CheckContext` returning check rows.
    town_law
        False for advisory rules from other law shown beside the town's (SW210).
    """

    rule_id: str
    title: str
    severity: Severity
    check: Check
    town_law: bool = True


HI, MED, LOW, ADV, INF = (
    Severity.HIGH,
    Severity.MEDIUM,
    Severity.LOW,
    Severity.ADVISORY,
    Severity.INFO,
)

# fmt: off
RULES: tuple[Rule, ...] = (
    # -- Permits and plans ------------------------------------------------------------------
    Rule("SW101", "Town stormwater management control permit threshold", HI, permits.check_permit_threshold),
    Rule("SW102", "Land development activity: SWPPP and state construction permit", HI, permits.check_land_development),
    Rule("SW103", "Post-construction controls: A by where runoff goes, B and C by the project's area", HI, permits.check_post_construction),
    Rule("SW104", "Exemption claimed, and the exemption's own conditions", MED, permits.check_exemption),
    Rule("SW105", "Application contents and fees", MED, permits.check_application),
    Rule("SW106", "Mapped wetlands, wetland adjacent area, water bodies, 100-year floodplain", MED, permits.check_mapped_resources),
    Rule("SW107", "Not less restrictive than the state's requirements", INF, permits.check_state_floor),
    # -- Infiltration devices, § 183-12C(2)(c) ----------------------------------------------
    Rule("SW201", "Device up-gradient within {devices.septic_upgradient_ft:g} ft of a septic field", HI, infiltration.check_septic_upgradient),
    Rule("SW202", "Vehicle-traffic device within {devices.vehicle_traffic_ft:g} ft of a well, wetland or water body", HI, infiltration.check_vehicle_traffic),
    Rule("SW203", "Device bottom {devices.groundwater_separation_ft:g} ft above seasonal high groundwater", HI, infiltration.check_groundwater_separation),
    Rule("SW204", "Device bottom {devices.bedrock_separation_ft:g} ft above bedrock", HI, infiltration.check_bedrock_separation),
    Rule("SW205", "Device {devices.property_line_ft:g} ft from every property line", HI, infiltration.check_property_line),
    Rule("SW206", "Device {devices.habitable_basement_ft:g} ft from a building with a habitable basement or below-ground storage", HI, infiltration.check_habitable_basement),
    Rule("SW207", "Sedimentation device included", MED, infiltration.check_sedimentation_device),
    Rule("SW208", "Separation from wells, water bodies and wetlands (report)", INF, infiltration.check_separation_report),
    Rule("SW209", "Deep test holes and percolation tests logged", MED, infiltration.check_test_holes),
    Rule("SW210", "State health rule: surface recharge {devices.state_well_surface_recharge_ft:g} ft from a water well (advisory, not town law)", ADV, infiltration.check_state_well_advisory, town_law=False),
    Rule("SW211", "Maintenance easement, agreement, as-built plans and right of entry for devices", MED, maintenance.check_maintenance_obligations),
    # -- Phasing ----------------------------------------------------------------------------
    Rule("SW301", "Not more than {phasing.max_disturbed_acres:g} acres disturbed at any one time", HI, phasing.check_five_acre_limit),
    # -- Construction-time duties -----------------------------------------------------------
    Rule("SW401", "Inspection reports every {construction.inspection_interval_days:g} days and after {construction.storm_threshold_in:g} in storms", MED, construction.check_inspections),
    Rule("SW402", "{construction.notice_hours:g} hours' notice before inspection milestones", LOW, construction.check_notices),
    Rule("SW403", "Sediment removed at {construction.sediment_cleanout_fraction:.0%} of trap or pond capacity", LOW, construction.check_sediment_cleanout),
    # -- Design calculations ----------------------------------------------------------------
    Rule("SW501", "Design-storm runoff by TR-55 / Rational Method", MED, hydrology.check_design_calculations),
    Rule("SW502", "Post- against pre-development runoff volume", MED, hydrology.check_runoff_volume),
    Rule("SW503", "Post- against pre-development peak discharge", MED, hydrology.check_peak_discharge),
    Rule("SW504", "Water quality volume (WQv)", INF, hydrology.check_water_quality_volume),
)
# fmt: on

RULES_BY_ID: dict[str, Rule] = {rule.rule_id: rule for rule in RULES}


_RULE_OF_CHECK: dict[Check, Rule] = {rule.check: rule for rule in RULES}


def rule_of(check: Check) -> Rule:
    """Return the rule whose check is ``check`` (how a check learns its own rule id).

    Raises
    ------
    KeyError
        When ``check`` is no rule's check (a ``rule_check`` body not listed in :data:`RULES`).
    """
    try:
        return _RULE_OF_CHECK[check]
    except KeyError:
        name = getattr(check, "__qualname__", repr(check))
        raise KeyError(
            f"{name} is the check of no rule in gis_sw.analysis.registry.RULES"
        ) from None


def select_rules(
    select: list[str] | None = None, ignore: list[str] | None = None
) -> tuple[Rule, ...]:
    """Rules whose id starts with any ``select`` prefix and with no ``ignore`` prefix."""
    chosen = [
        r
        for r in RULES
        if (not select or any(r.rule_id.startswith(p) for p in select))
        and not (ignore and any(r.rule_id.startswith(p) for p in ignore))
    ]
    return tuple(chosen)


RULE_LAYERS: dict[str, tuple[str, ...]] = {
    "SW103": ("impaired_waters",),
    "SW106": ("wetlands", "water_bodies", "floodplain", "streams"),
    "SW201": ("septic_fields",),
    "SW202": ("wells", "wetlands", "water_bodies", "streams"),
    "SW206": ("buildings",),
    "SW208": ("wells", "water_bodies", "wetlands", "streams"),
    "SW210": ("wells",),
    "SW501": ("soils", "land_cover", "pavement", "buildings"),
    "SW502": ("soils", "land_cover", "pavement", "buildings"),
    "SW503": ("soils", "land_cover", "pavement", "buildings"),
    "SW504": ("soils", "land_cover", "pavement", "buildings"),
}
"""Rule id to the town layers whose features can make it pass: the engine reviews a pass
on a subject outside such a layer's coverage (:mod:`gis_sw.analysis.coverage`), and notes
a layer declared none.  Parcels and zoning always cover the town; rasters answer review
where they hold no data.  ``streams`` is optional water (a town that maps watercourses as
centre lines besides its ``water_bodies`` polygons): not given, it is not needed; given, a
pass relying on it is reviewed where it is partial or has features with no location."""


def layers_needed(rule_id: str) -> tuple[str, ...]:
    """Return the town layers a rule relies on to pass (:data:`RULE_LAYERS`)."""
    return RULE_LAYERS.get(rule_id, ())


def rule_title(rule: Rule, ruleset: Ruleset) -> str:
    """Return the rule's title for ``ruleset``.

    Its ``[titles]`` entry, else the registry's template filled with the ruleset's numbers
    ("Device 10 ft from every property line" for Mount Pleasant, "Device 12 ft ..." for a
    town whose setback is 12 ft).

    Raises
    ------
    RulesetError
        When the template names a field the ruleset does not have.
    """
    own = ruleset.raw.get("titles", {})
    template = own.get(rule.rule_id, rule.title) if isinstance(own, Mapping) else rule.title
    try:
        return str(template).format(
            devices=ruleset.devices,
            permit=ruleset.permit,
            phasing=ruleset.phasing,
            construction=ruleset.construction,
            resources=ruleset.resources,
        )
    except (AttributeError, IndexError, KeyError, ValueError) as exc:
        raise RulesetError(
            f"ruleset {ruleset.name}: the title of {rule.rule_id} ({template!r}) names "
            f"{exc} that the ruleset does not have. Fix: use a field such as "
            "{devices.property_line_ft:g}, or plain text, in [titles]."
        ) from exc
