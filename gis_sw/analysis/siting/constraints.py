"""The constraints of siting, built once for a set of lots from the town's layers.

Each builder takes the layers and the lots and returns the :class:`Part` polygons that take
area away and the :class:`Note` reasons for ``review`` where a layer or value is missing.
Only features within their setback of some lot are buffered (STRtree ``intersects``, then
``dwithin`` queries per layer): a setback that cannot reach a lot costs nothing.
"""

from __future__ import annotations

import numpy as np
import shapely

from gis_sw.analysis.buildings import BASEMENT_COLUMNS, basement_status, is_building
from gis_sw.analysis.infiltration import OPTIONAL_WATER
from gis_sw.analysis.siting.cells import septic_parts, vertical_parts
from gis_sw.analysis.siting.records import Constraints, Note, Part, grown_buffer
from gis_sw.layers.layerset import LayerSet
from gis_sw.ruleset import Ruleset

VEHICLE_KINDS = ("wells", "wetlands", "water_bodies", "streams")
"""Layers whose features keep a vehicle-traffic device ``vehicle_traffic_ft`` away."""


def near_mask(geoms: np.ndarray, lots: shapely.STRtree, distance_ft: float) -> np.ndarray:
    """Return the mask of the features within ``distance_ft`` of any lot.

    A feature that meets a lot (most buildings, septic fields and wells of a town stand on
    one) is near: one ``intersects`` query decides those, about a third of the cost of a
    ``dwithin``; the exact ``dwithin`` query runs on the rest only.  The same mask.
    """
    mask = np.zeros(len(geoms), dtype=bool)
    if len(geoms) == 0:
        return mask
    hit, _ = lots.query(geoms, predicate="intersects")
    mask[hit] = True
    rest = np.flatnonzero(~mask)
    if len(rest):
        hit, _ = lots.query(geoms[rest], predicate="dwithin", distance=distance_ft)
        mask[rest[hit]] = True
    return mask


def building_constraints(
    layers: LayerSet, lots: shapely.STRtree, ruleset: Ruleset, quad_segs: int
) -> tuple[list[Part], list[Note]]:
    """Return the basement zones and footprints of the buildings near the lots.

    § 183-6: a structure of 100 sq ft or less is not a building: its footprint still holds
    no device, but it has no zone.  A building with no basement value counts as having one,
    with a note.
    """
    params = ruleset.devices
    distance_ft = params.habitable_basement_ft
    buildings = layers.get("buildings")
    if buildings is None:
        text = f"no buildings layer: the {distance_ft:g}-ft basement setback was not applied"
        return [], [Note(text)]
    if len(buildings) == 0:
        return [], []
    near = near_mask(buildings.geometry.to_numpy(), lots, distance_ft)
    footprints = buildings.geometry.to_numpy()[near]
    qualifies, why = basement_status(buildings[near])
    big = is_building(footprints, ruleset)
    unknown = big & np.array([q is None for q in qualifies], dtype=bool)
    counts = big & np.array([q is not False for q in qualifies], dtype=bool)
    zones = grown_buffer(footprints[counts], distance_ft, quad_segs)
    label = f"within {distance_ft:g} ft of a habitable basement or below-ground storage"
    parts = [
        Part(zones, label),
        # a footprint inside its own basement zone need not be subtracted again
        Part(footprints, "a building footprint", cut=footprints[~counts]),
    ]
    if not unknown.any():
        return parts, []
    named = {c for w in why[unknown] for c in str(w).split(" and ")}
    missing = [c for c in BASEMENT_COLUMNS if c in named]
    note = Note(
        f"a building within {distance_ft:g} ft has no "
        + " or no ".join(f"{c} value" for c in missing)
        + " and was treated as having a habitable basement",
        zones[unknown[counts]],  # the same buffers as those zones: built once
        removes=True,
    )
    return parts, [note]


def vehicle_constraints(
    layers: LayerSet, lots: shapely.STRtree, ruleset: Ruleset, quad_segs: int
) -> tuple[list[Part], list[Note]]:
    """Return the 50-ft zones around wells, wetlands, water bodies and streams near the lots."""
    distance_ft = ruleset.devices.vehicle_traffic_ft
    parts: list[Part] = []
    notes: list[Note] = []
    for kind in VEHICLE_KINDS:
        layer = layers.get(kind)
        name = kind.replace("_", " ")
        if layer is None and kind in OPTIONAL_WATER:
            continue
        if layer is None:
            text = (
                f"no {kind} layer: the {distance_ft:g}-ft vehicle "
                f"setback from {name} was not applied"
            )
            notes.append(Note(text, vehicle_only=True))
        elif len(layer):
            geoms = layer.geometry.to_numpy()
            geoms = geoms[near_mask(geoms, lots, distance_ft)]
            zones = grown_buffer(geoms, distance_ft, quad_segs)
            label = f"within {distance_ft:g} ft of {name}"
            parts.append(Part(zones, label, vehicle_only=True))
    return parts, notes


def septic_constraints(
    layers: LayerSet, lots: shapely.STRtree, ruleset: Ruleset, quad_segs: int
) -> tuple[list[Part], list[Note]]:
    """Return the up-gradient parts of the zones around the septic fields near the lots."""
    params = ruleset.devices
    septic = layers.get("septic_fields")
    if septic is None:
        text = "no septic_fields layer: the septic up-gradient setback was not applied"
        return [], [Note(text)]
    if len(septic) == 0:
        return [], []
    fields = septic.geometry.to_numpy()
    fields = fields[near_mask(fields, lots, params.septic_upgradient_ft)]
    geoms, notes = septic_parts(
        fields,
        layers.raster("dem"),
        setback_ft=params.septic_upgradient_ft,
        flat_ft=params.upgradient_flat_tolerance_ft,
        quad_segs=quad_segs,
    )
    label = f"up-gradient within {params.septic_upgradient_ft:g} ft of a septic field"
    return [Part(geoms, label)], notes


def vertical_constraints(
    layers: LayerSet,
    ruleset: Ruleset,
    *,
    depth_ft: float | None,
    bounds: tuple[float, float, float, float],
) -> tuple[list[Part], list[Note]]:
    """Return the cells too close to seasonal high groundwater or bedrock for the depth."""
    params = ruleset.devices
    if depth_ft is None:
        text = "no device depth given (--depth-ft): vertical separation not screened"
        return [], [Note(text)]
    parts: list[Part] = []
    notes: list[Note] = []
    for kind, minimum in (
        ("seasonal_high_groundwater", params.groundwater_separation_ft),
        ("bedrock", params.bedrock_separation_ft),
    ):
        raster = layers.raster(kind)
        if raster is None:
            notes.append(Note(f"no {kind} raster: the {minimum:g}-ft separation was not screened"))
            continue
        cells, cell_notes = vertical_parts(
            raster,
            layers.raster("dem"),
            depth_ft=depth_ft,
            minimum_ft=minimum,
            tolerance_ft=params.distance_tolerance_ft,
            bounds=bounds,
        )
        parts.append(Part(cells, f"less than {minimum:g} ft above {kind.replace('_', ' ')}"))
        notes += cell_notes
    return parts, notes


def build_constraints(
    layers: LayerSet,
    ruleset: Ruleset,
    lots: np.ndarray,
    *,
    vehicle: bool,
    depth_ft: float | None,
    quad_segs: int,
) -> Constraints:
    """Return every constraint of ``lots``, in the order reasons list them.

    Buildings, then (for the vehicle class) water, then septic fields, then the vertical
    separations; the vehicle-only parts and notes are marked as such.
    """
    tree = shapely.STRtree(lots)
    minx, miny, maxx, maxy = (float(v) for v in shapely.total_bounds(lots))
    parts: list[Part] = []
    notes: list[Note] = []
    steps = [
        building_constraints(layers, tree, ruleset, quad_segs),
        vehicle_constraints(layers, tree, ruleset, quad_segs) if vehicle else ([], []),
        septic_constraints(layers, tree, ruleset, quad_segs),
        vertical_constraints(layers, ruleset, depth_ft=depth_ft, bounds=(minx, miny, maxx, maxy)),
    ]
    for step_parts, step_notes in steps:
        parts += step_parts
        notes += step_notes
    return Constraints(parts=parts, notes=notes)
