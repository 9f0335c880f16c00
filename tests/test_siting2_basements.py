"""Basement status read from whole columns equals the row-by-row reading it replaced."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gis_sw.analysis.buildings import BASEMENT_COLUMNS, basement_status


def _row_by_row(frame: pd.DataFrame) -> tuple[list[object], list[str]]:
    """The reading of the law, one building at a time (the reference)."""
    qualifies: list[object] = []
    why: list[str] = []
    for _, row in frame.iterrows():
        values = [
            None if c not in frame.columns or pd.isna(row[c]) else bool(row[c])
            for c in BASEMENT_COLUMNS
        ]
        basement, storage = values
        if basement is True:
            qualifies.append(True)
            why.append("a habitable basement")
        elif storage is True:
            qualifies.append(True)
            why.append("a below-ground storage area")
        elif basement is False and storage is False:
            qualifies.append(False)
            why.append("")
        else:
            qualifies.append(None)
            why.append(
                " and ".join(c for c, v in zip(BASEMENT_COLUMNS, values, strict=True) if v is None)
            )
    return qualifies, why


CHOICES = [True, False, None]


@pytest.mark.parametrize("dtype", ["boolean", "object", "float"])
def test_every_combination_as_row_by_row(dtype: str) -> None:
    pairs = [(b, s) for b in CHOICES for s in CHOICES]
    basement = [b for b, _ in pairs]
    storage = [s for _, s in pairs]
    if dtype == "float":
        frame = pd.DataFrame(
            {
                "habitable_basement": [np.nan if v is None else float(v) for v in basement],
                "below_ground_storage": [np.nan if v is None else float(v) for v in storage],
            }
        )
    else:
        frame = pd.DataFrame(
            {
                "habitable_basement": pd.Series(basement, dtype=dtype),
                "below_ground_storage": pd.Series(storage, dtype=dtype),
            }
        )
    qualifies, why = basement_status(frame)
    expected_q, expected_why = _row_by_row(frame)
    assert qualifies.tolist() == expected_q
    assert why.tolist() == expected_why
    assert qualifies.dtype == object
    assert why.dtype == object
    # (None, None) names both columns; (False, None) the storage column alone
    assert why[pairs.index((None, None))] == "habitable_basement and below_ground_storage"
    assert why[pairs.index((False, None))] == "below_ground_storage"
    assert qualifies[pairs.index((False, True))] is True


def test_missing_column_and_empty_frame() -> None:
    frame = pd.DataFrame({"habitable_basement": pd.Series([False, True, None], dtype="boolean")})
    qualifies, why = basement_status(frame)
    assert qualifies.tolist() == [None, True, None]
    assert why.tolist() == [
        "below_ground_storage",
        "a habitable basement",
        "habitable_basement and below_ground_storage",
    ]
    empty_q, empty_why = basement_status(frame.iloc[:0])
    assert len(empty_q) == len(empty_why) == 0
