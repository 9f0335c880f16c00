"""The ruleset's ``[hydrology]`` section, parsed and checked once.

Every number of the runoff calculations (curve numbers, coefficients, default cover,
90% rainfall depth) lives in the ruleset; this module turns the raw TOML mapping into
:class:`HydrologyParams` and raises :class:`~gis_sw.errors.RulesetError` listing every
problem at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from gis_sw.errors import RulesetError
from gis_sw.ruleset import Ruleset

HSG_ORDER = ("A", "B", "C", "D")


@dataclass(frozen=True, slots=True)
class Cover:
    """One cover type: curve numbers by soil group, impervious flag, Rational C."""

    key: str
    label: str
    cn: Mapping[str, float]
    impervious: bool
    c: float


@dataclass(frozen=True, slots=True)
class UnitPeakTable:
    """TR-55 Table F-1 rows for one rainfall distribution."""

    ia_p: tuple[float, ...]
    c0: tuple[float, ...]
    c1: tuple[float, ...]
    c2: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class MassCurve:
    """Coefficients of P(t)/P24 = a + ((t-b)/c) (d / (e|t-b| + f))^g."""

    a: float
    b: float
    c: float
    d: float
    e: float
    f: float
    g: float


@dataclass(frozen=True, slots=True)
class HydrologyParams:
    """Everything the runoff calculations take from the ruleset."""

    covers: Mapping[str, Cover]
    aliases: Mapping[str, str]
    surface_cover: Mapping[str, str]
    dual_hsg: str
    default_cover: str
    disturbed_cover: str
    round_composite_cn: bool
    wqv_rainfall_in: float
    sheet_flow_n: float
    sheet_flow_max_ft: float
    sheet_flow_p2_storm_yr: int
    shallow_flow_surface: str
    shallow_flow_k: Mapping[str, float]
    min_tc_hr: float
    max_tc_hr: float
    default_tc_hr: float
    min_slope_ft_ft: float
    pond_swamp_factor: float
    unit_peak: Mapping[str, UnitPeakTable]
    mass_curve: MassCurve
    volume_tolerance_cf: float = 0.5
    peak_tolerance_cfs: float = 0.005

    def cover_key(self, name: object) -> str | None:
        """Return the cover key for a land-cover or alias name, None when unknown."""
        if name is None:
            return None
        text = str(name).strip().lower()
        if text in self.covers:
            return text
        return self.aliases.get(text)


def _num(table: Mapping[str, Any], key: str, problems: list[str], where: str) -> float:
    value = table.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        problems.append(f"[{where}] {key} = {value!r} should be a number")
        return float("nan")
    return float(value)


def _numbers(value: Any, n: int | None, what: str, problems: list[str]) -> tuple[float, ...]:
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        problems.append(f"{what} = {value!r} should be a list of numbers")
        return ()
    if n is not None and len(value) != n:
        problems.append(f"{what} has {len(value)} values, expected {n}")
        return ()
    return tuple(float(v) for v in value)


def _cover(key: str, table: Any, problems: list[str]) -> Cover | None:
    """Read one ``[hydrology.covers.KEY]`` table as a :class:`Cover`, None when unusable."""
    w = f"hydrology.covers.{key}"
    if not isinstance(table, Mapping):
        problems.append(f"[{w}] should be a table")
        return None
    cns = _numbers(table.get("cn"), 4, f"[{w}] cn", problems)
    if cns and not all(0 < v <= 100 for v in cns):
        problems.append(f"[{w}] cn = {list(cns)} should lie in (0, 100]")
    imp = table.get("impervious", False)
    if not isinstance(imp, bool):
        problems.append(f"[{w}] impervious = {imp!r} should be true or false")
    c = _num(table, "c", problems, w)
    if not cns:
        return None
    return Cover(
        key=key,
        label=str(table.get("label", key)),
        cn=MappingProxyType(dict(zip(HSG_ORDER, cns, strict=True))),
        impervious=bool(imp),
        c=c,
    )


def _covers(raw: Mapping[str, Any], problems: list[str]) -> dict[str, Cover]:
    """Read the ``[hydrology.covers]`` tables by key."""
    raw_covers = raw.get("covers")
    if not isinstance(raw_covers, Mapping) or not raw_covers:
        problems.append("[hydrology.covers] is missing or empty")
        return {}
    covers: dict[str, Cover] = {}
    for key, table in raw_covers.items():
        cover = _cover(str(key), table, problems)
        if cover is not None:
            covers[str(key)] = cover
    return covers


def _mapping(
    raw: Mapping[str, Any], name: str, covers: Mapping[str, Cover], problems: list[str]
) -> dict[str, str]:
    """Read a ``[hydrology.NAME]`` table of cover names, keys lower-cased."""
    table = raw.get(name, {})
    if not isinstance(table, Mapping) or not all(isinstance(v, str) for v in table.values()):
        problems.append(f"[hydrology.{name}] should be a table of strings")
        return {}
    for k, v in table.items():
        if covers and v not in covers:
            problems.append(f"[hydrology.{name}] {k} = {v!r} is not a cover in covers")
    return {str(k).lower(): str(v) for k, v in table.items()}


def _choices(
    raw: Mapping[str, Any], covers: Mapping[str, Cover], problems: list[str]
) -> tuple[Any, Any]:
    """Check the default and disturbed covers; return ``dual_hsg`` and ``round_composite_cn``."""
    for key in ("default_cover", "disturbed_cover"):
        if covers and raw.get(key) not in covers:
            problems.append(
                f"[hydrology] {key} = {raw.get(key)!r} should name a cover in [hydrology.covers]"
            )
    dual = raw.get("dual_hsg")
    if dual not in ("undrained", "drained"):
        problems.append(f'[hydrology] dual_hsg = {dual!r} should be "undrained" or "drained"')
    round_cn = raw.get("round_composite_cn", True)
    if not isinstance(round_cn, bool):
        problems.append(f"[hydrology] round_composite_cn = {round_cn!r} should be true or false")
    return dual, round_cn


def _flow(
    raw: Mapping[str, Any], ruleset: Ruleset, problems: list[str]
) -> tuple[Any, dict[str, float], Any]:
    """Return the sheet-flow P2 storm, the shallow-flow K values and the shallow surface."""
    p2_yr = raw.get("sheet_flow_p2_storm_yr")
    if not isinstance(p2_yr, int) or p2_yr not in ruleset.storms.depths_in:
        problems.append(
            f"[hydrology] sheet_flow_p2_storm_yr = {p2_yr!r} should be a return period listed "
            "in [storms] depths_in"
        )
    k_raw = raw.get("shallow_flow_k", {})
    shallow_k: dict[str, float] = {}
    if isinstance(k_raw, Mapping):
        for k, v in k_raw.items():
            if isinstance(v, int | float) and not isinstance(v, bool) and v > 0:
                shallow_k[str(k)] = float(v)
            else:
                problems.append(f"[hydrology.shallow_flow_k] {k} = {v!r} should be above 0")
    surface = raw.get("shallow_flow_surface")
    if surface not in shallow_k:
        problems.append(
            f"[hydrology] shallow_flow_surface = {surface!r} should be one of {sorted(shallow_k)}"
        )
    return p2_yr, shallow_k, surface


def _unit_peak(
    raw: Mapping[str, Any], ruleset: Ruleset, problems: list[str]
) -> dict[str, UnitPeakTable]:
    """Read the TR-55 unit peak tables by rainfall distribution."""
    unit_peak: dict[str, UnitPeakTable] = {}
    up_raw = raw.get("unit_peak", {})
    if isinstance(up_raw, Mapping):
        for dist, table in up_raw.items():
            w = f'[hydrology.unit_peak."{dist}"]'
            if not isinstance(table, Mapping):
                problems.append(f"{w} should be a table")
                continue
            ia_p = _numbers(table.get("ia_p"), None, f"{w} ia_p", problems)
            cols = [
                _numbers(table.get(c), len(ia_p), f"{w} {c}", problems) for c in ("c0", "c1", "c2")
            ]
            if ia_p and list(ia_p) != sorted(ia_p):
                problems.append(f"{w} ia_p should increase")
            if ia_p and all(cols):
                unit_peak[str(dist)] = UnitPeakTable(ia_p, cols[0], cols[1], cols[2])
    if ruleset.storms.distribution not in unit_peak:
        problems.append(
            f"[hydrology.unit_peak] has no table for [storms] distribution = "
            f'"{ruleset.storms.distribution}"'
        )
    return unit_peak


def _mass_curve(raw: Mapping[str, Any], problems: list[str]) -> dict[str, float]:
    """Read the coefficients a-g of ``[hydrology.rational_distribution]``."""
    mc_raw = raw.get("rational_distribution", {})
    if not isinstance(mc_raw, Mapping):
        problems.append("[hydrology.rational_distribution] should be a table")
        return {}
    return {k: _num(mc_raw, k, problems, "hydrology.rational_distribution") for k in "abcdefg"}


def _tolerances(raw: Mapping[str, Any], problems: list[str]) -> dict[str, float]:
    """Read the float guards of ``[hydrology.compare]``, with their defaults."""
    compare = raw.get("compare", {})
    tolerances = {"volume_tolerance_cf": 0.5, "peak_tolerance_cfs": 0.005}
    if not isinstance(compare, Mapping):
        problems.append("[hydrology.compare] should be a table")
        return tolerances
    for key in tolerances:
        if key in compare:
            value = _num(compare, key, problems, "hydrology.compare")
            if value < 0:
                problems.append(f"[hydrology.compare] {key} = {value} should be 0 or more")
            tolerances[key] = value
    return tolerances


_NUMBERS = (
    "wqv_rainfall_in",
    "sheet_flow_n",
    "sheet_flow_max_ft",
    "min_tc_hr",
    "max_tc_hr",
    "default_tc_hr",
    "min_slope_ft_ft",
    "pond_swamp_factor",
)
"""The plain numbers of ``[hydrology]``."""


def parse_hydrology(ruleset: Ruleset) -> HydrologyParams:
    """Parse ``ruleset.section("hydrology")``.

    Raises
    ------
    RulesetError
        Naming every missing or malformed key of ``[hydrology]`` and its sub-tables.
    """
    raw = ruleset.section("hydrology")
    problems: list[str] = []
    if not raw:
        raise RulesetError(
            f"ruleset {ruleset.source or ruleset.name} has no [hydrology] section. "
            "Fix: copy it from gis_sw/rulesets/mount_pleasant_ny.toml."
        )
    covers = _covers(raw, problems)
    aliases = _mapping(raw, "cover_aliases", covers, problems)
    surface_cover = _mapping(raw, "surface_cover", covers, problems)
    dual, round_cn = _choices(raw, covers, problems)
    nums = {k: _num(raw, k, problems, "hydrology") for k in _NUMBERS}
    p2_yr, shallow_k, surface = _flow(raw, ruleset, problems)
    unit_peak = _unit_peak(raw, ruleset, problems)
    mc_vals = _mass_curve(raw, problems)
    tolerances = _tolerances(raw, problems)
    if problems:
        raise RulesetError(
            f"ruleset {ruleset.source or ruleset.name} has {len(problems)} problem(s) in "
            f"[hydrology]: " + "; ".join(problems) + ". Fix: compare with "
            "gis_sw/rulesets/mount_pleasant_ny.toml."
        )
    return HydrologyParams(
        covers=MappingProxyType(covers),
        aliases=MappingProxyType(aliases),
        surface_cover=MappingProxyType(surface_cover),
        dual_hsg=str(dual),
        default_cover=str(raw["default_cover"]),
        disturbed_cover=str(raw["disturbed_cover"]),
        round_composite_cn=bool(round_cn),
        wqv_rainfall_in=nums["wqv_rainfall_in"],
        sheet_flow_n=nums["sheet_flow_n"],
        sheet_flow_max_ft=nums["sheet_flow_max_ft"],
        sheet_flow_p2_storm_yr=int(p2_yr),
        shallow_flow_surface=str(surface),
        shallow_flow_k=MappingProxyType(shallow_k),
        min_tc_hr=nums["min_tc_hr"],
        max_tc_hr=nums["max_tc_hr"],
        default_tc_hr=nums["default_tc_hr"],
        min_slope_ft_ft=nums["min_slope_ft_ft"],
        pond_swamp_factor=nums["pond_swamp_factor"],
        unit_peak=MappingProxyType(unit_peak),
        mass_curve=MassCurve(**mc_vals),
        volume_tolerance_cf=tolerances["volume_tolerance_cf"],
        peak_tolerance_cfs=tolerances["peak_tolerance_cfs"],
    )
