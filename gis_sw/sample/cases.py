"""The named sample proposals: one application per case, each built where its outcome is certain.

Every case stands on a lot named in :data:`gis_sw.sample.town.CASE_LOTS` and is drawn in
that lot's own coordinates (feet across from its west line, feet back from its street
line), so the numbers below are the numbers the law is applied to.  The outcome the law
gives each case is written here and in :mod:`gis_sw.sample.device_cases` by hand, read from
RULES.md and the geometry, never computed by the checks; ``data/sample/README.md`` explains
every one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import geopandas as gpd
import pandas as pd

from gis_sw.layers.build import make_proposals
from gis_sw.layers.proposals import Proposals
from gis_sw.sample.case_kit import SPRING, SUMMER, CaseBook, Lot, resource_overlaps
from gis_sw.sample.device_cases import (
    device_near_new_roof,
    resource_and_runoff_cases,
    setback_cases,
    up_gradient_both_ways,
)
from gis_sw.sample.town import SampleTown

__all__ = ["EXPECTED_COLUMNS", "SampleProposals", "build_cases", "resource_overlaps"]

EXPECTED_COLUMNS = ("proposal_id", "rule_id", "subject_id", "outcome", "note")

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
        """Return the cases as :class:`Proposals`, as :func:`read_proposals` would give them."""
        return make_proposals(
            self.disturbance.crs,
            self.disturbance,
            self.devices,
            self.attributes,
            self.impervious,
            source="<sample proposals>",
        )


def _small_permit_cases(book: CaseBook, town: SampleTown) -> None:
    """Add P01-P05: additions and patios against the permit thresholds."""
    # P01: 120 sq ft addition in R-10 -------------------------------------------------------
    pid = "P01-addition-r10"
    lot = Lot(town, "P01")
    book.proposal(pid, "Rear addition, 10 x 12 ft", "single_family", 48_000, SPRING, SUMMER)
    geom = lot.box(lot.house_cx - 6, lot.house_cx + 6, lot.house_d1, lot.house_d1 + 10)
    book.disturb(pid, geom, SPRING, SUMMER)
    book.surface(pid, "roof", geom)
    book.expect(
        pid, "SW101", "", "required", "120 sq ft inside R-10 reaches the 100 sq ft R-10 test"
    )

    # P02 / P03: patios in R-20 --------------------------------------------------------------
    for case, pid, depth_ft, outcome, note in (
        ("P02", "P02-patio-240-r20", 12.0, "pass", "240 sq ft in R-20 is under 250 sq ft"),
        ("P03", "P03-patio-300-r20", 15.0, "required", "300 sq ft in R-20 reaches 250 sq ft"),
    ):
        lot = Lot(town, case)
        area = int(20 * depth_ft)
        book.proposal(
            pid, f"Rear patio, {area} sq ft", "single_family", 9_000 + 10 * area, SPRING, SUMMER
        )
        geom = lot.box(
            lot.house_cx - 10, lot.house_cx + 10, lot.house_d1 + 5, lot.house_d1 + 5 + depth_ft
        )
        book.disturb(pid, geom, SPRING, SUMMER)
        book.surface(pid, "patio", geom)
        book.expect(pid, "SW101", "", outcome, note)
        # issue 13 item 9: the runoff comparison only where a permit or a SWPPP is required
        for rule in ("SW502", "SW503"):
            if outcome == "pass":
                book.expect(pid, rule, "", "info", "not required: no town permit and no SWPPP")
            else:
                book.expect(
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
        lot = Lot(town, case)
        book.proposal(pid, "Rear patio across a zone line", "single_family", 14_000, SPRING, SUMMER)
        geom = lot.box(lot.house_cx - half_w, lot.house_cx + half_w, 70.0 - d_r20, 70.0 + d_r10)
        book.disturb(pid, geom, SPRING, SUMMER)
        book.surface(pid, "patio", geom)
        book.expect(pid, "SW101", "", "required", note)


def _plan_cases(book: CaseBook, town: SampleTown) -> None:
    """Add P06-P08: a subdivision, a phased commercial site, an exempt farm."""
    # P06: 1.5-acre subdivision on the estate tract -------------------------------------------
    pid = "P06-subdivision-1.5ac"
    lot = Lot(town, "P06")
    start, end = date(2027, 6, 1), date(2028, 5, 31)
    book.proposal(pid, "Three-lot subdivision, phase 1 of a larger plan", "other", 2_400_000,
                  start, end, larger_plan=True, plan_acres=4.5)  # fmt: skip
    book.disturb(pid, lot.box(lot.x1 - 380, lot.x1 - 50, 100.0, 298.0), start, end)
    book.surface(pid, "road", lot.box(lot.x1 - 365, lot.x1 - 65, 190.0, 214.0))
    for xa in (lot.x1 - 360, lot.x1 - 250, lot.x1 - 140):
        book.surface(pid, "roof", lot.box(xa, xa + 50, 120.0, 160.0))
    book.device(
        pid, "D06-basin", lot.box(lot.x1 - 120, lot.x1 - 60, 240.0, 280.0), "infiltration_basin"
    )
    book.expect(pid, "SW101", "", "required", "65,340 sq ft (1.50 acres) reaches 250 sq ft")
    book.expect(
        pid, "SW102", "", "required", "1.50 acres reaches 1 acre: land development activity"
    )
    book.expect(pid, "SW103", "condition-C", "required",
                "Condition C: the plan's 4.50 acres is between 1 and 5 acres and land use is other",
                )  # fmt: skip

    # P07: 7-acre commercial site in three overlapping phases ---------------------------------
    pid = "P07-commercial-phased-7ac"
    lot = Lot(town, "P07")
    book.proposal(pid, "Retail centre, three phases", "other", 6_500_000,
                  COMMERCIAL_PHASES[0][2], COMMERCIAL_PHASES[-1][3])  # fmt: skip
    x_a = lot.x0 + (lot.x1 - lot.x0 - COMMERCIAL_WIDTH_FT) / 2
    d_a = (float(lot.row["depth"]) - sum(p[1] for p in COMMERCIAL_PHASES)) / 2
    for phase, strip_ft, p_start, p_end in COMMERCIAL_PHASES:
        book.disturb(
            pid, lot.box(x_a, x_a + COMMERCIAL_WIDTH_FT, d_a, d_a + strip_ft), p_start, p_end, phase
        )
        d_a += strip_ft
    book.expect(pid, "SW301", "", "fail",
                "peak 5.50 acres (phases 1 and 2) from 2027-08-01 to 2027-10-31 exceeds 5 acres; "
                "no approved SWPPP")  # fmt: skip
    book.expect(
        pid, "SW103", "condition-B", "required", "Condition B: 7.00 acres is 5 acres or more"
    )
    book.expect(
        pid, "SW102", "", "required", "7.00 acres reaches 1 acre: land development activity"
    )
    book.expect(
        pid,
        "SW105",
        "",
        "required",
        "fees: $150 application + 0.5% of $6,500,000 ($32,500) = $32,650",
    )

    # P08: agricultural activity claiming exemption A ----------------------------------------
    pid = "P08-farm-exempt"
    lot = Lot(town, "P08")
    start, end = date(2027, 4, 15), date(2027, 6, 15)
    book.proposal(pid, "New hay field tilled from pasture", "agricultural", 15_000, start, end,
                  exemption="A")  # fmt: skip
    book.disturb(pid, lot.box(lot.x0 + 60, lot.x0 + 460, 160.0, 377.8), start, end)
    book.expect(
        pid, "SW104", "", "review", "exemption A (agricultural activity) claimed: checks still run"
    )
    book.expect(pid, "SW103", "condition-C", "pass",
                "2.00 acres, but Condition C excludes agricultural properties")  # fmt: skip


def _larger_plan_cases(book: CaseBook, town: SampleTown) -> None:
    """Add P19-P21: a discharge to impaired water, part of a larger plan, landscaping."""
    # P19: Condition A by discharge: 1.5 acres upslope of the impaired brook, not touching it
    pid = "P19-runoff-to-impaired-brook"
    lot = Lot(town, "P06")  # the estate tract's west part (P06 builds on its east part)
    start, end = date(2027, 5, 3), date(2028, 4, 28)
    book.proposal(
        pid,
        "Two-lot subdivision draining to Sample Brook",
        "other",
        1_100_000,
        start,
        end,
        impaired=None,
    )
    book.disturb(pid, lot.box(lot.x0 + 50, lot.x0 + 380, 100.0, 298.0), start, end)
    book.expect(pid, "SW102", "", "required", "65,340 sq ft (1.50 acres) reaches 1 acre")
    book.expect(pid, "SW103", "condition-A", "required",
                "discharges_to_impaired_water not given; every DEM flow path from the site runs "
                "south, downhill, into Sample Brook (303(d), phosphorus)")  # fmt: skip
    book.expect(pid, "SW103", "condition-C", "required",
                "Condition C: 1.50 acres is between 1 and 5 acres and land use is "
                "other")  # fmt: skip

    # P20: half an acre that is part of a larger common plan of five acres -----------------
    pid = "P20-piece-of-5-acre-plan"
    lot = Lot(town, "P08")  # the farm tract's east field (P08 tills its west field)
    start, end = date(2027, 6, 7), date(2027, 10, 29)
    book.proposal(pid, "Lot 1 of a five-acre subdivision of the farm's east field", "other",
                  420_000, start, end, larger_plan=True, plan_acres=5.0)  # fmt: skip
    book.disturb(pid, lot.box(lot.x1 - 250, lot.x1 - 50, 100.0, 208.9), start, end)
    book.expect(pid, "SW102", "", "required",
                "21,780 sq ft (0.50 acres) is below 1 acre but part of a larger common plan",
                )  # fmt: skip
    book.expect(pid, "SW103", "condition-B", "required",
                "Condition B counts the plan's 5.00 acres (217,800 sq ft), which reaches 5 acres",
                )  # fmt: skip
    book.expect(pid, "SW103", "condition-C", "pass",
                "the plan's 5.00 acres is the top of the 1 to 5 acre range: Condition B applies",
                )  # fmt: skip

    # P21: landscaping claimed as exempt on a lot with no existing structure ----------------
    pid = "P21-landscaping-no-structure"
    lot = Lot(town, "P15")  # the vacant lot where P15 proposes a new house
    book.proposal(pid, "Rear garden beds and grading", "single_family", 6_000, SPRING, SUMMER,
                  exemption="Landscaping and horticultural activities")  # fmt: skip
    book.disturb(pid, lot.box(lot.x0 + 20, lot.x0 + 60, 130.0, 180.0), SPRING, SUMMER)
    book.expect(pid, "SW104", "", "fail",
                f"exemption K claimed, but no building stands on lot {lot.parcel_id}: not exempt",
                )  # fmt: skip
    book.expect(pid, "SW101", "", "required", "2,000 sq ft reaches 250 sq ft")


def build_cases(town: SampleTown) -> SampleProposals:
    """Build the named cases on a town that holds the first cycle of bands (323+ parcels).

    Raises
    ------
    KeyError
        If the town is too small to hold every case lot.
    """
    book = CaseBook()
    _small_permit_cases(book, town)
    _plan_cases(book, town)
    setback_cases(book, town)
    resource_and_runoff_cases(book, town)
    _larger_plan_cases(book, town)
    up_gradient_both_ways(book, town)
    device_near_new_roof(book, town)
    crs = town.crs
    impervious = gpd.GeoDataFrame(book.impervious, geometry="geometry", crs=crs)
    for column in ("habitable_basement", "below_ground_storage"):
        impervious[column] = impervious[column].astype("boolean")
    return SampleProposals(
        disturbance=gpd.GeoDataFrame(book.disturbance, geometry="geometry", crs=crs),
        devices=gpd.GeoDataFrame(book.devices, geometry="geometry", crs=crs),
        impervious=impervious,
        attributes=pd.DataFrame(book.attributes),
        expected=pd.DataFrame(book.expected, columns=list(EXPECTED_COLUMNS)),
    )
