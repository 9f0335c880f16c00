"""infiltration: PLACEHOLDER, being written (see the issue). Each check returns no rows yet."""

from __future__ import annotations

import geopandas as gpd

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import empty_findings


def check_septic_upgradient(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_vehicle_traffic(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_groundwater_separation(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_bedrock_separation(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_property_line(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_habitable_basement(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_sedimentation_device(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_separation_report(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_test_holes(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)


def check_state_well_advisory(ctx: CheckContext) -> gpd.GeoDataFrame:
    """Not written yet."""
    return empty_findings(ctx.crs)
