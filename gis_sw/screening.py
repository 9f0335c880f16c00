"""What a screening found, for the outputs to draw: the frozen :class:`Screening` record.

:meth:`gis_sw.api.Town.screen` computes the findings (waivers applied) and returns a
:class:`Screening`; everything else the outputs draw is computed here, from the findings'
inputs, the first time an output asks for it, and kept:

- the phasing timeline of each proposal (:meth:`Screening.timeline`), a chart's data;
- the runoff calculation sheet (:attr:`Screening.calc_sheet`);
- the siting polygons, by device class for the parcels under the devices
  (:attr:`Screening.siting`) and per proposal as the sheets and the web map draw them
  (:meth:`Screening.device_siting`);
- the wetland adjacent band and the protected (basement) buildings of the rows a map shows
  (:meth:`Screening.wetland_band`, :meth:`Screening.protected_buildings`).

So ``gis-sw check --map none`` computes no timeline, no per-proposal siting and no drawing
data: nothing it will not write (issue 14's 20,000-proposal run).  The outputs
(:mod:`gis_sw.outputs`) only render: they import no check and compute no analysis.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import geopandas as gpd
import numpy as np
import pandas as pd

from gis_sw.analysis.bands import adjacent_outlines
from gis_sw.analysis.buildings import basement_status
from gis_sw.analysis.phasing import Timeline, proposal_timeline
from gis_sw.analysis.waivers import WaiverResult
from gis_sw.errors import RulesetError
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import Ruleset

if TYPE_CHECKING:
    from gis_sw.api import Town

log = logging.getLogger(__name__)

__all__ = [
    "Screening",
    "Timeline",
    "WaiverResult",
    "device_siting",
    "protected_buildings",
    "wetland_band",
]


@dataclass(frozen=True, slots=True, eq=False)
class Screening:
    """What screening some proposals found, and what the outputs draw of it.

    Attributes
    ----------
    town
        The town screened (its layers and ruleset are what the maps draw).
    proposals
        The proposals screened.
    findings
        Columns :data:`~gis_sw.analysis.findings.FINDING_COLUMNS`, working CRS, waivers
        applied.
    waiver_results
        The fate of every waiver given (applied, expired, unmatched); None when no waivers
        were given (then no ``waivers.csv`` is written).
    with_siting
        Whether siting polygons are wanted (False: :attr:`siting` is empty and
        :meth:`device_siting` None).
    screened_layers
        The layers the rules ran on (the town's, cut to the proposals' reach; None: the
        town's): the calculation sheet reuses the rules' runoff results on them.
    """

    town: Town
    proposals: Proposals
    findings: gpd.GeoDataFrame
    waiver_results: tuple[WaiverResult, ...] | None = None
    with_siting: bool = True
    screened_layers: LayerSet | None = field(default=None, repr=False)
    _cache: dict[Any, Any] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    @property
    def layers(self) -> LayerSet:
        """Return the town's layers (working CRS)."""
        return self.town.layers

    @property
    def ruleset(self) -> Ruleset:
        """Return the ruleset the proposals were screened against."""
        return self.town.ruleset

    @property
    def computed(self) -> frozenset[str]:
        """Return the names of what has been computed: timeline, calc_sheet, siting..."""
        with self._lock:
            return frozenset(k[0] if isinstance(k, tuple) else k for k in self._cache)

    def _once(self, key: Any, compute: Any) -> Any:
        """Return ``compute()``, computed on the first call for ``key`` and kept."""
        with self._lock:
            if key in self._cache:
                return self._cache[key]
        value = compute()
        with self._lock:
            return self._cache.setdefault(key, value)

    @property
    def siting(self) -> Mapping[str, gpd.GeoDataFrame]:
        """Return device class to the siting polygons of the parcels under the devices.

        Columns :data:`~gis_sw.analysis.siting.SITING_COLUMNS`; empty when there is no device,
        no device lies on a parcel, or siting was not asked for.
        """
        return self._once("siting", self._siting_by_class)

    def _siting_by_class(self) -> dict[str, gpd.GeoDataFrame]:
        if not self.with_siting or len(self.proposals.devices) == 0:
            return {}
        lots = self.town.parcels_under(self.proposals.devices.geometry.to_numpy())
        return {str(k): v for k, v in self.town.siting(lots).items()} if lots else {}

    def device_siting(self, proposal_ids: Sequence[str] | None = None) -> gpd.GeoDataFrame | None:
        """Return the siting polygons the sheets and the web map draw (:func:`device_siting`).

        Parameters
        ----------
        proposal_ids
            The proposals drawn (default: every one).

        Returns
        -------
        GeoDataFrame or None
            None when siting was not asked for or no device lies on a parcel.
        """
        ids = tuple(self.proposals.ids if proposal_ids is None else proposal_ids)
        if not self.with_siting:
            return None
        return self._once(
            ("device_siting", ids),
            lambda: device_siting(self.layers, self.proposals, self.ruleset, ids),
        )

    def timeline(self, proposal_id: str) -> Timeline | None:
        """Return the disturbed area over time of one proposal; None without dated phases."""
        pid = str(proposal_id)
        return self._once(("timeline", pid), lambda: proposal_timeline(self.proposals, pid))

    @property
    def timelines(self) -> Mapping[str, Timeline]:
        """Return proposal id to its timeline, for every proposal with dated phases."""
        found = {pid: self.timeline(pid) for pid in self.proposals.ids}
        return {pid: t for pid, t in found.items() if t is not None}

    @property
    def calc_sheet(self) -> pd.DataFrame | None:
        """Return the runoff calculation sheet of every proposal; None without hydrology.

        Columns :data:`~gis_sw.analysis.runoff.sheet.SHEET_COLUMNS`.  None (and a warning
        logged) when the ruleset has no hydrology section.
        """
        return self._once("calc_sheet", self._calc_sheet)

    def _calc_sheet(self) -> pd.DataFrame | None:
        from gis_sw.analysis.hydrology import calculation_sheet_for

        try:
            layers = self.layers if self.screened_layers is None else self.screened_layers
            return calculation_sheet_for(layers, self.proposals, self.ruleset)
        except RulesetError as exc:
            log.warning("calcsheet.csv not written: %s", exc)
            return None

    def wetland_band(self, wetlands: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        """Return the outer outline of the wetland adjacent area of these wetland rows.

        See :func:`wetland_band`.
        """
        return wetland_band(wetlands, self.ruleset)

    def protected_buildings(self, buildings: pd.DataFrame) -> np.ndarray:
        """Return True per building row for a protected structure (:func:`protected_buildings`)."""
        return protected_buildings(buildings)


def wetland_band(wetlands: gpd.GeoDataFrame, ruleset: Ruleset) -> gpd.GeoDataFrame:
    """Return the outline of each wetland's adjacent area (the band's outer edge), for drawing.

    Parameters
    ----------
    wetlands
        Rows of the wetlands layer (working CRS).
    ruleset
        Gives the band width (``resources.wetland_adjacent_area_ft``).

    Returns
    -------
    GeoDataFrame
        ``wetland_id``, ``distance_ft`` and the outline
        (:func:`gis_sw.analysis.bands.adjacent_outlines`), one row per wetland; no row when
        the width is 0.
    """
    width_ft = ruleset.resources.wetland_adjacent_area_ft
    rows = wetlands if width_ft > 0 else wetlands.iloc[0:0]
    ids = rows["wetland_id"].to_numpy() if "wetland_id" in rows.columns else [None] * len(rows)
    return gpd.GeoDataFrame(
        {"wetland_id": ids, "distance_ft": [width_ft] * len(rows)},
        geometry=adjacent_outlines(rows.geometry.to_numpy(), width_ft) if len(rows) else [],
        crs=wetlands.crs,
    )


def protected_buildings(buildings: pd.DataFrame) -> np.ndarray:
    """Return True per row for a structure SW206 protects (habitable basement or storage)."""
    return np.asarray([q is True for q in basement_status(buildings)[0]], dtype=bool)


def device_siting(
    layers: LayerSet, proposals: Proposals, ruleset: Ruleset, ids: Sequence[str]
) -> gpd.GeoDataFrame | None:
    """Return the siting polygons of the parcels under each proposal's devices.

    Roof class for devices that do not serve vehicle traffic, vehicle class for those that
    do, at the deepest device depth given, with the ``proposal_id`` of the devices on each
    parcel; None when no device sits on a parcel.
    """
    from gis_sw.analysis.siting import siting_polygons

    parcels = layers.get("parcels")
    devices = proposals.devices[proposals.devices["proposal_id"].isin(list(ids))]
    if parcels is None or len(devices) == 0:
        return None
    frames = []
    vehicle = devices["serves_vehicle_traffic"].astype("boolean").fillna(value=False)
    for device_class, mask in (("roof", ~vehicle), ("vehicle", vehicle)):
        chosen = devices[mask.to_numpy(dtype=bool)]
        if len(chosen) == 0:
            continue
        left, right = parcels.sindex.query(chosen.geometry.to_numpy(), predicate="intersects")
        if len(left) == 0:
            continue
        parcel_ids = sorted({str(p) for p in parcels.iloc[right]["parcel_id"]})
        depth = pd.to_numeric(chosen["depth_ft"], errors="coerce").max()
        polygons = siting_polygons(
            layers,
            ruleset,
            parcel_ids=parcel_ids,
            device_class=device_class,
            depth_ft=None if pd.isna(depth) else float(depth),
        )
        owner = dict(
            zip(
                parcels.iloc[right]["parcel_id"].astype(str),
                chosen.iloc[left]["proposal_id"].astype(str),
                strict=True,
            )
        )
        polygons["proposal_id"] = polygons["parcel_id"].map(owner)
        frames.append(polygons)
    if not frames:
        return None
    return gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=frames[0].crs)
