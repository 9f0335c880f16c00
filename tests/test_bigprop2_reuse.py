"""The calculation sheet reuses the rules' runoff results (issue 14: 20,000 proposals).

``Town.screen`` runs the rules on the town cut to the proposals' reach; the sheet written
afterwards must not compute every drainage area again on the whole town, and its figures
are those of the whole town.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import shapely

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


def test_nearest_rows_equal_a_mask_per_geometry(town: gis_sw.Town) -> None:
    """``Town.local``'s nearest rows (ties kept), one geometry at a time, as the tree gives them."""
    proposals = gis_sw.read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset)
    geoms = np.asarray(proposals.disturbance.geometry.to_numpy(), dtype=object)
    keys = shapely.to_wkb(geoms)
    for kind, tree in town._trees.items():
        if len(town._geoms[kind]) == 0:
            continue
        town._near_cache.clear()
        found = town._nearest(kind, geoms, keys)
        where, rows = tree.query_nearest(geoms, all_matches=True)
        expected = np.concatenate([rows[where == j] for j in range(len(geoms))])
        assert found.tolist() == expected.tolist(), kind
        assert len(found) >= len(geoms)
