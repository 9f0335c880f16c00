"""The sample cases of issue 13 items 3-5 (P19, P20, P21): their geometry, as the README
states it (the outcomes themselves are checked end to end by tests/test_e2e_sample.py)."""

from __future__ import annotations

import math

import pytest
import shapely

from gis_sw.sample import SAMPLE_PARCELS, SAMPLE_SEED, build_town
from gis_sw.sample.cases import SampleProposals, build_cases
from gis_sw.sample.town import CASE_LOTS, SampleTown

ACRE = 43_560.0


@pytest.fixture(scope="module")
def town() -> SampleTown:
    return build_town(parcels=SAMPLE_PARCELS, seed=SAMPLE_SEED)


@pytest.fixture(scope="module")
def cases(town: SampleTown) -> SampleProposals:
    return build_cases(town)


def _site(cases: SampleProposals, prefix: str) -> shapely.Geometry:
    frame = cases.disturbance
    return shapely.union_all(frame.geometry[frame["proposal_id"].str.startswith(prefix)])


def _attrs(cases: SampleProposals, prefix: str) -> dict[str, object]:
    rows = cases.attributes[cases.attributes["proposal_id"].str.startswith(prefix)]
    return rows.iloc[0].to_dict()


def test_p19_is_upslope_of_the_brook_without_touching_it(
    town: SampleTown, cases: SampleProposals
) -> None:
    site = _site(cases, "P19")
    assert site.area == pytest.approx(1.5 * ACRE)
    assert shapely.bounds(site).tolist() == [685_175.0, 826_975.0, 685_505.0, 827_173.0]
    brook = town.vectors["impaired_waters"].geometry.iloc[0]
    assert town.vectors["impaired_waters"]["listing"].iloc[0] == "303(d)"
    assert shapely.distance(site, brook) == pytest.approx(312.50, abs=0.005)
    assert _attrs(cases, "P19")["discharges_to_impaired_water"] is None
    # 10-ft cells with edges at x = 683,000 + 10k and y = 827,750 - 10k
    dem = town.rasters["dem"]
    assert (dem.transform.c, dem.transform.f, dem.cell_size) == (683_000.0, 827_750.0, (10, 10))
    columns = math.ceil((685_505 - 683_000) / 10) - math.floor((685_175 - 683_000) / 10)
    rows = math.ceil((827_750 - 826_975) / 10) - math.floor((827_750 - 827_173) / 10)
    assert (columns, rows) == (34, 21)


def test_p20_is_half_an_acre_of_a_five_acre_plan(cases: SampleProposals) -> None:
    assert _site(cases, "P20").area == pytest.approx(0.5 * ACRE)
    attrs = _attrs(cases, "P20")
    assert attrs["part_of_larger_plan"] is True
    assert attrs["larger_plan_acres"] * ACRE == pytest.approx(217_800.0)
    assert attrs["discharges_to_impaired_water"] is False


def test_p21_landscapes_a_lot_with_no_building(town: SampleTown, cases: SampleProposals) -> None:
    site = _site(cases, "P21")
    assert site.area == pytest.approx(2_000.0)
    parcels = town.vectors["parcels"]
    touched = parcels[shapely.area(shapely.intersection(parcels.geometry.values, site)) > 0]
    assert touched["parcel_id"].tolist() == [CASE_LOTS["P15"]]
    lot = touched.geometry.iloc[0]
    buildings = town.vectors["buildings"].geometry.values
    assert not shapely.intersects(buildings, lot).any()
    assert _attrs(cases, "P21")["exemption"] == "Landscaping and horticultural activities"


def test_p06_counts_its_plan_of_four_and_a_half_acres(cases: SampleProposals) -> None:
    assert _site(cases, "P06").area == pytest.approx(1.5 * ACRE)
    assert _attrs(cases, "P06")["larger_plan_acres"] * ACRE == pytest.approx(196_020.0)
