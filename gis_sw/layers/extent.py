"""Refuse a layer whose features lie outside the working CRS's area of use.

Coordinates in degrees labelled as feet, or a CAD drawing at the origin, would otherwise put
features miles from the town, where every distance rule silently passes
(:func:`check_extent`, called by :func:`gis_sw.layers.vector.to_working_crs` for every
layer read).
"""

from __future__ import annotations

import threading

import geopandas as gpd
import numpy as np
import shapely
from pyproj import CRS, Transformer

from gis_sw.errors import CRSError
from gis_sw.layers.vector import crs_text

__all__ = ["AREA_MARGIN_DEG", "check_extent"]

AREA_MARGIN_DEG = 0.5
"""Degrees a layer may reach beyond the working CRS's area of use (about 50 km)."""

_TRANSFORMERS = threading.local()


def _to_lonlat(crs: CRS) -> Transformer:
    """Return a transformer from ``crs`` to lon/lat, made once per CRS and thread.

    Making one costs about 10 ms: the dozen layers of a town in one CRS pay it once.
    """
    cache: dict[str, Transformer] | None = getattr(_TRANSFORMERS, "to_lonlat", None)
    if cache is None:
        cache = _TRANSFORMERS.to_lonlat = {}
    key = crs.to_wkt()
    found = cache.get(key)
    if found is None:
        found = cache[key] = Transformer.from_crs(crs, "EPSG:4326", always_xy=True)
    return found


def check_extent(
    frame: gpd.GeoDataFrame, crs: CRS, *, label: str, source: CRS | None = None
) -> None:
    """Refuse a layer whose features lie outside the working CRS's area of use.

    Coordinates in degrees labelled as feet, or a CAD drawing at the origin, would otherwise
    put features miles from the town, where every distance rule silently passes.  A margin
    of :data:`AREA_MARGIN_DEG` around the area of use is allowed.

    Raises
    ------
    CRSError
        Naming where the features lie and the fix.
    """
    area = crs.area_of_use
    geoms = np.asarray(frame.geometry.values, dtype=object)
    if area is None or not len(geoms):
        return
    bounds = shapely.total_bounds(geoms)  # missing and empty geometries left out
    if not np.isfinite(bounds).all():
        return
    minx, miny, maxx, maxy = (float(v) for v in bounds)
    to_lonlat = _to_lonlat(crs)
    lon, lat = to_lonlat.transform([minx, maxx, minx, maxx], [miny, miny, maxy, maxy])
    lon, lat = np.asarray(lon), np.asarray(lat)
    west, south, east, north = area.bounds
    margin = AREA_MARGIN_DEG
    inside = (
        np.isfinite(lon).all()
        and np.isfinite(lat).all()
        and bool((lon >= west - margin).all() and (lon <= east + margin).all())
        and bool((lat >= south - margin).all() and (lat <= north + margin).all())
    )
    if inside:
        return
    given = crs_text(source if source is not None else crs)
    where = (
        f"{np.nanmin(lon):.4f}, {np.nanmin(lat):.4f} to {np.nanmax(lon):.4f}, "
        f"{np.nanmax(lat):.4f} (lon, lat)"
        if np.isfinite(lon).any() and np.isfinite(lat).any()
        else "nowhere on Earth"
    )
    raise CRSError(
        f"{label}: features read as {given} lie at {where}, outside the area of use of "
        f"{crs_text(crs)} ({area.name.split(' - ')[0]}, {west:.2f}, {south:.2f} to "
        f"{east:.2f}, {north:.2f}). Fix: if the town lies outside that area, screen it "
        "with a ruleset of its own: --ruleset my_town.toml whose working_crs is the town's "
        'projected CRS (README, "A ruleset for another town"); otherwise check that the '
        "layer's CRS is the one its coordinates are in (degrees are EPSG:4326; a CAD "
        "drawing needs real-world coordinates)."
    )
