"""Parsing of attribute values as town data exports them (``"Y"``, ``"yes"``, 1, True)."""

from __future__ import annotations

from typing import Any

import numpy as np

TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0"})


def parse_bool(value: Any) -> bool | None:
    """Parse a boolean from the usual spellings; None for empty/NA; raise ValueError otherwise."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer) and int(value) in (0, 1):
        return bool(value)
    if isinstance(value, float | np.floating):
        if np.isnan(value):
            return None
        if value in (0.0, 1.0):
            return bool(value)
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pragma: no cover
        pass
    if isinstance(value, str):
        word = value.strip().lower()
        if word == "":
            return None
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise ValueError(f"{value!r} is not a yes/no value (use true/false, yes/no, y/n or 1/0)")
