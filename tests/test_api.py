"""The public API: `gis_sw.Town` screens a proposal on its neighbourhood exactly as the
whole town would, the names load lazily, and docs/api.md's example runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import shapely

import gis_sw
from gis_sw.analysis.engine import run_rules
from gis_sw.analysis.siting import siting_by_class
from gis_sw.api import Screening, Town, read_proposals, read_town

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


@pytest.fixture(scope="module")
def town() -> Town:
    return read_town(SAMPLE / "layers.toml")


@pytest.fixture(scope="module")
def proposals(town):
    return read_proposals(SAMPLE / "proposals.gpkg", ruleset=town.ruleset)


def _same_findings(local: pd.DataFrame, whole: pd.DataFrame) -> None:
    """Equal findings; where two features tie for nearest at the same distance, the
    message may name either of them (the checks pick one of equals)."""
    local = local.reset_index(drop=True)
    whole = whole.reset_index(drop=True)
    columns = [c for c in whole.columns if c not in ("message", "geometry")]
    pd.testing.assert_frame_equal(local[columns], whole[columns])
    named = re.compile(r"(septic field|well|wetland|water body) [^ ,]+")
    for rule, a, b in zip(whole["rule_id"], local["message"], whole["message"], strict=True):
        if a != b:  # only a tie for nearest may name another feature at the same distance
            assert rule in {"SW201", "SW208"}, (a, b)
            assert named.sub(r"\1 X", a) == named.sub(r"\1 X", b), (a, b)
    for a, b in zip(local.geometry, whole.geometry, strict=True):
        assert (a is None and b is None) or shapely.equals_exact(a, b, 1e-9) or a.equals(b)


def test_screen_one_proposal_at_a_time_equals_the_whole_town(town, proposals):
    whole = run_rules(town.layers, proposals, town.ruleset)
    for pid in proposals.ids:
        screening = town.screen(proposals.subset([pid]), siting=False)
        _same_findings(screening.findings, whole[whole["proposal_id"] == pid])


def test_screen_all_at_once(town, proposals):
    screening = town.screen(proposals)
    assert isinstance(screening, Screening)
    _same_findings(screening.findings, run_rules(town.layers, proposals, town.ruleset))
    with pytest.raises(AttributeError):
        screening.findings = None  # type: ignore[misc]  # frozen


def test_local_keeps_the_nearest_feature_at_any_distance(town):
    parcels = town.layers.get("parcels")
    lot = parcels.geometry.iloc[0]
    local = town.local([lot.centroid])
    wells = town.layers.get("wells")
    nearest = wells.distance(lot.centroid).idxmin()
    assert wells.loc[nearest, "well_id"] in set(local.get("wells")["well_id"])
    # the reach is the largest distance of the ruleset (every *_ft number) plus the margin
    found = []

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif key.endswith("_ft") and isinstance(value, int | float):
            found.append(float(value))

    walk(dict(town.ruleset.raw))
    reach = town.reach_ft
    assert reach == max(found) + 10.0
    # every parcel within the reach of the point is kept, and none far beyond it
    point = lot.centroid
    within = parcels[parcels.distance(point) <= reach]["parcel_id"]
    kept = set(local.get("parcels")["parcel_id"])
    assert set(within) <= kept
    diagonal = float(np.hypot(*(parcels.bounds[["maxx", "maxy"]].to_numpy()
                               - parcels.bounds[["minx", "miny"]].to_numpy()).T).max())  # fmt: skip
    far = parcels[parcels.distance(point) > 2 * reach + 2 * diagonal]["parcel_id"]
    assert len(far) > 0
    assert not (set(far) & kept)


def test_siting_on_the_neighbourhood_equals_the_whole_town(town, proposals):
    lots = town.parcels_under(proposals.devices.geometry.to_numpy())
    assert len(lots) >= 5
    local = town.siting(lots, depth_ft=4.0)
    whole = siting_by_class(town.layers, town.ruleset, parcel_ids=lots, depth_ft=4.0)
    for klass, frame in whole.items():
        mine = local[klass]
        assert list(mine["parcel_id"]) == list(frame["parcel_id"])
        np.testing.assert_allclose(mine["area_sqft"], frame["area_sqft"], atol=0.05)
        assert list(mine["outcome"]) == list(frame["outcome"])
        assert list(mine["reason"]) == list(frame["reason"])


def test_screen_with_waivers_and_unknown_parcel(town, proposals, tmp_path):
    one = proposals.subset(["P09-lot-line-devices"])
    first = town.screen(one, select=["SW205"], siting=False).findings
    failing = first[first["outcome"] == "fail"].iloc[0]
    path = tmp_path / "waivers.toml"
    path.write_text(
        f'[[waiver]]\nfinding_id = "{failing.finding_id}"\nreason = "variance granted"\n',
        encoding="utf-8",
    )
    waived = town.screen(one, select=["SW205"], waivers=path, siting=False)
    row = waived.findings.set_index("finding_id").loc[failing.finding_id]
    assert bool(row["waived"]) is True
    assert row["waiver_reason"] == "variance granted"
    assert [r.status for r in waived.waiver_results] == ["applied"]
    with pytest.raises(gis_sw.errors.LayerError, match="no parcel with parcel_id 'nope'"):
        town.parcel("nope")


def test_public_names_load_lazily():
    assert set(gis_sw.__all__) == {
        "Screening",
        "Town",
        "__version__",
        "read_proposals",
        "read_town",
        "screen_town",
    }
    assert gis_sw.Town is Town
    assert gis_sw.read_town is read_town
    with pytest.raises(AttributeError):
        _ = gis_sw.no_such_name  # type: ignore[attr-defined]
    code = (
        "import sys, gis_sw, gis_sw.cli; "
        "heavy = ('geopandas', 'shapely', 'pandas', 'gis_sw.api'); "
        "heavy = [m for m in heavy if m in sys.modules]; "
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_docs_api_example_runs(capsys, monkeypatch):
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == 1
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], "docs/api.md", "exec"), {})
    out = capsys.readouterr().out
    assert "SW205" not in out  # the table prints subjects and figures, not rule ids
    assert "fail" in out
    assert "pass" in out


def test_a_proposals_own_drainage_area_far_away_is_kept(town, proposals):
    """A drainage area drawn for a proposal counts wherever it lies (and what lies in it)."""
    import geopandas as gpd

    from gis_sw.layers.build import make_layerset

    one = proposals.subset(["P09-lot-line-devices"])
    x0, y0, _, _ = one.disturbance.total_bounds
    far = shapely.box(x0 + 3000, y0 + 3000, x0 + 3400, y0 + 3300)  # beyond any reach
    areas = gpd.GeoDataFrame(
        {"drainage_id": ["DA-far"], "proposal_id": ["P09-lot-line-devices"], "tc_min": [12.0]},
        geometry=[far],
        crs=town.crs,
    )
    layers = make_layerset(
        town.crs, {**town.layers.vectors, "drainage_areas": areas}, town.layers.rasters
    )
    with_area = Town(layers, town.ruleset)
    local = with_area.local(one.disturbance.geometry, proposal_ids=one.ids)
    assert list(local.get("drainage_areas")["drainage_id"]) == ["DA-far"]
    soils = layers.get("soils")
    assert set(soils[soils.intersects(far)].index) <= set(local.get("soils").index)
    screening = with_area.screen(one, siting=False)
    whole = run_rules(layers, one, town.ruleset)
    _same_findings(screening.findings, whole)
    sw501 = screening.findings[screening.findings["rule_id"] == "SW501"]
    assert list(sw501["subject_id"]) == ["P09-lot-line-devices:DA-far"]
