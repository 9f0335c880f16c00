"""Issue 16, streamed write: summary.csv counted a batch of chunks at a time equals the
whole table's counts, missing layers included."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gis_sw.batch import stream_write
from gis_sw.batch.write import summary_table


def _rows(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(16)
    zone = rng.choice(np.array(["R-10", "R-20", None], dtype=object), n)
    screen = rng.choice(np.array(["clear", "constrained", "review"], dtype=object), n)
    area = np.where(np.arange(n) % 11 == 0, 0.0, 5_000.0)  # review for want of a lot
    return pd.DataFrame(
        {
            "row": np.arange(n),
            "zone_main": zone,
            "zones": np.where(pd.isna(zone), None, zone),
            "area_sqft": area,
            "screen": screen,
            "result": np.where(screen == "review", "review", "pass"),
            "notes": "",
        }
    )


def test_counts_in_batches_equal_the_whole_table(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(1_000)
    missing = ("wells", "septic_fields")
    monkeypatch.setattr(stream_write, "SUMMARY_BATCH_ROWS", 100)
    counts = stream_write._Counts(missing)
    for start in range(0, len(rows), 37):
        counts.add(rows.iloc[start : start + 37])
    assert len(counts.tables) == 9  # 1,000 rows, a table each time 100 have come
    total = counts.total()
    whole = summary_table(rows, None, None, missing=missing)
    pd.testing.assert_frame_equal(total, whole)
    usable_review = (
        (rows["screen"] == "review") & rows["zones"].notna() & (rows["area_sqft"] > 0)
    ).sum()
    missing_rows = total[total["table"] == "missing_layer"]
    assert missing_rows["count"].tolist() == [usable_review, usable_review]
    assert total.loc[total["table"] == "parcels", "count"].sum() == 1_000
