"""The siting polygons of a set of parcels, one device class or several in one pass."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd

from gis_sw.analysis.distances import grown_radius
from gis_sw.analysis.siting.areas import siting_areas_of
from gis_sw.analysis.siting.constraints import build_constraints
from gis_sw.analysis.siting.offsets import buffer_like_geos
from gis_sw.analysis.siting.records import QUAD_SEGS, SITING_COLUMNS, Constraints, DeviceClass
from gis_sw.analysis.siting.result import result_frame
from gis_sw.analysis.siting.subtract import subtract
from gis_sw.errors import LayerError, Problem
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.repair import repair_polygons
from gis_sw.ruleset import Ruleset

CLASSES = (DeviceClass.ROOF, DeviceClass.VEHICLE)


def select_parcels(layers: LayerSet, parcel_ids: list[str] | None) -> gpd.GeoDataFrame:
    """Return the parcels to site, by id (default: all).

    Raises
    ------
    LayerError
        When there is no parcels layer or a requested parcel id is unknown.
    """
    parcels = layers.get("parcels")
    if parcels is None:
        raise LayerError(
            Problem("parcels", "no parcels layer was provided", "add a parcels layer to --layers")
        )
    if parcel_ids is None:
        return parcels.reset_index(drop=True)
    ids = parcels["parcel_id"].astype(str)
    wanted = [str(p) for p in parcel_ids]
    unknown = sorted(set(wanted) - set(ids))
    if unknown:
        raise LayerError(
            Problem(
                "parcels",
                f"no parcel with parcel_id {', '.join(unknown)}",
                "check the id against the parcels layer's parcel_id column",
            )
        )
    return parcels[ids.isin(wanted)].reset_index(drop=True)


def siting_polygons(
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    parcel_ids: list[str] | None = None,
    device_class: str = "roof",
    depth_ft: float | None = None,
    quad_segs: int = QUAD_SEGS,
) -> gpd.GeoDataFrame:
    """Return the polygon of each parcel where an infiltration device may legally go.

    Parameters
    ----------
    layers
        Town layers; ``parcels`` is required, the others are used when present.
    ruleset
        Distances come from ``ruleset.devices``.
    parcel_ids
        Parcels to site (default: every parcel, in one vectorised pass).
    device_class
        ``roof``, or ``vehicle`` for devices taking runoff from roadways, parking lots or
        driveways (adds 50 ft from wells, wetlands and water bodies).
    depth_ft
        Depth of the device bottom below ground; without it vertical separation is not
        screened and every parcel is ``review``.
    quad_segs
        Segments per quarter circle of the buffers.

    Returns
    -------
    GeoDataFrame
        :data:`SITING_COLUMNS`: ``outcome`` is ``pass`` (some place is allowed and every
        layer was there), ``fail`` (no place is allowed, and no missing data took one away)
        or ``review`` (a needed layer or value was missing where it mattered: ``reason``
        names it; the polygon then leaves out what could not be screened and ignores a
        constraint whose layer is absent).

    Raises
    ------
    LayerError
        When there is no parcels layer or a requested parcel id is unknown.
    ValueError
        For an unknown ``device_class`` or a negative ``depth_ft``.
    """
    klass = DeviceClass(device_class)
    return siting_by_class(
        layers,
        ruleset,
        parcel_ids=parcel_ids,
        device_classes=(klass,),
        depth_ft=depth_ft,
        quad_segs=quad_segs,
    )[klass]


@dataclass(frozen=True, slots=True, eq=False)
class _Lots:
    """The parcels asked for, their lots inside the property-line setback, and constraints."""

    klasses: list[DeviceClass]
    parcels: gpd.GeoDataFrame
    inner: np.ndarray
    constraints: Constraints


class _Asked(NamedTuple):
    """What the caller asked for (the keyword options of :func:`siting_by_class`)."""

    parcel_ids: list[str] | None
    device_classes: tuple[str, ...]
    depth_ft: float | None
    quad_segs: int


def _lots(layers: LayerSet, ruleset: Ruleset, asked: _Asked) -> _Lots | None:
    """Return what every class's siting starts from, or None when there is no parcel."""
    parcel_ids, device_classes, depth_ft, quad_segs = asked
    klasses = [DeviceClass(c) for c in device_classes]
    if depth_ft is not None and depth_ft < 0:
        raise ValueError(f"depth_ft = {depth_ft} should be 0 or more (feet below ground)")
    parcels = select_parcels(layers, parcel_ids)
    # an invalid lot (a ring touching itself around a cut-out) is repaired ring by ring
    # before any buffer, so its cut-out keeps its lot lines (gis_sw.layers.repair)
    lots = repair_polygons(np.asarray(parcels.geometry.to_numpy(), dtype=object))
    if len(lots) == 0:
        return None
    constraints = build_constraints(
        layers,
        ruleset,
        lots,
        vehicle=DeviceClass.VEHICLE in klasses,
        depth_ft=depth_ft,
        quad_segs=quad_segs,
    )
    setback = grown_radius(ruleset.devices.property_line_ft, quad_segs)
    inner = buffer_like_geos(lots, -setback, quad_segs)  # convex lots in numpy
    return _Lots(klasses=klasses, parcels=parcels, inner=inner, constraints=constraints)


def _empty(klasses: list[DeviceClass], crs: object) -> dict[DeviceClass, gpd.GeoDataFrame]:
    return {
        k: gpd.GeoDataFrame(
            {c: pd.Series(dtype="object") for c in SITING_COLUMNS if c != "geometry"},
            geometry=gpd.GeoSeries([], crs=crs),
            crs=crs,
        )
        for k in klasses
    }


def siting_by_class(
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    parcel_ids: list[str] | None = None,
    device_classes: tuple[str, ...] = CLASSES,
    depth_ft: float | None = None,
    quad_segs: int = QUAD_SEGS,
) -> dict[DeviceClass, gpd.GeoDataFrame]:
    """Return :func:`siting_polygons` for several device classes in one pass.

    The constraints every class shares are built and subtracted once; the vehicle class
    then subtracts its own 50-ft zones from the roof polygon (about half the work of two
    separate calls).  Parameters, result columns and errors are those of
    :func:`siting_polygons`, with ``device_classes`` the classes wanted.

    Returns
    -------
    dict
        One GeoDataFrame per class asked for.

    Raises
    ------
    LayerError
        When there is no parcels layer or a requested parcel id is unknown.
    ValueError
        For an unknown device class or a negative ``depth_ft``.
    """
    start = _lots(layers, ruleset, _Asked(parcel_ids, device_classes, depth_ft, quad_segs))
    if start is None:
        return _empty([DeviceClass(c) for c in device_classes], ruleset.working_crs)
    inner, constraints = start.inner, start.constraints
    roof = subtract(inner, constraints.cuts(vehicle_only=False))
    allowed = {DeviceClass.ROOF: roof}
    if DeviceClass.VEHICLE in start.klasses:
        allowed[DeviceClass.VEHICLE] = subtract(roof, constraints.cuts(vehicle_only=True))
    ids = start.parcels["parcel_id"].astype(str).to_numpy()
    return {
        klass: result_frame(
            ids,
            inner,
            allowed[klass],
            constraints.parts_for(klass),
            constraints.notes_for(klass),
            klass=klass,
            depth_ft=depth_ft,
            setback_ft=ruleset.devices.property_line_ft,
            crs=ruleset.working_crs,
        )
        for klass in start.klasses
    }


def siting_areas(
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    parcel_ids: list[str] | None = None,
    device_classes: tuple[str, ...] = CLASSES,
    depth_ft: float | None = None,
    quad_segs: int = QUAD_SEGS,
) -> dict[DeviceClass, np.ndarray]:
    """Return the area of each parcel's siting polygon, without drawing the polygon.

    The same constraints as :func:`siting_by_class`, measured instead of drawn
    (:mod:`gis_sw.analysis.siting.areas`): equal to its unrounded ``area_sqft`` to
    floating-point rounding, in a fraction of the time.  The townwide batch
    (:mod:`gis_sw.batch.parcels`) calls it on each chunk with its halo.  Parameters and
    errors are those of :func:`siting_by_class`.

    Returns
    -------
    dict
        One float array per class asked for, in the parcels' order (NaN for a parcel
        without geometry).

    Raises
    ------
    LayerError
        As :func:`siting_by_class`: no parcels layer, or an unknown parcel id.
    ValueError
        As :func:`siting_by_class`: an unknown device class, or a depth below 0.
    """
    start = _lots(layers, ruleset, _Asked(parcel_ids, device_classes, depth_ft, quad_segs))
    if start is None:
        return {DeviceClass(c): np.zeros(0) for c in device_classes}
    vehicle = DeviceClass.VEHICLE in start.klasses
    roof, vehicle_area = siting_areas_of(
        start.inner,
        start.constraints.cuts(vehicle_only=False),
        start.constraints.cuts(vehicle_only=True) if vehicle else None,
    )
    out = {DeviceClass.ROOF: roof}
    if vehicle_area is not None:
        out[DeviceClass.VEHICLE] = vehicle_area
    return {k: out[k] for k in start.klasses}
