"""Build a LayerSet or Proposals from in-memory frames, normalising columns.

Readers (:mod:`gis_sw.layers.read`) end here, and so do tests and notebooks that build
geometries in code: one place decides what an absent optional column looks like.  Frames
given in code are validated as a file would be (:mod:`gis_sw.layers.proposals_memory`);
readers, whose frames are validated already, call :func:`assemble_proposals` and pass each
layer's report to :func:`make_layerset`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from gis_sw.errors import CRSError
from gis_sw.layers.layerset import LayerReport, LayerSet
from gis_sw.layers.proposals import ATTRIBUTE_COLUMNS, Proposals
from gis_sw.layers.raster import RasterLayer
from gis_sw.layers.specs import PROPOSAL_LAYERS, TOWN_LAYERS, LayerSpec
from gis_sw.layers.validate import id_text

if TYPE_CHECKING:
    from gis_sw.ruleset import Ruleset

_NA_DTYPES = {"str": "object", "bool": "boolean", "float": "float64", "int": "Int64"}


def _empty_column(kind: str, index: pd.Index) -> pd.Series:
    if kind == "date":
        return pd.Series(pd.NaT, index=index, dtype="datetime64[ns]")
    if kind == "str":
        return pd.Series([None] * len(index), index=index, dtype="object")
    if kind == "float":
        return pd.Series(np.nan, index=index, dtype="float64")
    return pd.Series([pd.NA] * len(index), index=index, dtype=_NA_DTYPES[kind])


def coerce_column(series: pd.Series, kind: str) -> pd.Series:
    """Convert a column to its logical type; values that do not convert become NA.

    Use :func:`gis_sw.layers.validate` first when bad values must be reported.
    """
    if kind == "str":
        if series.dtype.kind == "f":  # 101.0 from a Shapefile or Excel is 101, as when read
            text = id_text(series).astype("object")
            return text.where(text.notna(), None)
        if isinstance(series.dtype, pd.StringDtype) and series.notna().any():
            # str values already: as the map below gives them (its NA stays the dtype's own
            # NA when any value is text), without Python per value
            return series.astype("object")
        return series.map(lambda v: None if pd.isna(v) else str(v)).astype("object")
    if kind == "float":
        return pd.to_numeric(series, errors="coerce").astype("float64")
    if kind == "int":
        return pd.to_numeric(series, errors="coerce").astype("Int64")
    if kind == "bool":
        return _coerce_bool(series)
    if kind == "date":
        return pd.to_datetime(series, errors="coerce", format="mixed").astype("datetime64[ns]")
    raise ValueError(f"unknown column type {kind}")


def _coerce_bool(series: pd.Series) -> pd.Series:
    """:func:`coerce_column` of a ``bool`` column: yes/no spellings parsed, NA kept.

    A column that is boolean already (numpy ``bool``, pandas ``boolean``) is taken as it
    is; text is parsed once per distinct value (a town's 100,000 ``Y``/``N`` are two words),
    anything else value by value (:func:`gis_sw.layers.values.parse_bool`).

    Raises
    ------
    ValueError
        For a value that is not a yes/no spelling (validation reports those first).
    """
    from gis_sw.layers.values import parse_bool

    if isinstance(series.dtype, pd.BooleanDtype) or series.dtype == np.bool_:
        return pd.Series(series.array.astype("boolean"), index=series.index)
    if isinstance(series.dtype, pd.StringDtype):
        present = series.notna().to_numpy(dtype=bool)
        words = series[present].astype("object")
        parsed = {word: parse_bool(word) for word in pd.unique(words)}
        values = np.full(len(series), None, dtype=object)
        values[present] = words.map(parsed).to_numpy(dtype=object)
        return pd.Series(pd.array(values, dtype="boolean"), index=series.index)
    return pd.Series(pd.array([parse_bool(v) for v in series], dtype="boolean"), index=series.index)


def normalise(frame: gpd.GeoDataFrame, spec: LayerSpec, crs: CRS) -> gpd.GeoDataFrame:
    """Add absent optional columns as NA, coerce known columns, set the CRS, reset index."""
    out = frame.reset_index(drop=True).copy()
    for name, kind in {**spec.required, **spec.optional}.items():
        if name in out.columns:
            out[name] = coerce_column(out[name], kind)
        else:
            out[name] = _empty_column(kind, out.index)
    if out.crs is None:
        out = out.set_crs(crs)
    elif not CRS.from_user_input(out.crs).equals(crs):
        raise CRSError(
            f"layer {spec.kind} is in {out.crs.to_string()}, not the working CRS "
            f"{crs.to_string()}. Fix: reproject it (the readers do this for you)."
        )
    return gpd.GeoDataFrame(out, geometry=out.geometry.name, crs=crs)


def make_layerset(
    crs: CRS | str,
    vectors: Mapping[str, gpd.GeoDataFrame],
    rasters: Mapping[str, RasterLayer] | None = None,
    *,
    reports: Mapping[str, LayerReport] | None = None,
    source: str = "<memory>",
    coverage: Mapping[str, shapely.Geometry] | None = None,
    none: Collection[str] = (),
) -> LayerSet:
    """Build a LayerSet from frames already in the working CRS (tests, notebooks, readers).

    ``coverage`` gives, for a layer that maps only part of the town, the area it maps.
    ``none`` declares layers the town has none of (``["wells"]``), as ``none = true`` does
    in a layers manifest: empty layers that rules may pass on, their messages saying so.
    A layer without a report (one not read by a reader) is validated as a file's layer is
    (:func:`gis_sw.layers.proposals_memory.checked_layers`).

    Raises
    ------
    LayerError
        Naming every problem of a layer given without a report: those a layers manifest's
        layer would have (missing columns, no features in parcels or zoning, no geometry,
        repeated ids, bad values), and an optional layer with no features not in ``none``.
    CRSError
        When a frame is in another CRS than ``crs``.
    """
    from gis_sw.layers.absence import declared_none
    from gis_sw.layers.manifest_entry import LayerEntry
    from gis_sw.layers.proposals_memory import checked_layers

    crs = CRS.from_user_input(crs)
    reports = dict(reports or {})
    given = checked_layers(vectors, reports=reports, none=none, source=source)
    for kind in none:
        if kind not in reports and kind in TOWN_LAYERS:
            empty, reports[kind] = declared_none(LayerEntry(kind, none=True), working_crs=crs)
            given.setdefault(kind, empty)
    out = {}
    for kind, frame in given.items():
        spec = TOWN_LAYERS.get(kind)
        out[kind] = normalise(frame, spec, crs) if spec else frame
    return LayerSet(
        crs=crs,
        vectors=out,
        rasters=dict(rasters or {}),
        reports=reports,
        source=source,
        coverage=dict(coverage or {}),
    )


def make_proposals(
    crs: CRS | str,
    disturbance: gpd.GeoDataFrame,
    devices: gpd.GeoDataFrame | None = None,
    attributes: pd.DataFrame | None = None,
    impervious: gpd.GeoDataFrame | None = None,
    *,
    source: str = "<memory>",
    ruleset: Ruleset | None = None,
) -> Proposals:
    """Proposals from frames in the working CRS, validated as a proposals file is.

    ``attributes`` holds one row per proposal, ``proposal_id`` as a column or as the
    index.  ``ruleset``, when given, checks claimed exemptions against its letters.

    Raises
    ------
    LayerError
        Naming every problem, as :func:`gis_sw.layers.proposals_io.read_proposals` does:
        missing columns or values, no disturbance features, repeated proposal or device
        ids, dates that are not ISO or that pandas cannot hold (time-zone dates are read in
        UTC), values that are not yes/no or numbers, land uses and exemptions that are not
        the ruleset's, devices of no drawn proposal.  Geometry, a proposal row with no
        disturbance, an infinite depth and a reversed date are left to the rules, which
        answer ``review`` for them (:mod:`gis_sw.layers.proposals_memory`).
    CRSError
        When a frame is in another CRS than ``crs``.
    """
    from gis_sw.layers.proposals_memory import checked_proposals

    frames, table = checked_proposals(
        disturbance, devices, attributes, impervious, source=source, ruleset=ruleset
    )
    return assemble_proposals(
        crs,
        frames["disturbance"],
        frames.get("devices"),
        table,
        frames.get("impervious"),
        source=source,
    )


def assemble_proposals(
    crs: CRS | str,
    disturbance: gpd.GeoDataFrame,
    devices: gpd.GeoDataFrame | None = None,
    attributes: pd.DataFrame | None = None,
    impervious: gpd.GeoDataFrame | None = None,
    *,
    source: str = "<memory>",
) -> Proposals:
    """Proposals from frames a reader validated, with every optional column present."""
    crs = CRS.from_user_input(crs)
    dist = normalise(disturbance, PROPOSAL_LAYERS["disturbance"], crs)
    if dist["disturbance_id"].isna().any():
        counter = dist.groupby("proposal_id").cumcount() + 1
        fill = dist["proposal_id"].astype(str) + "-d" + counter.astype(str)
        dist["disturbance_id"] = dist["disturbance_id"].where(dist["disturbance_id"].notna(), fill)
    if devices is None:
        devices = gpd.GeoDataFrame(
            {"device_id": pd.Series(dtype="object"), "proposal_id": pd.Series(dtype="object")},
            geometry=gpd.GeoSeries([], crs=crs),
            crs=crs,
        )
    devs = normalise(devices, PROPOSAL_LAYERS["devices"], crs)
    if impervious is not None:
        impervious = normalise(impervious, PROPOSAL_LAYERS["impervious"], crs)
    if attributes is None:
        attributes = pd.DataFrame({"proposal_id": pd.Series(dtype="object")})
    attrs = pd.DataFrame(attributes).copy()
    if "geometry" in attrs.columns:
        attrs = attrs.drop(columns="geometry")
    if "proposal_id" in attrs.columns:
        attrs["proposal_id"] = attrs["proposal_id"].astype(str)
        attrs = attrs.set_index("proposal_id")
    attrs.index = attrs.index.astype(str)
    attrs.index.name = "proposal_id"
    ids = sorted(
        set(attrs.index)
        | set(dist["proposal_id"].astype(str))
        | set(devs["proposal_id"].astype(str))
    )
    attrs = attrs.reindex(ids)
    for name, kind in ATTRIBUTE_COLUMNS.items():
        if name in attrs.columns:
            attrs[name] = coerce_column(attrs[name], kind)
        else:
            attrs[name] = _empty_column(kind, attrs.index)
    return Proposals(
        crs=crs,
        disturbance=dist,
        devices=devs,
        attributes=attrs,
        impervious=impervious,
        source=source,
    )
