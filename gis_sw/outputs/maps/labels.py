"""Short finding labels (``SW205 9.0 ft < 10 ft``) and their placement without overlaps.

Placement is greedy, most important first (fail, then review, then required): each label tries
positions around its anchor, nearest first and out to a leader line of 150 pt, and keeps the
first whose box stays inside the map frame and overlaps no label already placed, no other
finding's anchor and no box the caller asks it to avoid (match-line tabs, zone names).  A label
that fits nowhere is not drawn over another: it is returned in :attr:`Placement.unplaced`, and
the sheet lists it in its side panel, so every label is readable and none is cut by the frame.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import shapely
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

from gis_sw.analysis.wording import MAX_DECIMALS, decimals_apart, fmt_number

_OFFSETS_PT: tuple[tuple[float, float], ...] = (
    (1, 1),
    (1, -1),
    (-1, 1),
    (-1, -1),
    (0, 1.4),
    (0, -1.4),
    (1.4, 0),
    (-1.4, 0),
)
_RINGS_PT: tuple[float, ...] = (7.0, 20.0, 36.0, 56.0, 80.0, 110.0, 150.0)


def _number(value: float, unit: str, *, threshold: bool) -> str:
    if unit in ("sq ft", "sqft") or abs(value) >= 1000:
        return f"{value:,.0f}"
    if threshold:
        return f"{value:g}"
    if unit in ("acres", "ac", "acre"):
        return f"{value:.2f}"
    return f"{value:.1f}"


def _base_decimals(value: float, unit: str) -> int:
    """Usual decimals of a figure in a label (those of :func:`_number`)."""
    if unit in ("sq ft", "sqft") or abs(value) >= 1000:
        return 0
    return 2 if unit in ("acres", "ac", "acre") else 1


def _own_decimals(value: float) -> int:
    """Fewest decimals (up to :data:`MAX_DECIMALS`) that write ``value`` exactly."""
    return next((d for d in range(MAX_DECIMALS) if round(value, d) == value), MAX_DECIMALS)


def finding_label(
    rule_id: str, outcome: str, measured: float | None, threshold: float | None, unit: str
) -> str:
    """Short label of a finding.

    ``SW205 9.0 ft < 10 ft`` when both figures are known; ``SW201 review`` otherwise.
    """
    unit = unit or ""
    have_measured = measured is not None and not math.isnan(measured)
    have_threshold = threshold is not None and not math.isnan(threshold)
    if not have_measured:
        return f"{rule_id} {outcome}"
    assert measured is not None
    suffix = f" {unit}" if unit else ""
    text = f"{rule_id} {_number(measured, unit, threshold=False)}{suffix}"
    if have_threshold:
        assert threshold is not None
        sign = "<" if measured < threshold else (">" if measured > threshold else "=")
        # as many decimals as the comparison needs (wording.py): 9.99 against 10, 5.00002
        # acres against 5; a round limit keeps its short form (10 ft, 0 cfs)
        decimals = decimals_apart(measured, threshold, base=_base_decimals(measured, unit))
        shown_t = _number(threshold, unit, threshold=True)
        if round(threshold, decimals) != threshold:  # a limit like 0.505 is shown whole
            decimals = max(decimals, _own_decimals(threshold))
            shown_t = fmt_number(threshold, decimals)
        shown_m = fmt_number(measured, decimals)
        text = f"{rule_id} {shown_m}{suffix} {sign} {shown_t}{suffix}"
    return text


def anchor_point(geometry: Any) -> tuple[float, float] | None:
    """Where a finding's label points: a point itself, a line's middle, a polygon's inside."""
    if geometry is None or shapely.is_empty(geometry):
        return None
    kind = shapely.get_type_id(geometry)
    if kind == 0:
        return (float(geometry.x), float(geometry.y))
    if kind in (1, 5):
        point = shapely.line_interpolate_point(geometry, 0.5, normalized=True)
        if not shapely.is_empty(point):
            return (float(point.x), float(point.y))
    point = shapely.point_on_surface(geometry)
    if shapely.is_empty(point):
        return None
    return (float(point.x), float(point.y))


@dataclass(frozen=True, slots=True)
class LabelItem:
    """One label to place: text, anchor in data coordinates, colour, priority (low first)."""

    text: str
    xy: tuple[float, float]
    colour: str
    priority: int = 0
    key: str = ""
    plain: bool = False


@dataclass(slots=True)
class Placement:
    """What :func:`place_labels` did."""

    texts: dict[str, Annotation] = field(default_factory=dict)
    overlapping: int = 0
    boxes: list[Bbox] = field(default_factory=list)
    unplaced: list[LabelItem] = field(default_factory=list)


def _text_style(item: LabelItem, fontsize: float) -> dict[str, Any]:
    if item.plain:
        return {
            "fontsize": fontsize - 1,
            "color": item.colour,
            "zorder": 5.5,
            "bbox": {"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8},
        }
    return {
        "fontsize": fontsize,
        "fontweight": "bold",
        "color": item.colour,
        "zorder": 6,
        "bbox": {"boxstyle": "round,pad=0.2", "fc": "white", "ec": item.colour, "lw": 0.6},
    }


def text_box(annotation: Annotation, renderer: RendererBase) -> Bbox:
    """Display box of an annotation's text, without its leader line."""
    annotation.update_positions(renderer)
    return Text.get_window_extent(annotation, renderer)


def _overlaps(box: Bbox, others: Sequence[Bbox]) -> bool:
    return any(box.overlaps(other) for other in others)


def place_labels(
    ax: Axes,
    items: Sequence[LabelItem],
    *,
    renderer: RendererBase,
    fontsize: float = 7.0,
    avoid: Sequence[Bbox] = (),
) -> Placement:
    """Draw each label next to its anchor, away from other labels, anchors and ``avoid``.

    Items whose anchor lies outside the axes' view are skipped.

    Returns
    -------
    Placement
        The annotation and display box of each placed item (by ``key`` or text), and the
        items that found no free place inside the frame (not drawn).
    """
    frame = ax.get_window_extent(renderer)
    to_display = ax.transData
    xmin, xmax = ax.get_xlim()
    ymin, ymax = ax.get_ylim()
    visible = [item for item in items if xmin <= item.xy[0] <= xmax and ymin <= item.xy[1] <= ymax]
    visible.sort(key=lambda item: item.priority)
    anchors = to_display.transform(np.asarray([i.xy for i in visible]).reshape(-1, 2))
    dpi_scale = float(np.asarray(renderer.points_to_pixels(1.0)))
    pad = 2.5 * dpi_scale  # the white box drawn around the text
    placed: list[Bbox] = list(avoid)
    result = Placement()
    for number, item in enumerate(visible):
        annotation = ax.annotate(
            item.text,
            xy=item.xy,
            xytext=(0, 0),
            textcoords="offset points",
            annotation_clip=False,
            **_text_style(item, fontsize),
        )
        # other anchors as small boxes the label should not cover
        blockers = [
            Bbox.from_extents(
                x - 3 * dpi_scale, y - 3 * dpi_scale, x + 3 * dpi_scale, y + 3 * dpi_scale
            )
            for j, (x, y) in enumerate(anchors)
            if j != number
        ]
        chosen: tuple[float, float, Any, Any] | None = None
        for ring in _RINGS_PT:
            for ux, uy in _OFFSETS_PT:
                dx, dy = ux * ring, uy * ring
                ha: Any = "left" if dx > 0 else ("right" if dx < 0 else "center")
                va: Any = "bottom" if dy > 0 else ("top" if dy < 0 else "center")
                annotation.set_position((dx, dy))
                annotation.set_horizontalalignment(ha)
                annotation.set_verticalalignment(va)
                box = annotation.get_window_extent(renderer).padded(pad)
                candidate = (dx, dy, ha, va)
                inside = (
                    box.x0 >= frame.x0
                    and box.x1 <= frame.x1
                    and box.y0 >= frame.y0
                    and box.y1 <= frame.y1
                )
                if inside and not _overlaps(box, placed) and not _overlaps(box, blockers):
                    chosen = candidate
                    break
            if chosen is not None:
                break
        annotation.remove()
        if chosen is None:
            # no free place: listed beside the map rather than drawn over another label
            result.overlapping += 1
            result.unplaced.append(item)
            continue
        dx, dy, ha, va = chosen
        arrow = (
            {"arrowstyle": "-", "color": item.colour, "lw": 0.7, "shrinkA": 0, "shrinkB": 2}
            if math.hypot(dx, dy) > 12
            else None
        )
        annotation = ax.annotate(
            item.text,
            xy=item.xy,
            xytext=(dx, dy),
            textcoords="offset points",
            ha=ha,
            va=va,
            arrowprops=arrow,
            annotation_clip=False,
            **_text_style(item, fontsize),
        )
        box = text_box(annotation, renderer).padded(pad)
        placed.append(box)
        result.boxes.append(box)
        result.texts[item.key or item.text] = annotation
    return result
