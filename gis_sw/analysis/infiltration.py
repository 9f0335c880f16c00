"""Infiltration devices, § 183-12C(2)(c): SW201-SW210.

One row per (rule, proposal, device).  Horizontal distances are exact (STRtree ``dwithin``
candidates, then ``shapely.distance``; :mod:`gis_sw.analysis.distances`) and compared after
rounding to 0.01 ft, so exactly at the limit passes (10.00 ft) and 9.99 ft fails.  A failing
finding's geometry is the shortest line from the device to the offending feature.  Missing
layers, rasters or attributes answer ``review`` naming what is missing.

SW201 (septic up-gradient, § 183-12C(2)(c)[3]): "up-gradient" is where the device sits on
the slope relative to the treatment system, so the comparison is ground with ground: the
device's highest DEM ground cell (``ground_max_ft`` of :func:`device_frame`) against the
lowest DEM ground cell of the part of the field within 20 ft of the device.  The device's
bottom (``bottom_elevation_ft`` or ``depth_ft``) plays no part, so one device described
either way gets one answer; the septic layer carries no bottom elevation to compare
bottoms with.  Both are rounded to 0.01 ft; a difference of
``ruleset.devices.upgradient_flat_tolerance_ft`` (0.33 ft) or less either way is flat
within what the DEM resolves (one value per cell; a lidar DEM's vertical accuracy) and is
``review``, more above is ``fail``, more below ``pass``.  The siting polygon
(:mod:`gis_sw.analysis.siting`) keeps only cells that would pass.

SW206 (§ 183-12C(2)(c)[7]) measures to the town's buildings and to the proposal's own new
roofs, with a habitable basement or a below-ground storage area; unknown is ``review``
naming the attribute, and structures of 100 sq ft or less are not buildings (§ 183-6):
see :mod:`gis_sw.analysis.buildings`.

SW202 and SW208 count a ``streams`` layer (centre lines), when given, as water bodies.

SW210 is an advisory from NYS DOH 10 NYCRR Appendix 5-B, not Chapter 183: a device taking
runoff from parking lots, roadways or driveways nearer a water well than 100 ft is
``review`` (advisory), never ``fail``, so a town-law run is not failed by state guidance.
"""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.buildings import Buildings, all_buildings, building_names, proposed_roofs
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.devices import (
    device_frame,
    ground_difference_ft,
    up_gradient,
    vertical_separation,
)
from gis_sw.analysis.distances import meets_minimum, nearest, pairs_within, round_ft
from gis_sw.analysis.findings import Outcome, empty_findings, make_findings
from gis_sw.layers.raster import RasterLayer

FEATURE_LAYERS: dict[str, tuple[str, str]] = {
    "wells": ("well_id", "well"),
    "wetlands": ("wetland_id", "wetland"),
    "water_bodies": ("water_id", "water body"),
    "streams": ("stream_id", "stream"),
}
"""Layer kind -> (id column, noun for messages)."""

OPTIONAL_WATER = frozenset({"streams"})
"""Feature layers that add to the water bodies when given and are never "missing": the
``water_bodies`` polygons are the layer the checks need; a town that also maps
watercourses as centre lines gives them as ``streams``."""


def _ft(value: float) -> str:
    return f"{value:.2f} ft"


def _limit(value: float) -> str:
    return f"{value:g} ft"


def feature_names(frame: gpd.GeoDataFrame, kind: str) -> np.ndarray:
    """A readable name per feature: its id, or ``<noun> #<row>`` where it has none."""
    column, noun = FEATURE_LAYERS.get(kind, ("", kind))
    if kind == "septic_fields":
        column, noun = "septic_id", "septic field"
    elif kind == "buildings":
        return building_names(frame)
    ids = frame[column] if column in frame.columns else pd.Series([None] * len(frame))
    return np.array(
        [
            f"{noun} {v}" if v is not None and not pd.isna(v) else f"{noun} #{i + 1}"
            for i, v in enumerate(ids)
        ],
        dtype=object,
    )


def _nearest_of(ctx: CheckContext, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Nearest feature of layer ``kind`` to every device (computed once per run)."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        layer = ctx.layers.get(kind)
        geoms = device_frame(ctx).geometry.to_numpy()
        targets = layer.geometry.to_numpy() if layer is not None else np.empty(0, dtype=object)
        return nearest(geoms, targets)

    return ctx.memo(f"infiltration.nearest.{kind}", compute)


def _rows_of(source: np.ndarray, keep: np.ndarray, i: int) -> np.ndarray:
    """Positions of device ``i``'s kept pairs (pairs are sorted by source, then distance)."""
    lo, hi = np.searchsorted(source, [i, i + 1])
    return lo + np.flatnonzero(keep[lo:hi])


class _Rows:
    """Accumulates one finding per device, in device order."""

    def __init__(self, ctx: CheckContext, rule_id: str) -> None:
        self.ctx = ctx
        self.rule_id = rule_id
        self.devices = device_frame(ctx)
        self.cite = ctx.citation(rule_id)
        n = len(self.devices)
        self.outcome: list[str] = [str(Outcome.REVIEW)] * n
        self.message: list[str] = [""] * n
        self.measured = np.full(n, np.nan)
        self.geometry: list[shapely.Geometry] = list(self.devices.geometry.to_numpy())
        self.geoms = self.devices.geometry.to_numpy()
        self.ids = self.devices["device_id"].astype(str).to_numpy()

    def name(self, i: int) -> str:
        return f"Device {self.ids[i]}"

    def set(
        self,
        i: int,
        outcome: Outcome,
        message: str,
        *,
        measured: float = math.nan,
        geometry: shapely.Geometry | None = None,
    ) -> None:
        self.outcome[i] = str(outcome)
        self.message[i] = f"{message} ({self.cite})."
        self.measured[i] = round(measured, 2) if not math.isnan(measured) else math.nan
        if geometry is not None:
            self.geometry[i] = geometry

    def frame(self, threshold: float, unit: str = "ft") -> gpd.GeoDataFrame:
        if len(self.devices) == 0:
            return empty_findings(self.ctx.crs)
        return make_findings(
            self.rule_id,
            self.ctx.crs,
            proposal_id=self.devices["proposal_id"].astype(str).to_list(),
            subject_id=self.devices["device_id"].astype(str).to_list(),
            outcome=self.outcome,
            message=self.message,
            measured=self.measured,
            threshold=threshold,
            unit=unit,
            geometry=self.geometry,
        )


def check_septic_upgradient(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW201: no device up-gradient within 20 ft of a septic field (decided on the DEM)."""
    rows = _Rows(ctx, "SW201")
    params = ctx.ruleset.devices
    limit, tol = params.septic_upgradient_ft, params.distance_tolerance_ft
    devs = rows.devices
    septic = ctx.layers.get("septic_fields")
    if septic is None:
        for i in range(len(devs)):
            rows.set(
                i,
                Outcome.REVIEW,
                f"{rows.name(i)} cannot be checked against septic fields: no septic_fields "
                "layer was provided",
            )
        return rows.frame(limit)
    geoms = devs.geometry.to_numpy()
    fields = septic.geometry.to_numpy()
    names = feature_names(septic, "septic_fields")
    dem = ctx.layers.raster("dem")
    near_idx, near_d = _nearest_of(ctx, "septic_fields")
    pairs = pairs_within(geoms, fields, limit)
    close = ~meets_minimum(pairs.distance_ft, limit, tol)
    for i in range(len(devs)):
        mine = _rows_of(pairs.source, close, i)
        if len(mine) == 0:
            if near_idx[i] < 0:
                rows.set(i, Outcome.PASS, f"{rows.name(i)} has no septic field near it")
            else:
                rows.set(
                    i,
                    Outcome.PASS,
                    f"{rows.name(i)} is {_ft(near_d[i])} from {names[near_idx[i]]}, not "
                    f"within the {_limit(limit)} up-gradient setback",
                    measured=near_d[i],
                )
            continue
        _septic_pairs(
            rows,
            i,
            mine=mine,
            targets=pairs.target,
            distances=pairs.distance_ft,
            fields=fields,
            names=names,
            dem=dem,
        )
    return rows.frame(limit)


def _septic_pairs(
    rows: _Rows,
    i: int,
    *,
    mine: np.ndarray,
    targets: np.ndarray,
    distances: np.ndarray,
    fields: np.ndarray,
    names: np.ndarray,
    dem: RasterLayer | None,
) -> None:
    """Decide one device against the septic fields within the setback (nearest first)."""
    limit = rows.ctx.ruleset.devices.septic_upgradient_ft
    device = rows.geoms[i]
    first_t, first_d = int(targets[mine[0]]), float(distances[mine[0]])
    if dem is None:
        rows.set(
            i,
            Outcome.REVIEW,
            f"{rows.name(i)} is {_ft(first_d)} from {names[first_t]}, within "
            f"{_limit(limit)}; no DEM was provided to decide whether it is up-gradient",
            measured=first_d,
            geometry=shapely.shortest_line(device, fields[first_t]),
        )
        return
    flat_ft = rows.ctx.ruleset.devices.upgradient_flat_tolerance_ft
    ground = float(rows.devices["ground_max_ft"].iat[i])
    unknown: tuple[int, float] | None = None
    flat: tuple[int, float, float, float] | None = None
    first_low = math.nan
    for k in mine:
        t, d = int(targets[k]), float(distances[k])
        near_part = shapely.intersection(fields[t], shapely.buffer(device, limit, quad_segs=64))
        cells = dem.cells_under(near_part)
        if math.isnan(ground) or len(cells) == 0:
            unknown = unknown or (t, d)
            continue
        low = float(cells.min())
        diff = float(ground_difference_ft(ground, low))
        side = int(up_gradient(diff, flat_ft))
        if side > 0:
            rows.set(
                i,
                Outcome.FAIL,
                f"{rows.name(i)} is {_ft(d)} from {names[t]} and up-gradient of it (device "
                f"ground {ground:.2f} ft above the field's lowest ground {low:.2f} ft), "
                f"within the {_limit(limit)} setback",
                measured=d,
                geometry=shapely.shortest_line(device, fields[t]),
            )
            return
        if side == 0:
            flat = flat or (t, d, low, diff)
        elif t == first_t:
            first_low = low
    if unknown is not None:
        t, d = unknown
        rows.set(
            i,
            Outcome.REVIEW,
            f"{rows.name(i)} is {_ft(d)} from {names[t]}, within {_limit(limit)}; the DEM "
            "has no data under the device or the field, so up-gradient cannot be decided",
            measured=d,
            geometry=shapely.shortest_line(device, fields[t]),
        )
        return
    if flat is not None:
        t, d, low, diff = flat
        rows.set(
            i,
            Outcome.REVIEW,
            f"{rows.name(i)} is {_ft(d)} from {names[t]}, within {_limit(limit)}; device "
            f"ground {ground:.2f} ft and the field's lowest ground {low:.2f} ft differ by "
            f"{abs(diff):.2f} ft, not more than the DEM resolves ({flat_ft:.2f} ft), so "
            "up-gradient cannot be decided from the DEM",
            measured=d,
            geometry=shapely.shortest_line(device, fields[t]),
        )
        return
    rows.set(
        i,
        Outcome.PASS,
        f"{rows.name(i)} is {_ft(first_d)} from {names[first_t]} but not up-gradient of it: "
        f"device ground {ground:.2f} ft is not above the field's lowest ground {first_low:.2f} ft",
        measured=first_d,
    )


def _vehicle_flags(rows: _Rows) -> list[bool | None]:
    values = rows.devices["serves_vehicle_traffic"]
    return [None if pd.isna(v) else bool(v) for v in values]


def _near_features(
    rows: _Rows, limit: float, kinds: tuple[str, ...]
) -> tuple[list[str], list[tuple[int, float, str, shapely.Geometry | None]]]:
    """Missing feature layers, and per device the nearest well/wetland/water body closer
    than ``limit`` (index -1 when none)."""
    tol = rows.ctx.ruleset.devices.distance_tolerance_ft
    geoms = rows.devices.geometry.to_numpy()
    missing: list[str] = []
    best: list[tuple[int, float, str, shapely.Geometry | None]] = [(-1, math.inf, "", None)] * len(
        geoms
    )
    for kind in kinds:
        layer = rows.ctx.layers.get(kind)
        if layer is None:
            if kind not in OPTIONAL_WATER:
                missing.append(kind)
            continue
        features = layer.geometry.to_numpy()
        names = feature_names(layer, kind)
        pairs = pairs_within(geoms, features, limit)
        close = ~meets_minimum(pairs.distance_ft, limit, tol)
        for s, t, d in zip(
            pairs.source[close], pairs.target[close], pairs.distance_ft[close], strict=True
        ):
            if d < best[s][1]:
                best[s] = (int(t), float(d), str(names[t]), features[t])
    return missing, best


def _vehicle_rule(ctx: CheckContext, rule_id: str, limit: float, kinds: tuple[str, ...]) -> _Rows:
    rows = _Rows(ctx, rule_id)
    advisory = rule_id == "SW210"
    lead = f"{ctx.ruleset.wording('advisory_lead', 'Advisory, not town law')}: " if advisory else ""
    flags = _vehicle_flags(rows)
    missing, best = _near_features(rows, limit, kinds)
    geoms = rows.devices.geometry.to_numpy()
    nearest_ft = np.full(len(geoms), np.inf)
    for kind in kinds:
        layer = ctx.layers.get(kind)
        if layer is not None and len(geoms):
            dist = _nearest_of(ctx, kind)[1]
            nearest_ft = np.fmin(nearest_ft, np.where(np.isnan(dist), np.inf, dist))
    for i, flag in enumerate(flags):
        name = rows.name(i)
        if flag is None:
            rows.set(
                i,
                Outcome.REVIEW,
                f"{lead}{name} does not say whether it takes runoff from roadways, parking lots "
                "or other vehicle traffic areas (serves_vehicle_traffic)",
            )
            continue
        if not flag:
            rows.set(
                i,
                Outcome.PASS,
                f"{lead}{name} does not serve vehicle traffic, so the {_limit(limit)} "
                "separation does not apply",
            )
            continue
        t, d, feature, geom = best[i]
        if t >= 0:
            short = (
                f"the state's {_limit(limit)} separation"
                if advisory
                else (f"the {_limit(limit)} minimum")
            )
            rows.set(
                i,
                Outcome.REVIEW if advisory else Outcome.FAIL,
                f"{lead}{name} serves vehicle traffic and is {_ft(d)} from {feature}, less than "
                f"{short}",
                measured=d,
                geometry=shapely.shortest_line(rows.geoms[i], geom),
            )
        elif missing:
            rows.set(
                i,
                Outcome.REVIEW,
                f"{lead}{name} serves vehicle traffic; no {', '.join(missing)} layer was "
                f"provided to measure the {_limit(limit)} separation",
            )
        else:
            rows.set(
                i,
                Outcome.PASS,
                f"{lead}{name} serves vehicle traffic and has no "
                f"{' or '.join(FEATURE_LAYERS[k][1] for k in kinds)} within {_limit(limit)}",
                measured=float(nearest_ft[i]) if np.isfinite(nearest_ft[i]) else math.nan,
            )
    return rows


def check_vehicle_traffic(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW202: vehicle-traffic devices not within 50 ft of any well, wetland or water body."""
    limit = ctx.ruleset.devices.vehicle_traffic_ft
    return _vehicle_rule(ctx, "SW202", limit, tuple(FEATURE_LAYERS)).frame(limit)


def check_state_well_advisory(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW210 (advisory, NYS DOH 10 NYCRR App. 5-B): vehicle-runoff devices 100 ft from wells."""
    limit = ctx.ruleset.devices.state_well_surface_recharge_ft
    return _vehicle_rule(ctx, "SW210", limit, ("wells",)).frame(limit)


def _vertical_rule(ctx: CheckContext, rule_id: str, kind: str, minimum: float) -> gpd.GeoDataFrame:
    rows = _Rows(ctx, rule_id)
    tol = ctx.ruleset.devices.distance_tolerance_ft
    noun = "seasonal high groundwater" if kind == "seasonal_high_groundwater" else "bedrock"
    for i, sep in enumerate(vertical_separation(ctx, kind)):
        name = rows.name(i)
        if math.isnan(sep.separation_ft):
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name}: separation above {noun} cannot be measured: {sep.reason}",
            )
            continue
        ok = bool(meets_minimum(sep.separation_ft, minimum, tol))
        relation = "at least" if ok else "less than"
        rounded = float(round_ft(sep.separation_ft))
        where = "above" if rounded >= 0 else "below"
        rows.set(
            i,
            Outcome.PASS if ok else Outcome.FAIL,
            f"{name}'s bottom is {_ft(abs(rounded))} {where} {noun} (worst place, from the "
            f"{sep.source}), {relation} the {_limit(minimum)} minimum",
            measured=sep.separation_ft,
        )
    return rows.frame(minimum)


def check_groundwater_separation(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW203: device bottom at least 2 ft above seasonal high groundwater."""
    minimum = ctx.ruleset.devices.groundwater_separation_ft
    return _vertical_rule(ctx, "SW203", "seasonal_high_groundwater", minimum)


def check_bedrock_separation(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW204: device bottom at least 2 ft above bedrock."""
    minimum = ctx.ruleset.devices.bedrock_separation_ft
    return _vertical_rule(ctx, "SW204", "bedrock", minimum)


def check_property_line(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW205: at least 10 ft from every line of the device's parcel, and not across it."""
    rows = _Rows(ctx, "SW205")
    params = ctx.ruleset.devices
    limit, tol = params.property_line_ft, params.distance_tolerance_ft
    devs = rows.devices
    parcels = ctx.layers.get("parcels")
    if len(devs) == 0:
        return rows.frame(limit)
    idx = devs["parcel_index"].to_numpy()
    on = idx >= 0
    geoms = devs.geometry.to_numpy()
    dist = np.full(len(devs), np.nan)
    inside = np.zeros(len(devs), dtype=bool)
    lines = np.full(len(devs), None, dtype=object)
    if parcels is not None and on.any():
        lots = parcels.geometry.to_numpy()[idx[on]]
        edges = shapely.boundary(lots)
        dist[on] = shapely.distance(geoms[on], edges)
        inside[on] = shapely.within(geoms[on], lots)
        lines[on] = np.where(
            inside[on],
            shapely.shortest_line(geoms[on], edges),
            shapely.difference(geoms[on], lots),
        )
    ok = meets_minimum(dist, limit, tol) & inside
    parcel_ids = devs["parcel_id"].to_numpy()
    for i in range(len(devs)):
        name, parcel = rows.name(i), parcel_ids[i]
        if not on[i]:
            rows.set(i, Outcome.REVIEW, f"{name} is not on any parcel of the parcels layer")
        elif not inside[i]:
            rows.set(
                i,
                Outcome.FAIL,
                f"{name} crosses the line of parcel {parcel} onto a neighbouring lot (0.00 ft, "
                f"less than the {_limit(limit)} minimum)",
                measured=0.0,
                geometry=lines[i],
            )
        elif ok[i]:
            rows.set(
                i,
                Outcome.PASS,
                f"{name} is {_ft(dist[i])} from the line of parcel {parcel}, at least the "
                f"{_limit(limit)} minimum",
                measured=dist[i],
            )
        else:
            rows.set(
                i,
                Outcome.FAIL,
                f"{name} is {_ft(dist[i])} from the line of parcel {parcel}, less than the "
                f"{_limit(limit)} minimum",
                measured=dist[i],
                geometry=lines[i],
            )
    return rows.frame(limit)


def check_habitable_basement(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW206: at least 20 ft from a building with a habitable basement or below-ground
    storage area, the town's buildings and the proposal's own new roofs alike
    (:mod:`gis_sw.analysis.buildings`)."""
    rows = _Rows(ctx, "SW206")
    params = ctx.ruleset.devices
    limit, tol = params.habitable_basement_ft, params.distance_tolerance_ft
    geoms = rows.devices.geometry.to_numpy()
    found = all_buildings(ctx)
    if found is None:
        for i in range(len(geoms)):
            rows.set(
                i,
                Outcome.REVIEW,
                f"{rows.name(i)} cannot be checked: no buildings layer was provided",
            )
        return rows.frame(limit)
    pids = rows.devices["proposal_id"].astype(str).to_numpy()
    pairs = pairs_within(geoms, found.geoms, limit)
    owner = found.proposal_id[pairs.target]
    mine_ok = np.array(
        [o is None or o == pids[s] for o, s in zip(owner, pairs.source, strict=True)], dtype=bool
    )
    close = ~meets_minimum(pairs.distance_ft, limit, tol) & mine_ok
    no_layer = ctx.layers.get("buildings") is None
    nearest_ft = _nearest_qualifying(geoms, pids, found)
    for i in range(len(geoms)):
        name = rows.name(i)
        mine = _rows_of(pairs.source, close, i)  # nearest first
        hit = [k for k in mine if found.qualifies[pairs.target[k]] is True]
        unknown = [k for k in mine if found.qualifies[pairs.target[k]] is None]
        if hit:
            t, d = int(pairs.target[hit[0]]), float(pairs.distance_ft[hit[0]])
            rows.set(
                i,
                Outcome.FAIL,
                f"{name} is {_ft(d)} from {found.names[t]}, which has {found.why[t]}, less "
                f"than the {_limit(limit)} minimum",
                measured=d,
                geometry=shapely.shortest_line(geoms[i], found.geoms[t]),
            )
        elif unknown:
            t, d = int(pairs.target[unknown[0]]), float(pairs.distance_ft[unknown[0]])
            missing = str(found.why[t])
            verb = "are" if " and " in missing else "is"
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name} is {_ft(d)} from {found.names[t]}, whose {missing} {verb} not given; "
                f"it must be at least {_limit(limit)} away if the building has a habitable "
                "basement or below-ground storage area",
                measured=d,
                geometry=shapely.shortest_line(geoms[i], found.geoms[t]),
            )
        elif no_layer:
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name} has no new building of its proposal within {_limit(limit)}, but no "
                "buildings layer was provided to check existing ones",
            )
        else:
            rows.set(
                i,
                Outcome.PASS,
                f"{name} has no building with a habitable basement or below-ground storage "
                f"area within {_limit(limit)}",
                measured=float(nearest_ft[i]),
            )
    return rows.frame(limit)


def _nearest_qualifying(geoms: np.ndarray, pids: np.ndarray, found: Buildings) -> np.ndarray:
    """Distance from each device to the nearest building that has, or may have, a habitable
    basement or below-ground storage, of those it is measured against (town buildings, and
    new buildings of its own proposal); ``nan`` when none."""
    qualifying = np.array([q is not False for q in found.qualifies], dtype=bool)
    town = qualifying & np.array([p is None for p in found.proposal_id], dtype=bool)
    out = nearest(geoms, found.geoms[town])[1]
    roofs = np.flatnonzero(qualifying & ~town)
    if len(roofs) and len(geoms):
        # every (device, roof of the same proposal) pair, by a join on the proposal id
        pairs = pd.merge(
            pd.DataFrame({"proposal_id": pids, "device": np.arange(len(geoms))}),
            pd.DataFrame({"proposal_id": found.proposal_id[roofs].astype(str), "roof": roofs}),
            on="proposal_id",
        )
        if len(pairs):
            dev = pairs["device"].to_numpy()
            dist = shapely.distance(geoms[dev], found.geoms[pairs["roof"].to_numpy()])
            np.fmin.at(out, dev, dist)
    return out


def check_sedimentation_device(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW207: each device includes a sedimentation device."""
    rows = _Rows(ctx, "SW207")
    for i, value in enumerate(rows.devices["has_sedimentation_device"]):
        name = rows.name(i)
        if pd.isna(value):
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name} does not say whether it includes a sedimentation device "
                "(has_sedimentation_device)",
            )
        elif bool(value):
            rows.set(i, Outcome.PASS, f"{name} includes a sedimentation device")
        else:
            rows.set(
                i,
                Outcome.FAIL,
                f"{name} has no sedimentation device to prevent clogging",
            )
    return rows.frame(math.nan, unit="")


def check_test_holes(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW209: deep test holes and percolation tests at the device, witnessed and logged."""
    rows = _Rows(ctx, "SW209")
    for i, value in enumerate(rows.devices["test_hole_logged"]):
        name = rows.name(i)
        if not pd.isna(value) and bool(value):
            rows.set(i, Outcome.PASS, f"{name} has a logged deep test hole and percolation test")
        else:
            state = "is not given" if pd.isna(value) else "is false"
            rows.set(
                i,
                Outcome.REVIEW,
                f"{name}: test_hole_logged {state}; deep test holes witnessed by the Town "
                "Engineer and percolation tests at the device must be logged on the SWPPP",
            )
    return rows.frame(math.nan, unit="")


def _separation_text(
    ctx: CheckContext, geoms: np.ndarray, *, of_devices: bool
) -> tuple[list[str], np.ndarray, list[shapely.Geometry | None]]:
    """For each geometry: a sentence of nearest distances, the least one, and its line.

    ``of_devices`` reuses the per-run nearest-feature cache the other device rules share.
    """
    parts: list[list[str]] = [[] for _ in geoms]
    best_d = np.full(len(geoms), np.inf)
    best_line: list[shapely.Geometry | None] = [None] * len(geoms)
    for kind in ("wells", "water_bodies", "streams", "wetlands"):
        noun = FEATURE_LAYERS[kind][1]
        layer = ctx.layers.get(kind)
        if layer is None and kind in OPTIONAL_WATER:
            continue
        if layer is None:
            for p in parts:
                p.append(f"{noun}: no {kind} layer provided")
            continue
        features = layer.geometry.to_numpy()
        names = feature_names(layer, kind)
        idx, dist = _nearest_of(ctx, kind) if of_devices else nearest(geoms, features)
        for i in range(len(geoms)):
            if idx[i] < 0:
                parts[i].append(f"{noun}: none mapped")
                continue
            parts[i].append(f"nearest {names[idx[i]]} at {_ft(dist[i])}")
            if dist[i] < best_d[i]:
                best_d[i] = dist[i]
                best_line[i] = shapely.shortest_line(geoms[i], features[idx[i]])
    return ["; ".join(p) for p in parts], best_d, best_line


def check_separation_report(ctx: CheckContext) -> gpd.GeoDataFrame:
    """SW208: distance from each device and each new building to the nearest well, water
    body and wetland (info): § 183-12C(2)(c)[5] asks both to keep the most distance they can.

    New buildings are the proposal's ``impervious`` roofs of more than 100 sq ft
    (:func:`gis_sw.analysis.buildings.proposed_roofs`); a ``streams`` layer, when given,
    adds the nearest stream.
    """
    rows = _Rows(ctx, "SW208")
    texts, best_d, best_line = _separation_text(ctx, rows.geoms, of_devices=True)
    for i, text in enumerate(texts):
        rows.set(
            i,
            Outcome.INFO,
            f"{rows.name(i)}: {text}",
            measured=float(best_d[i]) if np.isfinite(best_d[i]) else math.nan,
            geometry=best_line[i],
        )
    frames = [rows.frame(math.nan)]
    roofs = proposed_roofs(ctx)
    if len(roofs):
        geoms = np.asarray(roofs.geometry.to_numpy(), dtype=object)
        texts, best_d, best_line = _separation_text(ctx, geoms, of_devices=False)
        proposal_ids = roofs["proposal_id"].astype(str).to_numpy()
        number = roofs["number"].to_numpy()
        cite = ctx.citation("SW208")
        frames.append(
            make_findings(
                "SW208",
                ctx.crs,
                proposal_id=list(proposal_ids),
                subject_id=[f"{p}:building-{n}" for p, n in zip(proposal_ids, number, strict=True)],
                outcome=Outcome.INFO,
                message=[
                    f"New building {n} of {p}: {t} ({cite})."
                    for p, n, t in zip(proposal_ids, number, texts, strict=True)
                ],
                measured=[round(float(d), 2) if np.isfinite(d) else math.nan for d in best_d],
                threshold=math.nan,
                unit="ft",
                geometry=[
                    line if line is not None else g
                    for line, g in zip(best_line, geoms, strict=True)
                ],
            )
        )
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty_findings(ctx.crs)
    return gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=ctx.crs)
