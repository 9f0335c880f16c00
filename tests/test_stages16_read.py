"""The batch reads its vector layers on two threads: the same layers, reports and errors.

Every problem of every layer is still raised once, in the manifest's order, with the same
message as a one-thread read; nothing of the read's threads is left running (the screen
stage forks its workers only in a process with one thread).
"""

from __future__ import annotations

import threading
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from gis_sw.batch.inputs import BATCH_KINDS, read_town
from gis_sw.batch.synthetic import CRS, synthetic_frames
from gis_sw.errors import LayerError
from gis_sw.layers.read import inspect_layers
from gis_sw.ruleset import Ruleset

pytestmark = pytest.mark.usefixtures("single_threaded")  # forks need one thread


def _write_town(folder: Path, frames: dict[str, gpd.GeoDataFrame]) -> Path:
    """GeoParquet for most layers, a GeoPackage for two, as towns mix them."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["[manifest]", 'name = "generated"', f'crs = "{CRS}"', ""]
    for kind, frame in frames.items():
        if kind in ("wells", "zoning"):
            frame.to_file(folder / f"{kind}.gpkg", layer=kind, engine="pyogrio")
            lines += [f"[{kind}]", f'path = "{kind}.gpkg"', ""]
        else:
            frame.to_parquet(folder / f"{kind}.parquet")
            lines += [f"[{kind}]", f'path = "{kind}.parquet"', ""]
    (folder / "layers.toml").write_text("\n".join(lines), encoding="utf-8")
    return folder / "layers.toml"


def test_two_threads_read_the_same_layers_and_reports(ruleset: Ruleset, tmp_path: Path) -> None:
    frames = synthetic_frames(400, seed=16)
    parcels = frames["parcels"]
    bowtie = shapely.Polygon([(0, 0), (10, 10), (10, 0), (0, 10)])  # repaired, and reported
    parcels.loc[3, "geometry"] = shapely.affinity.translate(
        bowtie, *parcels.geometry.iloc[3].centroid.coords[0]
    )
    source = _write_town(tmp_path / "town", frames)
    one = read_town(source, ruleset=ruleset, everything=False, threads=1)
    two = read_town(source, ruleset=ruleset, everything=False, threads=2)
    assert threading.active_count() == 1  # the pool's threads are gone: the screen may fork
    assert list(one.reports) == list(two.reports)
    assert one.reports == two.reports
    assert one.reports["parcels"].repaired_ids == two.reports["parcels"].repaired_ids
    assert len(one.reports["parcels"].repaired_ids) == 1
    for kind in BATCH_KINDS:
        a, b = one.get(kind), two.get(kind)
        assert a is not None, kind
        assert b is not None, kind
        assert len(a) == len(b) == len(frames[kind]), kind
        assert a.drop(columns="geometry").equals(b.drop(columns="geometry")), kind
        assert list(shapely.to_wkb(a.geometry)) == list(shapely.to_wkb(b.geometry)), kind


def _broken_town(folder: Path) -> Path:
    frames = synthetic_frames(200, seed=3)
    frames["wells"] = frames["wells"].drop(columns="well_id")  # a required column missing
    parcels = frames["parcels"]
    parcels.loc[7, "parcel_id"] = parcels.loc[8, "parcel_id"]  # a repeated id
    frames["septic_fields"] = frames["septic_fields"].iloc[:0]  # an empty layer
    return _write_town(folder, frames)


def test_every_problem_is_raised_once_in_the_same_words_and_order(
    ruleset: Ruleset, tmp_path: Path
) -> None:
    source = _broken_town(tmp_path / "town")
    with pytest.raises(LayerError) as serial:
        read_town(source, ruleset=ruleset, everything=False, threads=1)
    layers = [p.layer for p in serial.value.problems]
    assert any(layer.startswith("parcels") for layer in layers)
    assert any(layer.startswith("wells") for layer in layers)
    assert any(layer.startswith("septic_fields") for layer in layers)
    for _ in range(4):  # whichever thread finishes first
        with pytest.raises(LayerError) as threaded:
            read_town(source, ruleset=ruleset, everything=False, threads=2)
        assert str(threaded.value) == str(serial.value)
        assert list(threaded.value.problems) == list(serial.value.problems)
    assert threading.active_count() == 1


def test_keep_sees_each_layer_before_the_next_is_read(ruleset: Ruleset, tmp_path: Path) -> None:
    source = _write_town(tmp_path / "town", synthetic_frames(100, seed=4))
    seen: list[tuple[str, int]] = []

    def keep(kind: str, frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        seen.append((kind, threading.active_count()))
        return frame.iloc[:0]

    inspection = inspect_layers(source, ruleset=ruleset, kinds=BATCH_KINDS, keep=keep, threads=2)
    assert inspection.ok
    assert [kind for kind, _ in seen] == [
        k for k in inspection.manifest.entries if k in BATCH_KINDS
    ]
    assert {count for _, count in seen} == {1}  # read in turn, no pool behind
