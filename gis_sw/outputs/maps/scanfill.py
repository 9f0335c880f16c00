"""Polygons painted into a label image with numpy, and the image turned into map pixels.

The overview map of a town of 100,000 parcels spent seconds building one matplotlib path
per parcel (or one compound path per fill) and having Agg fill and stroke them.  Here every
parcel is scan-converted at once: the rings' edges come out of shapely in one call
(:func:`shapely.to_ragged_array`), each edge gives its crossings with the rows of pixel
centres, the crossings are sorted by (polygon, row, x) and paired into spans (even-odd, so
holes stay empty), and the spans are written into an ``int32`` image of labels, later
polygons over earlier ones (the order matplotlib draws in).  A pixel belongs to a polygon
when its centre is inside it.

:func:`compose` turns the labels into RGBA: each label's fill, a one-pixel outline where two
labels (or a label and the background) meet, a diagonal hatch over the labels asked for,
then the average of every ``s`` x ``s`` block, so that drawn at ``s`` times the map's
resolution the fills blend at their edges as anti-aliasing would and the outlines come out
about ``1/s`` of a map pixel wide.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import shapely

from gis_sw.outputs.maps.draw import polygon_parts

_POLYGON = 3


@dataclass(frozen=True, slots=True)
class PixelGrid:
    """Where the pixels of a label image lie: the left and top edge and a pixel's size.

    Attributes
    ----------
    left, top
        Map coordinates (feet) of the image's upper-left corner.
    step_x, step_y
        Width and height of one pixel in map units (positive; rows run downwards).
    width, height
        Pixels across and down.
    """

    left: float
    top: float
    step_x: float
    step_y: float
    width: int
    height: int


def _polygons(geoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Single non-empty polygons and the position of the geometry each came from."""
    arr = np.asarray(geoms, dtype=object)
    if len(arr) == 0:
        return np.empty(0, dtype=object), np.empty(0, dtype="int64")
    types = shapely.get_type_id(arr)
    if (types == _POLYGON).all():  # parcels: no per-part objects to build
        keep = ~shapely.is_empty(arr)
        return arr[keep], np.flatnonzero(keep)
    return polygon_parts(arr)


def _rings(polys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every vertex of the polygons, where each ring starts, and each vertex's polygon.

    Rings are closed (last vertex = first).  Only polygons with holes have their rings
    made into objects (to learn their sizes).
    """
    coords, vertex_poly = shapely.get_coordinates(polys, return_index=True)
    holes = shapely.get_num_interior_rings(polys)
    n_rings = holes + 1
    ring_poly = np.repeat(np.arange(len(polys)), n_rings)
    sizes = np.bincount(vertex_poly, minlength=len(polys))[ring_poly]
    holed = holes > 0
    if holed.any():
        rings = shapely.get_rings(polys[holed])
        sizes[holed[ring_poly]] = shapely.get_num_coordinates(rings)
    return coords, np.r_[0, np.cumsum(sizes)], vertex_poly


POLYGON_BATCH = 20_000
"""Polygons scan-converted at a time, and :data:`CELL_BATCH` the pixels written at a time:
the temporary arrays stay a few MB, reused, instead of hundreds of MB of fresh pages."""

CELL_BATCH = 1 << 20


def paint(labels: np.ndarray, grid: PixelGrid, geoms: np.ndarray, values: np.ndarray) -> None:
    """Write ``values[i]`` into every pixel of ``labels`` whose centre is in ``geoms[i]``.

    Later geometries paint over earlier ones; missing and empty geometries, and parts that
    are not polygons, paint nothing.

    Parameters
    ----------
    labels
        ``(grid.height, grid.width)`` integer image (C order), changed in place.
    grid
        Where its pixels lie.
    geoms
        Shapely polygons or multipolygons.
    values
        One label per geometry.
    """
    polys, index = _polygons(geoms)
    part_values = np.asarray(values)[index]
    flat = labels.reshape(-1)  # a view: labels is C-contiguous
    for start in range(0, len(polys), POLYGON_BATCH):
        stop = start + POLYGON_BATCH
        _paint_batch(flat, grid, polys[start:stop], part_values[start:stop])


def _paint_batch(flat: np.ndarray, grid: PixelGrid, polys: np.ndarray, values: np.ndarray) -> None:
    coords, ring_offsets, vertex_poly = _rings(polys)
    px = (coords[:, 0] - grid.left) / grid.step_x
    py = (grid.top - coords[:, 1]) / grid.step_y
    edge = np.ones(len(coords) - 1, dtype=bool)
    edge[ring_offsets[1:-1] - 1] = False  # a ring's last vertex starts no edge
    start = np.flatnonzero(edge)
    xa, ya, xb, yb = px[start], py[start], px[start + 1], py[start + 1]
    # the rows whose centre (r + 0.5) is in [min(ya, yb), max(ya, yb)): half open, so a
    # vertex two edges share is crossed once, and a horizontal edge never
    first = np.clip(np.ceil(np.minimum(ya, yb) - 0.5), 0, grid.height).astype("int64")
    stop = np.clip(np.ceil(np.maximum(ya, yb) - 0.5), 0, grid.height).astype("int64")
    count = np.maximum(stop - first, 0)
    total = int(count.sum())
    if total == 0:
        return
    which = np.repeat(np.arange(len(start)), count)
    row = first[which] + (np.arange(total) - np.repeat(np.cumsum(count) - count, count))
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = (xb - xa) / (yb - ya)
    x = xa[which] + (row + 0.5 - ya[which]) * slope[which]
    x = np.clip(x, -1.0, grid.width + 1.0)
    key = vertex_poly[start][which] * grid.height + row
    # one float key: (polygon, row) then x (x is in [-1, width + 1]); the crossings come
    # in runs, edge by edge, which a stable sort merges fast
    order = np.argsort(key * (grid.width + 4.0) + (x + 2.0), kind="stable")
    key, x = key[order], x[order]
    # pair the crossings of each (polygon, row): first with second, third with fourth ...
    group_start = np.r_[0, np.flatnonzero(np.diff(key)) + 1]
    sizes = np.diff(np.r_[group_start, len(key)])
    rank = np.arange(len(key)) - np.repeat(group_start, sizes)
    left = np.flatnonzero((rank % 2 == 0) & (rank + 1 < np.repeat(sizes, sizes)))
    c0 = np.clip(np.ceil(x[left] - 0.5), 0, grid.width).astype("int64")
    c1 = np.clip(np.ceil(x[left + 1] - 0.5), 0, grid.width).astype("int64")
    length = c1 - c0
    keep = length > 0
    span_key, c0, length = key[left][keep], c0[keep], length[keep]
    origin = (span_key % grid.height) * grid.width + c0
    _fill_spans(flat, origin, length, values[span_key // grid.height])


def _fill_spans(
    flat: np.ndarray, origin: np.ndarray, length: np.ndarray, value: np.ndarray
) -> None:
    """Write ``value[i]`` into ``flat[origin[i] : origin[i] + length[i]]``, in order.

    Spans are written in their order, in batches of about :data:`CELL_BATCH` pixels, and
    numpy assigns repeated indices in order: where spans overlap, the last one wins.
    """
    if len(length) == 0:
        return
    ends = np.cumsum(length)
    marks = np.arange(CELL_BATCH, int(ends[-1]), CELL_BATCH)
    bounds = np.unique(np.r_[0, np.searchsorted(ends, marks, side="right"), len(length)])
    for lo, hi in itertools.pairwise(bounds):
        part = length[lo:hi]
        cells = np.repeat(origin[lo:hi] - (np.cumsum(part) - part), part)
        cells += np.arange(len(cells))
        flat[cells] = np.repeat(value[lo:hi], part)


def compose(
    labels: np.ndarray,
    fills: np.ndarray,
    *,
    scale: int,
    outline: tuple[int, int, int, int],
    outline_alpha: float = 1.0,
    hatch: np.ndarray | None = None,
    hatch_colour: tuple[int, int, int, int] = (0, 0, 0, 255),
    hatch_period_px: float = 6.25,
    hatch_width_px: float = 1.25,
) -> np.ndarray:
    """Return the map pixels (RGBA ``uint8``, rows from the top) of a label image.

    Parameters
    ----------
    labels
        ``(h * scale, w * scale)`` labels; 0 is the background.
    fills
        ``(n, 4)`` ``uint8`` RGBA of each label (row 0: the background).
    scale
        Label pixels per map pixel, each way.
    outline
        RGBA of the one-label-pixel line drawn where two labels meet.
    outline_alpha
        Its opacity (below 1: a line thinner than a label pixel, blended over the fill).
    hatch
        Per label, whether it carries the hatch (lines rising to the right).
    hatch_colour, hatch_period_px, hatch_width_px
        The hatch's colour, the distance between its lines along a row and their width
        along a row, in map pixels.
    """
    height, width = labels.shape[0] // scale, labels.shape[1] // scale
    palette = np.ascontiguousarray(fills, dtype=np.uint8).view(np.uint32).reshape(-1)
    style = _Style(
        scale=scale,
        outline=_packed(outline),
        outline_rgba=np.asarray(outline, dtype=np.float32),
        outline_alpha=outline_alpha,
        hatch=hatch if hatch is not None and hatch.any() else None,
        hatch_colour=_packed(hatch_colour),
        hatch_period_px=hatch_period_px,
        hatch_width_px=hatch_width_px,
    )
    out = np.empty((height, width, 4), dtype=np.uint8)
    band = scale * COMPOSE_BAND_ROWS  # a band at a time: its temporaries stay small
    for top in range(0, height * scale, band):
        bottom = min(top + band, height * scale)
        below = labels[bottom] if bottom < labels.shape[0] else None
        pixels = _band_pixels(labels[top:bottom], below, top=top, palette=palette, style=style)
        out[top // scale : bottom // scale] = _blocks(pixels[:, : width * scale], scale)
    return out


COMPOSE_BAND_ROWS = 128
"""Map rows composed at a time."""


@dataclass(frozen=True, slots=True)
class _Style:
    scale: int
    outline: np.uint32
    outline_rgba: np.ndarray
    outline_alpha: float
    hatch: np.ndarray | None
    hatch_colour: np.uint32
    hatch_period_px: float
    hatch_width_px: float


def _packed(colour: tuple[int, int, int, int]) -> np.uint32:
    """One RGBA colour as the uint32 whose four bytes it is."""
    return np.array(colour, dtype=np.uint8).view(np.uint32)[0]


def _band_pixels(
    labels: np.ndarray, below: np.ndarray | None, *, top: int, palette: np.ndarray, style: _Style
) -> np.ndarray:
    """Packed RGBA of a band of label rows (``below``: the row after it, for its outline)."""
    pixels = palette[labels]
    edge = np.zeros(labels.shape, dtype=bool)
    edge[:, :-1] = labels[:, :-1] != labels[:, 1:]
    edge[:-1, :] |= labels[:-1, :] != labels[1:, :]
    if below is not None:
        edge[-1, :] |= labels[-1, :] != below
    if style.hatch is not None:
        rows, cols = labels.shape
        along = np.arange(top, top + rows)[:, None] + np.arange(cols)[None, :] + 1.0
        along /= style.scale
        lines = np.mod(along, style.hatch_period_px) < style.hatch_width_px
        np.putmask(pixels, style.hatch[labels] & lines, style.hatch_colour)
    if style.outline_alpha >= 1.0:
        np.putmask(pixels, edge, style.outline)
    else:  # the line is thinner than a label pixel: blend it over what it crosses
        under = pixels[edge].view(np.uint8).reshape(-1, 4).astype(np.float32)
        mixed = under + (style.outline_rgba - under) * np.float32(style.outline_alpha)
        pixels[edge] = np.rint(mixed).astype(np.uint8).reshape(-1).view(np.uint32)
    return pixels


def _blocks(pixels: np.ndarray, scale: int) -> np.ndarray:
    """Return the mean RGBA of each ``scale`` x ``scale`` block of packed pixels, rounded."""
    rows, cols = pixels.shape[0] // scale, pixels.shape[1] // scale
    rgba = np.ascontiguousarray(pixels).view(np.uint8)
    # sum each block: first along its rows, then down its columns
    across = rgba.reshape(rows * scale, cols, scale, 4)
    total = across[:, :, 0].astype(np.uint16)
    for k in range(1, scale):
        total += across[:, :, k]
    down = total.reshape(rows, scale, cols, 4)
    block = down[:, 0].copy()
    for k in range(1, scale):
        block += down[:, k]
    half = (scale * scale) // 2
    return ((block + half) // (scale * scale)).astype(np.uint8)


__all__ = ["PixelGrid", "compose", "paint"]
