"""write_maps writes exactly the files map_paths announces (sheets, map book pages, web map)."""

from __future__ import annotations

from maps_town import findings, proposals, town

from gis_sw.api import Town
from gis_sw.outputs.maps.bundle import MAP_CHOICES, map_paths, write_maps
from gis_sw.screening import Screening


def test_map_paths_are_the_files_written(tmp_path, ruleset):
    layers, props, found = town(), proposals(), findings(ruleset)
    ids = ["P-1", "P-HUGE"]
    screening = Screening(Town(layers, ruleset), props, found)
    expected = map_paths(tmp_path, screening, formats=MAP_CHOICES["png"], proposal_ids=ids)
    assert [p.name for p in expected] == [
        "P-1.png",
        "P-HUGE_key.png",
        *(f"P-HUGE_sheet-{n}.png" for n in range(1, 7)),
        "webmap.html",
    ]
    written = write_maps(
        tmp_path,
        screening,
        formats=MAP_CHOICES["png"],
        proposal_ids=ids,
        siting=False,
    )
    assert written == expected
    on_disk = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert on_disk == sorted(str(p.relative_to(tmp_path)) for p in expected)
    assert expected[0] == tmp_path / "P-1" / "P-1.png"  # each application's sheets in its folder


def test_map_none_writes_nothing(tmp_path, ruleset):
    assert (
        map_paths(
            tmp_path,
            Screening(Town(town(), ruleset), proposals(), findings(ruleset)),
            formats=MAP_CHOICES["none"],
            webmap=False,
        )
        == []
    )
