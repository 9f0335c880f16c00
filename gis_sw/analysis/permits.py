"""permits: PLACEHOLDER, being written (see the issue). Each check returns no rows yet."""

from __future__ import annotations

import geopandas as gpd

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import empty_findings


def check_permit_threshold(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_land_development(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_post_construction(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_exemption(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_application(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_mapped_resources(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_state_floor(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)
