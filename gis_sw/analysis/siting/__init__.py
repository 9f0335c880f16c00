"""Where on a parcel an infiltration device may legally go, for every parcel in one pass.

For each parcel the allowed polygon is::

    parcel eroded by the property-line setback (10 ft, § 183-12C(2)(c)[6])
      - 20 ft around buildings with a habitable basement or below-ground storage ([7];
        unknown counts as one; structures of 100 sq ft or less are not buildings, § 183-6:
        see gis_sw.analysis.buildings)
      - 50 ft around wells, wetlands, water bodies and streams (vehicle class only, [3])
      - the part within 20 ft of a septic field that is up-gradient of it ([3]): DEM cells
        not more than ``upgradient_flat_tolerance_ft`` below the field's lowest ground
        cell (up-gradient, or flat within the DEM's resolution: SW201's ``review``)
      - raster cells where a device ``depth_ft`` deep would not keep 2 ft above seasonal
        high groundwater or bedrock ([4]); outside the rasters nothing is allowed
      - the footprints of buildings and septic fields themselves (no device goes inside one)

How it stays exact and fast:

- Every circular arc is a buffer whose radius is grown by the chord error
  (:func:`gis_sw.analysis.distances.grown_radius`), so no chord lets a point closer than the
  setback through; the parcel setback is a negative buffer with the same grown radius.
  With ``quad_segs=128`` the growth is under 0.001 ft for 50 ft, so areas are exact to well
  under a square foot on a lot.
- All constraints (buffers, polygonised raster cells) go into one array and one STRtree;
  one ``query`` pairs them with the parcels, and vectorised ``difference`` calls remove
  them, one round per rank of part (:mod:`.subtract`).  No per-parcel Python loop.
- A parcel whose parts all lie strictly inside it, apart from each other (a prepared
  ``contains_properly`` test, as the batch's overlays use), gets them as holes without any
  overlay (:func:`.subtract.holes_only`); a footprint inside its own basement zone and a septic
  field inside its whole zone are not subtracted twice.
- :func:`siting_by_class` builds the shared constraints once and cuts the vehicle zones
  from the roof polygon.  :func:`siting_areas` measures the same polygons without drawing
  them (:mod:`.areas`); the townwide batch calls it on each chunk with its halo (32
  segments per quarter circle); each parcel's parts are taken in an order fixed by their
  geometry, so a chunked run equals one piece.
- The raster cells (septic up-gradient, vertical separation) are :mod:`.cells`; a place
  the siting polygon allows always passes SW201 on the same DEM, whatever the depth.

The package: :mod:`.records` (device classes, parts, notes), :mod:`.cells` (raster
cells), :mod:`.constraints` (the parts and notes from the layers), :mod:`.subtract` (the
polygons), :mod:`.areas` (their areas alone), :mod:`.result` (the table and its reasons),
:mod:`.polygons` (the public functions).

An invalid parcel is repaired ring by ring first (:mod:`gis_sw.layers.repair`): a lot whose
ring touches itself around a cut-out keeps the cut-out and its lot lines.
"""

from __future__ import annotations

from gis_sw.analysis.siting.polygons import siting_areas, siting_by_class, siting_polygons
from gis_sw.analysis.siting.records import QUAD_SEGS, SITING_COLUMNS, DeviceClass, Note

__all__ = [
    "QUAD_SEGS",
    "SITING_COLUMNS",
    "DeviceClass",
    "Note",
    "siting_areas",
    "siting_by_class",
    "siting_polygons",
]
