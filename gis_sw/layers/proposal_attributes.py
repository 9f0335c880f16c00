"""Proposal attributes from two places, in one way: the disturbance layer and the table.

:func:`split_attributes` takes the attribute columns (``land_use``, ``approved_swppp`` ...)
off a disturbance layer, one row per proposal; the features of one proposal must agree
(empty values aside).  :func:`merge_attributes` joins those rows to a GeoPackage's
``proposals`` table: the table wins where it gives a value, the layer fills what the table
leaves empty, and a proposal given two different values (compared as their logical type,
so ``yes`` and ``true`` agree) is one problem naming every such proposal and column.

Both are vectorised over proposals (a town's 20,000 pending applications).
"""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd

from gis_sw.errors import Problem
from gis_sw.layers.proposals import ATTRIBUTE_COLUMNS
from gis_sw.layers.validate import MAX_LISTED, listing
from gis_sw.layers.values import parse_bool


def _text(values: pd.Series) -> pd.Series:
    """Each value as stripped text (dates as ISO), None when empty or NA."""
    if pd.api.types.is_datetime64_any_dtype(values):
        text = values.dt.strftime("%Y-%m-%dT%H:%M:%S").str.replace("T00:00:00", "", regex=False)
        return text.astype(object).where(values.notna(), None)
    text = values.astype(object).map(lambda v: None if v is None else str(v).strip())
    text = text.where(values.notna().to_numpy(dtype=bool), None)
    return text.where(text != "", None)


def split_attributes(
    disturbance: gpd.GeoDataFrame, name: str, problems: list[Problem]
) -> tuple[gpd.GeoDataFrame, pd.DataFrame | None]:
    """Proposal attribute columns of a disturbance layer, one row per proposal.

    Returns
    -------
    (disturbance without the attribute columns, attributes or None when it has none)
    """
    present = [c for c in ATTRIBUTE_COLUMNS if c in disturbance.columns]
    if not present:
        return disturbance, None
    ids = disturbance["proposal_id"].astype(str).reset_index(drop=True)
    out = pd.DataFrame({"proposal_id": sorted(pd.unique(ids))})
    for column in present:
        values = disturbance[column].reset_index(drop=True)
        text = _text(values)
        given = text.notna().to_numpy(dtype=bool)
        if not given.any():  # the column is there but holds nothing (an export's empty field)
            out[column] = values.iloc[:0].reindex(range(len(out))).to_numpy()
            continue
        pairs = pd.DataFrame({"pid": ids[given], "text": text[given], "value": values[given]})
        distinct = pairs.drop_duplicates(["pid", "text"])
        counts = distinct["pid"].value_counts(sort=False)
        split = sorted(counts.index[counts > 1])
        for pid in split[:MAX_LISTED]:
            seen = distinct.loc[distinct["pid"] == pid, "text"]
            problems.append(
                Problem(
                    name,
                    f"proposal {pid!r} has different {column} values on its features: "
                    f"{listing(seen)}.",
                    f"give every feature of a proposal the same {column} (or leave all "
                    "but one empty).",
                )
            )
        if len(split) > MAX_LISTED:
            problems.append(
                Problem(
                    name,
                    f"{len(split) - MAX_LISTED} more proposal(s) have different {column} "
                    f"values on their features: {listing(split[MAX_LISTED:])}.",
                    f"give every feature of a proposal the same {column}.",
                )
            )
        first = distinct.drop_duplicates("pid").set_index("pid")["value"]
        out[column] = out["proposal_id"].map(first)
    return disturbance.drop(columns=present), out


def _comparable(values: pd.Series, kind: str) -> pd.Series:
    """Values as their logical type for comparison; text where they do not parse."""
    text = _text(values)
    if kind == "bool":

        def parsed(value: object) -> object:
            try:
                return parse_bool(value)
            except ValueError:
                return value

        return values.astype(object).map(parsed).where(text.notna(), None)
    if kind == "float":
        numbers = pd.to_numeric(values, errors="coerce")
        return numbers.astype(object).where(numbers.notna(), text)
    if kind == "date":
        dates = pd.to_datetime(values, errors="coerce", format="mixed")
        return dates.astype(object).where(dates.notna(), text)
    if kind == "str" and values.dtype.kind == "f":
        return (
            values.astype(object)
            .where(values.notna(), None)
            .map(lambda v: str(int(v)) if isinstance(v, float) and v.is_integer() else v)
        )
    return text


def merge_attributes(
    table: pd.DataFrame | None,
    carried: pd.DataFrame | None,
    *,
    table_name: str,
    problems: list[Problem],
) -> pd.DataFrame | None:
    """Return the proposals table, filled from the disturbance layer's attribute columns.

    A value in the table wins; a value only on the disturbance layer is used; the same
    proposal given different values in both is a problem (one, listing them all).
    """
    if carried is None or table is None:
        return carried if table is None else table
    if "proposal_id" not in table.columns or table["proposal_id"].duplicated().any():
        return table  # the table's own validation names the missing or repeated ids
    ids = table["proposal_id"].astype(str)
    merged = table.assign(proposal_id=ids).set_index("proposal_id")
    layer = carried.set_index("proposal_id")
    union = list(merged.index) + sorted(set(layer.index) - set(merged.index))
    merged = merged.reindex(union)
    layer = layer.reindex(union)
    conflicts: list[str] = []
    for column in layer.columns:
        if column not in merged.columns:
            merged[column] = layer[column]
            continue
        in_table = _text(merged[column]).notna().to_numpy(dtype=bool)
        in_layer = _text(layer[column]).notna().to_numpy(dtype=bool)
        kind = ATTRIBUTE_COLUMNS[column]
        both = in_table & in_layer
        if both.any():
            a = _comparable(merged[column][both], kind).to_numpy(dtype=object)
            b = _comparable(layer[column][both], kind).to_numpy(dtype=object)
            differ = np.array([x != y for x, y in zip(a, b, strict=True)], dtype=bool)
            for pid, x, y in zip(
                merged.index[both][differ],
                merged[column][both][differ],
                layer[column][both][differ],
                strict=True,
            ):
                conflicts.append(f"{pid} {column} = {y!r} on disturbance, {x!r} in the table")
        fill = ~in_table & in_layer
        if fill.any():
            values = merged[column].astype(object)
            values[fill] = layer[column][fill].astype(object)
            merged[column] = values
    if conflicts:
        problems.append(
            Problem(
                table_name,
                "the disturbance layer and the proposals table give different values for "
                f"the same proposal: {listing(conflicts)}.",
                "give each attribute in one place, or make the two agree (where both give "
                "one, the proposals table's value is the one read).",
            )
        )
    return merged.reset_index()
