"""Faster writers give what the cell-by-cell ones gave (issue 14: 20,000 proposals)."""

from __future__ import annotations

import random
import textwrap

import numpy as np
import pandas as pd

from gis_sw.outputs.console import wrap
from gis_sw.outputs.csvcells import csv_cell, csv_frame


def test_wrap_equals_textwrap_on_random_ascii_texts() -> None:
    """ASCII words (the path that skips the Unicode-space test), hyphens, long words."""
    rng = random.Random(183)
    for _ in range(3000):
        words = [
            "".join(rng.choice("abcx.,()§-=+") for _ in range(rng.choice([1, 2, 5, 13, 40, 99])))
            for _ in range(rng.randint(1, 50))
        ]
        text = " ".join(words).replace("§", "s")
        first = " " * rng.choice([0, 2, 11])
        rest = " " * rng.choice([0, 2, 11])
        width = rng.choice([20, 60, 100])
        expected = textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest)
        assert wrap(text, width, initial_indent=first, subsequent_indent=rest) == expected, text


def _cell_by_cell(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(csv_cell, na_action="ignore")
    return out


def test_csv_frame_equals_cell_by_cell() -> None:
    rng = np.random.default_rng(14)
    n = 5000
    ids = np.array([f"P-{i:05d}" for i in rng.integers(0, 300, n)], dtype=object)
    ids[rng.random(n) < 0.01] = "=HYPERLINK(1)"
    ids[rng.random(n) < 0.01] = "-12.5"  # a plain number is left as it is
    ids[rng.random(n) < 0.01] = None
    mixed = np.array([1.5, "+x", None, "lawn"], dtype=object)[rng.integers(0, 4, n)]
    frame = pd.DataFrame(
        {
            "proposal_id": ids,
            "cover": pd.Series(np.array(["lawn", "woods"])[rng.integers(0, 2, n)], dtype="string"),
            "mixed": mixed,
            "lists": [[1, 2]] * n,  # unhashable: judged cell by cell
            "area_sqft": rng.uniform(0, 1e5, n),
        }
    )
    out = csv_frame(frame)
    pd.testing.assert_frame_equal(out, _cell_by_cell(frame))
    assert (out["proposal_id"] == "'=HYPERLINK(1)").sum() == (ids == "=HYPERLINK(1)").sum() > 0
    assert (out["mixed"] == "'+x").sum() == (mixed == "+x").sum() > 0
    assert out["cover"].tolist() == frame["cover"].tolist()
