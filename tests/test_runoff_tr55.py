"""TR-55 formulas against the manual's worked examples (USDA NRCS TR-55, 2nd ed., 1986).

The examples share one watershed: 250 acres in Dyer County, Tennessee, 70% (175 ac) Loring
soil (group C) and 30% (75 ac) Memphis soil (group B), 25-year 24-hour rainfall 6.0 in.
"""

from __future__ import annotations

import math

import pytest

from gis_sw.analysis.runoff import rational, tr55
from gis_sw.analysis.runoff.params import HydrologyParams, parse_hydrology
from gis_sw.errors import RulesetError
from gis_sw.ruleset import Ruleset, load_ruleset, parse_ruleset


@pytest.fixture(scope="module")
def hydro() -> HydrologyParams:
    return parse_hydrology(load_ruleset())


def test_example_2_1_pasture_runoff(hydro: HydrologyParams) -> None:
    # Example 2-1 (figure 2-5): pasture, good condition: CN 74 on C, 61 on B (Table 2-2c).
    pasture = hydro.covers["pasture_good"].cn
    cn = tr55.weighted_cn([pasture["C"], pasture["B"]], [175, 75])
    assert cn == pytest.approx(70.1)  # 17,525 / 250
    assert tr55.round_half_up(cn) == 70
    assert round(tr55.runoff_depth_in(6.0, 70), 2) == 2.81  # the manual's Q = 2.81 in


def test_example_2_2_residential_runoff() -> None:
    # Example 2-2 (figure 2-6): 1/2-acre lots CN 70 (B, 75 ac) and 80 (C, 100 ac); open space
    # good CN 74 (C, 75 ac).  Weighted CN 75.2, rounded 75; Q = 3.28 in.
    cn = tr55.weighted_cn([70, 80, 74], [75, 100, 75])
    assert cn == pytest.approx(75.2)
    assert tr55.round_half_up(cn) == 75
    assert round(tr55.runoff_depth_in(6.0, 75), 2) == 3.28
    # Table 4-1: Ia for CN 75 is 0.667 in.
    assert round(tr55.initial_abstraction_in(75), 3) == 0.667


def test_example_3_1_time_of_concentration(hydro: HydrologyParams) -> None:
    # Example 3-1 (figure 3-2): P2 = 3.6 in.  Sheet flow dense grass n 0.24, 100 ft at
    # 0.01 ft/ft: 0.30 h.  Shallow concentrated unpaved, 1,400 ft at 0.01: V 1.6 ft/s,
    # 0.24 h.  Channel a 27 sq ft, pw 28.2 ft, s 0.005, n 0.05, 7,300 ft: V 2.05, 0.99 h.
    sheet = tr55.sheet_flow_time_hr(0.24, 100, 3.6, 0.01)
    v_shallow = tr55.shallow_flow_velocity_fps(0.01, hydro.shallow_flow_k["unpaved"])
    shallow = tr55.travel_time_hr(1400, v_shallow)
    v_channel = tr55.channel_velocity_fps(27, 28.2, 0.005, 0.05)
    channel = tr55.travel_time_hr(7300, v_channel)
    assert round(sheet, 2) == 0.30
    assert round(v_shallow, 1) == 1.6
    assert round(shallow, 2) == 0.24
    assert round(v_channel, 2) == 2.05
    assert round(channel, 2) == 0.99
    assert round(sheet + shallow + channel, 2) == 1.53  # Tc of the example


def test_flow_path_segments_split_at_sheet_limit() -> None:
    segs = tr55.flow_path_segments(
        1500.0, 0.01, sheet_n=0.24, sheet_max_ft=100.0, p2_in=3.6, shallow_k=16.1345
    )
    assert [s.kind for s in segs] == [tr55.FlowKind.SHEET, tr55.FlowKind.SHALLOW]
    assert [s.length_ft for s in segs] == [100.0, 1400.0]
    assert round(sum(s.travel_time_hr for s in segs), 2) == 0.54  # 0.30 + 0.24 of Example 3-1
    short = tr55.flow_path_segments(
        100.0, 0.01, sheet_n=0.24, sheet_max_ft=100.0, p2_in=3.6, shallow_k=16.1345
    )
    assert len(short) == 1  # exactly 100 ft: all sheet flow


def test_example_4_1_peak_discharge(hydro: HydrologyParams) -> None:
    # Example 4-1 (figure 4-1): Am 0.39 sq mi, CN 75, Tc 1.53 h, Type II, P 6.0 in:
    # Ia 0.667, Ia/P 0.11, qu 270 csm/in read off Exhibit 4-II, Q 3.28 in, Fp 1.0,
    # qp = 345 cfs.  The Table F-1 equation gives qu 268.6, within the chart's reading.
    q = tr55.runoff_depth_in(6.0, 75)
    ia_p = tr55.initial_abstraction_in(75) / 6.0
    assert round(ia_p, 2) == 0.11
    up = tr55.unit_peak_discharge(1.53, ia_p, hydro.unit_peak["Type II"])
    assert up.qu_csm_in == pytest.approx(270, rel=0.01)
    qp = tr55.peak_discharge_cfs(up.qu_csm_in, 250 / 640, q, 1.0)
    assert qp == pytest.approx(345, rel=0.01)


def test_type_iii_unit_peak_at_one_hour_is_ten_to_c0(hydro: HydrologyParams) -> None:
    # log10(Tc) = 0 at Tc = 1 h, so qu = 10^C0: Table F-1 Type III, Ia/P 0.10: C0 2.47317.
    table = hydro.unit_peak["Type III"]
    up = tr55.unit_peak_discharge(1.0, 0.10, table)
    assert up.qu_csm_in == pytest.approx(10**2.47317)
    # Ia/P below 0.10 and Tc below 0.1 h are held at the table's limits.
    low = tr55.unit_peak_discharge(0.05, 0.02, table)
    assert (low.ia_p_used, low.tc_hr_used) == (0.10, 0.1)
    expected = 10 ** (2.47317 - 0.51848 * -1 - 0.17083 * 1)
    assert low.qu_csm_in == pytest.approx(expected)
    # halfway between rows 0.30 and 0.35 the coefficients are averaged
    mid = tr55.unit_peak_discharge(1.0, 0.325, table)
    assert mid.c0 == pytest.approx((2.39628 + 2.35477) / 2)


@pytest.mark.parametrize(
    ("rain_in", "cn", "expected_in"),
    [
        pytest.param(0.2, 90, 0.0, id="rain-below-initial-abstraction-no-runoff"),
        pytest.param(2.0 / 9.0, 90, 0.0, id="rain-exactly-ia-no-runoff"),
        pytest.param(6.0, 98, 5.76, id="impervious-98-on-6-in"),
    ],
)
def test_runoff_depth_edges(rain_in: float, cn: float, expected_in: float) -> None:
    assert round(tr55.runoff_depth_in(rain_in, cn), 2) == expected_in


@pytest.mark.parametrize(
    ("value", "dual", "expected"),
    [
        ("B/D", "undrained", "D"),
        ("B/D", "drained", "B"),
        (" c ", "undrained", "C"),
        ("X", "undrained", None),
        (None, "undrained", None),
    ],
)
def test_soil_group(value: object, dual: str, expected: str | None) -> None:
    assert tr55.soil_group(value, dual=dual) == expected


def test_rational_intensity_from_type_iii_mass_curve(hydro: HydrologyParams) -> None:
    curve = hydro.mass_curve
    # The whole 24 h window holds the whole storm: i = P / 24.
    assert rational.intensity_in_hr(6.0, 24.0, curve) == pytest.approx(6.0 / 24.0)
    # A 1 h window centred on hour 12: 2 x (0.5 / 24) x (24.04 / (2 x 0.5 + 0.04))^0.75.
    frac = 2 * (0.5 / 24) * (24.04 / 1.04) ** 0.75
    assert rational.intensity_in_hr(6.0, 1.0, curve) == pytest.approx(6.0 * frac)
    assert rational.mass_curve_fraction(12.0, curve) == pytest.approx(0.5)
    assert rational.mass_curve_fraction(0.0, curve) == pytest.approx(0.0)
    assert rational.rational_peak_cfs(0.95, 4.0, 0.5) == pytest.approx(1.9)
    with pytest.raises(ValueError, match="above 0"):
        rational.intensity_in_hr(6.0, 0.0, curve)


def test_water_quality_volume_formula() -> None:
    # NYS SMDM Table 4.1: WQv = P Rv A / 12, Rv = 0.05 + 0.009 I.  1 acre, 50% impervious,
    # P 1.5 in: Rv 0.5, WQv = 1.5 x 0.5 x 43,560 / 12 = 2,722.5 cu ft.
    assert rational.volumetric_runoff_coefficient(50) == pytest.approx(0.5)
    assert rational.water_quality_volume_cf(1.5, 50, 43_560) == pytest.approx(2722.5)


def test_ruleset_hydrology_section_parsed(hydro: HydrologyParams) -> None:
    assert hydro.covers["impervious"].cn == {"A": 98, "B": 98, "C": 98, "D": 98}
    assert hydro.covers["open_space_good"].cn["B"] == 61
    assert hydro.covers["woods_good"].cn["D"] == 77
    assert hydro.cover_key("Lawn") == "open_space_good"
    assert hydro.cover_key("unknown") is None
    assert hydro.dual_hsg == "undrained"
    assert hydro.min_tc_hr == 0.1


def _broken(ruleset: Ruleset, **changes: object) -> Ruleset:
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in ruleset.raw.items()}
    hydro = dict(data["hydrology"])
    hydro.update(changes)
    data["hydrology"] = hydro
    return parse_ruleset(data)


def test_bad_hydrology_section_names_every_problem(ruleset: Ruleset) -> None:
    broken = _broken(ruleset, dual_hsg="sometimes", default_cover="jungle", wqv_rainfall_in="x")
    with pytest.raises(RulesetError) as err:
        parse_hydrology(broken)
    text = str(err.value)
    assert "dual_hsg = 'sometimes'" in text
    assert "default_cover = 'jungle'" in text
    assert "wqv_rainfall_in = 'x'" in text
    assert "3 problem(s)" in text


def test_missing_hydrology_section(ruleset: Ruleset) -> None:
    data = {k: v for k, v in ruleset.raw.items() if k != "hydrology"}
    with pytest.raises(RulesetError, match=r"no \[hydrology\] section"):
        parse_hydrology(parse_ruleset(data))


def test_cn_out_of_range() -> None:
    with pytest.raises(ValueError, match="curve number"):
        tr55.potential_retention_in(0)
    assert math.isclose(tr55.potential_retention_in(100), 0.0)
