"""The read stage's validation without Python per value, and layers read two at a time.

Issue 16: the batch's read of a 100,000-parcel town spent most of its time converting and
checking values one by one (a text column's 100,000 ids, a yes/no column parsed value by
value, every parcel normalised to find repeated shapes).  Each check now runs on whole
columns; these tests pin the answers it gives, value by value, on columns shaped like the
exports (pandas ``str`` from GeoParquet and GeoPackage, NA where the source is empty).
"""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

import gis_sw.layers.read as read_module
from gis_sw.errors import LayerError
from gis_sw.layers.build import coerce_column
from gis_sw.layers.clean import duplicate_geometry_groups
from gis_sw.layers.labels import id_text
from gis_sw.layers.specs import TOWN_LAYERS
from gis_sw.layers.validate import validate_layer
from gis_sw.ruleset import load_ruleset

CRS = "EPSG:2260"
X0, Y0 = 685_000.0, 830_000.0


def test_yes_no_text_parsed_word_by_word() -> None:
    words = pd.Series(["Y", "n", " yes ", None, "0", "TRUE", "Y"], dtype="str")
    got = coerce_column(words, "bool")
    assert str(got.dtype) == "boolean"
    assert got.tolist() == [True, False, True, pd.NA, False, True, True]


def test_yes_no_boolean_column_kept_with_its_gaps() -> None:
    flags = pd.Series([True, None, False], dtype="boolean", index=[5, 6, 7])
    got = coerce_column(flags, "bool")
    assert str(got.dtype) == "boolean"
    assert got.tolist() == [True, pd.NA, False]
    assert got.index.tolist() == [5, 6, 7]
    flags.iloc[0] = False  # a copy: the source frame is not changed through it
    assert bool(got.iloc[0]) is True


def test_yes_no_word_that_is_none_raises_naming_it() -> None:
    with pytest.raises(ValueError, match=r"'maybe' is not a yes/no value"):
        coerce_column(pd.Series(["Y", "maybe"], dtype="str"), "bool")


def test_text_column_kept_as_text_with_gaps() -> None:
    got = coerce_column(pd.Series(["1.1-4", None, "1.1-6"], dtype="str"), "str")
    assert got.dtype == object
    assert got.iloc[0] == "1.1-4"
    assert got.iloc[2] == "1.1-6"
    assert pd.isna(got.iloc[1])
    assert [type(v) for v in got.iloc[[0, 2]]] == [str, str]


def test_ids_as_text_from_text_and_from_float() -> None:
    text = id_text(pd.Series(["P-1", None, "P-3"], dtype="str"))
    assert text.iloc[0] == "P-1"
    assert text.iloc[2] == "P-3"
    assert pd.isna(text.iloc[1])
    floats = id_text(pd.Series([101.0, np.nan, 103.0]))
    assert floats.iloc[0] == "101"
    assert floats.iloc[2] == "103"
    assert pd.isna(floats.iloc[1])


def _parcels(ids: list[object], geoms: list[shapely.Geometry] | None = None) -> gpd.GeoDataFrame:
    boxes = geoms or [
        shapely.box(X0 + 100 * i, Y0, X0 + 100 * i + 100, Y0 + 100) for i in range(len(ids))
    ]
    return gpd.GeoDataFrame({"parcel_id": pd.Series(ids, dtype="str")}, geometry=boxes, crs=CRS)


def test_blank_ids_are_empty_required_values_named_by_row() -> None:
    # "  " and the ideographic space are blank; " P-6 " is an id with padding
    frame = _parcels(["P-1", "  ", "", "\u3000", None, " P-6 "])
    validated, problems = validate_layer(frame, TOWN_LAYERS["parcels"], layer="parcels")
    assert validated is None
    # a blank id is no id: not a repeated id '', and each is named by its row
    assert [p.message for p in problems] == [
        "required column 'parcel_id' is empty for 4 feature(s): row 2, row 3, row 4, row 5.",
    ]


def test_ids_without_blanks_pass_and_keep_their_text() -> None:
    validated, problems = validate_layer(
        _parcels(["P-1", "P-2", " P-3"]), TOWN_LAYERS["parcels"], layer="parcels"
    )
    assert problems == []
    assert validated is not None
    assert validated.frame["parcel_id"].tolist() == ["P-1", "P-2", "P-3"]


def test_repeated_shapes_found_in_any_vertex_order_only_when_identical() -> None:
    lot = shapely.Polygon([(X0, Y0), (X0 + 100, Y0), (X0 + 100, Y0 + 80), (X0, Y0 + 80)])
    # the same lot, its ring starting at another corner and running the other way
    turned = shapely.Polygon([(X0 + 100, Y0 + 80), (X0 + 100, Y0), (X0, Y0), (X0, Y0 + 80)])
    # same envelope and vertex count, another shape (a kite inside the same box)
    kite = shapely.Polygon([(X0 + 50, Y0), (X0 + 100, Y0 + 40), (X0 + 50, Y0 + 80), (X0, Y0 + 40)])
    far = shapely.box(X0 + 500, Y0, X0 + 600, Y0 + 100)
    frame = _parcels(["B-2", "A-1", "K-1", "F-1", "F-2", "F-2"], [turned, lot, kite, far, far, far])
    # F-2 twice on one shape is one id (the id check names it), F-1 shares that shape
    assert duplicate_geometry_groups(frame, "parcel_id") == (("A-1", "B-2"), ("F-1", "F-2"))
    assert duplicate_geometry_groups(_parcels(["A", "K"], [lot, kite]), "parcel_id") == ()


def _town(folder: Path, *, bad: bool) -> Path:
    """Parcels, zoning, wells and buildings as GeoParquet; with ``bad``, two bad layers."""
    n = 30
    lots = [shapely.box(X0 + 100 * i, Y0, X0 + 100 * i + 100, Y0 + 100) for i in range(n)]
    frames = {
        "parcels": gpd.GeoDataFrame(
            {"parcel_id": [f"P-{i}" for i in range(n)]}, geometry=lots, crs=CRS
        ),
        "zoning": gpd.GeoDataFrame(
            {"zone": ["R-20"]}, geometry=[shapely.box(X0, Y0, X0 + 100 * n, Y0 + 100)], crs=CRS
        ),
        "wells": gpd.GeoDataFrame(
            {"well_id": ["W-1", "W-1" if bad else "W-2"]},
            geometry=[shapely.Point(X0 + 50, Y0 + 50), shapely.Point(X0 + 150, Y0 + 50)],
            crs=CRS,
        ),
        "buildings": gpd.GeoDataFrame(
            {
                "building_id": ["B-1", "B-2"],
                "habitable_basement": pd.Series(["Y", "perhaps" if bad else "N"], dtype="str"),
            },
            geometry=[shapely.box(X0 + 20, Y0 + 20, X0 + 40, Y0 + 40)] * 2,
            crs=CRS,
        ),
    }
    lines = []
    for kind, frame in frames.items():
        frame.to_parquet(folder / f"{kind}.parquet")
        lines.append(f'[{kind}]\npath = "{kind}.parquet"\n')
    manifest = folder / "layers.toml"
    manifest.write_text("\n".join(lines), encoding="utf-8")
    return manifest


@pytest.mark.parametrize("threads", [1, 2], ids=["one-thread", "two-threads"])
def test_layers_read_at_once_raise_every_problem_in_manifest_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    monkeypatch.setattr(read_module, "READ_THREADS", threads)
    manifest = _town(tmp_path, bad=True)
    with pytest.raises(LayerError) as caught:
        read_module.read_layers(manifest, ruleset=load_ruleset())
    problems = caught.value.problems
    assert [p.layer.split(" ")[0] for p in problems] == ["wells", "buildings"]
    assert "duplicate well_id: 'W-1' (2 times)." in problems[0].message
    assert "habitable_basement" in problems[1].message
    assert "'perhaps'" in problems[1].message


@pytest.mark.parametrize("threads", [1, 2], ids=["one-thread", "two-threads"])
def test_layers_read_at_once_equal_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    monkeypatch.setattr(read_module, "READ_THREADS", threads)
    layers = read_module.read_layers(_town(tmp_path, bad=False), ruleset=load_ruleset())
    assert list(layers.vectors) == ["parcels", "zoning", "wells", "buildings"]
    assert layers.vectors["parcels"]["parcel_id"].tolist()[:3] == ["P-0", "P-1", "P-2"]
    assert layers.vectors["buildings"]["habitable_basement"].tolist() == [True, False]
    assert layers.reports["parcels"].features == 30
    assert layers.reports["buildings"].features == 2
    assert layers.reports["wells"].bounds == (X0 + 50, Y0 + 50, X0 + 150, Y0 + 50)
