"""Static maps: engineering-scale sheets of each proposal and the townwide overview.

:func:`write_sheets` draws one sheet per proposal at a true engineering scale (a map book
with a key map when the site is too large for 1" = 50'); :func:`write_overview` draws every
parcel of a batch run coloured by its screening result.

Each is imported when first asked for: the overview (a PNG) does not load the PDF backend
and its font tools that the sheets need (about 0.35 s).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gis_sw.outputs.maps.overview import write_overview
    from gis_sw.outputs.maps.sheets import write_sheets

_HOMES = {
    "write_overview": "gis_sw.outputs.maps.overview",
    "write_sheets": "gis_sw.outputs.maps.sheets",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["write_overview", "write_sheets"]
