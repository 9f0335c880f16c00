"""The calculation sheet reuses the rules' runoff results (issue 14: 20,000 proposals).

``Town.screen`` runs the rules on the town cut to the proposals' reach; the sheet written
afterwards must not compute every drainage area again on the whole town, and its figures
are those of the whole town.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import gis_sw
from gis_sw.analysis import hydrology

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


@pytest.fixture(scope="module")
def town() -> gis_sw.Town:
    return gis_sw.read_town(SAMPLE / "layers.toml")


def test_sheet_reuses_the_screened_results(town: gis_sw.Town) -> None:
    proposals = gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset)
    screening = town.screen(proposals)
    assert screening.screened_layers is not None
    assert screening.screened_layers is not town.layers
    done = hydrology._LAST_RUN[0][3]
    sheet = screening.calc_sheet
    assert sheet is not None
    assert hydrology._LAST_RUN[0][3] is done  # the rules' results, not computed again
    hydrology._LAST_RUN.clear()
    whole = hydrology.calculation_sheet_for(town.layers, proposals, town.ruleset)
    assert len(sheet) == len(whole) > 0
    pd.testing.assert_frame_equal(sheet, whole, check_exact=False, atol=0.01, rtol=0)
