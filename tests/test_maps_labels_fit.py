"""Sheets that show the answer: every label inside its frame, none over another label, a
match-line tab or a zone name; the permit, SWPPP and resource overlaps labelled with their
figures; the parcels' address and owner in the title block."""

from __future__ import annotations

from pathlib import Path

import pytest

from gis_sw.analysis.engine import run_rules
from gis_sw.api import Town
from gis_sw.layers.read import read_layers, read_proposals
from gis_sw.outputs.maps.furniture import title_lines
from gis_sw.outputs.maps.sheets import render_pages
from gis_sw.screening import Screening

SAMPLE = Path(__file__).parent.parent / "data" / "sample"
CASES = ("P01-addition-r10", "P07-commercial-phased-7ac", "P14-wetland-floodplain")


@pytest.fixture(scope="module")
def pages(ruleset):
    layers = read_layers(SAMPLE / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=ruleset)
    findings = run_rules(layers, proposals, ruleset, select=["SW1", "SW2", "SW3"])
    return {
        pid: render_pages(pid, Screening(Town(layers, ruleset), proposals, findings))
        for pid in CASES
    }


def _inside(box, frame) -> bool:
    return frame.x0 <= box.x0 <= box.x1 <= frame.x1 and frame.y0 <= box.y0 <= box.y1 <= frame.y1


def _labels(page) -> list[str]:
    ax = page.figure.axes[0]
    return [t.get_text() for t in ax.texts if t.get_gid() != "zone-label"]


@pytest.mark.parametrize("pid", CASES)
def test_labels_inside_frame_and_apart(pages, pid: str) -> None:
    for page in pages[pid]:
        renderer = page.figure.canvas.get_renderer()
        frame = page.figure.axes[0].get_window_extent(renderer)
        boxes = page.label_boxes
        for i, box in enumerate(boxes):
            assert _inside(box, frame), (pid, page.view.label, i)
            assert not any(box.overlaps(other) for other in boxes[i + 1 :])
            assert not any(box.overlaps(tab) for tab in page.avoided)
        for text in page.figure.axes[0].texts:
            if text.get_gid() == "zone-label":
                assert _inside(text.get_window_extent(renderer), frame), text.get_text()


def test_map_book_tabs_are_avoided(pages) -> None:
    book = [p for p in pages["P07-commercial-phased-7ac"] if p.view.label != "key"]
    assert len(book) >= 2
    assert all(p.avoided for p in book)  # each sheet has a tab or a zone name to keep clear


def test_required_answers_are_labelled(pages) -> None:
    p01 = " | ".join(_labels(pages["P01-addition-r10"][0]))
    assert "SW101 120 sq ft > 100 sq ft" in p01
    p14 = " | ".join(_labels(pages["P14-wetland-floodplain"][0]))
    assert "SW106 360 sq ft" in p14  # the wetland overlap, 360.2 sq ft
    assert "SW106 3,221 sq ft" in p14  # the wetland adjacent area


def test_title_block_names_address_and_owner(pages) -> None:
    lines = title_lines(pages["P01-addition-r10"][0].title)
    assert any(line.startswith("Address, owner: ") for line in lines)
