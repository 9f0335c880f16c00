"""The siting polygons as files: ``siting.geojson`` (RFC 7946, WGS84) and ``siting.gpkg``.

``gis-sw siting`` computes the polygons (:func:`gis_sw.analysis.siting.siting_polygons`) and
:func:`write_siting` writes them: one MultiPolygon per parcel (a parcel with no legal place
has a null geometry), in layer ``siting``.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import shapely

from gis_sw.outputs.atomic import atomic_path, check_writable, output_group

__all__ = ["write_siting"]


def _plain(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """Return the polygons with every geometry a (Multi)Polygon or null, areas as floats."""
    out = frame.copy()
    geoms = out.geometry.to_numpy()
    polygonal = np.asarray(geoms, dtype=object).copy()
    keep = (~shapely.is_empty(polygonal)) & np.isin(shapely.get_type_id(polygonal), [3, 6])
    collections = shapely.get_type_id(polygonal) == 7
    for pos in np.flatnonzero(collections):
        parts = shapely.get_parts(polygonal[pos])
        polys = parts[shapely.get_type_id(parts) == 3]
        polygonal[pos] = shapely.multipolygons(polys) if len(polys) else None
        keep[pos] = len(polys) > 0
    polygonal[~keep] = None
    out = out.set_geometry(gpd.GeoSeries(polygonal, index=out.index, crs=frame.crs))
    out["area_sqft"] = out["area_sqft"].astype("float64")
    out["depth_ft"] = out["depth_ft"].astype("float64")
    return out


def write_siting(
    out_dir: Path, polygons: gpd.GeoDataFrame, *, overwrite: bool = False, group: bool = True
) -> list[Path]:
    """Write ``siting.geojson`` and ``siting.gpkg``; both are checked before either is written.

    With ``group=False`` the files join the caller's
    :func:`~gis_sw.outputs.atomic.output_group` instead of forming their own.

    Raises
    ------
    OutputError
        If a file exists and ``overwrite`` is False, or a file cannot be written.
    """
    targets = [out_dir / "siting.geojson", out_dir / "siting.gpkg"]
    for path in targets:
        check_writable(path, overwrite=overwrite)
    frame = _plain(polygons)
    drivers: tuple[tuple[str, dict[str, str]], ...] = (
        ("GeoJSON", {"RFC7946": "YES", "COORDINATE_PRECISION": "7"}),
        ("GPKG", {}),
    )
    with output_group() if group else contextlib.nullcontext():  # together, or neither
        for target, (driver, options) in zip(targets, drivers, strict=True):
            with atomic_path(target, overwrite=overwrite) as tmp:
                pyogrio.write_dataframe(
                    frame,
                    tmp,
                    driver=driver,
                    layer="siting",
                    geometry_type="MultiPolygon",
                    promote_to_multi=True,
                    layer_options=options or None,
                )
    return targets
