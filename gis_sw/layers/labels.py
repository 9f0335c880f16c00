"""Names of features in messages: their id when present, else their row (``row 3``).

:func:`feature_labels` names every feature; :class:`LazyLabels` does so on first use, so
the many layers with nothing to name pay nothing (``gis-sw check`` validates a dozen).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "MAX_LISTED",
    "SOURCE_ROW",
    "Labels",
    "LazyLabels",
    "feature_labels",
    "id_text",
    "listing",
]

MAX_LISTED = 10
"""How many ids a message lists before saying ``and N more``."""


def listing(labels: Iterable[object]) -> str:
    """List ``a, b, c`` with at most :data:`MAX_LISTED` items, then ``and N more``."""
    items = [str(x) for x in labels]
    head = ", ".join(items[:MAX_LISTED])
    more = len(items) - MAX_LISTED
    return f"{head} and {more} more" if more > 0 else head


SOURCE_ROW = "_source_row"
"""Optional column holding each feature's row in the source as read (from 1): after
skipped features are left out, the rest are still named by the row a user can find."""


def feature_labels(frame: pd.DataFrame, id_column: str | None) -> pd.Series:
    """Return a name for every feature: its id when present and not blank, else ``row N``."""
    numbers = (
        frame[SOURCE_ROW].to_numpy()
        if SOURCE_ROW in frame.columns
        else np.arange(1, len(frame) + 1)
    )
    rows = pd.Series(numbers, index=frame.index).astype(str)
    rows = "row " + rows
    if id_column and id_column in frame.columns:
        ids = id_text(frame[id_column])
        named = ids.notna() & (ids.astype(object).fillna("").astype(str).str.len() > 0)
        return (id_column + " " + ids).where(named, rows)  # a blank id names no feature
    return rows


class LazyLabels:
    """:func:`feature_labels` of a frame, made on first use (most layers name no problem).

    ``labels[mask]`` is ``feature_labels(frame, id_column)[mask]``.
    """

    __slots__ = ("_frame", "_id_column", "_made")

    def __init__(self, frame: pd.DataFrame, id_column: str | None) -> None:
        self._frame = frame
        self._id_column = id_column
        self._made: pd.Series | None = None

    def __getitem__(self, key: Any) -> pd.Series:
        """Return the labels of the features ``key`` picks (a mask or positions)."""
        if self._made is None:
            self._made = feature_labels(self._frame, self._id_column)
        return self._made[key]


Labels = pd.Series | LazyLabels
"""Feature names, made or to be made."""


def id_text(series: pd.Series) -> pd.Series:
    """Ids as text, NA kept; ``101.0`` read from a Shapefile becomes ``101``."""
    if pd.api.types.is_float_dtype(series):
        whole = series.isna() | (series == np.floor(series))
        if bool(whole.all()):
            series = series.astype("Int64")
    if isinstance(series.dtype, pd.StringDtype) and series.notna().any():
        # its values are str already: what the map below gives them, without Python per value
        return series.astype("str")
    text = series.astype(object).where(series.notna(), None)
    return text.map(str, na_action="ignore")
