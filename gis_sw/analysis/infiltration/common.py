"""What the device rules share: feature names, nearest features, one row per device.

:class:`DeviceRows` gives a check's :class:`~gis_sw.analysis.findings.Findings` one row per
device (``review`` until the check decides it), and ends every message with the rule's
citation, so every device rule reads the same way.
"""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.buildings import building_names
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.devices import device_frame
from gis_sw.analysis.distances import nearest
from gis_sw.analysis.findings import Findings, Outcome
from gis_sw.layers.geoms import unlocated

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


def ft(value: float) -> str:
    """Return a measured distance as written in messages (``9.99 ft``)."""
    return f"{value:.2f} ft"


def limit_ft(value: float) -> str:
    """Return a limit distance as the ruleset gives it (``10 ft``)."""
    return f"{value:g} ft"


def feature_names(frame: gpd.GeoDataFrame, kind: str) -> np.ndarray:
    """Return a readable name per feature: its id, or ``<noun> #<row>`` where it has none."""
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


def no_devices(ctx: CheckContext) -> bool:
    """Whether the proposals have no device: a device rule then has no row to give.

    Its check returns at once, before it reads a layer (``gis-sw serve`` re-checks a
    disturbance without devices on every edit).
    """
    return len(ctx.proposals.devices) == 0


def nearest_of(ctx: CheckContext, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the nearest feature of layer ``kind`` to every device (computed once per run)."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        layer = ctx.layers.get(kind)
        geoms = device_frame(ctx).geometry.to_numpy()
        targets = layer.geometry.to_numpy() if layer is not None else np.empty(0, dtype=object)
        return nearest(geoms, targets)

    return ctx.memo(f"infiltration.nearest.{kind}", compute)


def rows_of(source: np.ndarray, keep: np.ndarray, i: int) -> np.ndarray:
    """Return positions of device ``i``'s kept pairs (sorted by source, then distance)."""
    lo, hi = np.searchsorted(source, [i, i + 1])
    return lo + np.flatnonzero(keep[lo:hi])


class DeviceRows:
    """One finding per device, in device order, on a check's builder.

    Every device starts as ``review`` with its own geometry; :meth:`set` decides it, adds
    the rule's citation to the message and rounds the measured figure to 0.01.  A rule that
    measures where a device is (``spatial``) never passes a device with no location (a null
    or empty geometry): nothing near nowhere is not nothing near the device.
    """

    __slots__ = ("ctx", "devices", "geoms", "ids", "located", "rows", "spatial")

    def __init__(
        self,
        ctx: CheckContext,
        rows: Findings,
        threshold: float,
        unit: str = "ft",
        *,
        spatial: bool = True,
    ):
        self.ctx = ctx
        self.rows = rows
        self.spatial = spatial
        self.devices = device_frame(ctx)
        self.geoms = self.devices.geometry.to_numpy()
        self.located = ~unlocated(self.geoms)
        self.ids = self.devices["device_id"].astype(str).to_numpy()
        rows.threshold, rows.unit = threshold, unit
        if len(self.devices):
            rows.extend(
                proposal_id=self.devices["proposal_id"].astype(str).to_list(),
                subject_id=list(self.ids),
                outcome=Outcome.REVIEW,
                message="",
                geometry=list(self.geoms),
            )

    def __len__(self) -> int:
        """Return the number of devices."""
        return len(self.devices)

    def name(self, i: int) -> str:
        """Return how messages name device ``i``."""
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
        """Decide device ``i``: ``message`` gets the citation, ``measured`` is rounded.

        A pass (or a reported figure) of a spatial rule on a device with no location
        becomes ``review``.
        """
        passive = outcome in (Outcome.PASS, Outcome.INFO)
        if passive and self.spatial and not self.located[i]:
            outcome, measured, geometry = Outcome.REVIEW, math.nan, None
            message = (
                f"{self.name(i)} has no location (its geometry is null or empty), so this "
                "cannot be measured and the rule cannot pass: draw the device's point or "
                "footprint in the devices layer"
            )
        self.rows.set(
            i,
            outcome,
            f"{message} ({self.rows.citation}).",
            measured=round(measured, 2) if not math.isnan(measured) else math.nan,
            geometry=geometry,
        )
