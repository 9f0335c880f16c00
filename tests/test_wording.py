"""Numbers in sentences keep a measured figure and its limit apart (§ 183-12A's 250 sq ft)."""

from __future__ import annotations

import pytest

from gis_sw.analysis.wording import decimals_apart, figure_pair, fmt_acres, fmt_sqft, fmt_usd


@pytest.mark.parametrize(
    ("measured", "limit", "base", "expected"),
    [
        pytest.param(249.99, 250.0, 0, ("249.99", "250.00"), id="249.99-below-250"),
        pytest.param(250.0, 250.0, 0, ("250", "250"), id="250-at-250"),
        pytest.param(250.01, 250.0, 0, ("250.01", "250.00"), id="250.01-above-250"),
        pytest.param(1.0, 1.0, 2, ("1.00", "1.00"), id="1-acre-at-1-acre"),
        pytest.param(43_559.0 / 43_560.0, 1.0, 2, ("0.99998", "1.00000"), id="43559-sqft-vs-acre"),
        pytest.param(5.0000046, 5.0, 2, ("5.000005", "5.000000"), id="a-hair-over-5-acres"),
        pytest.param(12_000.4, 250.0, 0, ("12,000", "250"), id="far-apart-no-decimals"),
    ],
)
def test_figure_pair(measured: float, limit: float, base: int, expected: tuple[str, str]) -> None:
    assert figure_pair(measured, limit, base=base) == expected


def test_decimals_stop_at_a_millionth() -> None:
    assert decimals_apart(5.0 + 1e-12, 5.0) == 6


def test_fmt_sqft_against_limit() -> None:
    assert fmt_sqft(249.99) == "250"
    assert fmt_sqft(249.99, against_sqft=250.0) == "249.99"
    assert fmt_sqft(249.9) == "249.9"


def test_fmt_acres_against_limit() -> None:
    assert fmt_acres(217_801.0) == "5.00"
    assert fmt_acres(217_801.0, against_acres=5.0) == "5.00002"
    assert fmt_acres(43_560.0, against_acres=1.0) == "1.00"


def test_fmt_usd() -> None:
    assert fmt_usd(1250) == "$1,250.00"
