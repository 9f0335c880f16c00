"""CheckContext: what every check receives, with shared derived data computed once.

Checks are pure functions of (layers, proposals, ruleset).  Several need the same derived
geometry (the union of each proposal's disturbance, the parcels it touches); those live here
as cached properties, or in :meth:`CheckContext.memo` for module-specific results.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from gis_sw.layers.layerset import LayerSet
from gis_sw.layers.proposals import Proposals
from gis_sw.ruleset import Ruleset

T = TypeVar("T")

TOWN_CACHE_SIZE = 256
"""Entries of one family :meth:`CheckContext.town_cache` keeps (the oldest go first)."""


@dataclass(eq=False)
class CheckContext:
    """Inputs of a check run plus a cache of derived data."""

    layers: LayerSet
    proposals: Proposals
    ruleset: Ruleset
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)
    shared: dict[str, Any] = field(default_factory=dict, repr=False)
    """A cache that outlives the context (``gis_sw.Town`` keeps one across screenings)."""

    @property
    def crs(self) -> Any:
        """Return the working CRS (the ruleset's)."""
        return self.ruleset.working_crs

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """Compute once per context and reuse (``key`` should name the module)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]  # type: ignore[no-any-return,unused-ignore]

    def town_memo(self, key: str, depends: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """Compute once while the objects ``depends`` are the same ones, across contexts.

        For what derives from the town's layers alone (a raster prepared for tracing): a
        long-lived :class:`gis_sw.Town` passes its own :attr:`shared` dict, so a re-check
        does not derive it again.  The objects are held with the value and compared by
        identity, so a new layer or raster computes anew.
        """
        held: tuple[tuple[Any, ...], Any] | None = self.shared.get(key)
        if held is not None and _same(held[0], depends):
            return held[1]  # type: ignore[no-any-return,unused-ignore]
        value = compute()
        self.shared[key] = (depends, value)
        return value

    def town_cache(
        self, family: str, key: Hashable, depends: tuple[Any, ...], compute: Callable[[], T]
    ) -> T:
        """Compute once per ``key`` of ``family`` while ``depends`` are the same objects.

        As :meth:`town_memo`, for values derived from the town's layers and a small key
        (which features are near, the bytes of a geometry): a long-lived
        :class:`gis_sw.Town` keeps the last :data:`TOWN_CACHE_SIZE` of each family, so a
        re-check while a device is dragged derives nothing the unmoved geometries gave.
        """
        lock = self.shared.setdefault("cache.lock", threading.Lock())
        with lock:
            store = self.shared.setdefault(f"cache.{family}", {})
            held = store.get(key)
        if held is not None and _same(held[0], depends):
            return held[1]  # type: ignore[no-any-return,unused-ignore]
        value = compute()
        with lock:
            store.pop(key, None)
            while len(store) >= TOWN_CACHE_SIZE:
                store.pop(next(iter(store)))
            store[key] = (depends, value)
        return value

    def citation(self, rule_id: str) -> str:
        """Return the ruleset's citation of ``rule_id``."""
        return self.ruleset.citation(rule_id)

    @cached_property
    def proposal_ids(self) -> list[str]:
        """Every proposal id, sorted (:attr:`Proposals.ids`, computed once per context)."""
        return self.proposals.ids

    @cached_property
    def disturbance_union(self) -> gpd.GeoSeries:
        """Union of each proposal's disturbance polygons (overlaps counted once).

        Index: every proposal id (an empty polygon where a proposal has no disturbance).
        """
        dist = self.proposals.disturbance
        ids = self.proposal_ids
        if len(dist) == 0:
            empty = [shapely.Polygon()] * len(ids)
            return gpd.GeoSeries(empty, index=ids, crs=self.crs)
        pids = dist["proposal_id"].astype(str).to_numpy()
        geoms = np.asarray(dist.geometry.to_numpy(), dtype=object)
        codes, uniques = pd.factorize(pids)
        counts = np.bincount(codes, minlength=len(uniques))
        unions = np.empty(len(uniques), dtype=object)
        single = counts[codes] == 1
        unions[codes[single]] = geoms[single]  # one polygon: the union is itself
        order = np.argsort(codes, kind="stable")
        starts = np.r_[0, np.cumsum(counts)[:-1]]
        for code in np.flatnonzero(counts > 1):
            members = order[starts[code] : starts[code] + counts[code]]
            unions[code] = shapely.disjoint_subset_union_all(geoms[members])  # 40x union_all
        by_id = dict(zip(uniques, unions, strict=True))
        out = [by_id.get(pid, shapely.Polygon()) for pid in ids]
        out = [shapely.Polygon() if g is None else g for g in out]
        return gpd.GeoSeries(np.asarray(out, dtype=object), index=ids, crs=self.crs)

    @cached_property
    def disturbed_area_sqft(self) -> Any:
        """Area of each proposal's disturbance union, sq ft (pandas Series by proposal id)."""
        return self.disturbance_union.area


def _same(held: tuple[Any, ...], depends: tuple[Any, ...]) -> bool:
    """Whether two tuples hold the same objects (identity), in order."""
    return len(held) == len(depends) and all(a is b for a, b in zip(held, depends, strict=True))
