"""The page's proposal document (GeoJSON, EPSG:4326) to and from :class:`Proposals`.

The page edits one proposal as one GeoJSON FeatureCollection with a foreign member
``proposal`` (RFC 7946 §6.1) for the proposal's attributes::

    {"type": "FeatureCollection",
     "proposal": {"proposal_id": "P-1", "land_use": "single_family", ...},
     "features": [
        {"type": "Feature", "geometry": {...},
         "properties": {"layer": "devices", "device_id": "D-1", "depth_ft": 4, ...}}, ...]}

``layer`` is ``disturbance``, ``devices`` or ``impervious``; the other properties are the
columns of that layer's spec (:data:`gis_sw.layers.specs.PROPOSAL_LAYERS`), and any other
property is ignored.  Every feature belongs to the document's proposal.  The document goes
through the same validation as a proposals file (:func:`gis_sw.layers.validate.validate_layer`,
the attribute checks of :mod:`gis_sw.layers.proposal_checks`), then
:func:`gis_sw.layers.build.make_proposals`.

A geometry that is not GeoJSON, has the wrong type for its layer, or lies outside longitude
and latitude raises :class:`RequestError` (HTTP 400) naming the feature and the reason.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import tempfile
import threading
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import shapely
from pyproj import CRS, Transformer

from gis_sw.errors import GisSwError, LayerError, Problem
from gis_sw.layers.build import make_proposals, normalise
from gis_sw.layers.proposal_checks import check_attributes
from gis_sw.layers.proposals import ATTRIBUTE_COLUMNS, Proposals
from gis_sw.layers.specs import PROPOSAL_LAYERS
from gis_sw.layers.validate import validate_layer
from gis_sw.ruleset import Ruleset

WGS84 = CRS.from_epsg(4326)
EDITED_LAYERS = ("disturbance", "devices", "impervious")
MAX_FEATURES = 2000
"""Features one proposal document may hold (a lot has a handful)."""

_GEOMETRY_TYPES = {
    "disturbance": {"Polygon", "MultiPolygon"},
    "impervious": {"Polygon", "MultiPolygon"},
    "devices": {"Point", "Polygon", "MultiPolygon"},
}


@functools.cache
def _transformer(crs: CRS) -> Transformer:
    """Degrees to the working CRS (built once: building one costs more than using it)."""
    return Transformer.from_crs(WGS84, crs, always_xy=True)


class RequestError(GisSwError, ValueError):
    """A request the server cannot use (HTTP 400); the message says why and what to send."""


def _columns(kind: str) -> dict[str, str]:
    spec = PROPOSAL_LAYERS[kind]
    return {**spec.required, **spec.optional}


def _text_id(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    text = str(value).strip()
    return text or None


def _geometry(raw: Any, where: str, kind: str) -> shapely.Geometry:
    if not isinstance(raw, dict) or "type" not in raw:
        raise RequestError(f"{where}: no GeoJSON geometry object. Fix: give each feature one.")
    if raw.get("type") not in _GEOMETRY_TYPES[kind]:
        allowed = " or ".join(sorted(_GEOMETRY_TYPES[kind]))
        raise RequestError(
            f"{where}: a {raw.get('type')!s:.40} geometry cannot be a {kind} feature. "
            f"Fix: draw a {allowed}."
        )
    try:
        geom = shapely.from_geojson(json.dumps(raw))
    except (shapely.errors.GEOSException, ValueError, TypeError) as exc:
        raise RequestError(
            f"{where}: the geometry is not valid GeoJSON ({str(exc)[:160]}). Fix: send "
            "[longitude, latitude] positions, rings closed and of 4 positions or more."
        ) from None
    if geom is None or shapely.is_empty(geom):
        raise RequestError(f"{where}: the geometry is empty. Fix: draw it, or delete it.")
    coords = shapely.get_coordinates(geom)
    if not np.isfinite(coords).all() or (np.abs(coords[:, 0]) > 180).any():
        raise RequestError(f"{where}: a longitude is not a number from -180 to 180.")
    if (np.abs(coords[:, 1]) > 90).any():
        raise RequestError(f"{where}: a latitude is not a number from -90 to 90.")
    return geom


def parse_document(doc: Any, ruleset: Ruleset) -> Proposals:
    """Return the proposal of a page document, validated and in the working CRS.

    Raises
    ------
    RequestError
        For a body that is not such a document, or a malformed geometry.
    LayerError
        For what a proposals file would be refused for (ids, values, dates).
    """
    features, attrs, proposal_id = _collection(doc)
    rows, geoms = _features(features, proposal_id)
    working = ruleset.working_crs
    frames: dict[str, gpd.GeoDataFrame] = {}
    problems: list[Problem] = []
    rules_key = (ruleset.name, ruleset.version, ruleset.source, working.to_string())
    layer_keys: dict[str, tuple[Any, ...]] = {}
    for kind in EDITED_LAYERS:
        if not rows[kind] and kind != "disturbance":
            continue
        key = (kind, rules_key, json.dumps([rows[kind], _layer_text(features, kind)], default=str))
        layer_keys[kind] = key
        known = _VALIDATED.get(key)
        if known is None:
            known = _validated(kind, rows[kind], geoms[kind], proposal_id, working)
            _remember(key, known)
        validated, found = known
        problems.extend(found)
        if validated is not None:
            frames[kind] = validated
    values = {c: attrs.get(c) for c in ATTRIBUTE_COLUMNS}
    table = pd.DataFrame(
        [
            {
                "proposal_id": proposal_id,
                **{c: v for c, v in values.items() if v is not None and v != ""},
            }
        ]
    )
    key = ("proposals", rules_key, table.to_json(date_format="iso", default_handler=str))
    known = _VALIDATED.get(key)
    if known is None:
        known = (None, tuple(check_attributes(table, ruleset, "proposal")))
        _remember(key, known)
    problems.extend(known[1])
    if problems:
        raise LayerError(problems)
    # all but the devices, remembered: while a device is dragged only the devices change
    base_key = (
        "base",
        layer_keys["disturbance"],
        layer_keys.get("impervious"),
        key,  # the attributes table's text
        proposal_id,
    )
    with _LOCK:
        base = _BASES.get(base_key)
    if base is None:
        base = make_proposals(
            working,
            frames["disturbance"],
            None,
            table,
            frames.get("impervious"),
            source="<page>",
        )
        with _LOCK:
            while len(_BASES) >= _CACHE_SIZE:
                _BASES.pop(next(iter(_BASES)))
            _BASES[base_key] = base
    devices = frames.get("devices")
    return dataclasses.replace(
        base,
        # fresh frames for every request: nothing one check run does reaches the next
        disturbance=base.disturbance.copy(),
        devices=(
            base.devices.copy()
            if devices is None
            else normalise(devices, PROPOSAL_LAYERS["devices"], working)
        ),
        attributes=base.attributes.copy(),
        impervious=None if base.impervious is None else base.impervious.copy(),
    )


def _collection(doc: Any) -> tuple[list[Any], dict[str, Any], str]:
    """Return a document's features, its ``proposal`` member and the proposal id.

    Raises
    ------
    RequestError
        For a body that is not a FeatureCollection of at most :data:`MAX_FEATURES` features
        with a ``proposal.proposal_id``.
    """
    if not isinstance(doc, dict) or doc.get("type") != "FeatureCollection":
        raise RequestError(
            'the body is not a GeoJSON FeatureCollection. Fix: send {"type": '
            '"FeatureCollection", "proposal": {...}, "features": [...]}.'
        )
    features = doc.get("features")
    if not isinstance(features, list):
        raise RequestError("the FeatureCollection has no 'features' list.")
    if len(features) > MAX_FEATURES:
        raise RequestError(f"{len(features)} features: one proposal may have {MAX_FEATURES}.")
    given = doc.get("proposal")
    attrs: dict[str, Any] = given if isinstance(given, dict) else {}
    proposal_id = _text_id(attrs.get("proposal_id"))
    if proposal_id is None:
        raise RequestError("the document has no proposal.proposal_id. Fix: name the proposal.")
    return features, attrs, proposal_id


def _features(
    features: list[Any], proposal_id: str
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[shapely.Geometry]]]:
    """Return each edited layer's property rows and geometries (EPSG:4326), checked.

    Raises
    ------
    RequestError
        Naming the feature whose ``layer`` or geometry is not one the page may send.
    """
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in EDITED_LAYERS}
    geoms: dict[str, list[shapely.Geometry]] = {k: [] for k in EDITED_LAYERS}
    for n, feature in enumerate(features, start=1):
        props = feature.get("properties") if isinstance(feature, dict) else None
        props = props if isinstance(props, dict) else {}
        kind = props.get("layer")
        label = _text_id(props.get("device_id") or props.get("disturbance_id"))
        where = f"feature {n}" + (f" ({label:.60})" if label else "")
        if kind not in EDITED_LAYERS:
            raise RequestError(
                f"{where}: properties.layer is {str(kind)[:40]!r}. Fix: one of "
                f"{', '.join(EDITED_LAYERS)}."
            )
        geoms[kind].append(_geometry(feature.get("geometry"), where, kind))
        row = {c: props.get(c) for c in _columns(kind) if c in props}
        row["proposal_id"] = proposal_id
        rows[kind].append(row)
    return rows, geoms


_BASES: dict[tuple[Any, ...], Proposals] = {}
"""The proposal of recent documents without their devices, by the documents' text (the
same text gives the same proposal; its devices are added for each request, as
:func:`~gis_sw.layers.build.make_proposals` adds them)."""


_Known = tuple[gpd.GeoDataFrame | None, tuple[Problem, ...]]
_VALIDATED: dict[tuple[Any, ...], _Known] = {}
"""Validated layers of recent documents by their text: while a device is dragged, the
disturbance, impervious surfaces and attributes of each request are those of the last one
and need not be validated again (the same text gives the same result)."""
_CACHE_SIZE = 64


_LOCK = threading.Lock()


def _remember(key: tuple[Any, ...], value: _Known) -> None:
    with _LOCK:  # the app screens in a thread pool
        while len(_VALIDATED) >= _CACHE_SIZE:
            _VALIDATED.pop(next(iter(_VALIDATED)))
        _VALIDATED[key] = value


def _layer_text(features: list[Any], kind: str) -> list[Any]:
    return [
        f.get("geometry")
        for f in features
        if isinstance(f, dict)
        and isinstance(f.get("properties"), dict)
        and f["properties"].get("layer") == kind
    ]


def _validated(
    kind: str,
    rows: list[dict[str, Any]],
    geoms: list[shapely.Geometry],
    proposal_id: str,
    working: CRS,
) -> tuple[gpd.GeoDataFrame | None, tuple[Problem, ...]]:
    """One layer of a document in the working CRS, validated as a proposals file's would be."""
    to_town = _transformer(working)
    given = [c for c in _columns(kind) if any(r.get(c) is not None for r in rows)]
    table = pd.DataFrame({c: pd.Series([r.get(c) for r in rows], dtype="object") for c in given})
    table["proposal_id"] = proposal_id
    projected = shapely.transform(
        np.asarray(geoms, dtype=object),
        lambda xy: np.column_stack(to_town.transform(xy[:, 0], xy[:, 1])),
    )
    frame = gpd.GeoDataFrame(table, geometry=gpd.GeoSeries(projected, crs=working), crs=working)
    validated, found = validate_layer(frame, PROPOSAL_LAYERS[kind], layer=kind)
    return (validated.frame if validated is not None else None), tuple(found)


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float | np.floating):
        return None if math.isnan(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, pd.Timestamp):
        return value.date().isoformat()
    return str(value) if not isinstance(value, int | str) else value


def to_documents(proposals: Proposals) -> list[dict[str, Any]]:
    """One page document per proposal (EPSG:4326), the inverse of :func:`parse_document`."""
    out = []
    for pid in proposals.ids:
        one = proposals.subset([pid])
        features: list[dict[str, Any]] = []
        for kind in EDITED_LAYERS:
            frame = getattr(one, kind)
            if frame is None or len(frame) == 0:
                continue
            geo = frame.to_crs(WGS84)
            texts = shapely.to_geojson(shapely.set_precision(geo.geometry.to_numpy(), 1e-9))
            for i, text in enumerate(texts):
                props = {"layer": kind}
                for column in _columns(kind):
                    if column in frame.columns and column != "proposal_id":
                        props[column] = _plain(frame[column].iloc[i])
                features.append(
                    {"type": "Feature", "properties": props, "geometry": json.loads(text)}
                )
        row = one.attributes.iloc[0] if len(one.attributes) else pd.Series(dtype="object")
        attrs = {"proposal_id": pid, **{c: _plain(row.get(c)) for c in ATTRIBUTE_COLUMNS}}
        out.append({"type": "FeatureCollection", "proposal": attrs, "features": features})
    return out


def _export_frames(proposals: Proposals) -> dict[str, pd.DataFrame]:
    """Return the layers of a proposals GeoPackage (dates as dates, only the spec's columns)."""
    out: dict[str, pd.DataFrame] = {}
    for kind in EDITED_LAYERS:
        frame = getattr(proposals, kind)
        if frame is None or (len(frame) == 0 and kind != "disturbance"):
            continue
        keep = [c for c in _columns(kind) if c in frame.columns]
        frame = frame[[*keep, frame.geometry.name]].copy()
        for column, typ in _columns(kind).items():
            if typ == "date" and column in frame.columns:
                frame[column] = pd.to_datetime(frame[column]).dt.date
            elif typ == "bool" and column in frame.columns:
                frame[column] = frame[column].astype("object").where(frame[column].notna(), None)
        out[kind] = frame
    attrs = proposals.attributes.reset_index()
    for column, typ in ATTRIBUTE_COLUMNS.items():
        if typ == "date":
            attrs[column] = pd.to_datetime(attrs[column]).dt.date
        elif typ == "bool":
            attrs[column] = attrs[column].astype("object").where(attrs[column].notna(), None)
    out["proposals"] = pd.DataFrame(attrs[["proposal_id", *ATTRIBUTE_COLUMNS]])
    return out


def export_gpkg(proposals: Proposals) -> bytes:
    """Return a proposals GeoPackage (working CRS) that ``gis-sw check`` reads, as bytes."""
    with tempfile.TemporaryDirectory(prefix="gis-sw-export-") as tmp:
        path = Path(tmp) / "proposal.gpkg"
        for name, frame in _export_frames(proposals).items():
            pyogrio.write_dataframe(frame, path, layer=name, driver="GPKG")
        return path.read_bytes()


def export_geojson(proposals: Proposals) -> bytes:
    """Return the limits of disturbance with the proposal's attributes (RFC 7946, EPSG:4326).

    What ``gis-sw check`` reads from a single file: the disturbance layer, with
    ``land_use``, ``exemption`` ... taken per ``proposal_id``.  Devices and impervious
    surfaces travel only in the GeoPackage.
    """
    frames = _export_frames(proposals)
    dist = frames["disturbance"]
    attrs = frames["proposals"]
    merged = dist.merge(attrs, on="proposal_id", how="left")
    merged = gpd.GeoDataFrame(merged, geometry=dist.geometry.name, crs=proposals.crs)
    with tempfile.TemporaryDirectory(prefix="gis-sw-export-") as tmp:
        path = Path(tmp) / "proposal.geojson"
        pyogrio.write_dataframe(
            merged.to_crs(WGS84),
            path,
            driver="GeoJSON",
            layer_options={"RFC7946": "YES", "COORDINATE_PRECISION": "9"},
        )
        return path.read_bytes()
