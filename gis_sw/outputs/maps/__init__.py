"""Static maps: engineering-scale sheets of each proposal and the townwide overview.

:func:`write_sheets` draws one sheet per proposal at a true engineering scale (a map book
with a key map when the site is too large for 1" = 50'); :func:`write_overview` draws every
parcel of a batch run coloured by its screening result.
"""

from __future__ import annotations

from gis_sw.outputs.maps.overview import write_overview
from gis_sw.outputs.maps.sheets import write_sheets

__all__ = ["write_overview", "write_sheets"]
