"""What Chapter 183 asks of development on each parcel: one row of figures per parcel.

Per parcel (all areas in sq ft of the working CRS, rounded to 0.01):

``parcel_ids``
    Every id of the rows with this parcel's exact geometry (a condominium stack drawn once
    per unit), ``;``-joined: the lot is screened once and counted once
    (:mod:`gis_sw.batch.prepare`); the parcel's own id for most parcels.

``zones`` / ``zone_main``
    Every zoning district covering at least ``[batch] min_zone_part_sqft`` of the parcel
    (``;``-joined, sorted) and the one covering most of it.
``low_zone_area_sqft`` / ``permit_threshold_sqft``
    § 183-12A: 250 sq ft of disturbance in all zones, 100 sq ft in R-10
    (``ruleset.zones.low_threshold_zones``).  A parcel any part of which lies in a
    low-threshold zone gets the low threshold: a disturbance on that part triggers the
    permit at 100 sq ft.  No zoning on the parcel: NaN and ``screen = review``.
``wetland_sqft``, ``wetland_adjacent_sqft``, ``water_body_sqft``, ``floodplain_sqft``
    Mapped resources on the parcel (overlaps counted once).  The wetland adjacent area is
    the band within ``ruleset.resources.wetland_adjacent_area_ft`` of a wetland, wetland
    excluded: the union of :func:`gis_sw.analysis.bands.adjacent_buffers` inside the
    parcel, measured by :func:`gis_sw.analysis.bands.band_left` from the wetland pieces
    within the band width of it alone.
``constrained_sqft`` / ``constrained_fraction``
    The union of wetland, wetland adjacent area, water body and floodplain on the parcel:
    the band's area plus the water body and floodplain parts outside the band
    (:func:`gis_sw.batch.areas.constrained_area`).
``wells_near`` / ``septic_fields_near``
    Wells and septic fields on the parcel or within ``near_ft`` of it
    (``ruleset.devices.vehicle_traffic_ft``, 50 ft), by exact distance.
``roof_siting_sqft`` / ``vehicle_siting_sqft``
    Area of the siting polygon of :func:`gis_sw.analysis.siting.siting_by_class` (the
    function behind ``gis-sw siting``), run on each chunk with its halo: the parcel at
    least ``property_line_ft`` inside its lot lines (§ 183-12C(2)(c)[6]), outside building
    footprints, at least ``habitable_basement_ft`` from buildings with a habitable basement
    (unknown counts as yes) ([7]) and ``septic_upgradient_ft`` from septic fields ([3]); a
    vehicle-traffic device also at least ``vehicle_traffic_ft`` from wells, wetlands and
    water bodies ([3]).  The batch reads vector layers only and has no device depth, so
    every side of a septic field counts as up-gradient (as ``gis-sw siting`` does without
    a DEM) and vertical separation is not screened: ``gis-sw siting --depth-ft`` with the
    DEM and rasters gives the full answer for one lot.
``no_vehicle_site``
    Less than ``[batch] min_siting_area_sqft`` is left for a vehicle-traffic device.
``mostly_constrained``
    ``constrained_fraction`` above ``[batch] mostly_constrained_fraction`` (0.5).
``screen``
    ``review`` (data missing or geometry unusable), ``mostly_constrained``,
    ``no_vehicle_site``, ``constraints`` (some resource on or near the parcel) or ``clear``.
``result``
    The same in the outcome vocabulary of findings, for the overview map and summary
    (see :func:`_result`).

The three ``[batch]`` numbers are screening choices, not law; a ruleset may set them in a
``[batch]`` table, else the defaults of :class:`BatchParams` apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.bands import band_left
from gis_sw.analysis.distances import grown_radius
from gis_sw.analysis.overlay import area_by_key
from gis_sw.analysis.siting import DeviceClass, siting_areas
from gis_sw.batch.areas import (
    FloatArray,
    GeomArray,
    IntArray,
    constrained_area,
    count_within,
)
from gis_sw.batch.chunks import Chunk
from gis_sw.batch.coverage import outside_coverage
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

BUFFER_QUAD_SEGS = 32
"""Segments per quarter circle of the batch's siting buffers (the wetland adjacent area is
:func:`gis_sw.analysis.bands.adjacent_buffers`, exact to 0.01 sq ft).  Siting buffers use
the radius grown by the chord error
(:func:`gis_sw.analysis.distances.grown_radius`), so no point closer than the setback is
ever counted as siting room; at 32 segments the growth is 0.0151 ft at 50 ft, and the area
a few sq ft smaller than ``gis-sw siting``'s 128 segments."""

RESULT_COLUMNS: tuple[str, ...] = (
    "row",
    "parcel_id",
    "parcel_ids",
    "zones",
    "zone_main",
    "area_sqft",
    "low_zone_area_sqft",
    "permit_threshold_sqft",
    "wetland_sqft",
    "wetland_adjacent_sqft",
    "water_body_sqft",
    "floodplain_sqft",
    "constrained_sqft",
    "constrained_fraction",
    "near_ft",
    "wells_near",
    "septic_fields_near",
    "roof_siting_sqft",
    "vehicle_siting_sqft",
    "no_vehicle_site",
    "mostly_constrained",
    "screen",
    "result",
    "notes",
)


@dataclass(frozen=True, slots=True)
class BatchParams:
    """Screening choices of the batch run (not law), from the ruleset's ``[batch]`` table."""

    mostly_constrained_fraction: float = 0.5
    min_siting_area_sqft: float = 1.0
    min_zone_part_sqft: float = 1.0

    @classmethod
    def from_ruleset(cls, ruleset: Ruleset) -> BatchParams:
        """Return the parameters of a ruleset's ``[batch]`` table (defaults elsewhere)."""
        table = ruleset.section("batch")
        defaults = cls()
        return cls(
            **{
                name: float(table.get(name, getattr(defaults, name)))
                for name in (
                    "mostly_constrained_fraction",
                    "min_siting_area_sqft",
                    "min_zone_part_sqft",
                )
            }
        )


def _geoms(frame: gpd.GeoDataFrame | None) -> GeomArray:
    if frame is None or len(frame) == 0:
        return np.zeros(0, dtype=object)
    return np.asarray(frame.geometry.to_numpy(), dtype=object)


def _keys(frame: gpd.GeoDataFrame | None) -> IntArray:
    if frame is None or len(frame) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(frame.index.to_numpy(), dtype=np.int64)


def _series(geoms: GeomArray) -> gpd.GeoSeries:
    return gpd.GeoSeries(geoms, index=pd.RangeIndex(len(geoms)))


def _area_inside(
    parcels: GeomArray, features: GeomArray, *, pieces: bool = True
) -> tuple[FloatArray, GeomArray]:
    """Return each parcel's area inside the union of ``features``, and that part.

    Overlaps are counted once; the part is ``None`` where there is none.
    """
    area = np.zeros(len(parcels), dtype=np.float64)
    piece: GeomArray = np.full(len(parcels), None, dtype=object)
    if len(features) == 0:
        return area, piece
    parts = area_by_key(
        _series(parcels), gpd.GeoDataFrame(geometry=features), None, keep_geometry=pieces
    )
    at = parts["subject"].to_numpy(dtype=np.int64)
    area[at] = parts["area_sqft"].to_numpy()
    if pieces:
        piece[at] = parts["geometry"].to_numpy()
    return area, piece


def _buffer(geoms: GeomArray, distance_ft: float, *, grow: bool = True) -> GeomArray:
    radius = grown_radius(distance_ft, BUFFER_QUAD_SEGS) if grow else distance_ft
    return np.asarray(shapely.buffer(geoms, radius, quad_segs=BUFFER_QUAD_SEGS), dtype=object)


def _adjacent(
    parcels: GeomArray,
    wetlands: gpd.GeoDataFrame | None,
    ruleset: Ruleset,
    left_over: list[GeomArray],
) -> FloatArray:
    """Return each parcel's band area, wetland in (NaN without wetlands).

    What the band leaves of each parcel (:func:`gis_sw.analysis.bands.band_left`) is
    appended to ``left_over``, for the constrained share.
    """
    if wetlands is None:
        return np.full(len(parcels), np.nan)
    width = ruleset.resources.wetland_adjacent_area_ft
    area, left = band_left(parcels, _geoms(wetlands), _keys(wetlands), width)
    left_over.append(left)  # for the constrained share
    return area


def _zones(
    parcels: GeomArray, zoning: gpd.GeoDataFrame, ruleset: Ruleset, params: BatchParams
) -> pd.DataFrame:
    column = ruleset.zones.zone_column if ruleset.zones.zone_column in zoning else "zone"
    named = gpd.GeoDataFrame(
        {"zone": zoning[column].astype(str).to_numpy(dtype=object)},
        geometry=zoning.geometry.to_numpy(),
    )
    parts = area_by_key(_series(parcels), named, "zone", dissolve=False)
    parts = parts.rename(columns={"subject": "parcel", "key": "label"})
    parts = parts[parts["area_sqft"] >= params.min_zone_part_sqft]
    parts = parts.sort_values(["parcel", "label"], kind="stable")
    n = len(parcels)
    zones = np.full(n, None, dtype=object)
    main = np.full(n, None, dtype=object)
    low = np.zeros(n, dtype=np.float64)
    if len(parts):
        pos = parts["parcel"].to_numpy()
        labels = parts["label"].to_numpy(dtype=object)
        counts = np.bincount(pos, minlength=n)
        single = counts[pos] == 1
        zones[pos[single]] = labels[single]
        if (~single).any():
            multi = parts[~single].astype({"label": object})
            joined = multi.groupby("parcel", sort=True)["label"].agg(";".join)
            zones[joined.index.to_numpy()] = joined.to_numpy()
        biggest = parts.sort_values(["parcel", "area_sqft", "label"], ascending=[True, False, True])
        first = biggest.drop_duplicates("parcel")
        main[first["parcel"].to_numpy()] = first["label"].to_numpy()
        codes, names = pd.factorize(parts["label"])  # each zone name read once, not per part
        in_low = parts[np.r_[ruleset.low_threshold_mask(names), False][codes]]
        low_sum = in_low.groupby("parcel")["area_sqft"].sum()
        low[low_sum.index.to_numpy()] = low_sum.to_numpy()
    return pd.DataFrame({"zones": zones, "zone_main": main, "low_zone_area_sqft": low})


def _siting(chunk: Chunk, ruleset: Ruleset) -> tuple[FloatArray, FloatArray]:
    """Return the roof and vehicle siting areas of the chunk's parcels.

    The areas of the siting polygons of :func:`gis_sw.analysis.siting.siting_by_class`,
    measured by :func:`gis_sw.analysis.siting.siting_areas` on the chunk and its halo
    (vector layers only, no device depth: see the module docstring).
    """
    # the chunk's frames as they are: siting selects the parcels with a new RangeIndex
    # itself (gis_sw.analysis.siting.polygons.select_parcels), a copy here was a second one
    layers = LayerSet(
        crs=ruleset.working_crs,
        vectors={"parcels": chunk.parcels, **chunk.context},
    )
    areas = siting_areas(layers, ruleset, quad_segs=BUFFER_QUAD_SEGS)
    roof, vehicle = (
        np.nan_to_num(areas[k].astype(np.float64)) for k in (DeviceClass.ROOF, DeviceClass.VEHICLE)
    )
    return roof, vehicle


def _threshold(out: pd.DataFrame, ruleset: Ruleset) -> np.ndarray:
    """Set ``permit_threshold_sqft`` (NaN without zoning); return the rows with no zone."""
    permit = ruleset.permit
    out["permit_threshold_sqft"] = np.where(
        out["low_zone_area_sqft"].to_numpy() > 0,
        permit.threshold_low_zone_sqft,
        permit.threshold_any_zone_sqft,
    )
    no_zone = out["zones"].isna().to_numpy()
    out.loc[no_zone, "permit_threshold_sqft"] = np.nan
    return no_zone


def _near_counts(
    out: pd.DataFrame, ctx: Mapping[str, gpd.GeoDataFrame], geoms: GeomArray, near_ft: float
) -> None:
    """Set ``wells_near`` and ``septic_fields_near`` (NA when the layer is missing)."""
    for kind, column in (("wells", "wells_near"), ("septic_fields", "septic_fields_near")):
        layer = ctx.get(kind)
        if layer is None:
            out[column] = pd.array([pd.NA] * len(geoms), dtype="Int64")
        else:
            counts = count_within(geoms, _geoms(layer), _keys(layer), distance_ft=near_ft)
            out[column] = pd.array(counts, dtype="Int64")


def _row_notes(
    frame: gpd.GeoDataFrame,
    unusable: np.ndarray,
    no_zone: np.ndarray,
    notes: dict[int, list[str]],
) -> None:
    """Add each row's own remarks (unusable, no zone, repaired, duplicate, same geometry)."""
    for i in np.flatnonzero(unusable):
        notes.setdefault(int(i), []).append("parcel has no usable geometry")
    for i in np.flatnonzero(no_zone & ~unusable):
        notes.setdefault(int(i), []).append("no zoning district covers the parcel")
    flags = (
        ("_repaired", "invalid geometry repaired with make_valid"),
        ("_duplicate", "parcel_id is not unique in the parcel layer"),
    )
    for column, remark in flags:
        if column in frame:
            for i in np.flatnonzero(frame[column].to_numpy()):
                notes.setdefault(int(i), []).append(remark)
    if "parcel_ids" in frame:
        own = frame["parcel_id"].astype(str).to_numpy()
        for i in np.flatnonzero(frame["parcel_ids"].astype(str).str.contains(";").to_numpy()):
            others = [p for p in str(frame["parcel_ids"].iloc[i]).split(";") if p != own[i]]
            notes.setdefault(int(i), []).append(
                f"same geometry as parcel(s) {', '.join(others)}: screened once"
            )


def screen_chunk(chunk: Chunk, ruleset: Ruleset, *, quick: bool = False) -> pd.DataFrame:
    """Screen the parcels of one chunk.

    With ``quick``, only the zones, threshold, resource areas and nearby counts are
    computed; the wetland adjacent area, constrained share and siting areas are NaN.

    Returns
    -------
    DataFrame
        Columns :data:`RESULT_COLUMNS`, one row per chunk parcel, ordered by ``row``.
    """
    params = BatchParams.from_ruleset(ruleset)
    frame = chunk.parcels
    geoms = _geoms(frame).copy()
    n = len(geoms)
    unusable = unlocated(geoms)
    geoms[unusable] = None
    ctx = chunk.context
    notes: dict[int, list[str]] = {}  # only the rows with a remark of their own
    everywhere: list[str] = []  # remarks that hold for every row of the chunk
    missing_layers = sorted(
        {"zoning", "wetlands", "water_bodies", "floodplain", "wells", "septic_fields", "buildings"}
        - set(chunk.present)
    )
    out = pd.DataFrame(
        {
            "row": chunk.rows,
            "parcel_id": frame["parcel_id"].astype(object).to_numpy(),
            "parcel_ids": (frame["parcel_ids"] if "parcel_ids" in frame else frame["parcel_id"])
            .astype(object)
            .to_numpy(),
            "area_sqft": np.nan_to_num(shapely.area(geoms)),
        }
    )
    if "zoning" in ctx:
        out = out.join(_zones(geoms, ctx["zoning"], ruleset, params))
    else:
        out["zones"], out["zone_main"], out["low_zone_area_sqft"] = None, None, 0.0
    no_zone = _threshold(out, ruleset)

    pieces: list[GeomArray] = []

    def layer_area(kind: str, features: GeomArray | None = None) -> FloatArray:
        layer = ctx.get(kind)
        if layer is None:
            return np.full(n, np.nan)
        area, piece = _area_inside(
            geoms, _geoms(layer) if features is None else features, pieces=not quick
        )
        pieces.append(piece)
        return area

    out["wetland_sqft"] = layer_area("wetlands")
    pieces.clear()  # the wetland itself lies inside its adjacent area
    left_over: list[GeomArray] = []  # what the band leaves of each parcel
    band = np.full(n, np.nan)
    if quick:
        out["wetland_adjacent_sqft"] = np.nan
    else:
        band = _adjacent(geoms, ctx.get("wetlands"), ruleset, left_over)
        out["wetland_adjacent_sqft"] = np.maximum(band - out["wetland_sqft"].to_numpy(), 0.0)
    out["water_body_sqft"] = layer_area("water_bodies")
    out["floodplain_sqft"] = layer_area("floodplain")
    if quick:
        out["constrained_sqft"] = np.nan
    else:
        # the band's area plus the pieces already cut outside it (one overlay at most)
        left = left_over[0] if left_over else None
        out["constrained_sqft"] = constrained_area(band, left, pieces)
    area = out["area_sqft"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        fraction = np.where(area > 0, out["constrained_sqft"].to_numpy() / area, np.nan)
    out["constrained_fraction"] = np.round(fraction, 4)
    near_ft = ruleset.devices.vehicle_traffic_ft
    out["near_ft"] = near_ft
    _near_counts(out, ctx, geoms, near_ft)
    if quick:
        roof = vehicle = np.full(n, np.nan)
        everywhere.append("quick run: no siting, adjacent area or constrained share")
    else:
        roof, vehicle = _siting(chunk, ruleset)
    out["roof_siting_sqft"] = roof
    out["vehicle_siting_sqft"] = vehicle
    area_columns = [
        c for c in RESULT_COLUMNS if c.endswith("_sqft") and c != "permit_threshold_sqft"
    ]
    out[area_columns] = out[area_columns].round(2)
    out.loc[unusable, ["roof_siting_sqft", "vehicle_siting_sqft"]] = np.nan
    out["no_vehicle_site"] = out["vehicle_siting_sqft"].to_numpy() < params.min_siting_area_sqft
    out["mostly_constrained"] = (
        out["constrained_fraction"].to_numpy() > params.mostly_constrained_fraction
    )
    _row_notes(frame, unusable, no_zone, notes)
    if missing_layers:
        everywhere.append(f"layers not provided: {', '.join(missing_layers)}")
    uncovered = outside_coverage(chunk, geoms, unusable, notes)
    out["screen"] = _screen_class(out, unusable | no_zone | uncovered, bool(missing_layers))
    out["result"] = _result(out)
    text = np.full(n, "; ".join(everywhere), dtype=object)
    for at, remarks in notes.items():
        text[at] = "; ".join(remarks + everywhere)
    out["notes"] = text
    return out[list(RESULT_COLUMNS)].reset_index(drop=True)


def _result(out: pd.DataFrame) -> np.ndarray:
    """Return the parcel's screening result in the vocabulary of findings (for maps and summary).

    ``review`` when data is missing; ``required`` when a mapped resource lies on the parcel
    (§ 183-12C(3)(a)[5]: the plans must show it, and other chapters apply, see SW106);
    ``info`` when only wells or septic fields are near or no vehicle-traffic device fits;
    ``pass`` otherwise.
    """
    resources = (
        out[["wetland_sqft", "wetland_adjacent_sqft", "water_body_sqft", "floodplain_sqft"]]
        .fillna(0)
        .to_numpy()
        > 0
    ).any(axis=1)
    screen = out["screen"].to_numpy()
    return np.select(
        [screen == "review", resources, screen != "clear"],
        ["review", "required", "info"],
        default="pass",
    ).astype(object)


def _screen_class(out: pd.DataFrame, review: np.ndarray, layers_missing: bool) -> np.ndarray:
    has_resource = (
        (
            out[["wetland_sqft", "wetland_adjacent_sqft", "water_body_sqft", "floodplain_sqft"]]
            .fillna(0)
            .to_numpy()
            > 0
        ).any(axis=1)
        | (out["wells_near"].fillna(0).to_numpy() > 0)
        | (out["septic_fields_near"].fillna(0).to_numpy() > 0)
    )
    return np.select(
        [
            review | layers_missing,
            out["mostly_constrained"].to_numpy(),
            out["no_vehicle_site"].to_numpy(),
            has_resource,
        ],
        ["review", "mostly_constrained", "no_vehicle_site", "constraints"],
        default="clear",
    ).astype(object)
