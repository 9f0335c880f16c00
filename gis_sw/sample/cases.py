"""The named sample proposals: one application per case, each built where its outcome is certain.

Every case stands on a lot named in :data:`gis_sw.sample.town.CASE_LOTS` and is drawn in
that lot's own coordinates (feet across from its west line, feet back from its street
line), so the numbers below are the numbers the law is applied to.  The outcome the law
gives each case is written here by hand, read from RULES.md and the geometry, never computed
by the checks; ``data/sample/README.md`` explains every one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.layers.build import make_proposals
from gis_sw.layers.proposals import Proposals
from gis_sw.sample.town import CASE_LOTS, SampleTown

EXPECTED_COLUMNS = ("proposal_id", "rule_id", "subject_id", "outcome", "note")
DEVICE_DEPTH_FT = 4.0
SHALLOW_SEPARATION_FT = 1.0
"""How far the groundwater case's device bottom sits above seasonal high groundwater."""

# Phases of the commercial site: (phase, depth of the strip in ft, start, end)
COMMERCIAL_PHASES = (
    ("1", 163.35, date(2027, 4, 1), date(2027, 10, 31)),  # 3.0 acres
    ("2", 136.125, date(2027, 8, 1), date(2028, 3, 31)),  # 2.5 acres
    ("3", 81.675, date(2028, 4, 17), date(2028, 9, 29)),  # 1.5 acres
)
COMMERCIAL_WIDTH_FT = 800.0


@dataclass(frozen=True, slots=True, eq=False)
class SampleProposals:
    """The sample applications and the outcomes the law gives them.

    Attributes
    ----------
    disturbance, devices, impervious
        Layers of ``proposals.gpkg`` in EPSG:2260.
    attributes
        One row per proposal (the ``proposals`` attribute table), column ``proposal_id``.
    expected
        ``proposal_id, rule_id, subject_id, outcome, note`` (``expected.csv``).
    """

    disturbance: gpd.GeoDataFrame
    devices: gpd.GeoDataFrame
    impervious: gpd.GeoDataFrame
    attributes: pd.DataFrame
    expected: pd.DataFrame

    def proposals(self) -> Proposals:
        """The cases as :class:`Proposals`, as :func:`read_proposals` would give them."""
        return make_proposals(
            self.disturbance.crs,
            self.disturbance,
            self.devices,
            self.attributes,
            self.impervious,
            source="<sample proposals>",
        )


class _Lot:
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
        return self.front + self.sign * depth_ft

    def box(self, xa: float, xb: float, da: float, db: float) -> shapely.Polygon:
        ya, yb = self.y(da), self.y(db)
        return shapely.box(xa, min(ya, yb), xb, max(ya, yb))

    def point(self, x: float, depth_ft: float) -> shapely.Point:
        return shapely.Point(x, self.y(depth_ft))


def _square(point: shapely.Point, half_ft: float = 4.0) -> shapely.Polygon:
    """The excavation around a drywell."""
    return shapely.box(point.x - half_ft, point.y - half_ft, point.x + half_ft, point.y + half_ft)


def _near(town: SampleTown, kind: str, geometry: shapely.Geometry, distance_ft: float) -> Any:
    """Union of the features of a layer within ``distance_ft`` of ``geometry`` (STRtree)."""
    frame = town.vectors[kind]
    hits = frame.sindex.query(geometry, predicate="dwithin", distance=distance_ft)
    return shapely.union_all(frame.geometry.values[np.sort(hits)])


def _wetland_depth_ft(town: SampleTown, lot: _Lot, xa: float, xb: float) -> float:
    """Depth behind the street line where the nearest wetland begins across ``xa``-``xb``."""
    strip = lot.box(xa, xb, 0.0, float(lot.row["depth"]))
    wet = shapely.intersection(_near(town, "wetlands", strip, 0.0), strip)
    if wet.is_empty:
        raise ValueError(f"no wetland on lot {lot.parcel_id}: the wetland case cannot be built")
    coords = shapely.get_coordinates(wet)
    depths = (coords[:, 1] - lot.front) * lot.sign
    return float(depths.min())


def resource_overlaps(
    town: SampleTown, geometry: shapely.Geometry, *, adjacent_ft: float = 100.0
) -> list[tuple[str, float, str]]:
    """(resource, overlap sq ft, description) of a disturbance with the mapped resources."""
    wetlands = _near(town, "wetlands", geometry, adjacent_ft + 1.0)
    resources = (
        ("wetlands", wetlands, "mapped wetlands (Chapter 111)"),
        ("wetland_adjacent_area",
         shapely.difference(shapely.buffer(wetlands, adjacent_ft, quad_segs=64), wetlands),
         f"the wetland adjacent area, within {adjacent_ft:g} ft outside the wetland (Chapter 111)"),
        ("water_bodies", _near(town, "water_bodies", geometry, 1.0), "mapped water bodies"),
        ("floodplain", _near(town, "floodplain", geometry, 1.0),
         "the 100-year floodplain, zone AE (Chapter 108)"),
    )  # fmt: skip
    return [
        (name, float(shapely.area(shapely.intersection(geometry, shape))), what)
        for name, shape, what in resources
    ]


def _raster_at(town: SampleTown, kind: str, point: shapely.Point) -> float:
    return float(town.rasters[kind].sample_xy(np.array([point.x]), np.array([point.y]))[0])


def build_cases(town: SampleTown) -> SampleProposals:
    """The named cases on a town that holds the first cycle of bands (323+ parcels).

    Raises
    ------
    KeyError
        If the town is too small to hold every case lot.
    """
    crs = town.crs
    dist: list[dict[str, object]] = []
    devs: list[dict[str, object]] = []
    imperv: list[dict[str, object]] = []
    attrs: list[dict[str, object]] = []
    expected: list[tuple[str, str, str, str, str]] = []

    def proposal(  # noqa: PLR0917
        pid: str, name: str, land_use: str, cost: float, start: date, end: date, **kw: object
    ) -> None:
        attrs.append(
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

    def disturb(pid: str, geom: shapely.Geometry, start: date, end: date, phase: str = "1") -> None:
        n = sum(1 for d in dist if d["proposal_id"] == pid) + 1
        dist.append(
            {
                "proposal_id": pid,
                "disturbance_id": f"{pid.split('-', maxsplit=1)[0]}-d{n}",
                "phase": phase,
                "start_date": start,
                "end_date": end,
                "geometry": geom,
            }
        )

    def device(pid: str, did: str, geom: shapely.Geometry, kind: str, **kw: object) -> None:
        devs.append(
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

    def expect(pid: str, rule: str, subject: str, outcome: str, note: str) -> None:
        expected.append((pid, rule, subject, outcome, note))

    spring, summer = date(2027, 5, 3), date(2027, 7, 30)

    # P01: 120 sq ft addition in R-10 -------------------------------------------------------
    pid = "P01-addition-r10"
    lot = _Lot(town, "P01")
    proposal(pid, "Rear addition, 10 x 12 ft", "single_family", 48_000, spring, summer)
    geom = lot.box(lot.house_cx - 6, lot.house_cx + 6, lot.house_d1, lot.house_d1 + 10)
    disturb(pid, geom, spring, summer)
    imperv.append({"proposal_id": pid, "surface": "roof", "geometry": geom})
    expect(pid, "SW101", "", "required", "120 sq ft inside R-10 reaches the 100 sq ft R-10 test")

    # P02 / P03: patios in R-20 --------------------------------------------------------------
    for case, pid, depth_ft, outcome, note in (
        ("P02", "P02-patio-240-r20", 12.0, "pass", "240 sq ft in R-20 is under 250 sq ft"),
        ("P03", "P03-patio-300-r20", 15.0, "required", "300 sq ft in R-20 reaches 250 sq ft"),
    ):
        lot = _Lot(town, case)
        area = int(20 * depth_ft)
        proposal(
            pid, f"Rear patio, {area} sq ft", "single_family", 9_000 + 10 * area, spring, summer
        )
        geom = lot.box(
            lot.house_cx - 10, lot.house_cx + 10, lot.house_d1 + 5, lot.house_d1 + 5 + depth_ft
        )
        disturb(pid, geom, spring, summer)
        imperv.append({"proposal_id": pid, "surface": "patio", "geometry": geom})
        expect(pid, "SW101", "", outcome, note)
        # issue 13 item 9: the runoff comparison only where a permit or a SWPPP is required
        for rule in ("SW502", "SW503"):
            if outcome == "pass":
                expect(pid, rule, "", "info", "not required: no town permit and no SWPPP")
            else:
                expect(
                    pid,
                    rule,
                    "",
                    "pass",
                    "compared (permit required); the lot's rounded CN does not rise: no increase",
                )

    # P04 / P05: patios across the zone line (70 ft behind the street line) --------
    for case, pid, half_w, d_r20, d_r10, note in (
        ("P04", "P04-straddle-260", 10.0, 10.0, 3.0,
         "60 sq ft in R-10 + 200 sq ft in R-20 = 260 sq ft reaches the 250 sq ft test"),
        ("P05", "P05-straddle-r10-110", 5.0, 5.0, 11.0,
         "110 sq ft in R-10 reaches the R-10 test although the total is 160 sq ft"),
    ):  # fmt: skip
        lot = _Lot(town, case)
        proposal(pid, "Rear patio across a zone line", "single_family", 14_000, spring, summer)
        geom = lot.box(lot.house_cx - half_w, lot.house_cx + half_w, 70.0 - d_r20, 70.0 + d_r10)
        disturb(pid, geom, spring, summer)
        imperv.append({"proposal_id": pid, "surface": "patio", "geometry": geom})
        expect(pid, "SW101", "", "required", note)

    # P06: 1.5-acre subdivision on the estate tract -------------------------------------------
    pid = "P06-subdivision-1.5ac"
    lot = _Lot(town, "P06")
    start, end = date(2027, 6, 1), date(2028, 5, 31)
    proposal(pid, "Three-lot subdivision, phase 1 of a larger plan", "other", 2_400_000, start, end,
             larger_plan=True, plan_acres=4.5)  # fmt: skip
    disturb(pid, lot.box(lot.x1 - 380, lot.x1 - 50, 100.0, 298.0), start, end)
    imperv.append({"proposal_id": pid, "surface": "road",
                   "geometry": lot.box(lot.x1 - 365, lot.x1 - 65, 190.0, 214.0)})  # fmt: skip
    for xa in (lot.x1 - 360, lot.x1 - 250, lot.x1 - 140):
        imperv.append({"proposal_id": pid, "surface": "roof",
                       "geometry": lot.box(xa, xa + 50, 120.0, 160.0)})  # fmt: skip
    device(pid, "D06-basin", lot.box(lot.x1 - 120, lot.x1 - 60, 240.0, 280.0), "infiltration_basin")
    expect(pid, "SW101", "", "required", "65,340 sq ft (1.50 acres) reaches 250 sq ft")
    expect(pid, "SW102", "", "required", "1.50 acres reaches 1 acre: land development activity")
    expect(pid, "SW103", "condition-C", "required",
           "Condition C: the plan's 4.50 acres is between 1 and 5 acres and land use is other",
           )  # fmt: skip

    # P07: 7-acre commercial site in three overlapping phases ---------------------------------
    pid = "P07-commercial-phased-7ac"
    lot = _Lot(town, "P07")
    proposal(pid, "Retail centre, three phases", "other", 6_500_000,
             COMMERCIAL_PHASES[0][2], COMMERCIAL_PHASES[-1][3])  # fmt: skip
    x_a = lot.x0 + (lot.x1 - lot.x0 - COMMERCIAL_WIDTH_FT) / 2
    d_a = (float(lot.row["depth"]) - sum(p[1] for p in COMMERCIAL_PHASES)) / 2
    for phase, strip_ft, p_start, p_end in COMMERCIAL_PHASES:
        disturb(pid, lot.box(x_a, x_a + COMMERCIAL_WIDTH_FT, d_a, d_a + strip_ft), p_start, p_end,
                phase)  # fmt: skip
        d_a += strip_ft
    expect(pid, "SW301", "", "fail",
           "peak 5.50 acres (phases 1 and 2) from 2027-08-01 to 2027-10-31 exceeds 5 acres; "
           "no approved SWPPP")  # fmt: skip
    expect(pid, "SW103", "condition-B", "required", "Condition B: 7.00 acres is 5 acres or more")
    expect(pid, "SW102", "", "required", "7.00 acres reaches 1 acre: land development activity")
    expect(
        pid,
        "SW105",
        "",
        "required",
        "fees: $150 application + 0.5% of $6,500,000 ($32,500) = $32,650",
    )

    # P08: agricultural activity claiming exemption A ----------------------------------------
    pid = "P08-farm-exempt"
    lot = _Lot(town, "P08")
    start, end = date(2027, 4, 15), date(2027, 6, 15)
    proposal(pid, "New hay field tilled from pasture", "agricultural", 15_000, start, end,
             exemption="A")  # fmt: skip
    disturb(pid, lot.box(lot.x0 + 60, lot.x0 + 460, 160.0, 377.8), start, end)
    expect(
        pid, "SW104", "", "review", "exemption A (agricultural activity) claimed: checks still run"
    )
    expect(pid, "SW103", "condition-C", "pass",
           "2.00 acres, but Condition C excludes agricultural properties")  # fmt: skip

    # P09: drywells 9 ft and 11 ft from a lot line ------------------------------------------
    pid = "P09-lot-line-devices"
    lot = _Lot(town, "P09")
    proposal(pid, "Two roof drywells", "single_family", 12_000, spring, summer)
    for did, x, outcome, note in (
        ("D09-9ft", lot.x1 - 9.0, "fail", "9.00 ft from the east lot line, under 10 ft"),
        ("D09-11ft", lot.x0 + 11.0, "pass", "11.00 ft from the west lot line"),
    ):
        pt = lot.point(x, 150.0)
        device(pid, did, pt, "drywell")
        disturb(pid, _square(pt), spring, summer)
        expect(pid, "SW205", did, outcome, note)

    # P10: parking-lot trench 45 ft from the lot's well ---------------------------------------
    pid = "P10-parking-well"
    lot = _Lot(town, "P10")
    well_x, well_d = float(lot.row["well_x"]), float(lot.row["well_d"])
    proposal(pid, "Parking court with infiltration trench", "single_family", 38_000, spring, summer)
    court = lot.box(lot.x0 + 12, lot.x0 + 45, well_d + 30, well_d + 60)
    disturb(pid, court, spring, summer)
    imperv.append({"proposal_id": pid, "surface": "parking", "geometry": court})
    device(pid, "D10-parking", lot.point(well_x, well_d + 45.0), "infiltration_trench",
           vehicle=True, depth=3.0)  # fmt: skip
    expect(pid, "SW202", "D10-parking", "fail", "vehicle-traffic device 45.00 ft from a well")
    expect(
        pid,
        "SW210",
        "D10-parking",
        "review",
        "45.00 ft from a well, under the state's advisory 100 ft: not Chapter 183, for review",
    )

    # P11: drywells 15 ft up- and down-gradient of a septic field -----------------------------
    pid = "P11-septic-gradient"
    lot = _Lot(town, "P11")
    septic_cx = (float(lot.row["septic_x0"]) + float(lot.row["septic_x1"])) / 2
    d0, d1 = float(lot.row["septic_d0"]), float(lot.row["septic_d1"])
    proposal(pid, "Drywells beside a septic field", "single_family", 11_000, spring, summer)
    for did, depth_ft, outcome, note in (
        ("D11-up", d1 + 15.0, "fail", "15.00 ft from the septic field and up-gradient of it"),
        ("D11-down", d0 - 15.0, "pass", "15.00 ft from the septic field but down-gradient"),
    ):
        pt = lot.point(septic_cx, depth_ft)
        device(pid, did, pt, "drywell", depth=3.0)
        disturb(pid, _square(pt), spring, summer)
        expect(pid, "SW201", did, outcome, note)

    # P12: drywell whose bottom is 1 ft above seasonal high groundwater -----------------------
    pid = "P12-groundwater"
    lot = _Lot(town, "P12")
    pt = lot.point(lot.x0 + 22.0, 80.0)
    gw_ft = _raster_at(town, "seasonal_high_groundwater", pt)
    depth_ft = max(round(gw_ft - SHALLOW_SEPARATION_FT, 1), 0.5)
    proposal(pid, "Drywell near the brook", "single_family", 9_500, spring, summer)
    device(pid, "D12-shallow", pt, "drywell", depth=depth_ft)
    disturb(pid, _square(pt), spring, summer)
    expect(pid, "SW203", "D12-shallow", "fail",
           f"bottom {depth_ft:.1f} ft deep, seasonal high groundwater {gw_ft:.2f} ft deep: "
           f"{gw_ft - depth_ft:.2f} ft apart, under 2 ft")  # fmt: skip

    # P13: drywell 15 ft from a house with a habitable basement --------------------------------
    pid = "P13-basement"
    lot = _Lot(town, "P13")
    proposal(pid, "Drywell behind the house", "single_family", 8_000, spring, summer)
    pt = lot.point(lot.house_cx, lot.house_d1 + 15.0)
    device(pid, "D13-basement", pt, "drywell")
    disturb(pid, _square(pt), spring, summer)
    expect(pid, "SW206", "D13-basement", "fail",
           f"15.00 ft from building B{lot.parcel_id} with a habitable basement")  # fmt: skip

    # P14: regrading into the wetland, its adjacent area and the floodplain -------------------
    pid = "P14-wetland-floodplain"
    lot = _Lot(town, "P14")
    xa, xb = lot.house_cx - 20, lot.house_cx + 20
    wet_d = _wetland_depth_ft(town, lot, xa, xb)
    proposal(pid, "Backyard regrading and shed", "single_family", 22_000, spring, summer)
    regrade = lot.box(xa, xb, lot.house_d1 + 5, wet_d + 15.0)
    disturb(pid, regrade, spring, summer)
    for subject, area_sqft, what in resource_overlaps(town, regrade):
        expect(pid, "SW106", subject, "required" if area_sqft > 0 else "pass",
               f"{area_sqft:,.1f} sq ft of the disturbance lies in {what}")  # fmt: skip

    # P15: new house on a vacant lot: roof and driveway for the runoff calculations -----------
    pid = "P15-new-house-runoff"
    lot = _Lot(town, "P15")
    cx = (lot.x0 + lot.x1) / 2
    start, end = date(2027, 4, 5), date(2027, 11, 19)
    proposal(pid, "New single-family house", "single_family", 650_000, start, end)
    disturb(pid, lot.box(cx - 40, cx + 40, 0.0, 110.0), start, end)
    # a slab-on-grade house: its drywell is 15.81 ft from the roof's corner, allowed only
    # because the roof says no habitable basement and no below-ground storage (SW206)
    imperv.append({"proposal_id": pid, "surface": "roof", "habitable_basement": False,
                   "below_ground_storage": False,
                   "geometry": lot.box(cx - 25, cx + 25, 40.0, 80.0)})  # fmt: skip
    imperv.append({"proposal_id": pid, "surface": "driveway",
                   "geometry": lot.box(cx - 23, cx - 11, 0.0, 40.0)})  # fmt: skip
    device(pid, "D15-roof", lot.point(cx + 30, 95.0), "drywell")
    expect(pid, "SW206", "D15-roof", "pass",
           "15.81 ft from its own new roof, which has no habitable basement and no "
           "below-ground storage")  # fmt: skip
    expect(pid, "SW101", "", "required", "8,800 sq ft reaches 250 sq ft")
    expect(
        pid,
        "SW501",
        "",
        "info",
        "25-year design storm runoff for 2,000 sq ft roof + 480 sq ft driveway",
    )
    expect(pid, "SW502", "", "review", "post-development runoff volume exceeds pre-development")
    expect(pid, "SW503", "", "review", "post-development peak discharge exceeds pre-development")
    expect(pid, "SW504", "", "info", "water quality volume of the new impervious area")

    # P16: a drywell with its data missing, beside a house whose basement is unknown ---------
    pid = "P16-missing-data"
    lot = _Lot(town, "P16")
    proposal(pid, "Drywell, incomplete application", "single_family", 7_500, spring, summer)
    pt = lot.point(lot.house_cx, lot.house_d1 + 12.0)
    device(pid, "D16-unknown", pt, "drywell", depth=np.nan, sedimentation=False, test_hole=False)
    disturb(pid, _square(pt), spring, summer)
    building = f"B{lot.parcel_id}"
    expect(pid, "SW206", "D16-unknown", "review",
           f"12.00 ft from building {building}, its habitable basement not recorded")  # fmt: skip
    expect(pid, "SW203", "D16-unknown", "review", "no depth_ft or bottom_elevation_ft given")
    expect(pid, "SW204", "D16-unknown", "review", "no depth_ft or bottom_elevation_ft given")
    expect(pid, "SW207", "D16-unknown", "fail", "has_sedimentation_device is false")
    expect(pid, "SW209", "D16-unknown", "review", "test_hole_logged is false")

    # P19: Condition A by discharge: 1.5 acres upslope of the impaired brook, not touching it
    pid = "P19-runoff-to-impaired-brook"
    lot = _Lot(town, "P06")  # the estate tract's west part (P06 builds on its east part)
    start, end = date(2027, 5, 3), date(2028, 4, 28)
    proposal(pid, "Two-lot subdivision draining to Sample Brook", "other", 1_100_000, start, end,
             impaired=None)  # fmt: skip
    disturb(pid, lot.box(lot.x0 + 50, lot.x0 + 380, 100.0, 298.0), start, end)
    expect(pid, "SW102", "", "required", "65,340 sq ft (1.50 acres) reaches 1 acre")
    expect(pid, "SW103", "condition-A", "required",
           "discharges_to_impaired_water not given; every DEM flow path from the site runs "
           "south, downhill, into Sample Brook (303(d), phosphorus)")  # fmt: skip
    expect(pid, "SW103", "condition-C", "required",
           "Condition C: 1.50 acres is between 1 and 5 acres and land use is other")  # fmt: skip

    # P20: half an acre that is part of a larger common plan of five acres -----------------
    pid = "P20-piece-of-5-acre-plan"
    lot = _Lot(town, "P08")  # the farm tract's east field (P08 tills its west field)
    start, end = date(2027, 6, 7), date(2027, 10, 29)
    proposal(pid, "Lot 1 of a five-acre subdivision of the farm's east field", "other", 420_000,
             start, end, larger_plan=True, plan_acres=5.0)  # fmt: skip
    disturb(pid, lot.box(lot.x1 - 250, lot.x1 - 50, 100.0, 208.9), start, end)
    expect(pid, "SW102", "", "required",
           "21,780 sq ft (0.50 acres) is below 1 acre but part of a larger common plan",
           )  # fmt: skip
    expect(pid, "SW103", "condition-B", "required",
           "Condition B counts the plan's 5.00 acres (217,800 sq ft), which reaches 5 acres",
           )  # fmt: skip
    expect(pid, "SW103", "condition-C", "pass",
           "the plan's 5.00 acres is the top of the 1 to 5 acre range: Condition B applies",
           )  # fmt: skip

    # P21: landscaping claimed as exempt on a lot with no existing structure ----------------
    pid = "P21-landscaping-no-structure"
    lot = _Lot(town, "P15")  # the vacant lot where P15 proposes a new house
    proposal(pid, "Rear garden beds and grading", "single_family", 6_000, spring, summer,
             exemption="Landscaping and horticultural activities")  # fmt: skip
    disturb(pid, lot.box(lot.x0 + 20, lot.x0 + 60, 130.0, 180.0), spring, summer)
    expect(pid, "SW104", "", "fail",
           f"exemption K claimed, but no building stands on lot {lot.parcel_id}: not exempt",
           )  # fmt: skip
    expect(pid, "SW101", "", "required", "2,000 sq ft reaches 250 sq ft")

    _up_gradient_both_ways(town, proposal, disturb, device, expect)
    _device_near_new_roof(town, proposal, disturb, device, expect, imperv)

    impervious = gpd.GeoDataFrame(imperv, geometry="geometry", crs=crs)
    for column in ("habitable_basement", "below_ground_storage"):
        impervious[column] = impervious[column].astype("boolean")
    return SampleProposals(
        disturbance=gpd.GeoDataFrame(dist, geometry="geometry", crs=crs),
        devices=gpd.GeoDataFrame(devs, geometry="geometry", crs=crs),
        impervious=impervious,
        attributes=pd.DataFrame(attrs),
        expected=pd.DataFrame(expected, columns=list(EXPECTED_COLUMNS)),
    )


def _up_gradient_both_ways(
    town: SampleTown, proposal: Any, disturb: Any, device: Any, expect: Any
) -> None:
    """P17: two drywells 15 ft up-gradient of a septic field, one given by its bottom
    elevation (6 ft below its ground, so below the field's ground too), one by its depth
    (6 ft): up-gradient compares ground with ground, so both fail (issue 13 item 1)."""
    spring, summer = date(2027, 5, 3), date(2027, 7, 30)
    pid = "P17-upgradient-both-ways"
    lot = _Lot(town, "P17")
    x0, x1 = float(lot.row["septic_x0"]), float(lot.row["septic_x1"])
    d1 = float(lot.row["septic_d1"])
    field = lot.box(x0, x1, float(lot.row["septic_d0"]), d1)
    dem = town.rasters["dem"]
    proposal(pid, "Two drywells above a septic field", "single_family", 11_000, spring, summer)
    for did, x, how in (
        ("D17-bottom", x0 + 10.0, "bottom"),
        ("D17-depth", x1 - 10.0, "depth"),
    ):
        pt = lot.point(x, d1 + 15.0)
        ground = _raster_at(town, "dem", pt)
        low = float(dem.cells_under(shapely.intersection(field, pt.buffer(20.0, 64))).min())
        if how == "bottom":
            bottom = round(ground - 6.0, 2)
            device(pid, did, pt, "drywell", depth=np.nan, bottom=bottom)
            given = f"bottom_elevation_ft {bottom:.2f} (below the field's ground)"
        else:
            device(pid, did, pt, "drywell", depth=6.0)
            given = "depth_ft 6.0"
        disturb(pid, _square(pt), spring, summer)
        expect(pid, "SW201", did, "fail",
               f"{given}; 15.00 ft from the field; ground {ground:.2f} ft is "
               f"{ground - low:.2f} ft above the field's lowest ground {low:.2f} ft within "
               "20 ft (more than 0.33 ft)")  # fmt: skip


def _device_near_new_roof(  # noqa: PLR0917
    town: SampleTown,
    proposal: Any,
    disturb: Any,
    device: Any,
    expect: Any,
    imperv: list[dict[str, object]],
) -> None:
    """P18: a new house on a vacant lot, its roof with no basement attributes, drywells
    10.00 ft and 20.00 ft behind it (issue 13 item 2)."""
    start, end = date(2027, 4, 5), date(2027, 11, 19)
    pid = "P18-new-roof-basement-unknown"
    lot = _Lot(town, "P18")
    cx = (lot.x0 + lot.x1) / 2
    proposal(pid, "New house, basement not stated", "single_family", 540_000, start, end)
    disturb(pid, lot.box(cx - 30, cx + 30, 30.0, 100.0), start, end)
    imperv.append({"proposal_id": pid, "surface": "roof",
                   "geometry": lot.box(cx - 20, cx + 20, 40.0, 70.0)})  # fmt: skip
    for did, d, outcome, note in (
        ("D18-10ft", 80.0, "review",
         ("10.00 ft behind the new 1,200 sq ft roof, whose habitable_basement and "
          "below_ground_storage are not given")),
        ("D18-20ft", 90.0, "pass", "20.00 ft behind the new roof: the 20 ft minimum is met"),
    ):  # fmt: skip
        device(pid, did, lot.point(cx, d), "drywell")
        expect(pid, "SW206", did, outcome, note)
