"""Numbers in sentences: a measured figure never reads as equal to a limit it is not equal to.

A planner reads "250 sq ft is below the 250 sq ft threshold" as a contradiction, so wherever a
measured figure meets its limit (a finding's message, a table, a map label) both are written
with as many decimals as the comparison needs: the fewest, from the figure's usual precision,
that keep the two apart when they differ (249.99 against 250 reads "249.99" and "250.00") and
no more when they are equal.  Only the sentence uses these strings; the ``measured`` and
``threshold`` columns keep the full numbers.
"""

from __future__ import annotations

import math

from gis_sw.units import SQFT_PER_ACRE

MAX_DECIMALS = 6
"""Past a millionth the two figures are the same number as far as any rule is concerned."""


def decimals_apart(measured: float, limit: float, *, base: int = 0) -> int:
    """Fewest decimals (at least ``base``) at which ``measured`` and ``limit`` read as they compare.

    Equal numbers keep ``base``; different numbers get decimals until their rounded forms
    differ, up to :data:`MAX_DECIMALS`.
    """
    m, lim = float(measured), float(limit)
    if not (math.isfinite(m) and math.isfinite(lim)) or m == lim:
        return base
    for decimals in range(base, MAX_DECIMALS + 1):
        if round(m, decimals) != round(lim, decimals):
            return decimals
    return MAX_DECIMALS


def fmt_number(value: float, decimals: int) -> str:
    """``43,560.00``: thousands separators and a fixed number of decimals."""
    return f"{float(value):,.{decimals}f}"


def figure_pair(measured: float, limit: float, *, base: int = 0) -> tuple[str, str]:
    """``measured`` and ``limit`` as text, with the decimals :func:`decimals_apart` gives."""
    decimals = decimals_apart(measured, limit, base=base)
    return fmt_number(measured, decimals), fmt_number(limit, decimals)


def fmt_sqft(area_sqft: float, *, against_sqft: float | None = None) -> str:
    """Square feet: ``134``, ``249.9``, ``43,560``; against a limit, as many decimals as needed.

    Without ``against_sqft`` whole square feet are shown unless the tenth matters (the old
    behaviour); with it, the decimals keep the figure and the limit apart.
    """
    if against_sqft is not None:
        return figure_pair(area_sqft, against_sqft)[0]
    value = round(float(area_sqft), 1)
    return f"{value:,.0f}" if value == round(value) else f"{value:,.1f}"


def fmt_acres(area_sqft: float, *, against_acres: float | None = None) -> str:
    """Acres from square feet, to 2 decimals, or more when a limit in acres needs them."""
    acres = float(area_sqft) / SQFT_PER_ACRE
    if against_acres is not None:
        return figure_pair(acres, against_acres, base=2)[0]
    return fmt_number(acres, 2)


def fmt_usd(amount: float) -> str:
    """Dollars and cents: ``$1,250.00``."""
    return f"${float(amount):,.2f}"


def fmt_limit(value: float) -> str:
    """Return a limit as the ruleset gives it: ``250``, ``1.5``, ``43,560``."""
    return f"{value:,g}"


def sqft_acres_pair(area_sqft: float, limit_acres: float) -> tuple[str, str]:
    """Return ``"43,559.99 sq ft (just under 1 acre)"`` and ``"1 acre (43,560.00 sq ft)"``.

    The area is rounded to 0.01 sq ft (the precision areas are compared at) and reads in sq
    ft and acres; when the acres alone cannot show the two apart (a hundredth of a sq ft is
    a ten-millionth of an acre), the acres say "just under/over" and the limit adds its
    square feet.
    """
    measured = round(float(area_sqft), 2)
    limit_sqft = limit_acres * SQFT_PER_ACRE
    sq, lim_sq = figure_pair(measured, limit_sqft)
    ac, lim_ac = figure_pair(measured / SQFT_PER_ACRE, limit_acres, base=2)
    unit = "acre" if limit_acres == 1 else "acres"
    if ac == lim_ac and measured != round(limit_sqft, 2):
        side = "under" if measured < limit_sqft else "over"
        return f"{sq} sq ft (just {side} {fmt_limit(limit_acres)} {unit})", (
            f"{fmt_limit(limit_acres)} {unit} ({lim_sq} sq ft)"
        )
    return f"{sq} sq ft ({ac} acres)", f"{fmt_limit(limit_acres)} {unit}"


def acres_sqft_pair(area_sqft: float, limit_acres: float) -> tuple[str, str]:
    """Return ``5.00002 acres (217,801 sq ft)`` and ``5.00000 acres (217,800 sq ft)``.

    The area as compared (rounded to 0.01 sq ft) and the limit, each in acres and sq ft
    with the decimals the comparison needs, so a figure over the limit never reads as equal
    to it.  Where the acres cannot show the two apart within :data:`MAX_DECIMALS` (a
    hundredth of a sq ft), they read "just under 5.00 acres" and the sq ft show the rest.
    """
    compared = round(float(area_sqft), 2)
    limit_sqft = limit_acres * SQFT_PER_ACRE
    acres, limit = figure_pair(compared / SQFT_PER_ACRE, limit_acres, base=2)
    sqft, limit_sq = figure_pair(compared, limit_sqft)
    if acres == limit and compared != round(limit_sqft, 2):
        # past the decimals acres read to: "just under 5.00 acres", the sq ft tell the rest
        side = "under" if compared < limit_sqft else "over"
        limit = fmt_number(limit_acres, 2)
        return f"just {side} {limit} acres ({sqft} sq ft)", f"{limit} acres ({limit_sq} sq ft)"
    return f"{acres} acres ({sqft} sq ft)", f"{limit} acres ({limit_sq} sq ft)"
