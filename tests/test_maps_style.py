"""Map styles stay apart when a sheet is printed in grey."""

from __future__ import annotations

import itertools

import pytest

from gis_sw.outputs.maps.style import PHASE_HATCHES, STYLES, luminance

FILLED = {k: s for k, s in STYLES.items() if s.facecolor != "none" and k != "site"}


@pytest.mark.parametrize(("a", "b"), list(itertools.combinations(sorted(FILLED), 2)), ids=str)
def test_two_filled_layers_differ_in_grey(a, b):
    first, second = FILLED[a], FILLED[b]
    same_pattern = (
        first.hatch == second.hatch
        and first.linestyle == second.linestyle
        and first.marker == second.marker  # a square device and a round well differ
    )
    if same_pattern:
        # plain fills must differ in lightness by at least 5 points of 100
        gap = abs(luminance(first.facecolor) - luminance(second.facecolor))
        assert gap >= 0.05, f"{a} and {b} print as the same grey ({gap:.3f})"


def test_outlines_differ_by_line_style_or_weight():
    outlines = {k: s for k, s in STYLES.items() if s.facecolor == "none"}
    keys = {(s.linestyle, round(s.linewidth, 1)) for s in outlines.values()}
    assert len(keys) == len(outlines)


def test_phases_have_distinct_hatches():
    assert len(set(PHASE_HATCHES)) == len(PHASE_HATCHES)


def test_luminance_of_black_and_white():
    assert luminance("#000000") == 0.0
    assert luminance("#ffffff") == pytest.approx(1.0)
