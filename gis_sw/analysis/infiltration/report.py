"""Separation of each device and new building from wells, water bodies, wetlands (SW208)."""

from __future__ import annotations

import math

import numpy as np
import shapely

from gis_sw.analysis.buildings import proposed_roofs
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.distances import nearest
from gis_sw.analysis.findings import Findings, Outcome, rule_check
from gis_sw.analysis.infiltration.common import (
    FEATURE_LAYERS,
    OPTIONAL_WATER,
    DeviceRows,
    feature_names,
    ft,
    nearest_of,
    no_devices,
)


def _separation_text(
    ctx: CheckContext, geoms: np.ndarray, *, of_devices: bool
) -> tuple[list[str], np.ndarray, list[shapely.Geometry | None]]:
    """Return, for each geometry, a sentence of nearest distances, the least one, its line.

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
        idx, dist = nearest_of(ctx, kind) if of_devices else nearest(geoms, features)
        for i in range(len(geoms)):
            if idx[i] < 0:
                parts[i].append(f"{noun}: none mapped")
                continue
            parts[i].append(f"nearest {names[idx[i]]} at {ft(dist[i])}")
            if dist[i] < best_d[i]:
                best_d[i] = dist[i]
                best_line[i] = shapely.shortest_line(geoms[i], features[idx[i]])
    return ["; ".join(p) for p in parts], best_d, best_line


@rule_check
def check_separation_report(ctx: CheckContext, out: Findings) -> None:
    """Check SW208: each device's and new building's distance to wells, waters, wetlands.

    Info: § 183-12C(2)(c)[5] asks both to keep the most distance they can from the nearest
    well, water body and wetland.

    New buildings are the proposal's ``impervious`` roofs of more than 100 sq ft
    (:func:`gis_sw.analysis.buildings.proposed_roofs`); a ``streams`` layer, when given,
    adds the nearest stream.
    """
    out.threshold, out.unit = math.nan, "ft"  # the new buildings' rows too
    if not no_devices(ctx):
        rows = DeviceRows(ctx, out, math.nan)
        texts, best_d, best_line = _separation_text(ctx, rows.geoms, of_devices=True)
        for i, text in enumerate(texts):
            rows.set(
                i,
                Outcome.INFO,
                f"{rows.name(i)}: {text}",
                measured=float(best_d[i]) if np.isfinite(best_d[i]) else math.nan,
                geometry=best_line[i],
            )
    roofs = proposed_roofs(ctx)
    if len(roofs):
        geoms = np.asarray(roofs.geometry.to_numpy(), dtype=object)
        texts, best_d, best_line = _separation_text(ctx, geoms, of_devices=False)
        proposal_ids = roofs["proposal_id"].astype(str).to_numpy()
        number = roofs["number"].to_numpy()
        out.extend(
            proposal_id=list(proposal_ids),
            subject_id=[f"{p}:building-{n}" for p, n in zip(proposal_ids, number, strict=True)],
            outcome=Outcome.INFO,
            message=[
                f"New building {n} of {p}: {t} ({out.citation})."
                for p, n, t in zip(proposal_ids, number, texts, strict=True)
            ],
            measured=[round(float(d), 2) if np.isfinite(d) else math.nan for d in best_d],
            geometry=[
                line if line is not None else g for line, g in zip(best_line, geoms, strict=True)
            ],
        )
