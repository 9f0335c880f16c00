"""The layers of the web map (:mod:`gis_sw.outputs.webmap`): one table, one loop.

:data:`LAYER_SPECS` lists every layer after zoning in drawing order: the town's layers cut
to the proposals' area, the wetland adjacent band and the siting polygons from the
screening, the proposals' own layers and the findings by outcome.  :func:`build_layers`
turns each into a GeoJSON FeatureCollection (EPSG:4326) and keeps those with features.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from gis_sw.layers.geoms import unlocated
from gis_sw.outputs.maps.site import device_rings
from gis_sw.outputs.maps.style import OUTCOME_COLOURS, STYLES
from gis_sw.ruleset import Ruleset

if TYPE_CHECKING:
    from gis_sw.screening import Screening

__all__ = ["LAYER_SPECS", "PAD_FT", "LayerSpec", "WebLayer", "build_layers", "feature_collection"]

WGS84 = CRS.from_epsg(4326)
PAD_FT = 300.0
"""Ground shown around the proposals: town features farther away are left out of the file."""


@dataclass(frozen=True, slots=True)
class WebLayer:
    """A layer of the web map: key, title, style, whether shown at start, and features."""

    key: str
    title: str
    style: dict[str, Any]
    visible: bool
    features: dict[str, Any]


def _style(key: str, *, fill: bool = True, radius: float | None = None) -> dict[str, Any]:
    base = STYLES[key]
    dash = None
    if isinstance(base.linestyle, tuple):
        dash = " ".join(f"{v:g}" for v in base.linestyle[1])
    elif base.linestyle in (":", "--", "-."):
        dash = {":": "2 3", "--": "6 4", "-.": "6 3 2 3"}[base.linestyle]
    has_fill = fill and base.facecolor != "none"
    style: dict[str, Any] = {
        "color": base.edgecolor,
        "weight": max(1.0, base.linewidth * 1.5),
        "fill": has_fill,
        "fillColor": base.facecolor if has_fill else "#ffffff",
        "fillOpacity": 0.5 if has_fill else 0.0,
        "dashArray": dash,
    }
    if radius is not None:
        style["radius"] = radius
        style["fill"] = True
        style["fillColor"] = base.facecolor if base.facecolor != "none" else "#ffffff"
        style["fillOpacity"] = 0.9
    return style


def _clean(value: Any) -> Any:
    """Return a JSON-safe attribute value (NaN and NA become null, dates ISO text)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float | np.floating):
        return None if math.isnan(float(value)) else round(float(value), 2)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, pd.Timestamp | dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, int | str):
        return value
    return str(value)


def feature_collection(
    frame: gpd.GeoDataFrame | None,
    columns: Sequence[str],
    extra: dict[str, Sequence[Any]] | None = None,
) -> dict[str, Any]:
    """GeoJSON FeatureCollection (EPSG:4326, 7 decimals) with the named columns as properties."""
    if frame is None or len(frame) == 0:
        return {"type": "FeatureCollection", "features": []}
    keep = ~unlocated(frame.geometry.to_numpy())
    frame = frame[keep]
    extra = {
        k: [v for v, k2 in zip(vals, keep, strict=True) if k2] for k, vals in (extra or {}).items()
    }
    geo = frame.to_crs(WGS84) if frame.crs is not None else frame
    geoms = shapely.set_precision(geo.geometry.to_numpy(), 1e-7)
    texts = shapely.to_geojson(geoms)
    present = [c for c in columns if c in frame.columns]
    features = []
    for i, text in enumerate(texts):
        props = {c: _clean(frame[c].iloc[i]) for c in present}
        props.update({k: _clean(v[i]) for k, v in extra.items()})
        features.append({"type": "Feature", "properties": props, "geometry": json.loads(text)})
    return {"type": "FeatureCollection", "features": features}


def _near(frame: gpd.GeoDataFrame | None, area: shapely.Geometry) -> gpd.GeoDataFrame | None:
    if frame is None or len(frame) == 0:
        return None
    hits = frame.sindex.query(area, predicate="intersects")
    return frame.iloc[np.sort(hits)]


@dataclass(frozen=True, slots=True)
class _Scene:
    """What the web map shows: the screening, the proposals drawn and the area around them."""

    screening: Screening
    ids: set[str]
    disturbance: gpd.GeoDataFrame
    devices: gpd.GeoDataFrame
    impervious: gpd.GeoDataFrame | None
    findings: gpd.GeoDataFrame
    area: shapely.Geometry
    siting: gpd.GeoDataFrame | None

    def town(self, kind: str) -> gpd.GeoDataFrame | None:
        """Return the rows of a town layer in the map's area (None for an absent layer)."""
        return _near(self.screening.layers.get(kind), self.area)


Rows = Callable[[_Scene], "gpd.GeoDataFrame | None"]
Extra = Callable[[_Scene, "gpd.GeoDataFrame | None"], "dict[str, Sequence[Any]] | None"]


@dataclass(frozen=True, slots=True)
class LayerSpec:
    """One layer of the web map: what it is called and drawn like, and where its rows are."""

    key: str
    title: str
    style: dict[str, Any]
    columns: Sequence[str]
    rows: Rows
    props: Extra | None = None
    visible: bool = True


def _town(kind: str) -> Rows:
    return lambda scene: scene.town(kind)


def _zoning_fill(scene: _Scene, zoning: gpd.GeoDataFrame | None) -> dict[str, Sequence[Any]]:
    ruleset = scene.screening.ruleset
    if zoning is None:
        return {}
    low = ruleset.low_threshold_mask(zoning[ruleset.zones.zone_column])
    return {"_fill": np.where(low, STYLES["zoning_low"].facecolor, "#ffffff").tolist()}


def _band(scene: _Scene) -> gpd.GeoDataFrame | None:
    wetlands = scene.town("wetlands")
    if wetlands is None or scene.screening.ruleset.resources.wetland_adjacent_area_ft <= 0:
        return None
    return scene.screening.wetland_band(wetlands)


def _basement_fill(_: _Scene, buildings: gpd.GeoDataFrame | None) -> dict[str, Sequence[Any]]:
    if buildings is None or len(buildings) == 0:
        return {}
    basement = buildings["habitable_basement"].astype("boolean").fillna(value=False)
    fills = np.where(
        basement.to_numpy(dtype=bool),
        STYLES["buildings_basement"].facecolor,
        STYLES["buildings"].facecolor,
    )
    return {"_fill": fills.tolist()}


def _siting(scene: _Scene) -> gpd.GeoDataFrame | None:
    if scene.siting is None:
        return None
    frame = scene.siting
    if "proposal_id" in frame.columns:
        frame = frame[frame["proposal_id"].isin(scene.ids)]
    crs = scene.screening.layers.crs
    return _near(frame.to_crs(crs) if frame.crs else frame, scene.area)


FINDING_COLUMNS = (
    "message",
    "rule_id",
    "outcome",
    "citation",
    "title",
    "subject_id",
    "proposal_id",
    "measured",
    "threshold",
    "unit",
    "finding_id",
    "waived",
    "waiver_reason",
)
"""Finding columns shown in a finding's popup."""


def _findings_of(outcome: str) -> Rows:
    def rows(scene: _Scene) -> gpd.GeoDataFrame:
        mine = scene.findings
        if len(mine) == 0:
            return mine
        waived = mine["waived"].astype("boolean").fillna(value=False).to_numpy(dtype=bool)
        if outcome == "other":
            return mine[mine["outcome"].isin(["required", "info", "pass"]).to_numpy() | waived]
        return mine[(mine["outcome"] == outcome).to_numpy() & ~waived]

    return rows


def _finding_marks(outcome: str) -> Extra:
    layer_colour = OUTCOME_COLOURS.get(outcome, OUTCOME_COLOURS["info"])

    def marks(_: _Scene, rows: gpd.GeoDataFrame | None) -> dict[str, Sequence[Any]]:
        if rows is None:
            return {}
        titles = [
            f"{r} {o}: {c}"
            for r, o, c in zip(rows["rule_id"], rows["outcome"], rows["citation"], strict=True)
        ]
        colours = [OUTCOME_COLOURS.get(o, layer_colour) for o in rows["outcome"]]
        return {"_title": titles, "_colour": colours}

    return marks


def _finding_style(outcome: str) -> dict[str, Any]:
    colour = OUTCOME_COLOURS.get(outcome, OUTCOME_COLOURS["info"])
    return {
        "color": colour,
        "weight": 4 if outcome != "other" else 2,
        "fill": True,
        "fillColor": colour,
        "fillOpacity": 0.15,
        "radius": 9,
        "dashArray": "6 3" if outcome == "review" else None,
    }


DEVICE_COLUMNS = (
    "device_id",
    "proposal_id",
    "device_type",
    "serves_vehicle_traffic",
    "depth_ft",
    "bottom_elevation_ft",
    "has_sedimentation_device",
    "test_hole_logged",
)

LAYER_SPECS: tuple[LayerSpec, ...] = (
    LayerSpec("floodplain", "100-year floodplain", _style("floodplain"), ["flood_zone"],
              _town("floodplain")),
    LayerSpec("wetlands", "Wetlands", _style("wetlands"), ["wetland_id", "name"],
              _town("wetlands")),
    LayerSpec("wetland_adjacent", "Wetland adjacent area ({band_ft:g} ft)",
              _style("wetland_adjacent", fill=False), ["wetland_id", "distance_ft"], _band),
    LayerSpec("water_bodies", "Water bodies", _style("water_bodies"), ["water_id", "name"],
              _town("water_bodies")),
    LayerSpec("parcels", "Parcels", _style("parcels", fill=False),
              ["parcel_id", "owner", "address", "land_use"], _town("parcels")),
    LayerSpec("pavement", "Existing pavement", _style("pavement"), ["surface"],
              _town("pavement")),
    LayerSpec("septic_fields", "Septic fields", _style("septic_fields"), ["septic_id"],
              _town("septic_fields")),
    LayerSpec("buildings", "Buildings (dark: habitable basement)", _style("buildings"),
              ["building_id", "habitable_basement"], _town("buildings"), _basement_fill),
    LayerSpec("wells", "Water wells", _style("wells", radius=5), ["well_id"], _town("wells")),
    LayerSpec("disturbance", "Limits of disturbance", _style("disturbance"),
              ["proposal_id", "disturbance_id", "phase", "start_date", "end_date"],
              lambda scene: scene.disturbance),
    LayerSpec("impervious", "Proposed impervious", _style("impervious"),
              ["proposal_id", "surface"], lambda scene: scene.impervious),
    LayerSpec("siting", "Permissible device location (siting)", _style("siting"),
              ["parcel_id", "device_class", "area_sqft", "outcome", "note"], _siting),
    LayerSpec("rings", "Device setback rings", _style("ring", fill=False),
              ["device_id", "distance_ft", "setback"],
              lambda scene: _rings(scene.screening.ruleset, scene.devices)),
    LayerSpec("devices", "Infiltration devices", _style("devices", radius=6), DEVICE_COLUMNS,
              lambda scene: scene.devices),
    LayerSpec("findings_fail", "Findings: fail", _finding_style("fail"), FINDING_COLUMNS,
              _findings_of("fail"), _finding_marks("fail")),
    LayerSpec("findings_review", "Findings: review", _finding_style("review"), FINDING_COLUMNS,
              _findings_of("review"), _finding_marks("review")),
    LayerSpec("findings_other", "Findings: required, info, pass, waived",
              _finding_style("other"), FINDING_COLUMNS, _findings_of("other"),
              _finding_marks("other"), visible=False),
)  # fmt: skip
"""Every web-map layer after zoning, in drawing order (the town's, the proposal's, findings)."""


def _scene(
    screening: Screening, proposal_ids: Sequence[str] | None, *, siting: bool, pad_ft: float
) -> tuple[_Scene, shapely.Geometry]:
    """Return what the map shows and the site it opens on."""
    proposals, findings = screening.proposals, screening.findings
    ids = set(proposal_ids) if proposal_ids is not None else set(proposals.ids)
    dist = proposals.disturbance[proposals.disturbance["proposal_id"].isin(ids)]
    devices = proposals.devices[proposals.devices["proposal_id"].isin(ids)]
    impervious = proposals.impervious
    if impervious is not None:
        impervious = impervious[impervious["proposal_id"].isin(ids)]
    mine = findings[findings["proposal_id"].isin(ids)] if len(findings) else findings
    site = shapely.union_all(
        np.asarray([*dist.geometry.to_numpy(), *devices.geometry.to_numpy()], dtype=object)
    )
    if shapely.is_empty(site) and len(mine):
        site = shapely.union_all(mine.geometry.dropna().to_numpy())
    if shapely.is_empty(site):
        parcels = screening.layers.get("parcels")
        site = shapely.box(*parcels.total_bounds) if parcels is not None else shapely.Point(0, 0)
    area = shapely.box(*shapely.bounds(shapely.buffer(site, pad_ft)))
    wanted = proposals.ids if proposal_ids is None else list(proposal_ids)
    sited = screening.device_siting(wanted) if siting else None
    scene = _Scene(screening, ids, dist, devices, impervious, mine, area, sited)
    return scene, site


def build_layers(
    screening: Screening,
    *,
    siting: bool = False,
    proposal_ids: Sequence[str] | None = None,
    pad_ft: float = PAD_FT,
) -> tuple[list[WebLayer], tuple[float, float, float, float]]:
    """Return every web-map layer that has features, and the bounds the map opens on.

    The layers (the finding layers always, even empty) are cut to the proposals plus
    ``pad_ft``; the bounds are those of the proposals (lon/lat).  ``siting`` adds the
    screening's siting polygons (:meth:`~gis_sw.screening.Screening.device_siting`).
    """
    scene, site = _scene(screening, proposal_ids, siting=siting, pad_ft=pad_ft)
    ruleset = screening.ruleset
    out: list[WebLayer] = []
    zoning = scene.town("zoning")
    if zoning is not None:
        style = _style("zoning_low") | {"color": STYLES["zoning"].edgecolor, "fillOpacity": 0.35}
        features = feature_collection(
            zoning, [ruleset.zones.zone_column], _zoning_fill(scene, zoning)
        )
        out.append(
            WebLayer("zoning", "Zoning (R-10 shaded)", style, visible=True, features=features)
        )
    band_ft = ruleset.resources.wetland_adjacent_area_ft
    for spec in LAYER_SPECS:
        rows = spec.rows(scene)
        props = spec.props(scene, rows) if spec.props is not None else None
        title = spec.title.format(band_ft=band_ft)
        features = feature_collection(rows, spec.columns, props or None)
        out.append(WebLayer(spec.key, title, spec.style, spec.visible, features))
    focus = shapely.buffer(site, 30.0)
    crs = screening.layers.crs
    lon0, lat0, lon1, lat1 = gpd.GeoSeries([focus], crs=crs).to_crs(WGS84).total_bounds
    kept = [w for w in out if w.features["features"] or w.key.startswith("findings_")]
    return kept, (float(lon0), float(lat0), float(lon1), float(lat1))


def _rings(ruleset: Ruleset, devices: gpd.GeoDataFrame) -> gpd.GeoDataFrame | None:
    if len(devices) == 0:
        return None
    ids: list[Any] = []
    distances: list[float] = []
    texts: list[str] = []
    geoms: list[Any] = []
    vehicle_flags = devices["serves_vehicle_traffic"].astype("boolean").fillna(value=False)
    for distance, text, _key, rings in device_rings(ruleset, devices):
        owners = devices["device_id"].to_numpy()
        if "vehicle" in text:
            owners = owners[vehicle_flags.to_numpy(dtype=bool)]
        for device_id, ring in zip(owners, rings, strict=True):
            ids.append(device_id)
            distances.append(distance)
            texts.append(text)
            geoms.append(shapely.boundary(ring))
    return gpd.GeoDataFrame(
        {"device_id": ids, "distance_ft": distances, "setback": texts},
        geometry=geoms,
        crs=devices.crs,
    )
