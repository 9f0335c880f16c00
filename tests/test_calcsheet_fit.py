"""The calculation sheet page: every line stays on the page (the composite CN line of a
drainage area used to run off its right edge)."""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg

from gis_sw.analysis.hydrology import calculation_sheet_for
from gis_sw.layers.read import read_layers, read_proposals
from gis_sw.outputs.calcsheet import calc_sheet_figure

SAMPLE = Path(__file__).parent.parent / "data" / "sample"


def test_every_heading_fits_the_page(ruleset) -> None:
    layers = read_layers(SAMPLE / "layers.toml", ruleset=ruleset)
    proposals = read_proposals(SAMPLE / "proposals.gpkg", ruleset=ruleset)
    table = calculation_sheet_for(layers, proposals, ruleset)
    for pid in ("P15-new-house-runoff", "P07-commercial-phased-7ac", "P06-subdivision-1.5ac"):
        fig = calc_sheet_figure(table[table["proposal_id"] == pid], title=f"Proposal {pid}")
        FigureCanvasAgg(fig)
        renderer = fig.canvas.get_renderer()
        page = fig.bbox
        heads = [t for t in fig.texts if t.get_text().startswith("Proposal ")]
        assert heads, pid
        for text in fig.texts:
            box = text.get_window_extent(renderer)
            assert page.x0 <= box.x0, (pid, text.get_text()[:60])
            assert box.x1 <= page.x1, (pid, text.get_text()[:60])
        assert any("CN" in t.get_text() and "impervious" in t.get_text() for t in heads), pid
