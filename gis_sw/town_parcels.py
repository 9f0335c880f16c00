"""Finding a town's parcels: by point, by area, by text, under geometries.

A mixin of :class:`gis_sw.api.Town` (its parcels layer and STRtree, built once), the
lookups ``gis-sw serve`` answers a click or a search with.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import geopandas as gpd
import numpy as np
import shapely

from gis_sw.ruleset import Ruleset

__all__ = ["ParcelLookup"]


class ParcelLookup:
    """Parcel lookups over a town's parcels layer and its STRtree."""

    _trees: dict[str, shapely.STRtree]
    _frames: dict[str, gpd.GeoDataFrame]
    _parcel_row: Mapping[str, int]
    _search_text: np.ndarray

    ruleset: Ruleset

    def _no_parcels(self) -> gpd.GeoDataFrame:
        """Return an empty frame of parcels in the working CRS."""
        crs = self.ruleset.working_crs
        return gpd.GeoDataFrame(geometry=gpd.GeoSeries([], crs=crs), crs=crs)

    def parcels_near(self, x: float, y: float, distance_ft: float = 0.0) -> gpd.GeoDataFrame:
        """Parcels within ``distance_ft`` of the point (x, y), working CRS, nearest first."""
        if "parcels" not in self._trees:
            return self._no_parcels()
        point = shapely.Point(x, y)
        hit = self._trees["parcels"].query(point, predicate="dwithin", distance=distance_ft)
        frame = self._frames["parcels"].iloc[np.sort(hit)]
        order = np.argsort(shapely.distance(frame.geometry.to_numpy(), point), kind="stable")
        return frame.iloc[order]

    def parcels_in(self, area: shapely.Geometry) -> gpd.GeoDataFrame:
        """Parcels that intersect ``area`` (working CRS), in the layer's order."""
        if "parcels" not in self._trees:
            return self._no_parcels()
        hit = self._trees["parcels"].query(area, predicate="intersects")
        return self._frames["parcels"].iloc[np.sort(hit)]

    def search_parcels(self, text: str, *, limit: int = 20) -> gpd.GeoDataFrame:
        """Parcels whose id or address contains ``text`` (any case), exact id first."""
        needle = str(text).strip().lower()
        parcels = self._frames.get("parcels")
        if parcels is None or not needle:
            return self._no_parcels()
        hits = np.flatnonzero(np.char.find(self._search_text.astype(str), needle) >= 0)
        exact = self._parcel_row.get(str(text).strip())
        if exact is not None:
            hits = np.r_[exact, hits[hits != exact]]
        return parcels.iloc[hits[:limit]]

    def parcels_under(self, geoms: Iterable[shapely.Geometry]) -> list[str]:
        """Ids of the parcels that hold (or touch) ``geoms``, in the parcels layer's order."""
        if "parcels" not in self._trees:
            return []
        arr = np.asarray(list(geoms), dtype=object)
        if len(arr) == 0:
            return []
        _, hit = self._trees["parcels"].query(arr, predicate="intersects")
        ids = self._frames["parcels"]["parcel_id"].astype(str).to_numpy()
        return [str(ids[i]) for i in np.unique(hit)]
