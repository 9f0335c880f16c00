"""LayerSet: the town's layers, read, reprojected to the working CRS and validated.

Rules receive a LayerSet and never read files.  An optional layer that was not provided is
listed in :attr:`LayerSet.missing`, so a rule can answer ``review: layer X not provided``
instead of passing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import geopandas as gpd
from pyproj import CRS

from gis_sw.layers.raster import RasterLayer


@dataclass(frozen=True, slots=True)
class LayerReport:
    """What reading and validating one layer found, for ``gis-sw validate``.

    Attributes
    ----------
    kind
        Layer kind.
    source
        File / table it came from (``town.gpkg:parcels``).
    features
        Number of features (or cells for a raster).
    source_crs
        CRS of the source, as text.
    units
        Linear unit of the source CRS.
    bounds
        Extent in the working CRS.
    repaired_ids
        Ids (or row numbers) of features repaired with ``make_valid``.
    warnings
        Non-fatal remarks (dropped empty geometries, renamed columns).
    """

    kind: str
    source: str
    features: int
    source_crs: str
    units: str
    bounds: tuple[float, float, float, float]
    repaired_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class LayerSet:
    """Every town layer, in the working CRS.

    Attributes
    ----------
    crs
        The working CRS (feet).
    vectors
        Layer kind to GeoDataFrame, columns renamed to the spec's names.
    rasters
        Raster kind to :class:`RasterLayer`.
    reports
        Kind to :class:`LayerReport`.
    source
        What was read (path of the GeoPackage or manifest).
    """

    crs: CRS
    vectors: Mapping[str, gpd.GeoDataFrame] = field(default_factory=dict)
    rasters: Mapping[str, RasterLayer] = field(default_factory=dict)
    reports: Mapping[str, LayerReport] = field(default_factory=dict)
    source: str = ""

    def has(self, kind: str) -> bool:
        """True when the layer (vector or raster) was provided."""
        return kind in self.vectors or kind in self.rasters

    def get(self, kind: str) -> gpd.GeoDataFrame | None:
        """The vector layer, or None when it was not provided."""
        return self.vectors.get(kind)

    def raster(self, kind: str) -> RasterLayer | None:
        """The raster layer, or None when it was not provided."""
        return self.rasters.get(kind)

    @property
    def missing(self) -> tuple[str, ...]:
        """Known layer kinds that were not provided."""
        from gis_sw.layers.specs import RASTER_LAYERS, TOWN_LAYERS

        known = [*TOWN_LAYERS, *RASTER_LAYERS]
        return tuple(k for k in known if not self.has(k))
