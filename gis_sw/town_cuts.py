"""The cuts of a :class:`gis_sw.api.Town`'s layers it remembers, and nearest features.

A mixin of :class:`gis_sw.api.Town`: :meth:`Town.local` asks for the nearest features of
the proposal geometries with no feature within the reach, and for the rows of each layer
it keeps.  While a device is dragged the disturbance does not move and the neighbourhood
keeps its rows, so both are remembered (bounded, oldest first out; thread-safe).
"""

from __future__ import annotations

import threading

import geopandas as gpd
import numpy as np
import shapely

__all__ = ["CUT_CACHE_SIZE", "NEAREST_CACHE_SIZE", "TownCuts"]

NEAREST_CACHE_SIZE = 4096
"""(layer, geometry) pairs whose nearest features a :class:`Town` remembers."""
CUT_CACHE_SIZE = 256
"""(layer, rows) cuts of the layers a :class:`Town` keeps (:meth:`Town.local`)."""


class TownCuts:
    """Remembered nearest features and layer cuts over a town's frames and STRtrees."""

    _trees: dict[str, shapely.STRtree]
    _frames: dict[str, gpd.GeoDataFrame]

    def _init_cuts(self) -> None:
        """Start with nothing remembered."""
        self._near_cache: dict[tuple[str, bytes], np.ndarray] = {}
        self._near_lock = threading.Lock()
        self._cuts: dict[tuple[str, bytes], gpd.GeoDataFrame] = {}
        self._cuts_lock = threading.Lock()

    def _cut(self, kind: str, keep: np.ndarray) -> gpd.GeoDataFrame:
        """Return the rows ``keep`` of layer ``kind``, the same frame for the same rows.

        While a device is dragged the neighbourhood keeps its rows, and a frame's ``iloc``
        costs more than most checks; the last :data:`CUT_CACHE_SIZE` cuts are kept (the
        checks only read the layers).
        """
        key = (kind, keep.astype(np.int64).tobytes())
        with self._cuts_lock:
            hit = self._cuts.get(key)
        if hit is not None:
            return hit
        frame = self._frames[kind].iloc[keep]
        with self._cuts_lock:
            while len(self._cuts) >= CUT_CACHE_SIZE:
                self._cuts.pop(next(iter(self._cuts)))
            self._cuts[key] = frame
        return frame

    def _nearest(self, kind: str, geoms: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Return the rows of ``kind`` nearest to each of ``geoms`` (ties included).

        They are remembered by the geometry's WKB: while a device is dragged the
        disturbance and the other devices do not move, and a nearest search among a few
        large polygons costs milliseconds.
        """
        found: list[np.ndarray] = []
        missing: list[int] = []
        with self._near_lock:
            for i, key in enumerate(keys.tolist()):
                hit = self._near_cache.get((kind, key))
                if hit is None:
                    missing.append(i)
                else:
                    found.append(hit)
        if missing:
            where, rows = self._trees[kind].query_nearest(geoms[missing], all_matches=True)
            order = np.argsort(where, kind="stable")  # each geometry's rows, in their order
            cuts = np.searchsorted(where[order], np.arange(len(missing) + 1))
            with self._near_lock:
                for j, i in enumerate(missing):
                    mine = rows[order[cuts[j] : cuts[j + 1]]]
                    found.append(mine)
                    while len(self._near_cache) >= NEAREST_CACHE_SIZE:
                        self._near_cache.pop(next(iter(self._near_cache)))
                    self._near_cache[(kind, keys[i])] = mine
        return np.concatenate(found) if found else np.empty(0, dtype=np.intp)
