"""construction: PLACEHOLDER, being written (see the issue). Each check returns no rows yet."""

from __future__ import annotations

import geopandas as gpd

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import empty_findings


def check_inspections(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_notices(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_sediment_cleanout(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)
