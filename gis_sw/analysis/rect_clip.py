"""Cut each geometry to a rectangle of its own, in one vectorised call.

``shapely.clip_by_rect`` takes one rectangle for all its geometries; the ufunc behind it,
``shapely.lib.clip_by_rect``, broadcasts one per geometry.  That ufunc is not part of
shapely's public API, so it is reached here alone: where a shapely release lacks it, the
rectangles are cut with ``shapely.intersection`` of their boxes instead (slower, and
valid where the rectangle clip may not be; inside the rectangle both are the geometry).
"""

from __future__ import annotations

import numpy as np
import shapely

_CLIP_UFUNC = getattr(shapely.lib, "clip_by_rect", None)


def clip_by_boxes(geoms: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Return each of ``geoms`` cut to its row ``(xmin, ymin, xmax, ymax)`` of ``bounds``.

    Like ``shapely.clip_by_rect``, the result is the geometry inside the rectangle but is
    not promised to be valid: callers test it (``shapely.is_valid``) and keep the whole
    geometry where it is not.
    """
    geoms = np.asarray(geoms, dtype=object)
    bounds = np.asarray(bounds, dtype=np.float64).reshape(len(geoms), 4)
    if len(geoms) == 0:
        return geoms.copy()
    if _CLIP_UFUNC is not None:
        return np.asarray(_CLIP_UFUNC(geoms, *bounds.T), dtype=object)
    return np.asarray(shapely.intersection(geoms, shapely.box(*bounds.T)), dtype=object)
