"""Map styles shared by the sheets, the overview and the web map.

Colours are chosen so the layers stay apart when a sheet is printed in grey: every fill has a
distinct lightness, and the layers that could still be confused carry a hatch or a line style
(wetlands vertical hatch, floodplain dots, septic fields crosses, R-10 diagonal hatch,
disturbance phases dashed outlines with different hatches).  Findings are drawn last, in heavy
red (fail) and heavy dark orange dashed (review), which print as black and dark grey.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.colors import to_rgb

from gis_sw.ruleset import zone_key

LineStyle = str | tuple[float, tuple[float, ...]]
"""A matplotlib line style: a name or (offset, (on, off, ...)) in points."""


@dataclass(frozen=True, slots=True)
class LayerStyle:
    """How one layer is drawn.

    Attributes
    ----------
    label
        Legend text.
    facecolor
        Fill colour (``"none"`` for outlines only).
    edgecolor
        Outline or line colour.
    linewidth
        Line width in points.
    hatch
        Matplotlib hatch pattern, or ``""``.
    linestyle
        Matplotlib line style.
    alpha
        Fill opacity.
    zorder
        Drawing order on the sheet.
    marker
        Marker for point layers (``""`` for polygon and line layers).
    markersize
        Marker size in points.
    """

    label: str
    facecolor: str
    edgecolor: str
    linewidth: float = 0.6
    hatch: str = ""
    linestyle: LineStyle = "-"
    alpha: float = 1.0
    zorder: float = 2.0
    marker: str = ""
    markersize: float = 6.0


STYLES: dict[str, LayerStyle] = {
    "zoning": LayerStyle("Zoning district line", "none", "#6a3d9a", 1.2, "", "-.", 1.0, 1.2),
    "zoning_low": LayerStyle(
        "Zone R-10 (100 sq ft threshold)", "#f4ecfb", "#c2a5dd", 0.0, "/", "-", 1.0, 1.1
    ),
    "floodplain": LayerStyle(
        "100-year floodplain", "#dbeefc", "#2f6fa8", 0.6, "...", "-", 1.0, 1.4
    ),
    "wetland_adjacent": LayerStyle(
        "Wetland adjacent area", "none", "#1b7837", 0.9, "", (0, (4, 3)), 1.0, 1.6
    ),
    "wetlands": LayerStyle("Wetland", "#b8e0b0", "#1b7837", 0.7, "|||", "-", 1.0, 1.7),
    "water_bodies": LayerStyle("Water body", "#6baed6", "#08519c", 0.7, "", "-", 1.0, 1.8),
    "streams": LayerStyle("Stream", "none", "#08519c", 1.4, "", (0, (8, 2)), 1.0, 1.85),
    "parcels": LayerStyle("Parcel / lot line", "none", "#404040", 0.7, "", "-", 1.0, 2.0),
    "pavement": LayerStyle("Existing pavement", "#ececec", "#969696", 0.4, "", "-", 1.0, 2.1),
    "septic_fields": LayerStyle("Septic field", "#f6dcb6", "#8c510a", 0.7, "xx", "-", 1.0, 2.2),
    "buildings": LayerStyle("Building", "#bdbdbd", "#252525", 0.7, "", "-", 1.0, 2.3),
    "buildings_basement": LayerStyle(
        "Building with habitable basement", "#737373", "#000000", 0.9, "\\\\\\", "-", 1.0, 2.35
    ),
    "impervious": LayerStyle("Proposed impervious", "#fdd0a2", "#a63603", 0.5, "", "-", 0.9, 2.5),
    "disturbance": LayerStyle(
        "Limit of disturbance", "#fee391", "#cc4c02", 1.6, "", (0, (6, 2)), 0.45, 2.6
    ),
    "siting": LayerStyle(
        "Permissible device location", "#c7e9c0", "#238b45", 1.0, ".", "-", 0.5, 2.4
    ),
    "ring": LayerStyle("Device setback ring", "none", "#54278f", 0.6, "", ":", 1.0, 2.8),
    "devices": LayerStyle(
        "Infiltration device", "#ffffff", "#000000", 1.2, "", "-", 1.0, 3.0, "s", 7.0
    ),
    "wells": LayerStyle("Water well", "#ffffff", "#08306b", 1.3, "", "-", 1.0, 3.0, "o", 7.0),
    "finding_fail": LayerStyle("Finding: fail", "none", "#d7191c", 2.4, "", "-", 1.0, 4.0),
    "finding_review": LayerStyle(
        "Finding: review", "none", "#e66101", 2.0, "", (0, (3, 1.5)), 1.0, 3.9
    ),
    "finding_required": LayerStyle(
        "Finding: required (what the law asks)", "none", "#5e3c99", 1.6, "", "-", 1.0, 3.7
    ),
    "finding_runoff": LayerStyle(
        "Runoff finding: its drainage area", "none", "#1f78b4", 1.0, "", (0, (1, 2)), 1.0, 3.6
    ),
    "finding_waived": LayerStyle(
        "Finding: waived (reviewed exception)", "none", "#737373", 1.6, "", (0, (1, 1.5)), 1.0, 3.8
    ),
    "site": LayerStyle("Site", "#d7191c", "#d7191c", 1.5, "", "-", 1.0, 5.0),
}
"""Styles by layer key; the web map uses the same colours."""

PHASE_HATCHES: tuple[str, ...] = ("", "//", "\\\\", "--", "++", "..")
"""Hatches that tell disturbance phases apart on a grey print (phase order)."""

RING_STYLES: dict[str, LineStyle] = {
    "property_line_ft": (0, (1, 1.5)),
    "habitable_basement_ft": (0, (4, 2)),
    "vehicle_traffic_ft": (0, (6, 2, 1, 2)),
}
"""Line style of each device setback ring, keyed by the ruleset's device parameter."""

RING_LABELS: dict[str, str] = {
    "property_line_ft": "property line",
    "habitable_basement_ft": "basement / septic",
    "vehicle_traffic_ft": "vehicle device to well / wetland / water",
}

ZONE_GREYS: tuple[str, ...] = (
    "#f7f7f7",
    "#d9d9d9",
    "#fff7bc",
    "#c6dbef",
    "#e5f5e0",
    "#fde0dd",
    "#bdbdbd",
    "#efedf5",
)
"""Fills for zoning districts on the location map (distinct lightness)."""

OUTCOME_COLOURS: dict[str, str] = {
    "fail": "#d7191c",
    "review": "#e66101",
    "required": "#5e3c99",
    "info": "#2b83ba",
    "pass": "#1a9641",
    "none": "#f0f0f0",
}
"""Colour of a screening result on the overview and the web map."""


def luminance(colour: str) -> float:
    """Relative lightness (0 black to 1 white) of a colour, as a grey-scale print shows it."""
    red, green, blue = to_rgb(colour)
    return 0.299 * red + 0.587 * green + 0.114 * blue


def zone_fill(zone: str, zones: list[str], low_threshold_zones: tuple[str, ...]) -> str:
    """Fill colour of a zone on the location map; low-threshold zones (R-10) stand out."""
    low_keys = {zone_key(z) for z in low_threshold_zones}
    if zone_key(zone) in low_keys:
        return STYLES["zoning_low"].facecolor
    others = [z for z in zones if zone_key(z) not in low_keys]
    index = others.index(zone) if zone in others else 0
    return ZONE_GREYS[index % len(ZONE_GREYS)]
