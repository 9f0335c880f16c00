"""Layers that map part of the town, and layers declared none: what a pass may rely on.

A buildings layer with five footprints is a valid layer; a device 9,000 ft from the nearest
of them is not 9,000 ft from every basement.  When the layers manifest says a layer maps
only part of the town (``coverage = "extent"`` or a polygon file,
:attr:`gis_sw.layers.layerset.LayerSet.coverage`), every ``pass`` or ``info`` finding of a
rule that relies on that layer (:data:`gis_sw.analysis.registry.RULE_LAYERS`) whose subject
lies outside the coverage, wholly or in part, or nearer its edge than the rule looked (its
limit in feet, or the distance it reports), becomes ``review``, with the sentence
"buildings cover only part of the town; this device is outside it".  ``fail`` and
``required`` stay: they come from features that are mapped.

The subject is the device for a finding about a device, else the proposal's disturbance.

A layer declared none (``[wells] none = true``) is an empty layer: rules may pass on it,
and their pass and info messages say that it was declared none.

A layer with features that have no location (a null or empty geometry), or that lost
features when read (``on_bad_feature = "skip"``, :meth:`LayerSet.dropped`), is partial
everywhere: an unlocated well may be the one within 50 ft.  Every ``pass`` or ``info`` of a
rule relying on it becomes ``review`` naming those features (:func:`unlocated_features`).

Parcels that share one geometry under different ids (condominium units stacked on one lot,
:meth:`gis_sw.layers.layerset.LayerSet.duplicate_geometries`) are one lot: a message naming
one of them names the others with it (:func:`name_shared_lots`).
"""

from __future__ import annotations

import re

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.findings import Outcome
from gis_sw.analysis.registry import layers_needed
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.specs import TOWN_LAYERS

__all__ = ["apply_coverage", "coverage_applies", "name_shared_lots", "shared_lot_messages"]


def _words(kind: str) -> str:
    return kind.replace("_", " ")


def _subjects(rows: gpd.GeoDataFrame, ctx: CheckContext) -> tuple[np.ndarray, np.ndarray]:
    """Each row's subject geometry and whether the subject is a device."""
    devices = ctx.proposals.devices
    by_device = {
        (str(p), str(d)): g
        for p, d, g in zip(
            devices["proposal_id"], devices["device_id"], devices.geometry.to_numpy(), strict=True
        )
    }
    union = ctx.disturbance_union
    geoms = np.empty(len(rows), dtype=object)
    is_device = np.zeros(len(rows), dtype=bool)
    pairs = zip(rows["proposal_id"].astype(str), rows["subject_id"].astype(str), strict=True)
    for i, (pid, sid) in enumerate(pairs):
        device = by_device.get((pid, sid))
        if device is not None:
            geoms[i], is_device[i] = device, True
        else:
            geoms[i] = union.get(pid, None)
    return geoms, is_device


def _reach_ft(rows: gpd.GeoDataFrame) -> np.ndarray:
    """Return how far from its subject each finding looked.

    A distance rule's limit (``pass``: nothing within 20 ft), or the distance it measured
    when it reports one (SW208's nearest well); 0 for findings that are not distances.
    """
    feet = rows["unit"].astype(str).to_numpy() == "ft"
    threshold = np.asarray(pd.to_numeric(rows["threshold"], errors="coerce"), dtype=float)
    measured = np.asarray(pd.to_numeric(rows["measured"], errors="coerce"), dtype=float)
    reach = np.where(np.isfinite(threshold), threshold, measured)
    return np.where(feet & np.isfinite(reach), np.maximum(reach, 0.0), 0.0)


def unlocated_features(ctx: CheckContext, kind: str) -> str:
    """Return the features of layer ``kind`` with no location, as a phrase ("" when none).

    Features with a null or empty geometry (named by the layer's id column, else their row
    from 1) and features dropped when the layer was read, with the reason.
    """

    def compute() -> str:
        layer = ctx.layers.get(kind)
        named: list[str] = []
        if layer is not None and len(layer):
            geoms = layer.geometry.to_numpy()
            rows_at = np.flatnonzero(unlocated(geoms))
            spec = TOWN_LAYERS.get(kind)
            column = spec.id_column if spec is not None else None
            ids = layer[column].to_numpy(dtype=object) if column in layer.columns else None
            for i in rows_at[:5]:
                value = ids[i] if ids is not None else None
                label = f"row {i + 1}" if value is None or pd.isna(value) else str(value)
                named.append(f"{label} (no geometry)")
            if len(rows_at) > 5:
                named.append(f"{len(rows_at) - 5} more with no geometry")
        dropped = ctx.layers.dropped(kind)
        named += [f"{d.feature} (dropped when read: {d.reason})" for d in dropped[:5]]
        if len(dropped) > 5:
            named.append(f"{len(dropped) - 5} more dropped")
        return ", ".join(named)

    def kept() -> str:
        # a long-lived Town gives the same frame for the same cut: derived once per frame
        layer = ctx.layers.get(kind)
        depends = (layer, ctx.layers.reports)
        return ctx.town_cache(f"coverage.unlocated.{kind}", id(layer), depends, compute)

    return ctx.memo(f"coverage.unlocated.{kind}", kept)


def _review_unlocated(
    rule_id: str,
    needed: tuple[str, ...],
    passive: np.ndarray,
    messages: np.ndarray,
    ctx: CheckContext,
) -> np.ndarray:
    """Rewrite the passive rows' messages where a needed layer has unlocated features.

    Returns which rows become ``review``.
    """
    missing = [(k, unlocated_features(ctx, k)) for k in needed]
    missing = [(k, text) for k, text in missing if text]
    if not missing or not passive.any():
        return np.zeros(len(passive), dtype=bool)
    what = "; ".join(f"{_words(k)}: {text}" for k, text in missing)
    for i in np.flatnonzero(passive):
        messages[i] = (
            f"Features of a layer {rule_id} relies on have no location ({what}), so {rule_id} "
            "cannot pass on what the layers show: give them their geometry, or remove them "
            f"from the layer, and screen again. (The layers show: {messages[i]})"
        )
    return passive.copy()


def coverage_applies(rule_id: str, ctx: CheckContext) -> bool:
    """Whether :func:`apply_coverage` may change rows of ``rule_id`` (else it returns them).

    True when a layer the rule relies on maps part of the town, is declared none, or has
    features without a location.
    """
    needed = layers_needed(rule_id)
    return bool(needed) and any(
        ctx.layers.covers(k) is not None
        or k in ctx.layers.declared_none
        or unlocated_features(ctx, k)
        for k in needed
    )


def apply_coverage(rule_id: str, rows: gpd.GeoDataFrame, ctx: CheckContext) -> gpd.GeoDataFrame:
    """Turn passes outside a needed layer's coverage into review; note declared absences.

    Passes of a rule whose layer has features with no location become review too.
    """
    if not len(rows) or not coverage_applies(rule_id, ctx):
        return rows
    needed = layers_needed(rule_id)
    partial = [(k, ctx.layers.covers(k)) for k in needed if ctx.layers.covers(k) is not None]
    declared = [k for k in needed if k in ctx.layers.declared_none]
    unlocated = any(unlocated_features(ctx, k) for k in needed)
    rows = rows.copy()
    outcome = rows["outcome"].astype(str).to_numpy()
    passive = np.isin(outcome, [str(Outcome.PASS), str(Outcome.INFO)])
    messages = rows["message"].astype(str).to_numpy().copy()
    if unlocated:
        lost = _review_unlocated(rule_id, needed, passive, messages, ctx)
        outcome = np.where(lost, str(Outcome.REVIEW), outcome)
        passive &= ~lost
    if partial:
        geoms, is_device = _subjects(rows, ctx)
        present = np.array([g is not None and not shapely.is_empty(g) for g in geoms], dtype=bool)
        outside_any = np.zeros(len(rows), dtype=bool)
        reach = _reach_ft(rows)
        for kind, area in partial:
            shapely.prepare(area)
            inside = np.zeros(len(rows), dtype=bool)
            if present.any():
                # inside, and the rule's whole reach too: a device 5 ft inside the flown
                # area has not shown there is no basement 20 ft away, outside it
                edge = shapely.boundary(area)
                inside[present] = shapely.covered_by(geoms[present], area) & (
                    shapely.distance(geoms[present], edge) >= reach[present]
                )
            outside = passive & present & ~inside & ~outside_any
            for i in np.flatnonzero(outside):
                noun = "device" if is_device[i] else "proposal's disturbance"
                messages[i] = (
                    f"{_words(kind).capitalize()} cover only part of the town; this {noun} "
                    f"is outside it, so {rule_id} cannot pass on what the layer shows: review "
                    f"by hand. (The layer shows: {messages[i]})"
                )
            outside_any |= outside
        outcome = np.where(outside_any, str(Outcome.REVIEW), outcome)
        passive &= ~outside_any
    if declared:
        note = "; ".join(f"{_words(k)} declared none in the layers manifest" for k in declared)
        for i in np.flatnonzero(passive):
            messages[i] = f"{messages[i].rstrip()} ({note}.)"
    rows["outcome"] = outcome
    rows["message"] = messages
    return rows


_PARCEL_WORD = re.compile(r"\bparcel (\S+?)(?=[,;:)]?(?:\s|$)|\.(?:\s|$))")


def name_shared_lots(rows: gpd.GeoDataFrame, ctx: CheckContext) -> gpd.GeoDataFrame:
    """Append, to a message naming a parcel that shares its geometry with others, their ids."""
    if not ctx.layers.duplicate_geometries("parcels") or not len(rows):
        return rows
    messages = shared_lot_messages(rows["message"].astype(str).to_numpy(), ctx)
    if messages is None:
        return rows
    rows = rows.copy()
    rows["message"] = messages
    return rows


def shared_lot_messages(messages: np.ndarray, ctx: CheckContext) -> np.ndarray | None:
    """Return ``messages`` with the partners of every shared lot they name (None: unchanged).

    The messages' text is as :func:`name_shared_lots` gives it.
    """
    groups = ctx.layers.duplicate_geometries("parcels")
    if not groups:
        return None
    partners = {pid: group for group in groups for pid in group}
    messages = messages.copy()
    changed = False
    for i, text in enumerate(messages):
        named = [m for m in _PARCEL_WORD.findall(text) if m in partners]
        if not named:
            continue
        pid = named[0]
        others = ", ".join(p for p in partners[pid] if p != pid)
        messages[i] = (
            f"{text.rstrip()} (Parcel {pid} is the same lot as {others}: one geometry, "
            "several ids, such as condominium units.)"
        )
        changed = True
    return messages if changed else None
