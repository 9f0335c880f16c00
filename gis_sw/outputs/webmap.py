"""One self-contained HTML web map that works offline.

Leaflet 1.9.4's JavaScript and CSS (vendored in ``gis_sw/outputs/vendor/leaflet`` with its
BSD-2-Clause licence) are inlined, its two control images become data URIs, points are drawn
as circle markers (no marker images), and a Content-Security-Policy forbids every request, so
opening the file with the network off shows everything and asks no server for anything.

Attribute text is never put into HTML: the layers travel as JSON inside a
``<script type="application/json">`` block (``<``, ``>`` and ``&`` escaped as ``\\u003c`` ...)
and the page writes them with ``textContent``, so a parcel owner called ``<script>`` shows as
text.
"""

from __future__ import annotations

import base64
import datetime as dt
import html
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from gis_sw.analysis.bands import adjacent_outlines
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.outputs.atomic import write_text_atomic
from gis_sw.outputs.maps.furniture import DISCLAIMER
from gis_sw.outputs.maps.site import device_rings
from gis_sw.outputs.maps.style import OUTCOME_COLOURS, STYLES
from gis_sw.ruleset import Ruleset

log = logging.getLogger(__name__)

WGS84 = CRS.from_epsg(4326)
PAD_FT = 300.0
"""Ground shown around the proposals: town features farther away are left out of the file."""

_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


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
    """A JSON-safe attribute value (NaN and NA become null, dates ISO text)."""
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
    keep = ~(frame.geometry.isna() | frame.geometry.is_empty)
    frame = frame[keep.to_numpy()]
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


def build_layers(
    *,
    layers: LayerSet,
    proposals: Proposals,
    findings: gpd.GeoDataFrame,
    ruleset: Ruleset,
    siting: gpd.GeoDataFrame | gpd.GeoSeries | None = None,
    proposal_ids: Sequence[str] | None = None,
    pad_ft: float = PAD_FT,
) -> tuple[list[WebLayer], tuple[float, float, float, float]]:
    """Every web-map layer that has features (the finding layers always), cut to the
    proposals plus ``pad_ft``, and the bounds of the proposals (lon/lat) the map opens on."""
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
        parcels = layers.get("parcels")
        site = shapely.box(*parcels.total_bounds) if parcels is not None else shapely.Point(0, 0)
    area = shapely.box(*shapely.bounds(shapely.buffer(site, pad_ft)))
    out: list[WebLayer] = []

    def add(
        key: str,
        title: str,
        style: dict[str, Any],
        frame: gpd.GeoDataFrame | None,
        columns: Sequence[str],
        *,
        visible: bool = True,
        extra: dict[str, Sequence[Any]] | None = None,
    ) -> None:
        out.append(WebLayer(key, title, style, visible, feature_collection(frame, columns, extra)))

    zone_col = ruleset.zones.zone_column
    zoning = _near(layers.get("zoning"), area)
    if zoning is not None:
        low = ruleset.low_threshold_mask(zoning[zone_col])
        fills = np.where(low, STYLES["zoning_low"].facecolor, "#ffffff").tolist()
        style = _style("zoning_low") | {"color": STYLES["zoning"].edgecolor, "fillOpacity": 0.35}
        add("zoning", "Zoning (R-10 shaded)", style, zoning, [zone_col], extra={"_fill": fills})
    add(
        "floodplain",
        "100-year floodplain",
        _style("floodplain"),
        _near(layers.get("floodplain"), area),
        ["flood_zone"],
    )
    wetlands = _near(layers.get("wetlands"), area)
    add("wetlands", "Wetlands", _style("wetlands"), wetlands, ["wetland_id", "name"])
    adjacent_ft = ruleset.resources.wetland_adjacent_area_ft
    if wetlands is not None and adjacent_ft > 0:
        ring = gpd.GeoDataFrame(
            {"wetland_id": wetlands["wetland_id"].to_numpy(), "distance_ft": adjacent_ft},
            geometry=adjacent_outlines(wetlands.geometry.to_numpy(), adjacent_ft),
            crs=wetlands.crs,
        )
        add(
            "wetland_adjacent",
            f"Wetland adjacent area ({adjacent_ft:g} ft)",
            _style("wetland_adjacent", fill=False),
            ring,
            ["wetland_id", "distance_ft"],
        )
    add(
        "water_bodies",
        "Water bodies",
        _style("water_bodies"),
        _near(layers.get("water_bodies"), area),
        ["water_id", "name"],
    )
    add(
        "parcels",
        "Parcels",
        _style("parcels", fill=False),
        _near(layers.get("parcels"), area),
        ["parcel_id", "owner", "address", "land_use"],
    )
    add(
        "pavement",
        "Existing pavement",
        _style("pavement"),
        _near(layers.get("pavement"), area),
        ["surface"],
    )
    add(
        "septic_fields",
        "Septic fields",
        _style("septic_fields"),
        _near(layers.get("septic_fields"), area),
        ["septic_id"],
    )
    buildings = _near(layers.get("buildings"), area)
    fills = None
    if buildings is not None:
        basement = buildings["habitable_basement"].astype("boolean").fillna(value=False)
        fills = np.where(
            basement.to_numpy(dtype=bool),
            STYLES["buildings_basement"].facecolor,
            STYLES["buildings"].facecolor,
        ).tolist()
    add(
        "buildings",
        "Buildings (dark: habitable basement)",
        _style("buildings"),
        buildings,
        ["building_id", "habitable_basement"],
        extra={"_fill": fills} if fills else None,
    )
    add(
        "wells",
        "Water wells",
        _style("wells", radius=5),
        _near(layers.get("wells"), area),
        ["well_id"],
    )
    add(
        "disturbance",
        "Limits of disturbance",
        _style("disturbance"),
        dist,
        ["proposal_id", "disturbance_id", "phase", "start_date", "end_date"],
    )
    add(
        "impervious",
        "Proposed impervious",
        _style("impervious"),
        impervious,
        ["proposal_id", "surface"],
    )
    if siting is not None:
        frame = gpd.GeoDataFrame(geometry=siting) if isinstance(siting, gpd.GeoSeries) else siting
        if "proposal_id" in frame.columns:
            frame = frame[frame["proposal_id"].isin(ids)]
        add(
            "siting",
            "Permissible device location (siting)",
            _style("siting"),
            _near(frame.to_crs(layers.crs) if frame.crs else frame, area),
            ["parcel_id", "device_class", "area_sqft", "outcome", "note"],
        )
    rings = _rings(ruleset, devices)
    add(
        "rings",
        "Device setback rings",
        _style("ring", fill=False),
        rings,
        ["device_id", "distance_ft", "setback"],
    )
    add(
        "devices",
        "Infiltration devices",
        _style("devices", radius=6),
        devices,
        [
            "device_id",
            "proposal_id",
            "device_type",
            "serves_vehicle_traffic",
            "depth_ft",
            "bottom_elevation_ft",
            "has_sedimentation_device",
            "test_hole_logged",
        ],
    )
    for outcome, title, visible in (
        ("fail", "Findings: fail", True),
        ("review", "Findings: review", True),
        ("other", "Findings: required, info, pass, waived", False),
    ):
        if len(mine):
            waived = mine["waived"].astype("boolean").fillna(value=False).to_numpy(dtype=bool)
            passive = mine["outcome"].isin(["required", "info", "pass"]).to_numpy()
            rows = (
                mine[passive | waived]
                if outcome == "other"
                else mine[(mine["outcome"] == outcome).to_numpy() & ~waived]
            )
        else:
            rows = mine
        colour = OUTCOME_COLOURS.get(outcome, OUTCOME_COLOURS["info"])
        style = {
            "color": colour,
            "weight": 4 if outcome != "other" else 2,
            "fill": True,
            "fillColor": colour,
            "fillOpacity": 0.15,
            "radius": 9,
            "dashArray": "6 3" if outcome == "review" else None,
        }
        titles = [
            f"{r} {o}: {c}"
            for r, o, c in zip(rows["rule_id"], rows["outcome"], rows["citation"], strict=True)
        ]
        colours = [OUTCOME_COLOURS.get(o, colour) for o in rows["outcome"]]
        add(
            f"findings_{outcome}",
            title,
            style,
            rows,
            [
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
            ],
            visible=visible,
            extra={"_title": titles, "_colour": colours},
        )
    focus = shapely.buffer(site, 30.0)
    lon0, lat0, lon1, lat1 = gpd.GeoSeries([focus], crs=layers.crs).to_crs(WGS84).total_bounds
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


def _vendor(name: str) -> bytes:
    return resources.files("gis_sw.outputs").joinpath("vendor", "leaflet", name).read_bytes()


def leaflet_assets() -> tuple[str, str, str]:
    """Leaflet's JS and CSS ready to inline (source-map line dropped, images as data URIs),
    and its licence text."""
    script = _vendor("leaflet.js").decode("utf-8")
    script = re.sub(r"//# sourceMappingURL=\S+\s*$", "", script)
    css = _vendor("leaflet.css").decode("utf-8")

    def data_uri(match: re.Match[str]) -> str:
        name = match.group(1)
        try:
            png = _vendor(name)
        except FileNotFoundError:
            return "none"
        return f"url(data:image/png;base64,{base64.b64encode(png).decode('ascii')})"

    css = re.sub(r"url\(images/([A-Za-z0-9_.-]+)\)", data_uri, css)
    licence = _vendor("LICENSE").decode("utf-8")
    return script, css, licence


def _json_for_script(payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


_PAGE_CSS = """
html, body { height: 100%; margin: 0; font: 13px/1.35 sans-serif; }
#map { position: absolute; inset: 0; background: #f6f6f2; }
.gsw-swatch { display: inline-block; width: 14px; height: 10px; border: 2px solid #000;
  vertical-align: middle; }
.gsw-popup-title { font-weight: bold; margin-bottom: 4px; }
.gsw-message { margin: 4px 0 6px; }
.gsw-popup table { border-collapse: collapse; font-size: 12px; }
.gsw-popup th { text-align: left; padding-right: 8px; color: #555; font-weight: normal; }
.gsw-measure a { width: auto !important; padding: 0 8px; font-size: 12px; }
.gsw-readout { background: #fff; padding: 0 6px; font-size: 12px; }
.gsw-title { background: rgba(255,255,255,0.92); padding: 6px 10px; border: 1px solid #999;
  max-width: 420px; }
.gsw-disclaimer { font-weight: bold; margin-top: 3px; }
.gsw-apps { background: #fff; border: 1px solid #999; padding: 6px; width: 260px;
  max-height: 45vh; overflow-y: auto; }
.gsw-apps input { width: 100%; box-sizing: border-box; margin-bottom: 4px; }
.gsw-app { padding: 3px 2px; border-top: 1px solid #eee; cursor: pointer; }
.gsw-app:hover { background: #f0f4ff; }
.gsw-app .gsw-verdict { font-size: 11px; color: #444; }
.gsw-app.fail .gsw-verdict { color: #b00020; } .gsw-app.review .gsw-verdict { color: #8a5a00; }
.gsw-label { font-weight: bold; background: rgba(255,255,255,0.85); border: 1px solid #666; }
.gsw-hit { border-top: 1px solid #ddd; padding-top: 4px; margin-top: 4px; }
"""


def render_webmap(
    *,
    layers: LayerSet,
    proposals: Proposals,
    findings: gpd.GeoDataFrame,
    ruleset: Ruleset,
    siting: gpd.GeoDataFrame | gpd.GeoSeries | None = None,
    proposal_ids: Sequence[str] | None = None,
    pad_ft: float = PAD_FT,
) -> str:
    """The web map's HTML text."""
    from gis_sw.outputs.webmap_index import application_entries

    web_layers, bounds = build_layers(
        layers=layers,
        proposals=proposals,
        findings=findings,
        ruleset=ruleset,
        siting=siting,
        proposal_ids=proposal_ids,
        pad_ft=pad_ft,
    )
    ids = list(proposal_ids) if proposal_ids is not None else proposals.ids
    names = [proposals.attributes["name"].get(i) for i in ids] if len(proposals.attributes) else []
    shown = [
        f"{i} ({n})" if isinstance(n, str) and n else i for i, n in zip(ids, names, strict=False)
    ]
    if len(shown) > 3:
        title = f"Stormwater screening: {len(shown)} proposals ({ids[0]} ... {ids[-1]})"
    else:
        title = "Stormwater screening: " + (", ".join(shown) or "no proposal")
    payload = {
        "title": title,
        "subtitle": f"{ruleset.title}; ruleset {ruleset.name} {ruleset.version}; run "
        f"{dt.datetime.now(tz=dt.UTC).date().isoformat()}",
        "disclaimer": DISCLAIMER,
        "bounds": bounds,
        "applications": application_entries(
            layers=layers, proposals=proposals, findings=findings, proposal_ids=ids
        ),
        "layers": [
            {
                "key": w.key,
                "title": w.title,
                "style": w.style,
                "visible": w.visible,
                "features": w.features,
            }
            for w in web_layers
        ],
    }
    script, css, licence = leaflet_assets()
    app = resources.files("gis_sw.outputs.maps").joinpath("webmap.js").read_text("utf-8")
    licence_comment = licence.replace("--", "- -")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<!-- Leaflet 1.9.4, inlined. Its licence:\n{licence_comment}\n-->\n"
        f"<style>\n{css}\n</style>\n<style>{_PAGE_CSS}</style>\n</head>\n<body>\n"
        '<div id="map"></div>\n'
        f'<script type="application/json" id="gis-sw-data">{_json_for_script(payload)}</script>\n'
        f"<script>\n{script}\n</script>\n<script>\n{app}\n</script>\n</body>\n</html>\n"
    )


def write_webmap(
    path: str | Path,
    *,
    layers: LayerSet,
    proposals: Proposals,
    findings: gpd.GeoDataFrame,
    ruleset: Ruleset,
    siting: gpd.GeoDataFrame | gpd.GeoSeries | None = None,
    overwrite: bool = False,
    proposal_ids: Sequence[str] | None = None,
    pad_ft: float = PAD_FT,
) -> Path:
    """Write ``webmap.html``: every layer toggleable, findings with message and citation.

    Raises
    ------
    OutputError
        When the file exists without ``overwrite`` or cannot be written.
    """
    text = render_webmap(
        layers=layers,
        proposals=proposals,
        findings=findings,
        ruleset=ruleset,
        siting=siting,
        proposal_ids=proposal_ids,
        pad_ft=pad_ft,
    )
    target = write_text_atomic(path, text, overwrite=overwrite)
    log.info("web map %s (%d kB)", target, len(text) // 1024)
    return target
