"""The sample cases of issue 13 items 1 and 2 stand where their outcomes are certain:
P17 (one septic field, two devices up-gradient described by bottom and by depth) and P18
(drywells 10.00 and 20.00 ft behind a new roof whose basement is not stated)."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from gis_sw.sample import CASE_LOTS, SampleProposals, SampleTown, build_town, sample_proposals


@pytest.fixture(scope="module")
def town() -> SampleTown:
    return build_town(parcels=323, seed=183)


@pytest.fixture(scope="module")
def cases(town: SampleTown) -> SampleProposals:
    return sample_proposals(town)


def test_p17_devices_are_up_gradient_by_ground_and_one_bottom_is_below_the_field(
    town: SampleTown, cases: SampleProposals
) -> None:
    septic = town.vectors["septic_fields"].set_index("septic_id").geometry["SF" + CASE_LOTS["P17"]]
    dem = town.rasters["dem"]
    devices = cases.devices.set_index("device_id")
    field_low = dem.cells_under(septic).min()
    for did in ("D17-bottom", "D17-depth"):
        geom = devices.geometry[did]
        assert round(shapely.distance(geom, septic), 2) == 15.00
        near = shapely.intersection(septic, geom.buffer(20.0, 64))
        ground = dem.cells_under(geom).max()
        assert round(ground - dem.cells_under(near).min(), 2) > 0.33  # the ruleset's flat
    bottom = devices.loc["D17-bottom"]
    assert np.isnan(bottom["depth_ft"])
    # the old reading's trap: the bottom is below the field's lowest ground
    assert bottom["bottom_elevation_ft"] < field_low
    assert devices.loc["D17-depth", "depth_ft"] == 6.0
    assert np.isnan(devices.loc["D17-depth", "bottom_elevation_ft"])


def test_p18_drywells_are_10_and_20_ft_from_a_roof_of_unknown_basement(
    cases: SampleProposals,
) -> None:
    roofs = cases.impervious[cases.impervious["proposal_id"].str.startswith("P18")]
    assert list(roofs["surface"]) == ["roof"]
    roof = roofs.geometry.iloc[0]
    assert roof.area == pytest.approx(1200.0)
    assert roofs["habitable_basement"].isna().all()
    assert roofs["below_ground_storage"].isna().all()
    devices = cases.devices.set_index("device_id").geometry
    assert round(shapely.distance(devices["D18-10ft"], roof), 2) == 10.00
    assert round(shapely.distance(devices["D18-20ft"], roof), 2) == 20.00
    expected = cases.expected.set_index(["proposal_id", "rule_id", "subject_id"])["outcome"]
    pid = "P18-new-roof-basement-unknown"
    assert expected[pid, "SW206", "D18-10ft"] == "review"
    assert expected[pid, "SW206", "D18-20ft"] == "pass"


def test_p15_roof_says_no_basement_and_no_storage(cases: SampleProposals) -> None:
    roofs = cases.impervious[
        cases.impervious["proposal_id"].str.startswith("P15")
        & (cases.impervious["surface"] == "roof")
    ]
    assert roofs["habitable_basement"].tolist() == [False]
    assert roofs["below_ground_storage"].tolist() == [False]
    drywell = cases.devices.set_index("device_id").geometry["D15-roof"]
    assert round(shapely.distance(drywell, roofs.geometry.iloc[0]), 2) == 15.81
