"""Proposals: what applicants submit (disturbance, devices, attributes).

A :class:`Proposals` holds one or many applications, so every rule runs vectorised over all
of them (the batch run checks every pending application at once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import geopandas as gpd
import pandas as pd
from pyproj import CRS

from gis_sw.layers.specs import PROPOSAL_LAYERS

ATTRIBUTE_COLUMNS: dict[str, str] = dict(PROPOSAL_LAYERS["proposals"].optional)
"""Proposal attributes; any that are absent are NA and become ``review`` findings later."""


@dataclass(frozen=True, slots=True, eq=False)
class Proposals:
    """One or more applications in the working CRS.

    Attributes
    ----------
    crs
        Working CRS.
    disturbance
        Polygons with ``proposal_id``, ``disturbance_id``, ``phase``, ``start_date``,
        ``end_date`` (datetime64, NaT when not given).
    devices
        Infiltration devices with ``device_id``, ``proposal_id`` and the optional device
        columns (NA when not given); may have no rows.
    attributes
        One row per proposal, index ``proposal_id``, every column of
        :data:`ATTRIBUTE_COLUMNS` present (NA when not given).
    impervious
        Proposed new impervious surfaces (``proposal_id``, ``surface``), may have no rows.
    source
        What was read.
    """

    crs: CRS
    disturbance: gpd.GeoDataFrame
    devices: gpd.GeoDataFrame
    attributes: pd.DataFrame
    impervious: gpd.GeoDataFrame | None = None
    source: str = ""
    reports: dict[str, object] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        """Every proposal id, sorted."""
        ids = set(self.attributes.index.astype(str))
        ids.update(self.disturbance["proposal_id"].astype(str))
        if len(self.devices):
            ids.update(self.devices["proposal_id"].astype(str))
        return sorted(ids)

    def subset(self, proposal_ids: list[str]) -> Proposals:
        """Return the same proposals restricted to some ids."""
        keep = set(proposal_ids)
        imp = self.impervious
        return Proposals(
            crs=self.crs,
            disturbance=self.disturbance[self.disturbance["proposal_id"].isin(keep)],
            devices=self.devices[self.devices["proposal_id"].isin(keep)],
            attributes=self.attributes[self.attributes.index.isin(keep)],
            impervious=None if imp is None else imp[imp["proposal_id"].isin(keep)],
            source=self.source,
        )
