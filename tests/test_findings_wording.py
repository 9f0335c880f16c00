"""The figure-against-limit pairs the permit and phasing messages share (analysis/wording.py)."""

from __future__ import annotations

import pytest

from gis_sw.analysis.wording import acres_sqft_pair, fmt_limit, sqft_acres_pair

ACRE = 43_560.0


@pytest.mark.parametrize(
    ("area_sqft", "limit_acres", "expected"),
    [
        (ACRE - 0.01, 1.0, ("43,559.99 sq ft (just under 1 acre)", "1 acre (43,560.00 sq ft)")),
        (ACRE, 1.0, ("43,560 sq ft (1.00 acres)", "1 acre")),
        (ACRE + 0.01, 1.0, ("43,560.01 sq ft (just over 1 acre)", "1 acre (43,560.00 sq ft)")),
        (65_340.0, 1.0, ("65,340 sq ft (1.50 acres)", "1 acre")),
        (5 * ACRE - 0.004, 5.0, ("217,800 sq ft (5.00 acres)", "5 acres")),
    ],
    ids=["43,559.99", "43,560", "43,560.01", "1.5-acres", "rounds-to-the-limit"],
)
def test_sqft_acres_pair(area_sqft: float, limit_acres: float, expected: tuple[str, str]) -> None:
    assert sqft_acres_pair(area_sqft, limit_acres) == expected


@pytest.mark.parametrize(
    ("area_sqft", "expected"),
    [
        # a hundredth of a sq ft is 0.0000002 acres: past the six decimals acres read to,
        # so the acres say "just under" and the square feet keep the two apart
        (
            5 * ACRE - 0.01,
            ("just under 5.00 acres (217,799.99 sq ft)", "5.00 acres (217,800.00 sq ft)"),
        ),
        (
            5 * ACRE + 0.01,
            ("just over 5.00 acres (217,800.01 sq ft)", "5.00 acres (217,800.00 sq ft)"),
        ),
        (5 * ACRE, ("5.00 acres (217,800 sq ft)", "5.00 acres (217,800 sq ft)")),
        (5 * ACRE + 1, ("5.00002 acres (217,801 sq ft)", "5.00000 acres (217,800 sq ft)")),
    ],
    ids=["217,799.99", "217,800.01", "217,800", "217,801"],
)
def test_acres_sqft_pair(area_sqft: float, expected: tuple[str, str]) -> None:
    assert acres_sqft_pair(area_sqft, 5.0) == expected


def test_fmt_limit() -> None:
    assert [fmt_limit(v) for v in (250.0, 1.5, 43_560.0, 0.5)] == ["250", "1.5", "43,560", "0.5"]
