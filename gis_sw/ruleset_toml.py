"""Reading a ruleset's TOML tables: section records by name and type, the working CRS.

Every function records what is wrong in ``problems`` (strings naming ``[section] key``)
instead of raising, so :func:`gis_sw.ruleset.parse_ruleset` reports every problem at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from pyproj import CRS
from pyproj.exceptions import CRSError as PyprojCRSError

from gis_sw.errors import CRSError
from gis_sw.units import FOOT_UNITS, foot_twin


def build_section(
    cls: type,
    table: Mapping[str, Any],
    section: str,
    problems: list[str],
    *,
    prebuilt: Mapping[str, Any] | None = None,
) -> Any:
    """Build one frozen section dataclass, checking names and types.

    ``prebuilt`` holds values already parsed by the caller (they skip the type check).
    """
    if not isinstance(table, Mapping):
        problems.append(f"[{section}] is missing or is not a table")
        return None
    values: dict[str, Any] = {}
    known = {f.name for f in fields(cls)}
    for extra in sorted(set(table) - known):
        problems.append(
            f"[{section}] has an unknown key {extra!r} (known: {', '.join(sorted(known))})"
        )
    prebuilt = prebuilt or {}
    values.update(prebuilt)
    for f in fields(cls):
        if f.name in prebuilt:
            continue
        if f.name not in table:
            if f.default is f.default_factory:  # both MISSING: required
                problems.append(f"[{section}] is missing {f.name}")
            continue
        value = table[f.name]
        try:
            values[f.name] = typed_value(str(f.type), value)
        except TypeError as exc:
            problems.append(f"[{section}] {f.name} = {value!r} should be {exc}")
    if any(p.startswith(f"[{section}]") for p in problems):
        return None
    return cls(**values)


def typed_value(kind: str, value: Any) -> Any:
    """Return a TOML value as the field type ``kind`` names (``tuple[str, ...]``, ``float`` ...).

    Raises
    ------
    TypeError
        Saying what the value should be (``"a number of 0 or more"``).
    """
    if kind.startswith("tuple"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("a list of strings")
        return tuple(value)
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError("a number")
        if value < 0:
            raise TypeError("a number of 0 or more")
        return float(value)
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError("a whole number")
    elif kind == "str" and not isinstance(value, str):
        raise TypeError("a string")
    return value


def non_finite(value: object, where: str = "") -> Iterable[str]:
    """Yield a problem for every ``nan`` or ``inf`` in the document, named by its key.

    TOML allows ``nan`` and ``inf``; as a threshold or setback either would make every
    comparison false (or true) and a rule pass or fail whatever was measured.
    """
    if isinstance(value, float) and not math.isfinite(value):
        section, _, key = where.partition(".")
        name = f"[{section}] {key}" if key else f"[{section}]"
        yield f"{name} = {value} is not a finite number"
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from non_finite(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from non_finite(item, f"{where}[{i}]")


def working_crs(head: Mapping[str, Any], problems: list[str]) -> tuple[CRS | None, CRS | None]:
    """Return ``(declared CRS, working CRS in feet)`` from ``[ruleset]``; record problems."""
    text = head.get("working_crs")
    foot = head.get("foot", "international")
    if foot not in FOOT_UNITS:
        problems.append(
            f"[ruleset] foot = {foot!r} should be one of {', '.join(sorted(FOOT_UNITS))}"
        )
        foot = "international"
    if not isinstance(text, str) or not text:
        return None, None
    try:
        declared = CRS.from_user_input(text)
    except PyprojCRSError:
        problems.append(f"[ruleset] working_crs = {text!r} is not a known CRS")
        return None, None
    if declared.is_geographic or not declared.is_projected:
        problems.append(
            f"[ruleset] working_crs = {text!r} is geographic (degrees); use a projected CRS "
            "(state plane or UTM, in feet or metres) such as EPSG:2260"
        )
        return None, None
    try:
        return declared, foot_twin(declared, foot=str(foot))
    except CRSError as exc:
        problems.append(f"[ruleset] working_crs = {text!r}: {exc}")
        return None, None
