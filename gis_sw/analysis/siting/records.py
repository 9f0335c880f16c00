"""The records siting passes between its steps: device classes, constraint parts, notes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from gis_sw.analysis.distances import grown_radius
from gis_sw.analysis.siting.offsets import buffer_like_geos

QUAD_SEGS = 128
"""Segments per quarter circle of every buffer (growth under 0.001 ft at 50 ft)."""

SITING_COLUMNS = (
    "parcel_id",
    "device_class",
    "depth_ft",
    "area_sqft",
    "outcome",
    "reason",
    "geometry",
)


class DeviceClass(StrEnum):
    """Which setbacks apply: roof runoff, or runoff from roadways, parking and driveways."""

    ROOF = "roof"
    VEHICLE = "vehicle"


def grown_buffer(geoms: np.ndarray, radius_ft: float, quad_segs: int) -> np.ndarray:
    """Return the buffers of ``geoms`` at ``radius_ft`` grown by the chord error.

    No chord of the returned polygons lets a point closer than ``radius_ft`` through
    (:func:`gis_sw.analysis.distances.grown_radius`).
    """
    return buffer_like_geos(geoms, grown_radius(radius_ft, quad_segs), quad_segs)


@dataclass(frozen=True, slots=True, eq=False)
class Note:
    """A reason for ``review``.

    Attributes
    ----------
    text
        What was missing and what was done about it.
    where
        Polygons it applies to (a parcel they touch gets the note); None for every parcel.
    removes
        True when the missing data made the polygon smaller (an area left out because it
        could not be screened); False when a constraint was skipped.  A parcel left with no
        place is ``fail`` only when no removing note touches it.
    vehicle_only
        True when the note concerns the vehicle class alone.
    """

    text: str
    where: np.ndarray | None = None
    removes: bool = False
    vehicle_only: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Part:
    """Constraint polygons that take area away, and how a ``fail`` reason names them.

    Attributes
    ----------
    geoms
        Every polygon of the constraint (what a ``fail`` reason looks for).
    label
        How a ``fail`` reason names it.
    vehicle_only
        True for the 50-ft zones that bind vehicle-traffic devices alone.
    cut
        The subset that must be subtracted (None: all of ``geoms``), when the rest lies
        inside another part already.
    """

    geoms: np.ndarray
    label: str
    vehicle_only: bool = False
    cut: np.ndarray | None = None

    @property
    def to_cut(self) -> np.ndarray:
        """Return the polygons to subtract."""
        return self.geoms if self.cut is None else self.cut


@dataclass(frozen=True, slots=True, eq=False)
class Constraints:
    """Every constraint of a set of lots, and the notes of what could not be screened.

    Attributes
    ----------
    parts
        In the order ``fail`` reasons list them.
    notes
        In the order ``review`` reasons list them.
    """

    parts: list[Part]
    notes: list[Note]

    def parts_for(self, klass: DeviceClass) -> list[Part]:
        """Return the parts that bind ``klass``."""
        return [p for p in self.parts if klass == DeviceClass.VEHICLE or not p.vehicle_only]

    def notes_for(self, klass: DeviceClass) -> list[Note]:
        """Return the notes that concern ``klass``."""
        return [n for n in self.notes if klass == DeviceClass.VEHICLE or not n.vehicle_only]

    def cuts(self, *, vehicle_only: bool) -> list[np.ndarray]:
        """Return the polygons to subtract of the shared parts, or of the vehicle-only ones."""
        return [p.to_cut for p in self.parts if p.vehicle_only == vehicle_only]
