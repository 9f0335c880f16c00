"""gis_sw: screen land development against a town's stormwater law.

The default ruleset is the Town of Mount Pleasant (Westchester County, NY) Code Chapter 183.
gis_sw screens; the Town Engineer decides.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
