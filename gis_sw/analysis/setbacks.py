"""The setback lines that cross a lot, each with its reason: what shapes a siting polygon.

:func:`gis_sw.analysis.siting.siting_polygons` says where a device may go; this says why
there and not elsewhere, as lines to draw and label (the siting sheet, ``gis-sw serve``).
Distances and citations come from the ruleset; the rings are buffers of 32 segments per
quarter circle, for drawing only (no distance is read off them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.siting import DeviceClass
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

SETBACK_COLUMNS = ("rule_id", "distance_ft", "label", "citation", "subject", "geometry")
QUAD_SEGS = 32


def setback_lines(
    lot: shapely.Geometry,
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    parcel_id: str,
    device_class: str = "roof",
) -> gpd.GeoDataFrame:
    """Return the setback lines that cross ``lot``, each with its reason.

    One row per line: the property-line setback inside the lot, the habitable-basement ring
    of each building near it (a building with no ``habitable_basement`` value counts as
    having one, as siting does), the ring around each septic field, and for the ``vehicle``
    class the rings around wells, wetlands and water bodies; each clipped to the lot, and
    only where it crosses the lot.  The up-gradient test and the vertical separations are
    not lines: the siting polygon's ``reason`` names them.

    Parameters
    ----------
    lot
        The parcel's polygon, working CRS.
    layers
        The town's layers around it (the whole town, or :meth:`gis_sw.api.Town.local`).
    ruleset
        Distances and citations.
    parcel_id
        The lot's id (the subject of its lot-line row).
    device_class
        ``roof`` or ``vehicle``.

    Returns
    -------
    GeoDataFrame
        :data:`SETBACK_COLUMNS` in the working CRS; ``label`` reads like
        ``"20 ft from building B-12 (habitable basement)"``.

    Raises
    ------
    ValueError
        For an unknown device class.
    """
    klass = DeviceClass(device_class)
    params = ruleset.devices
    crs = ruleset.working_crs
    rows: list[dict[str, Any]] = []

    def add(rule_id: str, distance_ft: float, label: str, subject: str, line: Any) -> None:
        if line is None or shapely.is_empty(line):
            return
        rows.append(
            {
                "rule_id": rule_id,
                "distance_ft": distance_ft,
                "label": label,
                "citation": ruleset.citation(rule_id),
                "subject": subject,
                "geometry": line,
            }
        )

    d = params.property_line_ft
    inner = shapely.boundary(shapely.buffer(lot, -d, quad_segs=QUAD_SEGS))
    add("SW205", d, f"{d:g} ft from the lot line", str(parcel_id), inner)

    def rings(  # noqa: PLR0917 (a local helper called five times below)
        kind: str,
        distance_ft: float,
        id_column: str,
        what: str,
        rule_id: str,
        where: Callable[[gpd.GeoDataFrame], Any] | None = None,
    ) -> None:
        frame = layers.get(kind)
        if frame is None or len(frame) == 0:
            return
        if where is not None:
            frame = frame[where(frame)]
        geoms = frame.geometry.to_numpy()
        near = shapely.dwithin(geoms, lot, distance_ft)
        frame, geoms = frame[near], geoms[near]
        if len(frame) == 0:
            return
        ring = shapely.boundary(shapely.buffer(geoms, distance_ft, quad_segs=QUAD_SEGS))
        clipped = shapely.intersection(ring, lot)
        ids = frame[id_column].astype(str).to_numpy() if id_column in frame else [""] * len(frame)
        for fid, line in zip(ids, clipped, strict=True):
            label = f"{distance_ft:g} ft from " + what.format(id=fid)
            add(rule_id, distance_ft, label, fid, line)

    def basement(frame: gpd.GeoDataFrame) -> np.ndarray:
        return np.asarray(frame["habitable_basement"].fillna(value=True).astype(bool))

    b = params.habitable_basement_ft
    rings("buildings", b, "building_id", "building {id} (habitable basement)", "SW206", basement)
    s = params.septic_upgradient_ft
    rings("septic_fields", s, "septic_id", "septic field {id} (where up-gradient)", "SW201")
    if klass == DeviceClass.VEHICLE:
        v = params.vehicle_traffic_ft
        rings("wells", v, "well_id", "well {id}", "SW202")
        rings("wetlands", v, "wetland_id", "wetland {id}", "SW202")
        rings("water_bodies", v, "water_id", "water body {id}", "SW202")
    if not rows:
        return gpd.GeoDataFrame(
            {c: pd.Series(dtype="object") for c in SETBACK_COLUMNS if c != "geometry"},
            geometry=gpd.GeoSeries([], crs=crs),
            crs=crs,
        )
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)[list(SETBACK_COLUMNS)]
