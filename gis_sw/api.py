"""The public Python API: a :class:`Town` read once, and :meth:`Town.screen` for proposals.

``docs/api.md`` has a runnable example; :meth:`Town.screen` returns a
:class:`~gis_sw.screening.Screening`, what the outputs draw.

A :class:`Town` holds the layers and the ruleset, read and validated once, and one STRtree
per vector layer built once.  :meth:`Town.screen` does not hand the whole town to the
checks: it cuts out the features that can matter to the proposals (:meth:`Town.local`) and
runs the rules on that small :class:`~gis_sw.layers.layerset.LayerSet`, so a re-check of one
proposal costs what the proposal costs, not what the town costs (``gis-sw serve`` re-checks
on every edit).

What is cut out, and why it gives the same findings as the whole town:

- every feature whose envelope comes within the *reach* of the proposals: the envelope of
  their geometries, grown to take in every parcel and drainage area it touches and every
  drainage area drawn for one of the proposals (the runoff calculations use those as the
  drainage area), then grown by the largest distance in the
  ruleset (every ``*_ft`` number of every section, with the 100-ft wetland adjacent area
  and the 100-ft state well advisory among them) plus a margin.  Every check that looks
  for features within a distance, or overlapping the disturbance or its drainage area,
  sees all of them;
- the impaired waters whole (Condition A follows runoff on the DEM to any of them) and
  the drainage areas whole (:data:`gis_sw.around.WHOLE_KINDS`: small layers);
- plus, for every proposal geometry, its nearest feature of every layer at any distance
  (ties included), so the separation report (SW208) finds the same nearest well, wetland
  and water body however far away they are;
- every feature without a location (a null or empty geometry: no index finds it, and it
  may be the well within 50 ft), so the rules relying on its layer review as on the whole
  town;
- features keep their order in the layer, and a layer whose id column is optional has its
  missing ids written as ``#<row>`` (the row in the whole layer), the name the checks give
  such a feature, so messages name the same features.

``tests/test_api.py`` asserts that :meth:`Town.screen` gives exactly the findings of
:func:`~gis_sw.analysis.engine.run_rules` on the whole town for every sample proposal.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.analysis.context import CheckContext
from gis_sw.analysis.engine import run_rules
from gis_sw.analysis.setbacks import SETBACK_COLUMNS
from gis_sw.analysis.setbacks import setback_lines as lines_of_setbacks
from gis_sw.analysis.siting import DeviceClass, siting_by_class, siting_polygons
from gis_sw.analysis.waivers import Waiver, WaiverResult, apply_waivers, load_waivers
from gis_sw.around import (
    WHOLE_KINDS,
    contains,
    live,
    outside_error,
    read_around,
    region,
)
from gis_sw.errors import LayerError, Problem
from gis_sw.layers.geoms import unlocated
from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.layers.read import read_layers
from gis_sw.layers.read import read_proposals as _read_proposals
from gis_sw.nearest import Nearest, far_box, split_nearest
from gis_sw.ruleset import Ruleset
from gis_sw.screening import Screening, protected_buildings, wetland_band
from gis_sw.town_cuts import TownCuts
from gis_sw.town_parcels import ParcelLookup
from gis_sw.townparts import as_ruleset, proposal_geoms
from gis_sw.townparts import largest_distance_ft as _largest_distance_ft
from gis_sw.townparts import named as _named

log = logging.getLogger(__name__)

__all__ = ["SETBACK_COLUMNS", "Screening", "Town", "read_proposals", "read_town", "setback_lines"]

REACH_MARGIN_FT = 10.0
"""Added to the largest distance of the ruleset when cutting out a proposal's neighbourhood."""


class Town(ParcelLookup, TownCuts):
    """A town's layers and ruleset, read and validated once, with spatial indexes built once.

    Parameters
    ----------
    layers
        The town's layers in the ruleset's working CRS.
    ruleset
        The municipality's numbers and citations.
    """

    def __init__(self, layers: LayerSet, ruleset: Ruleset) -> None:
        self.layers = layers
        self.ruleset = ruleset
        self.reach_ft = _largest_distance_ft(ruleset) + REACH_MARGIN_FT
        self._trees: dict[str, shapely.STRtree] = {}
        self._geoms: dict[str, np.ndarray] = {}
        self._frames: dict[str, gpd.GeoDataFrame] = {}
        self._bounds: tuple[float, float, float, float] | None = None
        self._shared: dict[str, Any] = {}  # derived from the town alone (CheckContext.shared)
        self.windows: dict[str, tuple[float, float, float, float]] = {}
        """Kind to the box a layer was read in (``read_town(..., around=)``); {}: whole."""
        self._unlocated: dict[str, np.ndarray] = {}
        self._init_cuts()
        for kind, layer in layers.vectors.items():
            frame = _named(layer.reset_index(drop=True), kind)
            geoms = np.asarray(frame.geometry.to_numpy(), dtype=object)
            self._frames[kind] = frame
            self._geoms[kind] = geoms
            self._trees[kind] = shapely.STRtree(geoms)
            # no index finds a feature without a location, yet it may be the well within
            # 50 ft: every cut keeps it, so the rules relying on its layer review
            self._unlocated[kind] = np.flatnonzero(unlocated(geoms))
        parcels = self._frames.get("parcels")
        if parcels is not None:
            self._parcel_row = {pid: i for i, pid in enumerate(parcels["parcel_id"].astype(str))}
            text = parcels["parcel_id"].astype(str)
            if "address" in parcels.columns:
                text = text + " " + parcels["address"].fillna("").astype(str)
            self._search_text = text.str.lower().to_numpy()
        else:
            self._parcel_row = {}
            self._search_text = np.empty(0, dtype=object)

    @property
    def crs(self) -> Any:
        """The working CRS (feet)."""
        return self.ruleset.working_crs

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """Extent of every vector layer, working CRS (computed once: the layers are read once)."""
        if self._bounds is not None:
            return self._bounds
        boxes = [shapely.total_bounds(g) for g in self._geoms.values() if len(g)]
        if not boxes:
            return (math.nan, math.nan, math.nan, math.nan)
        arr = np.array(boxes)
        self._bounds = (
            float(arr[:, 0].min()),
            float(arr[:, 1].min()),
            float(arr[:, 2].max()),
            float(arr[:, 3].max()),
        )
        return self._bounds

    def wetland_band(self, wetlands: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
        """Return the adjacent-area outline of each wetland row (for the maps to draw)."""
        return wetland_band(wetlands, self.ruleset)

    def protected_buildings(self, buildings: pd.DataFrame) -> np.ndarray:
        """Return True per building row for a structure SW206 protects (basement, storage)."""
        return protected_buildings(buildings)

    def __repr__(self) -> str:
        """Return the source, the ruleset and each layer's feature count."""
        counts = ", ".join(f"{k} {len(g)}" for k, g in self._geoms.items())
        return f"Town({self.layers.source!r}, ruleset {self.ruleset.name!r}: {counts})"

    # -- the neighbourhood of some geometries -------------------------------------------------

    def local(
        self, geoms: Iterable[shapely.Geometry], *, proposal_ids: Sequence[str] = ()
    ) -> LayerSet:
        """Return the town's features that can matter to ``geoms`` (see the module docstring).

        Parameters
        ----------
        geoms
            Geometries in the working CRS (a proposal's disturbance, devices, impervious).
        proposal_ids
            Proposals whose own drainage areas (``drainage_areas.proposal_id``) are kept
            wherever they lie, with the features around them.

        Returns
        -------
        LayerSet
            Same rasters and reports; each vector layer cut to the reach of ``geoms``.
        """
        arr = live(geoms)
        if len(arr) == 0:
            return LayerSet(
                crs=self.layers.crs,
                vectors={k: f.iloc[self._unlocated[k]] for k, f in self._frames.items()},
                rasters=self.layers.rasters,
                reports=self.layers.reports,
                source=self.layers.source,
            )
        box, own = region(
            arr,
            self.reach_ft,
            trees=self._trees,
            geoms=self._geoms,
            drainage_areas=self._frames.get("drainage_areas"),
            proposal_ids=proposal_ids,
        )
        extra = {} if own is None else {"drainage_areas": own}
        outside = [k for k, w in self.windows.items() if not contains(w, box)]
        region_box = shapely.box(*box)
        vectors: dict[str, gpd.GeoDataFrame] = {}
        for kind, tree in self._trees.items():
            if len(self._geoms[kind]) == 0 or kind in WHOLE_KINDS:
                vectors[kind] = self._frames[kind]
                continue
            rows = tree.query(region_box)
            # a geometry with a feature within the reach has its nearest ones in ``rows``
            far, found = split_nearest(arr, tree, self.reach_ft)
            rest = far[found.searched]
            nearest = np.concatenate([found.rows, self._nearest(kind, rest, shapely.to_wkb(rest))])
            if len(far) and kind in self.windows and kind not in outside:
                self._check_nearest(kind, far, found, outside)
            lost = self._unlocated[kind]
            keep = np.unique(np.concatenate([rows, nearest, extra.get(kind, rows[:0]), lost]))
            vectors[kind] = self._cut(kind, keep)
        if outside:
            raise outside_error(outside)
        return LayerSet(
            crs=self.layers.crs,
            vectors=vectors,
            rasters=self.layers.rasters,
            reports=self.layers.reports,
            source=self.layers.source,
        )

    def _check_nearest(
        self, kind: str, far: np.ndarray, found: Nearest, outside: list[str]
    ) -> None:
        """Add ``kind`` to ``outside`` when the nearest features of ``far`` may leave its window.

        ``far``, ``found``: the geometries with no feature of ``kind`` within the reach
        (the window holds the others' nearest features, since it holds the region), and
        their nearest features where known (:func:`~gis_sw.around.split_nearest`).
        """
        need = far_box(far, found, self._geoms[kind], self._trees[kind])
        if need is None or not contains(self.windows[kind], need):
            outside.append(kind)

    # -- screening ------------------------------------------------------------------------------

    def screen(
        self,
        proposals: Proposals,
        *,
        select: Sequence[str] | None = None,
        ignore: Sequence[str] | None = None,
        waivers: Sequence[Waiver] | str | Path | None = None,
        siting: bool = True,
        today: dt.date | None = None,
    ) -> Screening:
        """Screen ``proposals`` against every selected rule, on the proposals' neighbourhood.

        Parameters
        ----------
        proposals
            In the working CRS (:func:`read_proposals`, or
            :func:`gis_sw.layers.build.make_proposals`).
        select, ignore
            Rule id prefixes to run / skip.
        waivers
            Reviewed exceptions: loaded :class:`~gis_sw.analysis.waivers.Waiver` records, or
            the path of a waivers TOML/CSV.
        siting
            Let the screening site a device of each class on the parcels the devices lie
            on (computed when :attr:`Screening.siting` is first read, not here).
        today
            The day waivers expire against (default: today, UTC).

        Returns
        -------
        Screening
            The findings; what the outputs draw besides is computed when first asked for.

        Raises
        ------
        GisSwError
            Bad input found by a check, or an unreadable waivers file.
        """
        local = self.local(proposal_geoms(proposals), proposal_ids=proposals.ids)
        findings = run_rules(
            local,
            proposals,
            self.ruleset,
            select=list(select) if select else None,
            ignore=list(ignore) if ignore else None,
            context=CheckContext(local, proposals, self.ruleset, shared=self._shared),
        )
        results: list[WaiverResult] | None = None
        if waivers is not None:
            if isinstance(waivers, str | Path):
                from gis_sw.analysis.registry import RULES

                waivers = load_waivers(waivers, known_rules={r.rule_id for r in RULES})
            findings, results = apply_waivers(findings, waivers, today=today)
        return Screening(
            self,
            proposals,
            findings,
            waiver_results=None if results is None else tuple(results),
            with_siting=siting,
            screened_layers=local,
        )

    # -- parcels and siting ---------------------------------------------------------------------

    def parcel(self, parcel_id: str) -> gpd.GeoDataFrame:
        """Return the parcel with this id (one row).

        Raises
        ------
        LayerError
            When no parcel has this id (or there is no parcels layer).
        """
        row = self._parcel_row.get(str(parcel_id))
        if row is None:
            raise LayerError(
                Problem(
                    "parcels",
                    f"no parcel with parcel_id {parcel_id!r}",
                    "check the id against the parcels layer's parcel_id column",
                )
            )
        return self._frames["parcels"].iloc[[row]]

    def siting(
        self,
        parcel_ids: Sequence[str],
        *,
        device_classes: Sequence[str] = (DeviceClass.ROOF, DeviceClass.VEHICLE),
        depth_ft: float | None = None,
    ) -> dict[DeviceClass, gpd.GeoDataFrame]:
        """Where on each parcel a device of each class may go, from the parcels' neighbourhood.

        As :func:`gis_sw.analysis.siting.siting_by_class` on the whole town.

        Raises
        ------
        LayerError
            When a parcel id is unknown.
        ValueError
            For an unknown device class or a negative depth.
        """
        lots = [self.parcel(p).geometry.iloc[0] for p in parcel_ids]
        return siting_by_class(
            self.local(lots),
            self.ruleset,
            parcel_ids=list(parcel_ids),
            device_classes=tuple(device_classes),
            depth_ft=depth_ft,
        )

    def siting_polygons(
        self,
        parcel_ids: Sequence[str] | None = None,
        *,
        device_class: str = DeviceClass.ROOF,
        depth_ft: float | None = None,
    ) -> gpd.GeoDataFrame:
        """Return where on each parcel (default: every one) a device of one class may go.

        :func:`gis_sw.analysis.siting.siting_polygons` on the town, the table ``gis-sw
        siting`` writes.

        Raises
        ------
        LayerError
            When a parcel id is unknown.
        """
        return siting_polygons(
            self.layers,
            self.ruleset,
            parcel_ids=None if parcel_ids is None else list(parcel_ids),
            device_class=device_class,
            depth_ft=depth_ft,
        )


def read_town(
    source: str | Path,
    *,
    ruleset: Ruleset | str | Path | None = None,
    strict: bool = False,
    around: Proposals | None = None,
) -> Town:
    """Read and validate a town's layers once (all of them, or only around some proposals).

    Parameters
    ----------
    source
        A layers manifest (``layers.toml``), a GeoPackage of town layers, or a folder with a
        ``layers.toml``.
    ruleset
        A :class:`~gis_sw.ruleset.Ruleset`, a ruleset name or TOML path (default: Mount
        Pleasant, NY).
    strict
        Refuse invalid geometries instead of repairing them.
    around
        Read only the features :meth:`Town.local` can take for these proposals
        (:mod:`gis_sw.around`): the findings of :meth:`Town.screen` of them are those of
        the whole town, and the town refuses to screen anything whose neighbourhood leaves
        what was read.  Validation then sees only those features.  None: the whole town.

    Raises
    ------
    GisSwError
        For a missing or unreadable source, a bad manifest or ruleset, or invalid layers.
    """
    rules = as_ruleset(ruleset)
    if around is None:
        return Town(read_layers(source, ruleset=rules, strict=strict), rules)
    layers, windows = read_around(
        source,
        ruleset=rules,
        strict=strict,
        geoms=proposal_geoms(around),
        devices=np.asarray(around.devices.geometry.to_numpy(), dtype=object),
        proposal_ids=around.ids,
        reach_ft=_largest_distance_ft(rules) + REACH_MARGIN_FT,
    )
    town = Town(layers, rules)
    town.windows = windows
    return town


def read_proposals(
    path: str | Path,
    *,
    ruleset: Ruleset | str | Path | None = None,
    crs: Any = None,
    strict: bool = False,
) -> Proposals:
    """Read, reproject and validate proposals (:func:`gis_sw.layers.read.read_proposals`).

    Raises
    ------
    GisSwError
        For a missing or unreadable file, no CRS, or invalid layers.
    """
    return _read_proposals(path, ruleset=as_ruleset(ruleset), crs=crs, strict=strict)


def setback_lines(town: Town, parcel_id: str, device_class: str = "roof") -> gpd.GeoDataFrame:
    """Return the setback lines that cross a lot, each with its reason (lot's neighbourhood).

    :func:`gis_sw.analysis.setbacks.setback_lines` (columns
    :data:`~gis_sw.analysis.setbacks.SETBACK_COLUMNS`) on :meth:`Town.local` of the lot.

    Raises
    ------
    LayerError
        When the parcel id is unknown.
    ValueError
        For an unknown device class.
    """
    lot = town.parcel(parcel_id).geometry.iloc[0]
    return lines_of_setbacks(
        lot, town.local([lot]), town.ruleset, parcel_id=str(parcel_id), device_class=device_class
    )
