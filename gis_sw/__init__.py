"""gis_sw: screen land development against a town's stormwater law.

The default ruleset is the Town of Mount Pleasant (Westchester County, NY) Code Chapter 183.
gis_sw screens; the Town Engineer decides.

The public API (:mod:`gis_sw.api`) is imported on first use (PEP 562), so ``import gis_sw``
and ``gis-sw --help`` stay fast::

    import gis_sw

    town = gis_sw.read_town("data/sample/layers.toml")
    screening = town.screen(gis_sw.read_proposals("data/sample/proposals.gpkg"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Screening", "Town", "__version__", "read_proposals", "read_town", "screen_town"]

_API = frozenset({"Screening", "Town", "read_proposals", "read_town"})
_LAZY = {"screen_town": "gis_sw.batch.api"}

if TYPE_CHECKING:
    from gis_sw.api import Screening, Town, read_proposals, read_town
    from gis_sw.batch.api import screen_town


def __getattr__(name: str) -> Any:
    if name in _API:
        from gis_sw import api

        return getattr(api, name)
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gis_sw' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
