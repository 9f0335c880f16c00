"""The sample cases of infiltration devices, resources and runoff (P09-P18).

Drawn with :mod:`gis_sw.sample.case_kit` in each lot's own coordinates; the outcomes are
written by hand, never computed by the checks (see :mod:`gis_sw.sample.cases`).
"""

from __future__ import annotations

from datetime import date

import numpy as np
import shapely

from gis_sw.sample.case_kit import (
    SPRING,
    SUMMER,
    CaseBook,
    Lot,
    raster_at,
    resource_overlaps,
    square,
    wetland_depth_ft,
)
from gis_sw.sample.town import SampleTown

SHALLOW_SEPARATION_FT = 1.0
"""How far the groundwater case's device bottom sits above seasonal high groundwater."""


def setback_cases(book: CaseBook, town: SampleTown) -> None:
    """Add P09-P13: lot line, well, septic field, groundwater and basement."""
    # P09: drywells 9 ft and 11 ft from a lot line ------------------------------------------
    pid = "P09-lot-line-devices"
    lot = Lot(town, "P09")
    book.proposal(pid, "Two roof drywells", "single_family", 12_000, SPRING, SUMMER)
    for did, x, outcome, note in (
        ("D09-9ft", lot.x1 - 9.0, "fail", "9.00 ft from the east lot line, under 10 ft"),
        ("D09-11ft", lot.x0 + 11.0, "pass", "11.00 ft from the west lot line"),
    ):
        pt = lot.point(x, 150.0)
        book.device(pid, did, pt, "drywell")
        book.disturb(pid, square(pt), SPRING, SUMMER)
        book.expect(pid, "SW205", did, outcome, note)

    # P10: parking-lot trench 45 ft from the lot's well ---------------------------------------
    pid = "P10-parking-well"
    lot = Lot(town, "P10")
    well_x, well_d = float(lot.row["well_x"]), float(lot.row["well_d"])
    book.proposal(
        pid, "Parking court with infiltration trench", "single_family", 38_000, SPRING, SUMMER
    )
    court = lot.box(lot.x0 + 12, lot.x0 + 45, well_d + 30, well_d + 60)
    book.disturb(pid, court, SPRING, SUMMER)
    book.surface(pid, "parking", court)
    book.device(pid, "D10-parking", lot.point(well_x, well_d + 45.0), "infiltration_trench",
                vehicle=True, depth=3.0)  # fmt: skip
    book.expect(pid, "SW202", "D10-parking", "fail", "vehicle-traffic device 45.00 ft from a well")
    book.expect(
        pid,
        "SW210",
        "D10-parking",
        "review",
        "45.00 ft from a well, under the state's advisory 100 ft: not Chapter 183, for review",
    )

    # P11: drywells 15 ft up- and down-gradient of a septic field -----------------------------
    pid = "P11-septic-gradient"
    lot = Lot(town, "P11")
    septic_cx = (float(lot.row["septic_x0"]) + float(lot.row["septic_x1"])) / 2
    d0, d1 = float(lot.row["septic_d0"]), float(lot.row["septic_d1"])
    book.proposal(pid, "Drywells beside a septic field", "single_family", 11_000, SPRING, SUMMER)
    for did, depth_ft, outcome, note in (
        ("D11-up", d1 + 15.0, "fail", "15.00 ft from the septic field and up-gradient of it"),
        ("D11-down", d0 - 15.0, "pass", "15.00 ft from the septic field but down-gradient"),
    ):
        pt = lot.point(septic_cx, depth_ft)
        book.device(pid, did, pt, "drywell", depth=3.0)
        book.disturb(pid, square(pt), SPRING, SUMMER)
        book.expect(pid, "SW201", did, outcome, note)

    # P12: drywell whose bottom is 1 ft above seasonal high groundwater -----------------------
    pid = "P12-groundwater"
    lot = Lot(town, "P12")
    pt = lot.point(lot.x0 + 22.0, 80.0)
    gw_ft = raster_at(town, "seasonal_high_groundwater", pt)
    depth_ft = max(round(gw_ft - SHALLOW_SEPARATION_FT, 1), 0.5)
    book.proposal(pid, "Drywell near the brook", "single_family", 9_500, SPRING, SUMMER)
    book.device(pid, "D12-shallow", pt, "drywell", depth=depth_ft)
    book.disturb(pid, square(pt), SPRING, SUMMER)
    book.expect(pid, "SW203", "D12-shallow", "fail",
                f"bottom {depth_ft:.1f} ft deep, seasonal high groundwater {gw_ft:.2f} ft deep: "
                f"{gw_ft - depth_ft:.2f} ft apart, under 2 ft")  # fmt: skip

    # P13: drywell 15 ft from a house with a habitable basement --------------------------------
    pid = "P13-basement"
    lot = Lot(town, "P13")
    book.proposal(pid, "Drywell behind the house", "single_family", 8_000, SPRING, SUMMER)
    pt = lot.point(lot.house_cx, lot.house_d1 + 15.0)
    book.device(pid, "D13-basement", pt, "drywell")
    book.disturb(pid, square(pt), SPRING, SUMMER)
    book.expect(pid, "SW206", "D13-basement", "fail",
                f"15.00 ft from building B{lot.parcel_id} with a habitable basement")  # fmt: skip


def resource_and_runoff_cases(book: CaseBook, town: SampleTown) -> None:
    """Add P14-P16: wetland and floodplain, a new house's runoff, missing data."""
    # P14: regrading into the wetland, its adjacent area and the floodplain -------------------
    pid = "P14-wetland-floodplain"
    lot = Lot(town, "P14")
    xa, xb = lot.house_cx - 20, lot.house_cx + 20
    wet_d = wetland_depth_ft(town, lot, xa, xb)
    book.proposal(pid, "Backyard regrading and shed", "single_family", 22_000, SPRING, SUMMER)
    regrade = lot.box(xa, xb, lot.house_d1 + 5, wet_d + 15.0)
    book.disturb(pid, regrade, SPRING, SUMMER)
    for subject, area_sqft, what in resource_overlaps(town, regrade):
        book.expect(pid, "SW106", subject, "required" if area_sqft > 0 else "pass",
                    f"{area_sqft:,.1f} sq ft of the disturbance lies in {what}")  # fmt: skip

    # P15: new house on a vacant lot: roof and driveway for the runoff calculations -----------
    pid = "P15-new-house-runoff"
    lot = Lot(town, "P15")
    cx = (lot.x0 + lot.x1) / 2
    start, end = date(2027, 4, 5), date(2027, 11, 19)
    book.proposal(pid, "New single-family house", "single_family", 650_000, start, end)
    book.disturb(pid, lot.box(cx - 40, cx + 40, 0.0, 110.0), start, end)
    # a slab-on-grade house: its drywell is 15.81 ft from the roof's corner, allowed only
    # because the roof says no habitable basement and no below-ground storage (SW206)
    book.surface(pid, "roof", lot.box(cx - 25, cx + 25, 40.0, 80.0),
                 habitable_basement=False, below_ground_storage=False)  # fmt: skip
    book.surface(pid, "driveway", lot.box(cx - 23, cx - 11, 0.0, 40.0))
    book.device(pid, "D15-roof", lot.point(cx + 30, 95.0), "drywell")
    book.expect(pid, "SW206", "D15-roof", "pass",
                "15.81 ft from its own new roof, which has no habitable basement and no "
                "below-ground storage")  # fmt: skip
    book.expect(pid, "SW101", "", "required", "8,800 sq ft reaches 250 sq ft")
    book.expect(
        pid,
        "SW501",
        "",
        "info",
        "25-year design storm runoff for 2,000 sq ft roof + 480 sq ft driveway",
    )
    book.expect(
        pid, "SW502", "", "review", "post-development runoff volume exceeds pre-development"
    )
    book.expect(
        pid, "SW503", "", "review", "post-development peak discharge exceeds pre-development"
    )
    book.expect(pid, "SW504", "", "info", "water quality volume of the new impervious area")

    # P16: a drywell with its data missing, beside a house whose basement is unknown ---------
    pid = "P16-missing-data"
    lot = Lot(town, "P16")
    book.proposal(pid, "Drywell, incomplete application", "single_family", 7_500, SPRING, SUMMER)
    pt = lot.point(lot.house_cx, lot.house_d1 + 12.0)
    book.device(
        pid, "D16-unknown", pt, "drywell", depth=np.nan, sedimentation=False, test_hole=False
    )
    book.disturb(pid, square(pt), SPRING, SUMMER)
    building = f"B{lot.parcel_id}"
    book.expect(pid, "SW206", "D16-unknown", "review",
                f"12.00 ft from building {building}, its habitable basement not "
                "recorded")  # fmt: skip
    book.expect(pid, "SW203", "D16-unknown", "review", "no depth_ft or bottom_elevation_ft given")
    book.expect(pid, "SW204", "D16-unknown", "review", "no depth_ft or bottom_elevation_ft given")
    book.expect(pid, "SW207", "D16-unknown", "fail", "has_sedimentation_device is false")
    book.expect(pid, "SW209", "D16-unknown", "review", "test_hole_logged is false")


def up_gradient_both_ways(book: CaseBook, town: SampleTown) -> None:
    """Add P17: two drywells 15 ft up-gradient of a septic field, given two ways.

    One is given by its bottom elevation (6 ft below its ground, so below the field's ground
    too), one by its depth (6 ft): up-gradient compares ground with ground, so both fail
    (issue 13 item 1).
    """
    pid = "P17-upgradient-both-ways"
    lot = Lot(town, "P17")
    x0, x1 = float(lot.row["septic_x0"]), float(lot.row["septic_x1"])
    d1 = float(lot.row["septic_d1"])
    field = lot.box(x0, x1, float(lot.row["septic_d0"]), d1)
    dem = town.rasters["dem"]
    book.proposal(pid, "Two drywells above a septic field", "single_family", 11_000, SPRING, SUMMER)
    for did, x, how in (
        ("D17-bottom", x0 + 10.0, "bottom"),
        ("D17-depth", x1 - 10.0, "depth"),
    ):
        pt = lot.point(x, d1 + 15.0)
        ground = raster_at(town, "dem", pt)
        low = float(dem.cells_under(shapely.intersection(field, pt.buffer(20.0, 64))).min())
        if how == "bottom":
            bottom = round(ground - 6.0, 2)
            book.device(pid, did, pt, "drywell", depth=np.nan, bottom=bottom)
            given = f"bottom_elevation_ft {bottom:.2f} (below the field's ground)"
        else:
            book.device(pid, did, pt, "drywell", depth=6.0)
            given = "depth_ft 6.0"
        book.disturb(pid, square(pt), SPRING, SUMMER)
        book.expect(pid, "SW201", did, "fail",
                    f"{given}; 15.00 ft from the field; ground {ground:.2f} ft is "
                    f"{ground - low:.2f} ft above the field's lowest ground {low:.2f} ft within "
                    "20 ft (more than 0.33 ft)")  # fmt: skip


def device_near_new_roof(book: CaseBook, town: SampleTown) -> None:
    """Add P18: drywells 10.00 ft and 20.00 ft behind a new roof with no basement attributes.

    A new house on a vacant lot (issue 13 item 2).
    """
    start, end = date(2027, 4, 5), date(2027, 11, 19)
    pid = "P18-new-roof-basement-unknown"
    lot = Lot(town, "P18")
    cx = (lot.x0 + lot.x1) / 2
    book.proposal(pid, "New house, basement not stated", "single_family", 540_000, start, end)
    book.disturb(pid, lot.box(cx - 30, cx + 30, 30.0, 100.0), start, end)
    book.surface(pid, "roof", lot.box(cx - 20, cx + 20, 40.0, 70.0))
    for did, d, outcome, note in (
        ("D18-10ft", 80.0, "review",
         ("10.00 ft behind the new 1,200 sq ft roof, whose habitable_basement and "
          "below_ground_storage are not given")),
        ("D18-20ft", 90.0, "pass", "20.00 ft behind the new roof: the 20 ft minimum is met"),
    ):  # fmt: skip
        book.device(pid, did, lot.point(cx, d), "drywell")
        book.expect(pid, "SW206", did, outcome, note)
