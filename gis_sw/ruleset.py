"""Ruleset: a municipality's numbers, zone names and citations, loaded from TOML.

The default is ``gis_sw/rulesets/mount_pleasant_ny.toml``.  Another town copies that file,
edits the numbers and citations, and passes ``--ruleset PATH``.  Every value is checked when
the file is loaded, and all problems are reported at once.

Sections the core does not type (``hydrology`` for example) are kept as read-only mappings;
the module that uses them parses and validates its own section (see :meth:`Ruleset.section`).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from pyproj import CRS

from gis_sw.errors import RulesetError
from gis_sw.ruleset_toml import build_section, non_finite, working_crs

DEFAULT_RULESET = "mount_pleasant_ny"

_ZONE_PUNCTUATION = re.compile(r"[\s\-_.]+")


def zone_key(zone: object) -> str:
    """Reduce a zone name for matching: upper case, no spaces, hyphens, underscores or dots.

    ``"R-10"``, ``"r10"`` and ``" R 10 "`` all give ``"R10"``; ``"R-100"`` stays distinct.
    Missing values give ``""``.
    """
    if zone is None or (isinstance(zone, float) and math.isnan(zone)) or str(zone) == "<NA>":
        return ""
    return _ZONE_PUNCTUATION.sub("", str(zone)).upper()


@dataclass(frozen=True, slots=True)
class ZoneParams:
    """``[zones]``: the zones with the lower permit threshold and the zoning column."""

    low_threshold_zones: tuple[str, ...]
    zone_column: str = "zone"


@dataclass(frozen=True, slots=True)
class PermitParams:
    """``[permit]``: permit and SWPPP thresholds, conditions, fees and application items."""

    threshold_any_zone_sqft: float
    threshold_low_zone_sqft: float
    land_development_acres: float
    condition_b_acres: float
    condition_c_min_acres: float
    condition_c_max_acres: float
    condition_c_excluded_land_uses: tuple[str, ...]
    application_fee_usd: float
    inspection_fee_fraction: float
    application_items: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ResourceParams:
    """``[resources]``: the width of the wetland adjacent area."""

    wetland_adjacent_area_ft: float


@dataclass(frozen=True, slots=True)
class PhasingParams:
    """``[phasing]``: the most land disturbed at any one time without an approved SWPPP."""

    max_disturbed_acres: float


@dataclass(frozen=True, slots=True)
class DeviceParams:
    """``[devices]``: setbacks and vertical separations of infiltration devices, in feet."""

    septic_upgradient_ft: float
    vehicle_traffic_ft: float
    groundwater_separation_ft: float
    bedrock_separation_ft: float
    property_line_ft: float
    habitable_basement_ft: float
    state_well_surface_recharge_ft: float
    distance_tolerance_ft: float = 0.005
    building_min_area_sqft: float = 100.0
    upgradient_flat_tolerance_ft: float = 0.33
    maintenance_obligations: tuple[str, ...] = ()

    @property
    def largest_setback_ft(self) -> float:
        """The widest horizontal setback: the halo batch chunks need."""
        return max(
            self.septic_upgradient_ft,
            self.vehicle_traffic_ft,
            self.property_line_ft,
            self.habitable_basement_ft,
            self.state_well_surface_recharge_ft,
        )


@dataclass(frozen=True, slots=True)
class ConstructionParams:
    """``[construction]``: inspections, storm reports, notices and sediment clean-out."""

    inspection_interval_days: int
    storm_threshold_in: float
    storm_report_within_hours: int
    notice_hours: int
    sediment_cleanout_fraction: float
    notice_milestones: tuple[str, ...]
    storm_wet_day_in: float = 0.01
    storm_dry_gap_days: int = 1
    report_recipients: tuple[str, ...] = ()
    notice_recipients: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StormParams:
    """``[storms]``: the design storm and the 24-hour rainfall depths by return period."""

    design_return_period_yr: int
    distribution: str
    duration_hr: int
    annual_in: float
    depths_in: Mapping[int, float]

    @property
    def design_depth_in(self) -> float:
        """Rainfall depth of the design storm (25-year by default)."""
        return self.depths_in[self.design_return_period_yr]


@dataclass(frozen=True, slots=True)
class Ruleset:
    """A municipality's stormwater rules as numbers.

    Attributes
    ----------
    name, title, municipality, law, version
        Identify the ruleset; ``name`` and ``version`` go into every finding.
    working_crs
        Projected CRS in feet in which every length and area is computed: the CRS named by
        ``[ruleset] working_crs`` when its unit is a foot, else its foot twin
        (:func:`gis_sw.units.foot_twin`, the foot of ``[ruleset] foot``).
    declared_crs
        The CRS ``[ruleset] working_crs`` names, as written (metres, say).
    citations
        Rule id to citation text, e.g. ``{"SW101": "§ 183-12A"}``.
    """

    name: str
    title: str
    municipality: str
    law: str
    version: str
    working_crs: CRS
    decision_maker: str
    zones: ZoneParams
    permit: PermitParams
    resources: ResourceParams
    phasing: PhasingParams
    devices: DeviceParams
    construction: ConstructionParams
    storms: StormParams
    exemptions: Mapping[str, str]
    citations: Mapping[str, str]
    source: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    declared_crs: CRS | None = None

    @property
    def crs_declared(self) -> CRS:
        """The CRS the ruleset names (``working_crs`` is it, or its twin in feet)."""
        return self.declared_crs if self.declared_crs is not None else self.working_crs

    @property
    def crs_is_twin(self) -> bool:
        """True when the ruleset's CRS is not in feet and work happens in its foot twin."""
        return self.declared_crs is not None and not self.declared_crs.equals(self.working_crs)

    def citation(self, rule_id: str) -> str:
        """Citation of a rule, or raise :class:`RulesetError` naming the missing key."""
        try:
            return self.citations[rule_id]
        except KeyError:
            raise RulesetError(
                f"ruleset {self.source or self.name}: [citations] has no entry for {rule_id}. "
                f'Fix: add a line {rule_id} = "§ ..." to the [citations] table.'
            ) from None

    def wording(self, key: str, default: str | None = None) -> str:
        """Return a sentence part in the town's own words, from the ruleset's ``[wording]`` table.

        Sentences that name a state programme, another chapter of the town's code or an
        agency ("the NYSDEC SPDES general permit", "Chapter 108 (Flood Damage Prevention)")
        live in the ruleset, so another town's file gives its own.  ``default`` (a neutral
        sentence naming no agency) is used when the ruleset has no such key; without a
        default a missing key raises.

        Raises
        ------
        RulesetError
            If the key is missing and no default is given.
        """
        table = self.raw.get("wording", {})
        value = table.get(key) if isinstance(table, Mapping) else None
        if isinstance(value, str):
            return value
        if default is not None:
            return default
        raise RulesetError(
            f"ruleset {self.source or self.name}: [wording] has no entry {key!r}. "
            f'Fix: add a line {key} = "..." to the [wording] table.'
        )

    @property
    def exemptions_citation(self) -> str:
        """Citation of the exemptions section (SW104's, ``§ 183-5``; ``""`` when absent)."""
        return self.citations.get("SW104", "")

    def section(self, name: str) -> Mapping[str, Any]:
        """Return a read-only view of a raw TOML section (empty when absent)."""
        value = self.raw.get(name, {})
        return MappingProxyType(dict(value)) if isinstance(value, dict) else MappingProxyType({})

    def is_low_threshold_zone(self, zone: object) -> bool:
        """Return True for zones with the lower permit threshold (R-10 in Mount Pleasant).

        Names match whatever their case, spaces and punctuation: town exports spell R-10 as
        ``R10``, ``r-10`` or ``R 10``, and a miss would silently give the higher threshold.
        """
        return zone_key(zone) in {zone_key(z) for z in self.zones.low_threshold_zones}

    def low_threshold_mask(self, zones: Iterable[object]) -> np.ndarray:
        """:meth:`is_low_threshold_zone` for many zone names at once (a boolean array)."""
        keys = {zone_key(z) for z in self.zones.low_threshold_zones}
        return np.fromiter((zone_key(z) in keys for z in zones), dtype=bool)


def _storms(table: Any, problems: list[str]) -> StormParams | None:
    if not isinstance(table, Mapping):
        problems.append("[storms] is missing or is not a table")
        return None
    depths_raw = table.get("depths_in")
    depths: dict[int, float] = {}
    if not isinstance(depths_raw, Mapping) or not depths_raw:
        problems.append('[storms] depths_in should be a table like { "25" = 6.0 }')
    else:
        for key, value in depths_raw.items():
            if (
                not str(key).isdigit()
                or isinstance(value, bool)
                or not isinstance(value, int | float)
            ):
                problems.append(f"[storms] depths_in: {key!r} = {value!r} should be years = inches")
            elif value <= 0:
                problems.append(f"[storms] depths_in: {key}-year depth {value} should be above 0")
            else:
                depths[int(key)] = float(value)
    params: StormParams | None = build_section(
        StormParams,
        table,
        "storms",
        problems,
        prebuilt={"depths_in": MappingProxyType(dict(sorted(depths.items())))},
    )
    if params is not None and params.design_return_period_yr not in depths:
        problems.append(
            f"[storms] design_return_period_yr = {params.design_return_period_yr} has no depth "
            "in depths_in"
        )
        return None
    return params


def parse_ruleset(data: Mapping[str, Any], *, source: str = "<ruleset>") -> Ruleset:
    """Validate a parsed TOML document and build a :class:`Ruleset`.

    Raises
    ------
    RulesetError
        Listing every problem found, each with its section and key.
    """
    problems: list[str] = list(non_finite(data))
    head = data.get("ruleset", {})
    if not isinstance(head, Mapping):
        head = {}
    for key in ("name", "title", "municipality", "law", "version", "working_crs"):
        if not isinstance(head.get(key), str) or not head.get(key):
            problems.append(f"[ruleset] {key} is missing or empty")
    declared, crs = working_crs(head, problems)
    zones = build_section(ZoneParams, data.get("zones", {}), "zones", problems)
    permit = build_section(PermitParams, data.get("permit", {}), "permit", problems)
    res = build_section(ResourceParams, data.get("resources", {}), "resources", problems)
    phasing = build_section(PhasingParams, data.get("phasing", {}), "phasing", problems)
    devices = build_section(DeviceParams, data.get("devices", {}), "devices", problems)
    construction = build_section(
        ConstructionParams, data.get("construction", {}), "construction", problems
    )
    if construction is not None and construction.storm_dry_gap_days < 1:
        problems.append("[construction] storm_dry_gap_days should be 1 or more (dry days)")
    storms = _storms(data.get("storms", {}), problems)
    exemptions = data.get("exemptions", {})
    citations = data.get("citations", {})
    wording = data.get("wording", {})
    titles = data.get("titles", {})
    for name, table in (
        ("exemptions", exemptions),
        ("citations", citations),
        ("wording", wording),
        ("titles", titles),
    ):
        if not isinstance(table, Mapping) or not all(isinstance(v, str) for v in table.values()):
            problems.append(f"[{name}] should be a table of strings")
    if problems:
        raise RulesetError(
            f"ruleset {source} has {len(problems)} problem(s): "
            + "; ".join(problems)
            + ". Fix: compare with gis_sw/rulesets/mount_pleasant_ny.toml."
        )
    assert crs is not None
    return Ruleset(
        name=head["name"],
        title=head["title"],
        municipality=head["municipality"],
        law=head["law"],
        version=head["version"],
        working_crs=crs,
        declared_crs=declared,
        decision_maker=str(head.get("decision_maker", "Town Engineer")),
        zones=zones,
        permit=permit,
        resources=res,
        phasing=phasing,
        devices=devices,
        construction=construction,
        storms=storms,  # type: ignore[arg-type]
        exemptions=MappingProxyType(dict(exemptions)),
        citations=MappingProxyType(dict(citations)),
        source=source,
        raw=MappingProxyType(dict(data)),
    )


def load_ruleset(name_or_path: str | Path | None = None) -> Ruleset:
    """Load a ruleset by packaged name (``mount_pleasant_ny``) or by path to a TOML file.

    Raises
    ------
    RulesetError
        If the file is missing, is not TOML, or has invalid values.
    """
    spec = str(name_or_path) if name_or_path else DEFAULT_RULESET
    path = Path(spec)
    if path.suffix.lower() != ".toml" and not path.exists():
        packaged = resources.files("gis_sw.rulesets").joinpath(f"{spec}.toml")
        if not packaged.is_file():
            available = sorted(
                p.name.removesuffix(".toml")
                for p in resources.files("gis_sw.rulesets").iterdir()
                if p.name.endswith(".toml")
            )
            raise RulesetError(
                f"ruleset {spec!r} is neither a packaged ruleset ({', '.join(available)}) nor a "
                "TOML file. Fix: pass --ruleset with a packaged name or the path to a .toml file."
            )
        text = packaged.read_text(encoding="utf-8")
        source = f"{spec} (packaged)"
    else:
        if not path.is_file():
            raise RulesetError(
                f"ruleset file {path} does not exist. Fix: check the path given to --ruleset."
            )
        text = path.read_text(encoding="utf-8")
        source = str(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesetError(
            f"ruleset {source} is not valid TOML: {exc}. Fix: correct the syntax."
        ) from None
    return parse_ruleset(data, source=source)
