"""Sheet sizes, the map frame on a sheet, and the choice of engineering scale.

§ 183-12C(3)(a)[3] asks for a site map at a scale no smaller than 1 inch = 50 feet, larger
for small lots.  :func:`plan_sheets` takes the largest of 1" = 10', 20', 30', 40', 50' at which
the site (plus a margin) fits in the map frame; when it does not fit even at 1" = 50' it cuts a
map book: a grid of sheets at 1" = 50' and a key map showing where each sheet lies.

A scale of ``s`` feet per inch maps ``s`` feet of the working CRS to one inch of paper, so at
1" = 50' 100 ft measures exactly 2.00 in (144 pt in the PDF).  The CRS's own foot is the foot
of the scale (US survey foot in EPSG:2260); a CRS in metres is converted.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gis_sw.errors import OutputError

ENGINEERING_SCALES_FT_PER_IN: tuple[int, ...] = (10, 20, 30, 40, 50)
"""Site-map scales, largest (most detailed) first."""

KEY_MAP_SCALES_FT_PER_IN: tuple[int, ...] = (
    100,
    200,
    300,
    400,
    500,
    1000,
    2000,
    5000,
    10000,
    20000,
)
"""Scales tried for a map book's key map."""

MARGIN_IN = 0.5
"""White border around the sheet."""

GAP_IN = 0.25
"""Space between the map frame and the side panel."""

SITE_MARGIN_FT = 25.0
"""Ground kept around the site inside the frame, so setback rings and labels show."""


@dataclass(frozen=True, slots=True)
class SheetSize:
    """A paper size, landscape.

    Attributes
    ----------
    name
        Key used by ``--sheet``.
    title
        Printed name.
    width_in, height_in
        Paper size in inches (landscape).
    panel_in
        Width of the side panel (title block, legend, north arrow, scale bar, location map).
    """

    name: str
    title: str
    width_in: float
    height_in: float
    panel_in: float

    @property
    def size_pt(self) -> tuple[float, float]:
        """Page size in PDF points (72 per inch)."""
        return (self.width_in * 72.0, self.height_in * 72.0)

    @property
    def frame_in(self) -> tuple[float, float, float, float]:
        """The map frame: (left, bottom, width, height) in inches from the sheet's corner."""
        width = self.width_in - 2 * MARGIN_IN - self.panel_in - GAP_IN
        height = self.height_in - 2 * MARGIN_IN
        return (MARGIN_IN, MARGIN_IN, width, height)

    @property
    def panel_left_in(self) -> float:
        """Left edge of the side panel, inches."""
        return self.width_in - MARGIN_IN - self.panel_in


SHEETS: dict[str, SheetSize] = {
    "ansi_b": SheetSize("ansi_b", "ANSI B (11 x 17 in)", 17.0, 11.0, 3.7),
    "ansi_d": SheetSize("ansi_d", "ANSI D (22 x 34 in)", 34.0, 22.0, 5.5),
    "arch_d": SheetSize("arch_d", "ARCH D (24 x 36 in)", 36.0, 24.0, 5.5),
}


def sheet_size(name: str) -> SheetSize:
    """Return the sheet called ``name``.

    Raises
    ------
    OutputError
        For an unknown sheet name (the message lists the known ones).
    """
    try:
        return SHEETS[name]
    except KeyError:
        raise OutputError(
            f"unknown sheet size {name!r}. Fix: use one of {', '.join(SHEETS)}."
        ) from None


Bounds = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class View:
    """What one page shows.

    Attributes
    ----------
    bounds
        (minx, miny, maxx, maxy) of the map frame in the working CRS.
    scale_ft_per_in
        Feet of ground per inch of paper.
    label
        Sheet label (``"1"``, ``"2"`` ... in a map book, ``"key"`` for the key map, ``""``
        for a single sheet).
    """

    bounds: Bounds
    scale_ft_per_in: float
    label: str = ""


@dataclass(frozen=True, slots=True)
class SheetPlan:
    """The pages of one proposal: one sheet, or a key map and a map book."""

    sheet: SheetSize
    views: tuple[View, ...]
    key: View | None = None

    @property
    def is_book(self) -> bool:
        """Return True for a map book (a key map and numbered sheets)."""
        return self.key is not None

    @property
    def pages(self) -> tuple[View, ...]:
        """Every page in print order (key map first in a map book)."""
        return (self.key, *self.views) if self.key is not None else self.views


def _centred(bounds: Bounds, width_ft: float, height_ft: float) -> Bounds:
    cx = (bounds[0] + bounds[2]) / 2.0
    cy = (bounds[1] + bounds[3]) / 2.0
    return (cx - width_ft / 2, cy - height_ft / 2, cx + width_ft / 2, cy + height_ft / 2)


def fits(
    bounds: Bounds, scale_ft_per_in: float, frame_w_in: float, frame_h_in: float, margin_ft: float
) -> bool:
    """Return True when ``bounds`` plus ``margin_ft`` all round fits the frame at that scale."""
    width_ft = bounds[2] - bounds[0] + 2 * margin_ft
    height_ft = bounds[3] - bounds[1] + 2 * margin_ft
    return width_ft <= frame_w_in * scale_ft_per_in and height_ft <= frame_h_in * scale_ft_per_in


def choose_scale(
    bounds: Bounds,
    sheet: SheetSize,
    *,
    margin_ft: float = SITE_MARGIN_FT,
    scales: tuple[int, ...] = ENGINEERING_SCALES_FT_PER_IN,
) -> int | None:
    """Return the largest engineering scale at which the site fits one sheet, or None."""
    _, _, frame_w, frame_h = sheet.frame_in
    for scale in scales:
        if fits(bounds, scale, frame_w, frame_h, margin_ft):
            return scale
    return None


def plan_sheets(
    bounds: Bounds,
    sheet: SheetSize,
    *,
    margin_ft: float = SITE_MARGIN_FT,
    scale_ft_per_in: float | None = None,
    tile_filter: Callable[[Bounds], bool] | None = None,
) -> SheetPlan:
    """Pages for a site whose extent is ``bounds`` (working CRS, feet).

    Parameters
    ----------
    bounds
        Extent of what the sheet must show.
    sheet
        Paper size.
    margin_ft
        Ground kept around the site.
    scale_ft_per_in
        Force a scale (no map book); by default the largest engineering scale that fits.
    tile_filter
        Optional callable ``(minx, miny, maxx, maxy) -> bool`` that says whether a map-book
        tile holds any of the site (tiles over empty ground are dropped).
    """
    _, _, frame_w, frame_h = sheet.frame_in
    if scale_ft_per_in is not None:
        view = _centred(bounds, frame_w * scale_ft_per_in, frame_h * scale_ft_per_in)
        return SheetPlan(sheet, (View(view, float(scale_ft_per_in)),))
    chosen = choose_scale(bounds, sheet, margin_ft=margin_ft)
    if chosen is not None:
        view = _centred(bounds, frame_w * chosen, frame_h * chosen)
        return SheetPlan(sheet, (View(view, float(chosen)),))
    book_scale = float(ENGINEERING_SCALES_FT_PER_IN[-1])
    tile_w, tile_h = frame_w * book_scale, frame_h * book_scale
    minx, miny = bounds[0] - margin_ft, bounds[1] - margin_ft
    maxx, maxy = bounds[2] + margin_ft, bounds[3] + margin_ft
    cols = max(1, math.ceil((maxx - minx) / tile_w))
    rows = max(1, math.ceil((maxy - miny) / tile_h))
    # centre the grid on the site so the spare ground is shared on both sides
    x0 = (minx + maxx) / 2 - cols * tile_w / 2
    y_top = (miny + maxy) / 2 + rows * tile_h / 2
    views: list[View] = []
    for row in range(rows):
        for col in range(cols):
            tile = (
                x0 + col * tile_w,
                y_top - (row + 1) * tile_h,
                x0 + (col + 1) * tile_w,
                y_top - row * tile_h,
            )
            if tile_filter is not None and not tile_filter(tile):
                continue
            views.append(View(tile, book_scale, str(len(views) + 1)))
    grid = (x0, y_top - rows * tile_h, x0 + cols * tile_w, y_top)
    key_scale = choose_scale(grid, sheet, margin_ft=margin_ft, scales=KEY_MAP_SCALES_FT_PER_IN)
    if key_scale is None:
        key_scale = KEY_MAP_SCALES_FT_PER_IN[-1]
    key = View(_centred(grid, frame_w * key_scale, frame_h * key_scale), float(key_scale), "key")
    return SheetPlan(sheet, tuple(views), key)


def scale_text(scale_ft_per_in: float) -> str:
    """Return the printed scale, e.g. ``1" = 50'``."""
    return f"1\" = {scale_ft_per_in:g}'"
