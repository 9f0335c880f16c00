"""The siting table: each lot's polygon, area, outcome and the reason in words."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import shapely

from gis_sw.analysis.siting.records import DeviceClass, Note, Part


def result_frame(
    ids: np.ndarray,
    inner: np.ndarray,
    allowed: np.ndarray,
    parts: list[Part],
    notes: list[Note],
    *,
    klass: DeviceClass,
    depth_ft: float | None,
    setback_ft: float,
    crs: object,
) -> gpd.GeoDataFrame:
    """Return one class's :data:`SITING_COLUMNS` from its allowed polygons, parts and notes."""
    area = shapely.area(allowed)
    has_room = np.round(area) > 0
    texts, removed = parcel_notes(inner, notes)
    flagged = np.array([bool(t) for t in texts], dtype=bool)
    outcome = np.where(
        has_room, np.where(flagged, "review", "pass"), np.where(removed, "review", "fail")
    )
    blocked = blocking(
        inner,
        [p.geoms for p in parts],
        [p.label for p in parts],
        np.flatnonzero(~has_room),
        setback_ft=setback_ft,
    )
    reason = [
        (text or "every setback applied")
        if ok
        else f"no place on the parcel meets every setback: {blocked[i]}"
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


def blocking(
    inner: np.ndarray,
    parts: list[np.ndarray],
    labels: list[str],
    rows: np.ndarray,
    *,
    setback_ft: float,
) -> dict[int, str]:
    """Return, for the parcels ``rows`` left with no place, what covers the rest of them."""
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


def parcel_notes(inner: np.ndarray, notes: list[Note]) -> tuple[list[str], np.ndarray]:
    """Return each parcel's review reasons, and whether missing data removed area from it.

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
