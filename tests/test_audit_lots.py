"""Audit of SW205 on contradictory parcels, and of devices sharing an id.

§ 183-12C(2)(c)[6]: a device at least 10 ft from any property line.  A device inside two
parcels that overlap has no one property line: before, it passed against whichever parcel
the tree gave first (9,995 ft of lot in one, 5 ft from the other's line); now ``review``.
Two devices of one proposal with one id used to crash the engine with a RuntimeError; now
a :class:`~gis_sw.errors.ProposalError` names them.
"""

from __future__ import annotations

from typing import Any

import geopandas as gpd
import pytest
from shapely.geometry import Point, box

from gis_sw.analysis import infiltration
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.engine import run_rules
from gis_sw.errors import ProposalError
from gis_sw.layers.build import assemble_proposals, make_layerset, make_proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"


def frame(rows: list[dict[str, Any]]) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=CRS)


def sw205(ruleset: Ruleset, lots: list[tuple[str, Any]], device: Any) -> Any:
    layers = make_layerset(
        CRS, {"parcels": frame([{"parcel_id": p, "geometry": g} for p, g in lots])}
    )
    proposals = make_proposals(
        CRS,
        frame([{"proposal_id": "P-1", "geometry": box(60, 60, 100, 100)}]),
        frame([{"device_id": "D-7", "proposal_id": "P-1", "geometry": device}]),
    )
    ctx = CheckContext(layers=layers, proposals=proposals, ruleset=ruleset)
    found = infiltration.check_property_line(ctx)
    assert len(found) == 1
    return found.iloc[0]


def test_sw205_device_in_two_overlapping_parcels_is_review(ruleset: Ruleset) -> None:
    # 104-22 is the whole block; 104-23 overlaps its west part; the device is 5 ft inside
    # 104-23's east line and 80 ft from every line of 104-22
    lots = [("104-22", box(0, 0, 200, 200)), ("104-23", box(0, 0, 85, 200))]
    found = sw205(ruleset, lots, Point(80, 80))
    assert found["outcome"] == "review"
    assert found["measured"] == 80.0
    assert found["message"] == (
        "Device D-7 is 80.00 ft from the line of parcel 104-22, but it also lies in parcel "
        "104-23, which overlaps parcel 104-22: the parcels layer contradicts itself, so the "
        "property line cannot be told; fix the overlapping parcels to check the 10 ft minimum "
        "(§ 183-12C(2)(c)[6])."
    )


@pytest.mark.parametrize(
    ("x", "outcome"),
    [
        pytest.param(90.0, "pass", id="10.00-ft-from-shared-line"),
        pytest.param(90.01, "fail", id="9.99-ft-from-shared-line"),
        pytest.param(89.99, "pass", id="10.01-ft-from-shared-line"),
    ],
)
def test_sw205_boundary_abutting_parcels_are_not_overlapping(
    ruleset: Ruleset, x: float, outcome: str
) -> None:
    lots = [("104-22", box(0, 0, 100, 200)), ("104-23", box(100, 0, 200, 200))]
    found = sw205(ruleset, lots, Point(x, 80))
    assert found["outcome"] == outcome
    assert found["measured"] == pytest.approx(100.0 - x, abs=0.005)


def test_sw205_condominium_units_on_one_lot_are_one_parcel(ruleset: Ruleset) -> None:
    lots = [("104-22-A", box(0, 0, 200, 200)), ("104-22-B", box(0, 0, 200, 200))]
    found = sw205(ruleset, lots, Point(80, 80))
    assert (found["outcome"], found["measured"]) == ("pass", 80.0)


def test_sw205_overlap_does_not_hide_a_fail_against_the_own_lot(ruleset: Ruleset) -> None:
    lots = [("104-22", box(0, 0, 200, 200)), ("104-23", box(0, 0, 85, 200))]
    found = sw205(ruleset, lots, Point(5, 80))  # 5 ft from 104-22's west line
    assert (found["outcome"], found["measured"]) == ("fail", 5.0)


def test_two_devices_with_one_id_in_a_proposal_is_a_clear_error(ruleset: Ruleset) -> None:
    layers = make_layerset(
        CRS, {"parcels": frame([{"parcel_id": "104-22", "geometry": box(0, 0, 200, 200)}])}
    )
    devices = frame(
        [
            {"device_id": "D-7", "proposal_id": "P-1", "geometry": Point(80, 80)},
            {"device_id": "D-7", "proposal_id": "P-1", "geometry": Point(5, 80)},
            {"device_id": "D-7", "proposal_id": "P-2", "geometry": Point(50, 50)},
        ]
    )
    dist = frame(
        [
            {"proposal_id": "P-1", "geometry": box(60, 60, 100, 100)},
            {"proposal_id": "P-2", "geometry": box(40, 40, 60, 60)},
        ]
    )
    # built as a reader would (make_proposals itself refuses a repeated device_id): the
    # engine's own guard
    proposals = assemble_proposals(CRS, dist, devices, source="proposals.gpkg")
    with pytest.raises(ProposalError) as err:
        run_rules(layers, proposals, ruleset, select=["SW205"])
    assert str(err.value) == (
        "proposals.gpkg: devices layer: device_id D-7 (proposal P-1) is given to more than one "
        "device of a proposal, so their findings could not be told apart. Fix: give each "
        "device its own device_id."
    )
