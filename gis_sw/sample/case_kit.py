"""Tools the sample cases are drawn with: a lot's own coordinates and a book of rows.

:class:`Lot` places geometry on a lot of :data:`gis_sw.sample.town.CASE_LOTS` in feet
across from its west line and feet back from its street line; :class:`CaseBook` collects
the rows of ``proposals.gpkg`` (attributes, disturbance, devices, impervious surfaces) and
of ``expected.csv`` as the cases add them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np
import shapely

from gis_sw.sample.town import CASE_LOTS, SampleTown

DEVICE_DEPTH_FT = 4.0
"""Depth of a sample device when its case does not say."""

SPRING, SUMMER = date(2027, 5, 3), date(2027, 7, 30)
"""Start and end of the small cases' work."""


class Lot:
    """A lot in its own coordinates: x across, d back from the street line."""

    def __init__(self, town: SampleTown, case: str) -> None:
        self.row = town.lot(CASE_LOTS[case])
        self.parcel_id = CASE_LOTS[case]
        r = self.row
        self.x0, self.x1 = float(r["x0"]), float(r["x1"])
        self.front, self.sign = float(r["front_y"]), float(r["dir"])
        self.house_cx = (float(r["house_x0"]) + float(r["house_x1"])) / 2
        self.house_d1 = float(r["house_d1"])

    def y(self, depth_ft: float) -> float:
        """Return the y coordinate ``depth_ft`` behind the street line."""
        return self.front + self.sign * depth_ft

    def box(self, xa: float, xb: float, da: float, db: float) -> shapely.Polygon:
        """Return the box from ``xa`` to ``xb`` across and ``da`` to ``db`` back."""
        ya, yb = self.y(da), self.y(db)
        return shapely.box(xa, min(ya, yb), xb, max(ya, yb))

    def point(self, x: float, depth_ft: float) -> shapely.Point:
        """Return the point at ``x`` across, ``depth_ft`` back."""
        return shapely.Point(x, self.y(depth_ft))


@dataclass(slots=True)
class CaseBook:
    """The rows the cases add, in the order they add them."""

    attributes: list[dict[str, object]] = field(default_factory=list)
    disturbance: list[dict[str, object]] = field(default_factory=list)
    devices: list[dict[str, object]] = field(default_factory=list)
    impervious: list[dict[str, object]] = field(default_factory=list)
    expected: list[tuple[str, str, str, str, str]] = field(default_factory=list)

    def proposal(  # noqa: PLR0917
        self, pid: str, name: str, land_use: str, cost: float, start: date, end: date, **kw: object
    ) -> None:
        """Add a proposal's row of the attribute table."""
        self.attributes.append(
            {
                "proposal_id": pid,
                "name": name,
                "land_use": land_use,
                "exemption": kw.get("exemption"),
                "approved_swppp": False,
                "part_of_larger_plan": kw.get("larger_plan", False),
                "larger_plan_acres": kw.get("plan_acres", np.nan),
                "construction_cost_usd": cost,
                "discharges_to_impaired_water": kw.get("impaired", False),
                "construction_start": start,
                "construction_end": end,
            }
        )

    def disturb(
        self, pid: str, geom: shapely.Geometry, start: date, end: date, phase: str = "1"
    ) -> None:
        """Add a disturbance polygon, numbered after the proposal's others."""
        n = sum(1 for d in self.disturbance if d["proposal_id"] == pid) + 1
        self.disturbance.append(
            {
                "proposal_id": pid,
                "disturbance_id": f"{pid.split('-', maxsplit=1)[0]}-d{n}",
                "phase": phase,
                "start_date": start,
                "end_date": end,
                "geometry": geom,
            }
        )

    def device(self, pid: str, did: str, geom: shapely.Geometry, kind: str, **kw: object) -> None:
        """Add an infiltration device (by default 4 ft deep, with sedimentation and test hole)."""
        self.devices.append(
            {
                "device_id": did,
                "proposal_id": pid,
                "device_type": kind,
                "serves_vehicle_traffic": kw.get("vehicle", False),
                "bottom_elevation_ft": kw.get("bottom", np.nan),
                "depth_ft": kw.get("depth", DEVICE_DEPTH_FT),
                "has_sedimentation_device": kw.get("sedimentation", True),
                "test_hole_logged": kw.get("test_hole", True),
                "geometry": geom,
            }
        )

    def surface(self, pid: str, surface: str, geom: shapely.Geometry, **columns: object) -> None:
        """Add a new impervious surface (``roof``, ``patio``, ``road`` ...)."""
        self.impervious.append(
            {"proposal_id": pid, "surface": surface, **columns, "geometry": geom}
        )

    def expect(self, pid: str, rule: str, subject: str, outcome: str, note: str) -> None:
        """Add the outcome the law gives a case (a row of ``expected.csv``)."""
        self.expected.append((pid, rule, subject, outcome, note))


def square(point: shapely.Point, half_ft: float = 4.0) -> shapely.Polygon:
    """Return the excavation around a drywell."""
    return shapely.box(point.x - half_ft, point.y - half_ft, point.x + half_ft, point.y + half_ft)


def near(town: SampleTown, kind: str, geometry: shapely.Geometry, distance_ft: float) -> Any:
    """Return the union of a layer's features within ``distance_ft`` of ``geometry`` (STRtree)."""
    frame = town.vectors[kind]
    hits = frame.sindex.query(geometry, predicate="dwithin", distance=distance_ft)
    return shapely.union_all(frame.geometry.values[np.sort(hits)])


def wetland_depth_ft(town: SampleTown, lot: Lot, xa: float, xb: float) -> float:
    """Return the depth behind the street line where the wetland begins across ``xa``-``xb``.

    Raises
    ------
    ValueError
        If no wetland crosses the lot there.
    """
    strip = lot.box(xa, xb, 0.0, float(lot.row["depth"]))
    wet = shapely.intersection(near(town, "wetlands", strip, 0.0), strip)
    if wet.is_empty:
        raise ValueError(f"no wetland on lot {lot.parcel_id}: the wetland case cannot be built")
    coords = shapely.get_coordinates(wet)
    depths = (coords[:, 1] - lot.front) * lot.sign
    return float(depths.min())


def resource_overlaps(
    town: SampleTown, geometry: shapely.Geometry, *, adjacent_ft: float = 100.0
) -> list[tuple[str, float, str]]:
    """Return (resource, overlap sq ft, description) of a disturbance with mapped resources."""
    wetlands = near(town, "wetlands", geometry, adjacent_ft + 1.0)
    resources = (
        ("wetlands", wetlands, "mapped wetlands (Chapter 111)"),
        ("wetland_adjacent_area",
         shapely.difference(shapely.buffer(wetlands, adjacent_ft, quad_segs=64), wetlands),
         f"the wetland adjacent area, within {adjacent_ft:g} ft outside the wetland (Chapter 111)"),
        ("water_bodies", near(town, "water_bodies", geometry, 1.0), "mapped water bodies"),
        ("floodplain", near(town, "floodplain", geometry, 1.0),
         "the 100-year floodplain, zone AE (Chapter 108)"),
    )  # fmt: skip
    return [
        (name, float(shapely.area(shapely.intersection(geometry, shape))), what)
        for name, shape, what in resources
    ]


def raster_at(town: SampleTown, kind: str, point: shapely.Point) -> float:
    """Return a raster's value at a point."""
    return float(town.rasters[kind].sample_xy(np.array([point.x]), np.array([point.y]))[0])
