"""The engine's findings frame, built once from each check's columns, against pandas.

The reference below is what the engine did before it took check rows as plain arrays:
concatenate the checks' frames, add the completed columns, sort with pandas.  Checks here
return rows of awkward shapes (extra columns, an object-dtype column where the others are
text, missing figures, ids that sort differently by case and accent, outcomes in every
order); the engine's frame must equal the reference's, values and dtypes.
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

from gis_sw.analysis import engine
from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.engine import run_rules
from gis_sw.analysis.findings import FINDING_COLUMNS, Severity, finding_id, make_findings
from gis_sw.analysis.registry import RULES_BY_ID, Rule, rule_title
from gis_sw.layers.build import make_layerset, make_proposals
from gis_sw.ruleset import Ruleset

CRS = "EPSG:2260"
ORDER = {o: i for i, o in enumerate(("fail", "review", "required", "info", "pass"))}


def reference(frames: list[gpd.GeoDataFrame], ruleset: Ruleset) -> gpd.GeoDataFrame:
    cols = ["rule_id", "proposal_id", "subject_id", "outcome", "message", "measured",
            "threshold", "unit", "geometry"]  # fmt: skip
    rows = gpd.GeoDataFrame(
        pd.concat([f[cols] for f in frames], ignore_index=True), geometry="geometry", crs=CRS
    )
    out = rows.copy()
    rules = [RULES_BY_ID[r] for r in out["rule_id"]]
    out["citation"] = [ruleset.citation(r.rule_id) for r in rules]
    out["title"] = [rule_title(r, ruleset) for r in rules]
    passive = out["outcome"].isin(["pass", "info"]).to_numpy()
    out["severity"] = np.where(passive, str(Severity.INFO), [str(r.severity) for r in rules])
    out["ruleset"] = ruleset.name
    out["ruleset_version"] = ruleset.version
    out["finding_id"] = [
        finding_id(ruleset.name, ruleset.version, r, p, s)
        for r, p, s in zip(out["rule_id"], out["proposal_id"], out["subject_id"], strict=True)
    ]
    out["waived"] = False
    out["waiver_reason"] = ""
    out = out.assign(_order=out["outcome"].map(ORDER)).sort_values(
        ["proposal_id", "rule_id", "_order", "subject_id"], kind="stable"
    )
    out = out.drop(columns="_order").reset_index(drop=True)
    return gpd.GeoDataFrame(out[list(FINDING_COLUMNS)], geometry="geometry", crs=CRS)


def context(ruleset: Ruleset) -> CheckContext:
    parcels = gpd.GeoDataFrame(
        {"parcel_id": ["A"]}, geometry=[shapely.box(0, 0, 300, 100)], crs=CRS
    )
    disturbance = gpd.GeoDataFrame(
        {"proposal_id": ["P-2", "P-10", "p-1"]},
        geometry=[
            shapely.box(10, 10, 20, 20),
            shapely.box(30, 10, 40, 20),
            shapely.box(0, 0, 5, 5),
        ],
        crs=CRS,
    )
    layers = make_layerset(CRS, {"parcels": parcels})
    return CheckContext(layers=layers, proposals=make_proposals(CRS, disturbance), ruleset=ruleset)


def text_rows(ctx: CheckContext) -> gpd.GeoDataFrame:
    return make_findings(
        "SW205",
        ctx.crs,
        proposal_id=["P-2", "P-10", "p-1", "P-2", "P-2"],
        subject_id=["Zed", "ébène", "a", "Éa", "D-1"],
        outcome=["pass", "fail", "info", "review", "fail"],
        message=["one", "two", None, "four", "five"],
        measured=[9.99, 10.0, None, 10.01, 0],
        threshold=10.0,
        unit="ft",
        geometry=[shapely.Point(1, 1), None, shapely.Point(2, 2), shapely.Polygon(), None],
    )


def number_ids(ctx: CheckContext) -> gpd.GeoDataFrame:
    # ids given as numbers, figures as text: make_findings turns both as pandas would
    return make_findings(
        "SW101",
        ctx.crs,
        proposal_id=[10, 2],
        subject_id=[1.5, 2],
        outcome="required",
        message="m",
        measured=["250", "x"],
        threshold=np.float32(0.5),
        unit="sq ft",
    )


def object_message_extra_column(ctx: CheckContext) -> gpd.GeoDataFrame:
    rows = make_findings(
        "SW206", ctx.crs, proposal_id="p-1", subject_id=["b", "B"], outcome="pass", message="x"
    )
    rows["message"] = pd.Series(["x", 3], dtype="object")  # not text: an object column
    rows["extra"] = [1, 2]
    return rows


def empty(ctx: CheckContext) -> gpd.GeoDataFrame:
    return make_findings("SW207", ctx.crs, proposal_id=[], subject_id=[], outcome=[], message=[])


@pytest.mark.parametrize(
    "checks",
    [
        pytest.param([text_rows], id="one-check"),
        pytest.param([text_rows, number_ids, empty], id="text-and-numbers"),
        pytest.param([text_rows, object_message_extra_column, number_ids], id="mixed-dtypes"),
    ],
)
def test_findings_frame_equals_pandas_reference(ruleset, monkeypatch, checks):
    ctx = context(ruleset)
    ids = {"text_rows": "SW205", "number_ids": "SW101", "empty": "SW207"}
    ids["object_message_extra_column"] = "SW206"
    rules = tuple(Rule(ids[c.__name__], "t", Severity.HIGH, c) for c in checks)
    monkeypatch.setattr(engine, "select_rules", lambda select, ignore: rules)
    got = run_rules(ctx.layers, ctx.proposals, ruleset, context=ctx, on_error="raise")
    want = reference([c(ctx) for c in checks if len(c(ctx))], ruleset)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.crs == want.crs
    # the order: proposal, rule, outcome (fail first), subject, by code point
    first = got[(got["proposal_id"] == "P-2") & (got["rule_id"] == "SW205")]
    assert list(first["outcome"]) == ["fail", "review", "pass"]
    assert list(first["subject_id"]) == ["D-1", "Éa", "Zed"]


def test_complete_findings_equals_reference_and_refuses_duplicates(ruleset):
    ctx = context(ruleset)
    rows = text_rows(ctx)
    got = engine.complete_findings(rows, ruleset)
    pd.testing.assert_frame_equal(got, reference([rows], ruleset), check_exact=True)
    twice = gpd.GeoDataFrame(pd.concat([rows, rows.iloc[[3]]], ignore_index=True), crs=CRS)
    with pytest.raises(RuntimeError, match=r"share one .*'subject_id': 'Éa'"):
        engine.complete_findings(twice, ruleset)


def pandas_rows(rule_id: str, n: int, **columns: object) -> gpd.GeoDataFrame:
    """Check rows the plain pandas way: a frame of lists, then each column converted."""
    geometry = columns.pop("geometry", None)

    def col(value: object) -> list[object]:
        if isinstance(value, list | np.ndarray | pd.Series) and not isinstance(value, str):
            return list(value)
        return [value] * n

    defaults = {"measured": np.nan, "threshold": np.nan, "unit": ""}
    names = ["proposal_id", "subject_id", "outcome", "message", "measured", "threshold", "unit"]
    frame = pd.DataFrame(
        {"rule_id": [rule_id] * n, **{k: col(columns.get(k, defaults.get(k))) for k in names}}
    )
    frame["outcome"] = [str(o) for o in frame["outcome"]]
    for name in ("proposal_id", "subject_id"):
        frame[name] = frame[name].astype(str)
    for name in ("measured", "threshold"):
        frame[name] = pd.to_numeric(frame[name], errors="coerce").astype("float64")
    frame["geometry"] = gpd.GeoSeries(col(geometry), crs=CRS).to_numpy()
    return gpd.GeoDataFrame(frame, geometry="geometry", crs=CRS)


@pytest.mark.parametrize(
    ("n", "columns"),
    [
        pytest.param(
            0, {"proposal_id": [], "subject_id": [], "outcome": [], "message": []}, id="empty"
        ),
        pytest.param(
            2,
            {"proposal_id": "P", "subject_id": ["a", None], "outcome": "pass",
             "message": ["x", None], "measured": [None, np.nan]},
            id="missing",
        ),
        pytest.param(
            2,
            {"proposal_id": [1, 2], "subject_id": [1.0, np.nan], "outcome": ["fail", "pass"],
             "message": [1, "b"], "measured": ["5", "x"], "threshold": [True, 3],
             "unit": [None, "ft"]},
            id="numbers-and-text",
        ),
        pytest.param(
            2,
            {"proposal_id": np.array(["a", "b"]), "subject_id": pd.Series(["x", "y"], index=[5, 6]),
             "outcome": "info", "message": "m", "measured": np.array([1, 2]),
             "threshold": np.float32(2.5), "geometry": [shapely.Point(0, 0), None]},
            id="arrays",
        ),
        pytest.param(
            1,
            {"proposal_id": ["a"], "subject_id": [pd.NA], "outcome": "review", "message": "m",
             "measured": [np.int64(7)], "threshold": [pd.NA]},
            id="na",
        ),
    ],
)  # fmt: skip
def test_make_findings_equals_pandas_reference(n, columns):
    got = make_findings("SW205", CRS, **columns)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(got, pandas_rows("SW205", n, **columns), check_exact=True)
    assert str(got.crs) == CRS
