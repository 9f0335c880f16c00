"""The engine's rows without a frame per rule, and the flow trace's reused arrays.

`run_rules` takes each rule's rows from its builder as plain arrays
(`gis_sw.analysis.rows.plain_columns`); it must give exactly what building a frame per
rule gave, on every rule and every sample proposal.  `FlowGrid.trace` reuses its claim
arrays: a second trace, and a trace after one stopped by an error, must equal a fresh
grid's.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyproj
import pytest
import shapely
from affine import Affine

from gis_sw.analysis import engine
from gis_sw.analysis.findings import Findings, Outcome
from gis_sw.analysis.flow import FlowGrid
from gis_sw.analysis.rows import columns_of, plain_columns
from gis_sw.api import read_proposals, read_town
from gis_sw.layers.raster import RasterLayer

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
CRS = CRS_NAME = "EPSG:2260"


def _plain_rows() -> Findings:
    rows = Findings("SW205", "§ 183-12C(2)(c)[6]", CRS)
    rows.threshold, rows.unit, rows.decimals = 10.0, "ft", 2
    rows.add("P-1", Outcome.PASS, "far", subject_id="D-1", measured=10.004, geometry=None)
    rows.add("P-1", "fail", "near", subject_id="D-2", measured=9.986, threshold=12.0)
    rows.add("p-2", Outcome.REVIEW, "no data", unit="", geometry=shapely.Polygon())
    rows.extend(
        proposal_id=["P-3", "P-3"],
        subject_id=["É", "e"],
        outcome=Outcome.INFO,
        message="m",
        measured=[np.float64(1.5), 2],
        geometry=[shapely.Point(1, 2), shapely.box(0, 0, 1, 1)],
    )
    return rows


def test_plain_rows_as_arrays_equal_the_frame_of_them() -> None:
    rows = _plain_rows()
    got = plain_columns(rows)
    assert got is not None
    want = columns_of(rows.frame())
    assert got.dtypes == want.dtypes
    for name, values in want.arrays.items():
        mine = got.arrays[name]
        assert mine.dtype == values.dtype, name
        if name == "geometry":
            assert list(shapely.to_wkb(mine)) == list(shapely.to_wkb(values))
        else:
            pd.testing.assert_series_equal(pd.Series(mine), pd.Series(values), check_exact=True)
    assert got.arrays["measured"].tolist()[:2] == [10.0, 9.99]
    assert got.arrays["threshold"].tolist()[:3] == [10.0, 12.0, 10.0]
    assert got.arrays["unit"].tolist()[:3] == ["ft", "ft", ""]


@pytest.mark.parametrize(
    "odd",
    [
        pytest.param({"message": None}, id="missing-message"),
        pytest.param({"proposal_id": 7}, id="number-id"),
        pytest.param({"measured": True}, id="bool-figure"),
        pytest.param({"measured": "5"}, id="text-figure"),
        pytest.param({"unit": 3}, id="number-unit"),
    ],
)
def test_rows_pandas_must_convert_take_the_frame(odd: dict) -> None:
    rows = _plain_rows()
    values = {"proposal_id": "P-9", "message": "x", "measured": 1.0, "unit": "ft", **odd}
    pid = values.pop("proposal_id")
    rows.add(pid, Outcome.PASS, values.pop("message"), subject_id="S", **values)
    assert plain_columns(rows) is None


def test_no_rows_give_no_arrays() -> None:
    assert plain_columns(Findings("SW101", "", CRS)) is None


def test_run_rules_equals_a_frame_per_rule_on_every_sample_proposal(monkeypatch) -> None:
    town = read_town(SAMPLE / "layers.toml")
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset)
    fast = engine.run_rules(town.layers, proposals, town.ruleset)
    monkeypatch.setattr(engine, "body_of", lambda check: None)  # every rule through a frame
    framed = engine.run_rules(town.layers, proposals, town.ruleset)
    columns = [c for c in framed.columns if c != "geometry"]
    pd.testing.assert_frame_equal(fast[columns], framed[columns], check_exact=True)
    assert list(shapely.to_wkb(fast.geometry.to_numpy())) == list(
        shapely.to_wkb(framed.geometry.to_numpy())
    )
    assert len(fast) > 500
    assert set(fast["rule_id"]) >= {"SW101", "SW106", "SW201", "SW208", "SW301", "SW504"}


def _dem() -> RasterLayer:
    """A 60 x 50 DEM of 10-ft cells sloping south-east, with ridges, a pit and a hole."""
    rows, cols = np.mgrid[0:60, 0:50]
    values = 200.0 - 0.8 * rows - 0.5 * cols + 3.0 * np.sin(cols / 4.0)
    values[41, 31] = 100.0  # a pit
    values[0, 0] = math.nan
    return RasterLayer(
        kind="dem",
        values=values,
        transform=Affine(10.0, 0.0, 1000.0, 0.0, -10.0, 2600.0),
        crs=pyproj.CRS(CRS_NAME),
        source="<test>",
    )


def test_a_trace_reusing_its_arrays_equals_a_fresh_grids() -> None:
    dem = _dem()
    brook = [shapely.box(1000, 2100, 1500, 2120)]  # across the grid, south of the pit
    starts_r, starts_c = np.mgrid[5:30:3, 2:48:3]
    rows = np.r_[starts_r.ravel(), 40, 40, 42]  # the last three beside the pit
    cols = np.r_[starts_c.ravel(), 30, 31, 32]
    grid = FlowGrid(dem, brook)

    def ends(result) -> list:
        return [result.end.tolist(), result.end_row.tolist(), result.end_col.tolist()]

    first = ends(grid.trace(rows, cols))
    assert first == ends(FlowGrid(dem, brook).trace(rows, cols))
    assert ends(grid.trace(rows, cols)) == first  # the claims were cleared
    with pytest.raises(IndexError):
        grid.trace(np.array([3, 10_000]), np.array([4, 5]))  # a cell off the grid
    assert ends(grid.trace(rows, cols)) == first  # cleared after the error too
    step, calls = grid._step, []

    def failing(r: np.ndarray, c: np.ndarray):  # stops a trace after its third step
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("stopped")
        return step(r, c)

    grid._step = failing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="stopped"):
        grid.trace(rows, cols)
    grid._step = step  # type: ignore[method-assign]
    assert ends(grid.trace(rows, cols)) == first  # the cells it had claimed were cleared
    assert {int(e) for e in first[0]} >= {1, 3}  # paths into the brook, into the pit
    assert ends(grid.trace(rows[::2], cols[::2])) == [v[::2] for v in first]
