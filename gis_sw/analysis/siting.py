"""Where on a parcel an infiltration device may legally go, for every parcel in one pass.

For each parcel the allowed polygon is::

    parcel eroded by the property-line setback (10 ft, § 183-12C(2)(c)[6])
      - 20 ft around buildings with a habitable basement or below-ground storage ([7];
        unknown counts as one; structures of 100 sq ft or less are not buildings, § 183-6:
        see gis_sw.analysis.buildings)
      - 50 ft around wells, wetlands, water bodies and streams (vehicle class only, [3])
      - the part within 20 ft of a septic field that is up-gradient of it ([3]): DEM cells
        not more than ``upgradient_flat_tolerance_ft`` below the field's lowest ground
        cell (up-gradient, or flat within the DEM's resolution: SW201's ``review``)
      - raster cells where a device ``depth_ft`` deep would not keep 2 ft above seasonal
        high groundwater or bedrock ([4]); outside the rasters nothing is allowed
      - the footprints of buildings and septic fields themselves (no device goes inside one)

How it stays exact and fast:

- Every circular arc is a buffer whose radius is grown by the chord error
  (:func:`gis_sw.analysis.distances.grown_radius`), so no chord lets a point closer than the
  setback through; the parcel setback is a negative buffer with the same grown radius.
  With ``quad_segs=128`` the growth is under 0.001 ft for 50 ft, so areas are exact to well
  under a square foot on a lot.
- All constraints (buffers, polygonised raster cells) go into one array and one STRtree;
  one ``query`` pairs them with the parcels, and vectorised ``difference`` calls remove
  them, one round per rank of part (see :func:`_subtract`).  No per-parcel Python loop.
- A parcel whose parts all lie strictly inside it, apart from each other (a prepared
  ``contains_properly`` test, as the batch's overlays use), gets them as holes without any
  overlay (:func:`_holes_only`); a footprint inside its own basement zone and a septic
  field inside its whole zone are not subtracted twice.
- :func:`siting_by_class` builds the shared constraints once and cuts the vehicle zones
  from the roof polygon.  The townwide batch calls it on each chunk with its halo (32
  segments per quarter circle); each parcel's parts are taken in an order fixed by their
  geometry, so a chunked run equals one piece.
- Septic lows come from one labelled rasterisation of all fields (``np.minimum.at``);
  the threshold raster burns each field's 20-ft zone with its low, lowest last, so a cell
  near two fields is judged against the lower (stricter) one.

The up-gradient reference is the field's lowest ground cell over the whole field, which is
at or below the low of the part within 20 ft that SW201 uses, and both compare ground with
ground by the same rule (:func:`gis_sw.analysis.devices.up_gradient`): a place the siting
polygon allows always passes SW201 on the same DEM, whatever the device's depth.

An invalid parcel is repaired ring by ring first (:mod:`gis_sw.layers.repair`): a lot whose
ring touches itself around a cut-out keeps the cut-out and its lot lines.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from enum import StrEnum

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from affine import Affine
from rasterio import features

from gis_sw.analysis.buildings import BASEMENT_COLUMNS, basement_status, is_building
from gis_sw.analysis.devices import ground_difference_ft, up_gradient
from gis_sw.analysis.distances import grown_radius
from gis_sw.analysis.infiltration import OPTIONAL_WATER
from gis_sw.errors import LayerError, Problem
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.raster import RasterLayer, RasterMode
from gis_sw.layers.repair import repair_polygons
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

QUAD_SEGS = 128
"""Segments per quarter circle of every buffer (growth under 0.001 ft at 50 ft)."""

SITING_COLUMNS = (
    "parcel_id",
    "device_class",
    "depth_ft",
    "area_sqft",
    "outcome",
    "reason",
    "geometry",
)


class DeviceClass(StrEnum):
    """Which setbacks apply: roof runoff, or runoff from roadways, parking and driveways."""

    ROOF = "roof"
    VEHICLE = "vehicle"


def _buffer(geoms: np.ndarray, radius_ft: float, quad_segs: int) -> np.ndarray:
    return np.asarray(
        shapely.buffer(geoms, grown_radius(radius_ft, quad_segs), quad_segs=quad_segs),
        dtype=object,
    )


def _window(
    raster: RasterLayer, bounds: tuple[float, float, float, float]
) -> tuple[slice, slice, Affine]:
    """Rows and columns of ``raster`` covering ``bounds`` (clipped), and their transform."""
    minx, miny, maxx, maxy = bounds
    inv = ~raster.transform
    c0, r0 = inv @ (minx, maxy)
    c1, r1 = inv @ (maxx, miny)
    nrows, ncols = raster.shape
    col_lo = min(max(math.floor(min(c0, c1)) - 1, 0), ncols)
    col_hi = max(min(math.ceil(max(c0, c1)) + 1, ncols), col_lo)
    row_lo = min(max(math.floor(min(r0, r1)) - 1, 0), nrows)
    row_hi = max(min(math.ceil(max(r0, r1)) + 1, nrows), row_lo)
    transform = raster.transform @ Affine.translation(col_lo, row_lo)
    return slice(row_lo, row_hi), slice(col_lo, col_hi), transform


def _polygonise(mask: np.ndarray, transform: Affine) -> np.ndarray:
    """Polygons of the True cells of ``mask`` (connected cells merged, exact cell edges)."""
    if mask.size == 0 or not mask.any():
        return np.empty(0, dtype=object)
    shapes = features.shapes(mask.astype("uint8"), mask=mask, transform=transform)
    return np.array([shapely.geometry.shape(g) for g, _ in shapes], dtype=object)


def _cell_centres(shape: tuple[int, int], transform: Affine) -> tuple[np.ndarray, np.ndarray]:
    rows, cols = np.indices(shape)
    xs = transform.c + transform.a * (cols + 0.5) + transform.b * (rows + 0.5)
    ys = transform.f + transform.d * (cols + 0.5) + transform.e * (rows + 0.5)
    return xs, ys


@dataclass(frozen=True, slots=True, eq=False)
class Note:
    """A reason for ``review``.

    Attributes
    ----------
    text
        What was missing and what was done about it.
    where
        Polygons it applies to (a parcel they touch gets the note); None for every parcel.
    removes
        True when the missing data made the polygon smaller (an area left out because it
        could not be screened); False when a constraint was skipped.  A parcel left with no
        place is ``fail`` only when no removing note touches it.
    """

    text: str
    where: np.ndarray | None = None
    removes: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class _Part:
    """Constraint polygons that take area away, and how a ``fail`` reason names them.

    ``cut`` is the subset that must be subtracted (None: all of ``geoms``), when the rest
    lies inside another part already.
    """

    geoms: np.ndarray
    label: str
    vehicle_only: bool = False
    cut: np.ndarray | None = None

    @property
    def to_cut(self) -> np.ndarray:
        return self.geoms if self.cut is None else self.cut


def _near(geoms: np.ndarray, lots: np.ndarray, distance_ft: float) -> np.ndarray:
    """Mask of the features within ``distance_ft`` of any parcel (one STRtree query)."""
    if len(geoms) == 0:
        return np.zeros(0, dtype=bool)
    hit, _ = shapely.STRtree(lots).query(geoms, predicate="dwithin", distance=distance_ft)
    mask = np.zeros(len(geoms), dtype=bool)
    mask[hit] = True
    return mask


def _septic_parts(
    fields: np.ndarray,
    dem: RasterLayer | None,
    *,
    setback_ft: float,
    flat_ft: float,
    quad_segs: int,
) -> tuple[np.ndarray, list[Note]]:
    """Up-gradient parts of the septic fields' setback zones, plus their footprints.

    Up-gradient, or flat within ``flat_ft``, as SW201 reads it: a cell whose ground is not
    more than ``flat_ft`` below the field's lowest ground cell is taken out."""
    zones = _buffer(fields, setback_ft, quad_segs)
    if len(fields) == 0:
        return np.empty(0, dtype=object), []
    whole = (
        f"the whole {setback_ft:g}-ft zone around a septic field was removed: "
        "{why}, so up-gradient cannot be decided"
    )
    # a whole zone holds its field: the zones alone are the part
    if dem is None:
        return zones, [Note(whole.format(why="no DEM"), zones, removes=True)]
    minx, miny, maxx, maxy = (float(v) for v in shapely.total_bounds(zones))
    rows, cols, transform = _window(dem, (minx, miny, maxx, maxy))
    ground = dem.values[rows, cols]
    if ground.size == 0:
        note = Note(whole.format(why="the DEM does not cover it"), zones, removes=True)
        return zones, [note]
    labels = features.rasterize(
        ((g, i + 1) for i, g in enumerate(fields)),
        out_shape=ground.shape,
        transform=transform,
        fill=0,
        all_touched=True,
        dtype="int32",
    )
    lows = np.full(len(fields), np.inf)
    inside = (labels > 0) & ~np.isnan(ground)
    np.minimum.at(lows, labels[inside] - 1, ground[inside])
    known = np.isfinite(lows)
    order = np.argsort(-np.where(known, lows, -np.inf))  # unknown lows burn last
    burn = np.where(known, np.round(lows, 2), -np.inf)
    # Rasterise coarse zones that contain the exact ones (few vertices: rasterio reads
    # coordinates in Python); the exact zones clip the result below.
    coarse = _buffer(fields, setback_ft, 2)
    threshold = features.rasterize(
        ((coarse[i], float(burn[i])) for i in order),
        out_shape=ground.shape,
        transform=transform,
        fill=np.nan,
        all_touched=True,
        dtype="float64",
    )
    near = ~np.isnan(threshold)
    # only cells SW201 would pass stay: more than the flat tolerance below the field's low
    side = up_gradient(ground_difference_ft(ground, threshold), flat_ft)
    high = near & ((side >= 0) | np.isnan(ground))
    cells = _polygonise(high, transform)
    if len(cells):
        tree = shapely.STRtree(zones)
        c_idx, z_idx = tree.query(cells, predicate="intersects")
        parts = np.asarray(shapely.intersection(cells[c_idx], zones[z_idx]), dtype=object)
    else:
        parts = np.empty(0, dtype=object)
    notes: list[Note] = []
    if not known.all():
        why = "the DEM has no data under the field"
        notes.append(Note(whole.format(why=why), zones[~known], removes=True))
        parts = np.concatenate([parts, zones[~known]])
    return np.concatenate([parts, fields]), notes


def _vertical_parts(
    raster: RasterLayer,
    dem: RasterLayer | None,
    *,
    depth_ft: float,
    minimum_ft: float,
    tolerance_ft: float,
    bounds: tuple[float, float, float, float],
) -> tuple[np.ndarray, list[Note]]:
    """Cells where a device ``depth_ft`` deep would not keep ``minimum_ft`` above ``raster``;
    cells without data and everything outside the raster are left out too (with a note)."""
    rows, cols, transform = _window(raster, bounds)
    values = raster.values[rows, cols]
    if raster.mode == RasterMode.DEPTH:
        separation = values - depth_ft
    else:
        if dem is None:
            text = (
                f"no DEM: the {raster.kind} elevations cannot be compared with a depth; "
                "vertical separation not screened"
            )
            return np.empty(0, dtype=object), [Note(text)]
        xs, ys = _cell_centres(values.shape, transform)
        separation = dem.sample_xy(xs, ys) - depth_ft - values
    nodata = np.isnan(separation)
    with np.errstate(invalid="ignore"):
        bad = ~nodata & (np.round(separation, 2) < minimum_ft - tolerance_ft)
    parts = _polygonise(bad, transform)
    unknown = _polygonise(nodata, transform)
    covered = shapely.box(*raster.bounds)
    outside = shapely.difference(shapely.box(*bounds).buffer(1.0, join_style="mitre"), covered)
    if not shapely.is_empty(outside):
        unknown = np.concatenate([unknown, np.array([outside], dtype=object)])
    notes = []
    if len(unknown):
        text = (
            f"part of the parcel has no {raster.kind} data"
            + ("" if raster.mode == RasterMode.DEPTH else " or no DEM data")
            + " and was left out"
        )
        notes.append(Note(text, unknown, removes=True))
    return np.concatenate([parts, unknown]), notes


def _select_parcels(layers: LayerSet, parcel_ids: list[str] | None) -> gpd.GeoDataFrame:
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
    """The polygon of each parcel where an infiltration device may legally go.

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


def siting_by_class(
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    parcel_ids: list[str] | None = None,
    device_classes: tuple[str, ...] = (DeviceClass.ROOF, DeviceClass.VEHICLE),
    depth_ft: float | None = None,
    quad_segs: int = QUAD_SEGS,
) -> dict[DeviceClass, gpd.GeoDataFrame]:
    """:func:`siting_polygons` for several device classes in one pass.

    The constraints every class shares are built and subtracted once; the vehicle class
    then subtracts its own 50-ft zones from the roof polygon (about half the work of two
    separate calls).  The townwide batch (:mod:`gis_sw.batch.parcels`) calls this on each
    chunk with its halo.  Parameters, result columns and errors are those of
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
    klasses = [DeviceClass(c) for c in device_classes]
    if depth_ft is not None and depth_ft < 0:
        raise ValueError(f"depth_ft = {depth_ft} should be 0 or more (feet below ground)")
    params = ruleset.devices
    parcels = _select_parcels(layers, parcel_ids)
    # an invalid lot (a ring touching itself around a cut-out) is repaired ring by ring
    # before any buffer, so its cut-out keeps its lot lines (gis_sw.layers.repair)
    lots = repair_polygons(np.asarray(parcels.geometry.to_numpy(), dtype=object))
    crs = ruleset.working_crs
    if len(lots) == 0:
        return {
            k: gpd.GeoDataFrame(
                {c: pd.Series(dtype="object") for c in SITING_COLUMNS if c != "geometry"},
                geometry=gpd.GeoSeries([], crs=crs),
                crs=crs,
            )
            for k in klasses
        }
    vehicle = DeviceClass.VEHICLE in klasses
    minx, miny, maxx, maxy = (float(v) for v in shapely.total_bounds(lots))
    bounds = (minx, miny, maxx, maxy)
    # (note, vehicle only) and (part, label, vehicle only), in the order reasons list them
    notes: list[tuple[Note, bool]] = []
    parts: list[_Part] = []

    buildings = layers.get("buildings")
    if buildings is None:
        text = (
            f"no buildings layer: the {params.habitable_basement_ft:g}-ft basement "
            "setback was not applied"
        )
        notes.append((Note(text), False))
    elif len(buildings):
        near = _near(buildings.geometry.to_numpy(), lots, params.habitable_basement_ft)
        footprints = buildings.geometry.to_numpy()[near]
        qualifies, why = basement_status(buildings[near])
        # § 183-6: a structure of 100 sq ft or less is not a building; its footprint still
        # holds no device, but it has no 20-ft zone
        big = is_building(footprints, ruleset)
        unknown = big & np.array([q is None for q in qualifies], dtype=bool)
        counts = big & np.array([q is not False for q in qualifies], dtype=bool)
        zones = _buffer(footprints[counts], params.habitable_basement_ft, quad_segs)
        label = (
            f"within {params.habitable_basement_ft:g} ft of a habitable basement or "
            "below-ground storage"
        )
        parts += [
            _Part(zones, label),
            # a footprint inside its own basement zone need not be subtracted again
            _Part(footprints, "a building footprint", cut=footprints[~counts]),
        ]
        if unknown.any():
            named = {c for w in why[unknown] for c in str(w).split(" and ")}
            missing = [c for c in BASEMENT_COLUMNS if c in named]
            note = Note(
                f"a building within {params.habitable_basement_ft:g} ft has no "
                + " or no ".join(f"{c} value" for c in missing)
                + " and was treated as having a habitable basement",
                _buffer(footprints[unknown], params.habitable_basement_ft, quad_segs),
                removes=True,
            )
            notes.append((note, False))

    if vehicle:
        for kind in ("wells", "wetlands", "water_bodies", "streams"):
            layer = layers.get(kind)
            name = kind.replace("_", " ")
            if layer is None and kind in OPTIONAL_WATER:
                continue
            if layer is None:
                text = (
                    f"no {kind} layer: the {params.vehicle_traffic_ft:g}-ft vehicle "
                    f"setback from {name} was not applied"
                )
                notes.append((Note(text), True))
            elif len(layer):
                geoms = layer.geometry.to_numpy()
                geoms = geoms[_near(geoms, lots, params.vehicle_traffic_ft)]
                label = f"within {params.vehicle_traffic_ft:g} ft of {name}"
                zones = _buffer(geoms, params.vehicle_traffic_ft, quad_segs)
                parts.append(_Part(zones, label, vehicle_only=True))

    septic = layers.get("septic_fields")
    if septic is None:
        text = "no septic_fields layer: the septic up-gradient setback was not applied"
        notes.append((Note(text), False))
    elif len(septic):
        fields = septic.geometry.to_numpy()
        fields = fields[_near(fields, lots, params.septic_upgradient_ft)]
        septic_parts, septic_notes = _septic_parts(
            fields,
            layers.raster("dem"),
            setback_ft=params.septic_upgradient_ft,
            flat_ft=params.upgradient_flat_tolerance_ft,
            quad_segs=quad_segs,
        )
        label = f"up-gradient within {params.septic_upgradient_ft:g} ft of a septic field"
        parts.append(_Part(septic_parts, label))
        notes += [(n, False) for n in septic_notes]

    if depth_ft is None:
        text = "no device depth given (--depth-ft): vertical separation not screened"
        notes.append((Note(text), False))
    else:
        for kind, minimum in (
            ("seasonal_high_groundwater", params.groundwater_separation_ft),
            ("bedrock", params.bedrock_separation_ft),
        ):
            raster = layers.raster(kind)
            if raster is None:
                text = f"no {kind} raster: the {minimum:g}-ft separation was not screened"
                notes.append((Note(text), False))
                continue
            vertical, vertical_notes = _vertical_parts(
                raster,
                layers.raster("dem"),
                depth_ft=depth_ft,
                minimum_ft=minimum,
                tolerance_ft=params.distance_tolerance_ft,
                bounds=bounds,
            )
            label = f"less than {minimum:g} ft above {kind.replace('_', ' ')}"
            parts.append(_Part(vertical, label))
            notes += [(n, False) for n in vertical_notes]

    inner = np.asarray(
        shapely.buffer(
            lots, -grown_radius(params.property_line_ft, quad_segs), quad_segs=quad_segs
        ),
        dtype=object,
    )
    roof = _subtract(inner, [p.to_cut for p in parts if not p.vehicle_only])
    allowed = {DeviceClass.ROOF: roof}
    if vehicle:
        allowed[DeviceClass.VEHICLE] = _subtract(roof, [p.to_cut for p in parts if p.vehicle_only])
    ids = parcels["parcel_id"].astype(str).to_numpy()
    out = {}
    for klass in klasses:
        use = klass == DeviceClass.VEHICLE
        out[klass] = _result_frame(
            ids,
            inner,
            allowed[klass],
            [p for p in parts if use or not p.vehicle_only],
            [n for n, only in notes if use or not only],
            klass=klass,
            depth_ft=depth_ft,
            setback_ft=params.property_line_ft,
            crs=crs,
        )
    return out


def _result_frame(
    ids: np.ndarray,
    inner: np.ndarray,
    allowed: np.ndarray,
    parts: list[_Part],
    notes: list[Note],
    *,
    klass: DeviceClass,
    depth_ft: float | None,
    setback_ft: float,
    crs: object,
) -> gpd.GeoDataFrame:
    """One class's :data:`SITING_COLUMNS` from its allowed polygons, parts and notes."""
    area = shapely.area(allowed)
    has_room = np.round(area) > 0
    texts, removed = _parcel_notes(inner, notes)
    flagged = np.array([bool(t) for t in texts], dtype=bool)
    outcome = np.where(
        has_room, np.where(flagged, "review", "pass"), np.where(removed, "review", "fail")
    )
    blocking = _blocking(
        inner,
        [p.geoms for p in parts],
        [p.label for p in parts],
        np.flatnonzero(~has_room),
        setback_ft=setback_ft,
    )
    reason = [
        (text or "every setback applied")
        if ok
        else f"no place on the parcel meets every setback: {blocking[i]}"
        + (f" ({text})" if text else "")
        for i, (ok, text) in enumerate(zip(has_room, texts, strict=True))
    ]
    return gpd.GeoDataFrame(
        {
            "parcel_id": ids,
            "device_class": str(klass),
            "depth_ft": np.nan if depth_ft is None else float(depth_ft),
            "area_sqft": np.round(area, 1),
            "outcome": outcome,
            "reason": reason,
        },
        geometry=gpd.GeoSeries(allowed, crs=crs),
        crs=crs,
    )


def _blocking(
    inner: np.ndarray,
    parts: list[np.ndarray],
    labels: list[str],
    rows: np.ndarray,
    *,
    setback_ft: float,
) -> dict[int, str]:
    """For the parcels ``rows`` left with no place: what covers the rest of them."""
    out: dict[int, str] = {}
    if len(rows) == 0:
        return out
    empty = shapely.is_empty(inner[rows])
    for i in rows[empty]:
        out[int(i)] = f"no point of the lot is {setback_ft:g} ft from every lot line"
    rest = rows[~empty]
    found: dict[int, list[str]] = {int(i): [] for i in rest}
    for part, label in zip(parts, labels, strict=True):
        if len(rest) == 0 or len(part) == 0:
            continue
        hit = np.unique(shapely.STRtree(part).query(inner[rest], predicate="intersects")[0])
        for k in hit:
            if label not in found[int(rest[k])]:
                found[int(rest[k])].append(label)
    for i, names in found.items():
        out[i] = f"inside its {setback_ft:g}-ft lot-line setback the rest is " + (
            ", ".join(names) if names else "too thin to hold a device"
        )
    return out


def _subtract(inner: np.ndarray, parts: list[np.ndarray]) -> np.ndarray:
    """``inner`` minus every constraint part touching each parcel.

    One STRtree query pairs parts with parcels; then round ``j`` subtracts the ``j``-th part
    of every parcel that has one, in one vectorised ``difference``.  The number of rounds is
    the largest number of parts touching one parcel (a dozen in a town), not the number of
    parcels; on 10,000 parcels this beat a per-parcel union (``make_valid`` of a
    multipolygon, ``buffer(0)`` or a ``unary_union`` of a collection) followed by one
    difference by 1.5x to 3x.

    The parts of a parcel are taken in an order fixed by their own geometry (envelope, then
    area), not by their position in ``parts``: a parcel screened with a different set of
    neighbours (a batch chunk and its halo) gets the same polygon to the last bit.
    """
    if not parts:
        return inner
    pieces = shapely.get_parts(np.concatenate(parts))
    pieces = pieces[(shapely.get_type_id(pieces) == 3) & ~shapely.is_empty(pieces)]
    if len(pieces) == 0:
        return inner
    tree = shapely.STRtree(pieces)
    p_idx, c_idx = tree.query(inner, predicate="intersects")
    if len(p_idx) == 0:
        return inner
    box = shapely.bounds(pieces)
    size = shapely.area(pieces)
    c_of = c_idx
    order = np.lexsort((size[c_of], box[c_of, 3], box[c_of, 2], box[c_of, 1], box[c_of, 0], p_idx))
    p_idx, c_idx = p_idx[order], c_idx[order]
    out = inner.copy()
    holes = _holes_only(inner, pieces, p_idx, c_idx)
    if holes.any():
        out[holes] = _punch(inner[holes], pieces, p_idx, c_idx, holes)
        keep = ~holes[p_idx]
        p_idx, c_idx = p_idx[keep], c_idx[keep]
        if len(p_idx) == 0:
            return out
    counts = np.bincount(p_idx, minlength=len(inner))
    starts = np.cumsum(counts) - counts
    rank = np.arange(len(p_idx)) - starts[p_idx]  # position of each part within its parcel
    for j in range(int(counts.max())):
        now = rank == j
        out[p_idx[now]] = shapely.difference(out[p_idx[now]], pieces[c_idx[now]])
    return out  # overlay results of valid inputs are valid: no make_valid pass


def _holes_only(
    inner: np.ndarray, pieces: np.ndarray, p_idx: np.ndarray, c_idx: np.ndarray
) -> np.ndarray:
    """Mask of the parcels whose parts all lie strictly inside them, apart from each other,
    with no holes of their own: subtracting them only adds holes, no overlay needed (most
    lots of a town: one house and its basement zone)."""
    shapely.prepare(inner)
    fits = shapely.contains_properly(inner[p_idx], pieces[c_idx]) & (
        shapely.get_num_interior_rings(pieces[c_idx]) == 0
    )
    ok = shapely.get_type_id(inner) == 3
    ok[p_idx[~fits]] = False
    counts = np.bincount(p_idx, minlength=len(inner))
    several = np.flatnonzero(ok[p_idx] & (counts[p_idx] > 1))
    if len(several):
        owner = p_idx[several]
        mine = pieces[c_idx[several]]
        a, b = shapely.STRtree(mine).query(mine, predicate="intersects")
        clash = (a != b) & (owner[a] == owner[b])
        ok[owner[a[clash]]] = False
    ok[counts == 0] = False
    return ok


def _punch(
    shells: np.ndarray,
    pieces: np.ndarray,
    p_idx: np.ndarray,
    c_idx: np.ndarray,
    holes: np.ndarray,
) -> np.ndarray:
    """``shells`` (the parcels where ``holes``) with their parts' outlines as new holes."""
    position = np.cumsum(holes) - 1  # parcel row -> position among the punched parcels
    rings, at = shapely.get_rings(shells, return_index=True)
    mine = holes[p_idx]
    new = shapely.get_exterior_ring(pieces[c_idx[mine]])
    every = np.concatenate([rings, new])
    where = np.concatenate([at, position[p_idx[mine]]])
    order = np.argsort(where, kind="stable")  # shell first, then its holes, then the new ones
    return np.asarray(shapely.polygons(every[order], indices=where[order]), dtype=object)


def _parcel_notes(inner: np.ndarray, notes: list[Note]) -> tuple[list[str], np.ndarray]:
    """Each parcel's review reasons, and whether missing data removed area from it.

    Located notes count where they touch the parcel inside its property-line setback.
    """
    lots = inner
    texts: list[list[str]] = [[] for _ in lots]
    removed = np.zeros(len(lots), dtype=bool)
    for note in notes:
        if note.where is None:
            hits = np.arange(len(lots))
        elif len(note.where) == 0:
            continue
        else:
            hits = np.unique(shapely.STRtree(note.where).query(lots, predicate="intersects")[0])
        for i in hits:
            texts[i].append(note.text)
        if note.removes:
            removed[hits] = True
    return ["; ".join(t) for t in texts], removed
