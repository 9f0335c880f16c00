"""Proposals and town layers given as frames, checked as the file readers check them.

:func:`gis_sw.layers.build.make_proposals` and :func:`gis_sw.layers.build.make_layerset` are
the public way to screen geometries built in code (notebooks, tests, a web page).  Their
values are checked by the file readers' own functions
(:func:`~gis_sw.layers.proposals_io.normalise_values`,
:func:`~gis_sw.layers.validate.validate_table`,
:func:`~gis_sw.layers.proposal_checks.check_attributes` and
:func:`~gis_sw.layers.proposal_checks.of_no_proposal`), and what a file would refuse for
them is the same :class:`~gis_sw.errors.LayerError` naming the layer, column, feature,
value and fix:

* dates in UTC (a time-zone-aware column, as QGIS and ArcGIS write, or text ending in
  ``Z``) are read in UTC, ids read as floats (``101.0``) are ``101``; a date pandas cannot
  hold (``9999-12-31``) or one that is not ISO (``05/13/2026``) is a problem naming the
  feature, never a traceback or a guess;
* a repeated ``proposal_id`` in the attributes or ``device_id`` among the devices is a
  problem naming it (not pandas' bare "cannot reindex on an axis with duplicate labels");
* a device of no drawn proposal is a problem (left in, it is screened as a phantom
  proposal), and a disturbance frame with no features ("has no features", as from a
  file: nothing would be screened);
* a town layer with no features: parcels and zoning are refused ("has no features", as
  from a file); an optional layer with no features is refused unless it is declared none
  (``make_layerset(..., none=["wells"])``): an empty frame may be a filter that matched
  nothing, and rules would pass on it as if the town had none.

Geometry is left as given: a feature with no location is what the rules themselves answer
``review`` for (:mod:`gis_sw.analysis.coverage`), and so are a proposal row with no
disturbance, an infinite depth and a reversed date; the town layers' values are left to the
rules and the batch, which reports bad parcels (a repeated ``parcel_id``) as its problems.
Frames that a reader already validated (a town layer with a :class:`LayerReport`) are taken
as they are.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import geopandas as gpd
import pandas as pd

from gis_sw.errors import LayerError, Problem
from gis_sw.layers.layerset import LayerReport
from gis_sw.layers.proposal_checks import ATTRIBUTE_TABLE, check_attributes, of_no_proposal
from gis_sw.layers.proposals_io import GEOMETRY_LAYERS, normalise_values
from gis_sw.layers.specs import PROPOSAL_LAYERS, TOWN_LAYERS, LayerSpec
from gis_sw.layers.validate import validate_table
from gis_sw.ruleset import Ruleset

__all__ = ["checked_layers", "checked_proposals"]

_ONE_FEATURE = "provide a layer with at least one feature."


def _attributes_of(frame: pd.DataFrame) -> pd.DataFrame:
    """Return a layer's attribute columns (no geometry) for the table checks."""
    if isinstance(frame, gpd.GeoDataFrame):
        return pd.DataFrame(frame.drop(columns=frame.geometry.name))
    return pd.DataFrame(frame)


def _checked_values(
    frame: pd.DataFrame, spec: LayerSpec, name: str, problems: list[Problem]
) -> pd.DataFrame:
    """Return a frame with its ids and dates normalised, adding the problems of its values."""
    columns = {**spec.required, **spec.optional}
    out, _, found = normalise_values(frame, spec, columns, name=name)
    problems.extend(found)
    if not found:
        problems.extend(validate_table(_attributes_of(out), spec, layer=name))
    return out


def _attribute_table(attributes: pd.DataFrame) -> pd.DataFrame:
    """Return the attributes with ``proposal_id`` as a column (it may be given as the index)."""
    table = pd.DataFrame(attributes)
    if "geometry" in table.columns:
        table = table.drop(columns="geometry")
    if "proposal_id" not in table.columns:
        table = table.rename_axis("proposal_id").reset_index()
    return table.reset_index(drop=True)


def checked_proposals(
    disturbance: gpd.GeoDataFrame,
    devices: gpd.GeoDataFrame | None,
    attributes: pd.DataFrame | None,
    impervious: gpd.GeoDataFrame | None,
    *,
    source: str,
    ruleset: Ruleset | None = None,
) -> tuple[dict[str, gpd.GeoDataFrame], pd.DataFrame | None]:
    """Return the proposals' layers and attribute table, their values checked as a file's are.

    Parameters
    ----------
    disturbance, devices, attributes, impervious
        As given to :func:`gis_sw.layers.build.make_proposals`.
    source
        Named in every problem (``disturbance [<memory>]``).
    ruleset
        When given, exemptions are checked against its letters (as a file is read).

    Returns
    -------
    (frames, attributes)
        The layers by kind (``disturbance``, ``devices``, ``impervious`` when given) and the
        attribute table with ``proposal_id`` as a column (None when not given).

    Raises
    ------
    LayerError
        Naming every problem: no disturbance features, missing required columns or values,
        repeated ids, dates that are not ISO or that pandas cannot hold, values that are not
        yes/no or numbers, land uses and exemptions that are not the ruleset's, devices of
        no drawn proposal.
    """
    problems: list[Problem] = []
    frames: dict[str, gpd.GeoDataFrame] = {}
    given = {"disturbance": disturbance, "devices": devices, "impervious": impervious}
    for kind in GEOMETRY_LAYERS:
        frame = given[kind]
        if frame is not None:
            name = f"{kind} [{source}]"
            out = _checked_values(frame, PROPOSAL_LAYERS[kind], name, problems)
            frames[kind] = gpd.GeoDataFrame(out, geometry=frame.geometry.name, crs=frame.crs)
    if not len(disturbance):  # no proposal at all: nothing would be screened, silently
        problems.append(Problem(f"disturbance [{source}]", "has no features.", _ONE_FEATURE))
    table = None
    if attributes is not None:
        name = f"{ATTRIBUTE_TABLE} [{source}]"
        spec = PROPOSAL_LAYERS[ATTRIBUTE_TABLE]
        table, _, found = normalise_values(
            _attribute_table(attributes), spec, {**spec.required, **spec.optional}, name=name
        )
        problems.extend(found)
        if not found:
            problems.extend(check_attributes(table, ruleset, name))
    if not problems:
        problems.extend(of_no_proposal(frames, source))
    if problems:
        raise LayerError(problems)
    return frames, table


def _empty_problem(kind: str, source: str) -> Problem:
    return Problem(
        f"{kind} [{source}]",
        "has no features and is not declared none: rules would pass on it as if the town "
        f"had no {kind.replace('_', ' ')}.",
        f"give its features; if the town has none, declare it: make_layerset(..., "
        f"none=[{kind!r}]); or leave it out, and rules that need it answer review.",
    )


def checked_layers(
    vectors: Mapping[str, gpd.GeoDataFrame],
    *,
    reports: Mapping[str, LayerReport],
    none: Collection[str],
    source: str,
) -> dict[str, gpd.GeoDataFrame]:
    """Return town layers given as frames, refusing empty ones a layers manifest would refuse.

    Layers with a report were read (and validated) by a reader and are returned as they
    are; so are frames of kinds that have no spec.

    Their values are not checked here: the batch reports bad parcels (a repeated
    ``parcel_id``, no geometry) as its problems, and the rules answer ``review`` for features
    with no location.

    Raises
    ------
    LayerError
        Naming parcels or zoning with no features (as a layers manifest's layer is
        refused), an optional layer with no features that is not in ``none``, and a layer
        in ``none`` that has features.
    """
    problems: list[Problem] = []
    out: dict[str, gpd.GeoDataFrame] = {}
    for kind, frame in vectors.items():
        spec = TOWN_LAYERS.get(kind)
        if spec is None or kind in reports:
            out[kind] = frame
            continue
        name = f"{kind} [{source}]"
        if kind in none and len(frame):
            problems.append(
                Problem(
                    name,
                    f"is declared none but has {len(frame):,} feature(s).",
                    f"remove {kind!r} from none=, or give an empty frame.",
                )
            )
            continue
        if not len(frame):
            if spec.required_layer:
                problems.append(Problem(name, "has no features.", _ONE_FEATURE))
            elif kind not in none:
                problems.append(_empty_problem(kind, source))
        out[kind] = frame
    if problems:
        raise LayerError(problems)
    return out
