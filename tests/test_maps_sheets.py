"""Map sheets: page size, true scale, furniture, labels, map book (PDFs parsed with pypdf)."""

from __future__ import annotations

import datetime as dt
import math
import re
from pathlib import Path

import numpy as np
import pypdf
import pytest
from maps_town import X0, Y0, findings, proposals, town
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from pypdf.generic import ContentStream
from pyproj import CRS, Proj, Transformer

from gis_sw.api import Town
from gis_sw.errors import InputFileError, OutputError
from gis_sw.outputs.maps import write_sheets
from gis_sw.outputs.maps.furniture import grid_convergence_deg
from gis_sw.outputs.maps.labels import LabelItem, finding_label, place_labels, text_box
from gis_sw.outputs.maps.scale import SHEETS, choose_scale, plan_sheets
from gis_sw.screening import Screening

RUN_DATE = dt.date(2026, 11, 29)


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory, ruleset) -> dict[str, list[Path]]:
    out = tmp_path_factory.mktemp("sheets")
    layers, props, found = town(), proposals(), findings(ruleset)
    result = {}
    for pid in ("P-1", "P-BIG", "P-HUGE"):
        result[pid] = write_sheets(
            out,
            Screening(Town(layers, ruleset), props, found),
            formats=("pdf",),
            proposal_ids=[pid],
            run_date=RUN_DATE,
        )
    return result


def _text(path: Path) -> str:
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(path).pages)


def _path_boxes(page: pypdf.PageObject, reader: pypdf.PdfReader) -> list[tuple[float, ...]]:
    """Bounding boxes (x0, y0, x1, y1 in points) of every path painted on a page."""
    ops = ContentStream(page.get_contents(), reader).operations
    boxes = []
    stack: list[np.ndarray] = []
    ctm = np.eye(3)
    points: list[tuple[float, float]] = []
    for operands, op in ops:
        name = op.decode() if isinstance(op, bytes) else op
        if name == "q":
            stack.append(ctm.copy())
        elif name == "Q":
            ctm = stack.pop() if stack else np.eye(3)
        elif name == "cm":
            a, b, c, d, e, f = (float(v) for v in operands)
            ctm = np.array([[a, b, 0], [c, d, 0], [e, f, 1]]) @ ctm
        elif name in ("m", "l"):
            x, y = float(operands[0]), float(operands[1])
            px, py, _ = np.array([x, y, 1]) @ ctm
            points.append((px, py))
        elif name == "re":
            x, y, w, h = (float(v) for v in operands)
            for cx, cy in ((x, y), (x + w, y + h)):
                px, py, _ = np.array([cx, cy, 1]) @ ctm
                points.append((px, py))
        elif name in ("S", "s", "f", "F", "f*", "B", "B*", "b", "b*", "n"):
            if points:
                arr = np.asarray(points)
                boxes.append((*arr.min(axis=0), *arr.max(axis=0)))
            points = []
    return boxes


def test_ansi_b_page_is_1224_by_792_points(sheets):
    reader = pypdf.PdfReader(sheets["P-1"][0])
    box = reader.pages[0].mediabox
    assert (float(box.width), float(box.height)) == (1224.0, 792.0)


@pytest.mark.parametrize(
    ("proposal", "scale"),
    [("P-1", 20), ("P-BIG", 50)],
    ids=["90-ft-site-at-1-in-20-ft", "500-ft-site-at-1-in-50-ft"],
)
def test_largest_engineering_scale_that_fits(proposal, scale, sheets):
    assert f"Scale 1\" = {scale}'" in _text(sheets[proposal][0])


def test_scale_choice_boundaries():
    sheet = SHEETS["ansi_b"]
    frame_w = sheet.frame_in[2]  # 12.05 in (the frame is 10 in high)
    width_at_40 = frame_w * 40 - 50  # site plus 25 ft each side fills the frame exactly
    assert choose_scale((0, 0, width_at_40, 100), sheet) == 40
    assert choose_scale((0, 0, width_at_40 + 0.01, 100), sheet) == 50
    assert choose_scale((0, 0, frame_w * 50 - 49, 100), sheet) is None


def test_100_ft_measures_2_in_at_1_in_50_ft(sheets):
    reader = pypdf.PdfReader(sheets["P-BIG"][0])
    boxes = _path_boxes(reader.pages[0], reader)
    # lot 1-1 is a 100 ft square: its outline must be a 144 pt (2.00 in) square
    squares = [
        b for b in boxes if abs(b[2] - b[0] - 144.0) < 0.01 and abs(b[3] - b[1] - 144.0) < 0.01
    ]
    assert squares, "no 100 ft lot drawn as a 2.00 in square"
    widths = sorted({round(b[2] - b[0], 2) for b in squares})
    assert widths == [144.0]


def test_scale_bar_segments_are_one_inch(sheets):
    reader = pypdf.PdfReader(sheets["P-BIG"][0])
    boxes = _path_boxes(reader.pages[0], reader)
    panel_left_pt = SHEETS["ansi_b"].panel_left_in * 72
    inch_boxes = [
        b
        for b in boxes
        if b[0] >= panel_left_pt and abs(b[2] - b[0] - 72.0) < 0.01 and b[3] - b[1] < 10
    ]
    assert len(inch_boxes) >= 2
    text = _text(sheets["P-BIG"][0])
    assert "100 ft" in text


def test_north_arrow_scale_bar_legend_and_title_block(sheets):
    text = _text(sheets["P-1"][0])
    for expected in (
        "N",
        "True north 0°",
        "Legend",
        "Parcel / lot line",
        "Zone R-10 (lower permit threshold)",
        "Building with habitable basement",
        "Infiltration device",
        "Limit of disturbance, phase 1",
        "Limit of disturbance, phase 2",
        "Device setback 10 ft (property line)",
        "Device setback 50 ft (vehicle device: well, wetland, water)",
        "Finding: fail",
        "Finding: review",
        "General location map with zoning",
        "STORMWATER SCREENING MAP",
        "Proposal: P-1 (<script>window.__pwned = 1</script>)",
        "Parcels: 1-2",
        "Zones: R-10",
        "Ruleset: mount_pleasant_ny, version 2011-06-28",
        "Run date: 2026-11-29",
        "Findings: 3 fail, 1 review, 1 required",
        "Screening result, not a permit decision",
    ):
        assert expected in text, expected
    # the parcels and zones the proposal's disturbance and devices touch, and only those
    assert re.search(r"^Parcels: 1-2$", text, re.MULTILINE)
    assert re.search(r"^Zones: R-10$", text, re.MULTILINE)


def test_every_failing_finding_has_a_label(sheets):
    text = _text(sheets["P-1"][0])
    assert "SW205 9.0 ft < 10 ft" in text
    assert "SW206 15.0 ft < 20 ft" in text
    assert "SW201 review" in text
    # SW207 has no geometry: it is listed in the panel instead
    assert "SW207 fail: Device DW-1 has no sedimentation device." in text


def test_map_book_when_the_site_is_too_big_for_1_in_50_ft(sheets):
    paths = sheets["P-HUGE"]
    assert [p.name for p in paths] == ["P-HUGE.pdf"]
    reader = pypdf.PdfReader(paths[0])
    plan = plan_sheets((X0 - 450, Y0 - 100, X0 + 1050, Y0 + 500), SHEETS["ansi_b"])
    assert plan.is_book
    assert len(reader.pages) == 1 + len(plan.views) == 7
    first = reader.pages[0].extract_text()
    assert "Key map, page 1 of 7" in first
    assert "Sheet 6" in first
    assert "Scale 1\" = 200'" in first
    # sheet 5 (bottom middle) names its neighbours at its edges
    middle = reader.pages[5].extract_text()
    assert "Sheet 5 of 6" in middle
    for neighbour in ("See sheet 2", "See sheet 4", "See sheet 6"):
        assert neighbour in middle
    assert "See sheet 1" not in middle
    last = reader.pages[-1].extract_text()
    assert "Scale 1\" = 50'" in last
    assert "Sheet 6 of 6" in last
    for page in reader.pages:
        assert (float(page.mediabox.width), float(page.mediabox.height)) == (1224.0, 792.0)


def test_ansi_d_sheet_and_png(tmp_path, ruleset):
    paths = write_sheets(
        tmp_path,
        Screening(Town(town(), ruleset), proposals(), findings(ruleset)),
        formats=("pdf", "png"),
        sheet="ansi_d",
        proposal_ids=["P-1"],
    )
    assert [p.name for p in paths] == ["P-1.pdf", "P-1.png"]
    page = pypdf.PdfReader(paths[0]).pages[0]
    assert (float(page.mediabox.width), float(page.mediabox.height)) == (2448.0, 1584.0)
    assert paths[1].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(OutputError, match="already exists"):
        write_sheets(
            tmp_path,
            Screening(Town(town(), ruleset), proposals(), findings(ruleset)),
            sheet="ansi_d",
            proposal_ids=["P-1"],
        )


@pytest.mark.parametrize(
    ("measured", "threshold", "unit", "outcome", "expected"),
    [
        (9.0, 10.0, "ft", "fail", "SW205 9.0 ft < 10 ft"),
        (9.99, 10.0, "ft", "fail", "SW205 9.99 ft < 10 ft"),
        (10.0, 10.0, "ft", "pass", "SW205 10.0 ft = 10 ft"),
        (6.2, 5.0, "acres", "fail", "SW205 6.20 acres > 5 acres"),
        (5225.0, 250.0, "sq ft", "required", "SW205 5,225 sq ft > 250 sq ft"),
        (math.nan, 10.0, "ft", "review", "SW205 review"),
    ],
    ids=["9-ft-from-lot-line", "9.99-ft", "10-ft-exactly", "acres", "sq-ft", "not-measured"],
)
def test_finding_label_text(measured, threshold, unit, outcome, expected):
    assert finding_label("SW205", outcome, measured, threshold, unit) == expected


def test_labels_around_one_spot_do_not_overlap():
    fig = Figure(figsize=(6, 6), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    items = [
        LabelItem(f"SW20{i} {i}.0 ft < 10 ft", (50 + i, 50 + (i % 2)), "red", 0, f"k{i}")
        for i in range(6)
    ]
    renderer = fig.canvas.get_renderer()
    placement = place_labels(ax, items, renderer=renderer)
    assert placement.overlapping == 0
    assert len(placement.texts) == 6
    # the text boxes, without the leader lines that join a label to its anchor
    boxes = [text_box(t, renderer) for t in placement.texts.values()]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b)


def test_north_arrow_uses_grid_convergence_from_pyproj():
    crs = CRS.from_epsg(2260)
    angle = grid_convergence_deg(crs, X0, Y0)
    lon, lat = Transformer.from_crs(crs, 4326, always_xy=True).transform(X0, Y0)
    factors = Proj(crs).get_factors(lon, lat)
    # Mount Pleasant lies east of the zone's central meridian (74°30' W): true north leans west
    assert angle < 0
    assert abs(abs(angle) - abs(factors.meridian_convergence)) < 0.01


def test_local_geotiff_basemap_is_drawn_under_the_map(tmp_path, ruleset):
    import rasterio
    from rasterio.transform import from_origin

    tif = tmp_path / "ortho.tif"
    data = np.zeros((3, 60, 80), dtype="uint8")
    data[1] = 200  # green
    with rasterio.open(
        tif,
        "w",
        driver="GTiff",
        width=80,
        height=60,
        count=3,
        dtype="uint8",
        crs="EPSG:2260",
        transform=from_origin(X0 - 100, Y0 + 500, 10, 10),
    ) as dst:
        dst.write(data)
    paths = write_sheets(
        tmp_path / "out",
        Screening(Town(town(), ruleset), proposals(), findings(ruleset)),
        formats=("pdf",),
        proposal_ids=["P-1"],
        basemap=tif,
    )
    page = pypdf.PdfReader(paths[0]).pages[0]
    images = list(page.images)
    assert len(images) == 1
    assert images[0].image.size[0] >= 1000  # resampled for print, not 80 px wide


def test_unreadable_basemap_names_the_file(tmp_path, ruleset):
    bad = tmp_path / "not-a-tiff.tif"
    bad.write_text("hello")
    with pytest.raises(InputFileError, match=r"not-a-tiff\.tif"):
        write_sheets(
            tmp_path / "out",
            Screening(Town(town(), ruleset), proposals(), findings(ruleset)),
            formats=("pdf",),
            proposal_ids=["P-1"],
            basemap=bad,
        )


def test_waived_finding_is_grey_and_says_so(tmp_path, ruleset):
    found = findings(ruleset)
    found.loc[found["rule_id"] == "SW205", "waived"] = True
    paths = write_sheets(
        tmp_path,
        Screening(Town(town(), ruleset), proposals(), found),
        formats=("pdf",),
        proposal_ids=["P-1"],
    )
    text = _text(paths[0])
    assert "SW205 9.0 ft < 10 ft (waived)" in text
    assert "Finding: waived (reviewed exception)" in text
    assert "SW206 15.0 ft < 20 ft (waived)" not in text
