"""LayerSet: the town's layers, read, reprojected to the working CRS and validated.

Rules receive a LayerSet and never read files.  An optional layer that was not provided is
listed in :attr:`LayerSet.missing`, so a rule can answer ``review: layer X not provided``
instead of passing.  A layer the manifest declares absent (``[wells] none = true``) is an
empty layer, listed in :attr:`LayerSet.declared_none`: rules see no features and may pass
on that part.  A layer that maps only part of the town has its area in
:attr:`LayerSet.coverage`; the engine reviews what lies outside it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import geopandas as gpd
import shapely
from pyproj import CRS

from gis_sw.layers.raster import RasterLayer


@dataclass(frozen=True, slots=True)
class DroppedFeature:
    """A feature left out of a layer by ``on_bad_feature = "skip"``, and why.

    Attributes
    ----------
    kind
        Layer kind.
    feature
        ``row N`` (its row in the source as read, from 1), with its id when it has one.
    reason
        Why it was dropped (``no geometry``, ``placeholder parcel_id '---'`` ...).
    """

    kind: str
    feature: str
    reason: str


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
    dropped
        Features left out by ``on_bad_feature = "skip"``, each with its reason.
    declared_none
        True for ``none = true``: the town has no such features (an empty layer).
    coverage
        ``town``, ``extent`` or the polygon file the layer's coverage came from.
    duplicate_geometries
        Groups of ids of features with identical geometry (condominium stacks on one lot).
    """

    kind: str
    source: str
    features: int
    source_crs: str
    units: str
    bounds: tuple[float, float, float, float]
    repaired_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    dropped: tuple[DroppedFeature, ...] = ()
    declared_none: bool = False
    coverage: str = "town"
    duplicate_geometries: tuple[tuple[str, ...], ...] = ()


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
    coverage
        Kind to the area (working CRS) a layer maps, for layers that map only part of the
        town (``coverage = "extent"`` or a polygon file); absent kinds cover the town.
    """

    crs: CRS
    vectors: Mapping[str, gpd.GeoDataFrame] = field(default_factory=dict)
    rasters: Mapping[str, RasterLayer] = field(default_factory=dict)
    reports: Mapping[str, LayerReport] = field(default_factory=dict)
    source: str = ""
    coverage: Mapping[str, shapely.Geometry] = field(default_factory=dict)

    def has(self, kind: str) -> bool:
        """Return True when the layer (vector or raster) was provided."""
        return kind in self.vectors or kind in self.rasters

    def get(self, kind: str) -> gpd.GeoDataFrame | None:
        """Return the vector layer, or None when it was not provided."""
        return self.vectors.get(kind)

    def raster(self, kind: str) -> RasterLayer | None:
        """Return the raster layer, or None when it was not provided."""
        return self.rasters.get(kind)

    @property
    def missing(self) -> tuple[str, ...]:
        """Known layer kinds that were not provided (declared absences are provided)."""
        from gis_sw.layers.specs import RASTER_LAYERS, TOWN_LAYERS

        known = [*TOWN_LAYERS, *RASTER_LAYERS]
        return tuple(k for k in known if not self.has(k))

    @property
    def declared_none(self) -> tuple[str, ...]:
        """Kinds the manifest declares absent (``none = true``): empty layers, not missing."""
        return tuple(k for k, r in self.reports.items() if r.declared_none)

    def covers(self, kind: str) -> shapely.Geometry | None:
        """Return the area a layer maps when it maps only part of the town, else None (the town)."""
        return self.coverage.get(kind)

    def dropped(self, kind: str | None = None) -> tuple[DroppedFeature, ...]:
        """Features left out by ``on_bad_feature = "skip"`` (of one kind, or all)."""
        return tuple(
            d for k, r in self.reports.items() if kind is None or k == kind for d in r.dropped
        )

    def duplicate_geometries(self, kind: str = "parcels") -> tuple[tuple[str, ...], ...]:
        """Return groups of ids whose features have identical geometry (each group sorted)."""
        report = self.reports.get(kind)
        return report.duplicate_geometries if report is not None else ()
