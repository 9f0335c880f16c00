"""Waivers: TOML and CSV, matching by finding id or rule + subject, expiry, never dropping."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import geopandas as gpd
import pytest

from gis_sw.analysis.engine import complete_findings
from gis_sw.analysis.findings import make_findings, tripping
from gis_sw.analysis.registry import RULES
from gis_sw.analysis.waivers import Waiver, WaiverError, WaiverStatus, apply_waivers, load_waivers
from gis_sw.errors import GisSwError
from gis_sw.ruleset import Ruleset

RULE_IDS = {r.rule_id for r in RULES}
TODAY = dt.date(2026, 11, 29)


def findings(ruleset: Ruleset) -> gpd.GeoDataFrame:
    rows = make_findings(
        "SW106",
        ruleset.working_crs,
        proposal_id=["P-1", "P-1", "P-2"],
        subject_id=["P-1:floodplain", "P-1:wetlands", "P-2:floodplain"],
        outcome=["required", "fail", "required"],
        message=["a", "b", "c"],
    )
    return complete_findings(rows, ruleset)


def test_load_toml(tmp_path: Path) -> None:
    path = tmp_path / "waivers.toml"
    path.write_text(
        '[[waiver]]\nfinding_id = "abc123"\nreason = "Engineer letter"\nexpires = 2026-12-31\n\n'
        '[[waiver]]\nrule_id = "sw106"\nsubject_id = "P-1:floodplain"\nproposal_id = "P-1"\n'
        'reason = "Chapter 108 permit issued"\n',
        encoding="utf-8",
    )
    waivers = load_waivers(path, known_rules=RULE_IDS)
    assert waivers[0] == Waiver(
        reason="Engineer letter",
        finding_id="abc123",
        expires=dt.date(2026, 12, 31),
        where=f"{path} [[waiver]] #1",
    )
    assert (waivers[1].rule_id, waivers[1].subject_id, waivers[1].proposal_id) == (
        "SW106",
        "P-1:floodplain",
        "P-1",
    )
    assert waivers[1].expires is None


def test_load_csv(tmp_path: Path) -> None:
    path = tmp_path / "waivers.csv"
    path.write_text(
        "finding_id,rule_id,subject_id,proposal_id,reason,expires\n"
        ",SW106,P-2:floodplain,,Floodplain permit FP-12,2027-01-31\n"
        "deadbeef00000000,,,,Reviewed on site,\n",
        encoding="utf-8",
    )
    waivers = load_waivers(path, known_rules=RULE_IDS)
    assert [w.rule_id for w in waivers] == ["SW106", None]
    assert waivers[0].expires == dt.date(2027, 1, 31)
    assert waivers[1].finding_id == "deadbeef00000000"
    assert waivers[1].where == f"{path} line 3"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param('[[waiver]]\nfinding_id = "x"\n', "no reason given", id="no-reason"),
        pytest.param(
            '[[waiver]]\nrule_id = "SW106"\nreason = "r"\n',
            "needs finding_id, or rule_id and subject_id",
            id="rule-without-subject",
        ),
        pytest.param(
            '[[waiver]]\nrule_id = "SW999"\nsubject_id = "P"\nreason = "r"\n',
            "'SW999' is not a rule",
            id="unknown-rule",
        ),
        pytest.param(
            '[[waiver]]\nfinding_id = "x"\nreason = "r"\nexpires = "31/12/2026"\n',
            "is not a date",
            id="bad-date",
        ),
        pytest.param(
            '[[waiver]]\nfinding_id = "x"\nreason = "r"\nuntil = 2026-01-01\n',
            "unknown field(s) until",
            id="unknown-field",
        ),
        pytest.param("[[waiver]\n", "is not valid TOML", id="bad-toml"),
    ],
)
def test_bad_toml_entries(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "w.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WaiverError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        load_waivers(path, known_rules=RULE_IDS)
    assert isinstance(info.value, GisSwError)
    assert str(path) in str(info.value)


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(WaiverError, match="does not exist"):
        load_waivers(tmp_path / "missing.toml")
    (tmp_path / "w.json").write_text("{}", encoding="utf-8")
    with pytest.raises(WaiverError, match=r"must end in \.toml or \.csv"):
        load_waivers(tmp_path / "w.json")
    (tmp_path / "w.csv").write_text("finding_id,why\nabc,x\n", encoding="utf-8")
    with pytest.raises(WaiverError, match="no 'reason' column"):
        load_waivers(tmp_path / "w.csv")


def test_apply_by_rule_and_subject(ruleset: Ruleset) -> None:
    found = findings(ruleset)
    waiver = Waiver(reason="Chapter 108 permit FP-12", rule_id="SW106", subject_id="P-1:floodplain")
    out, results = apply_waivers(found, [waiver], today=TODAY)
    assert len(out) == len(found)  # never dropped
    row = out[out["subject_id"] == "P-1:floodplain"].iloc[0]
    assert bool(row["waived"]) is True
    assert row["waiver_reason"] == "Chapter 108 permit FP-12"
    assert out["waived"].sum() == 1
    assert results[0].status is WaiverStatus.APPLIED
    assert results[0].finding_ids == (row["finding_id"],)


def test_apply_by_finding_id_and_fail_on(ruleset: Ruleset) -> None:
    found = findings(ruleset)
    failing = found[found["outcome"] == "fail"].iloc[0]
    assert len(tripping(found, "fail")) == 1
    out, _ = apply_waivers(
        found, [Waiver(reason="ok", finding_id=failing["finding_id"], expires=TODAY)], today=TODAY
    )
    assert len(tripping(out, "fail")) == 0  # waived on its last day
    assert (
        out.loc[out["finding_id"] == failing["finding_id"], "waiver_reason"].iloc[0]
        == "ok (until 2026-11-29)"
    )


def test_expired_waiver_is_reported_not_applied(ruleset: Ruleset) -> None:
    found = findings(ruleset)
    failing = found[found["outcome"] == "fail"].iloc[0]
    expired = Waiver(
        reason="old", finding_id=failing["finding_id"], expires=TODAY - dt.timedelta(days=1)
    )
    out, results = apply_waivers(found, [expired], today=TODAY)
    assert not out["waived"].any()
    assert results[0].status is WaiverStatus.EXPIRED
    assert results[0].finding_ids == (failing["finding_id"],)
    assert len(tripping(out, "fail")) == 1


def test_unmatched_and_proposal_scope(ruleset: Ruleset) -> None:
    found = findings(ruleset)
    wrong_proposal = Waiver(
        reason="r", rule_id="SW106", subject_id="P-2:floodplain", proposal_id="P-1"
    )
    typo = Waiver(reason="r", finding_id="0000000000000000")
    out, results = apply_waivers(found, [wrong_proposal, typo], today=TODAY)
    assert [r.status for r in results] == [WaiverStatus.UNMATCHED, WaiverStatus.UNMATCHED]
    assert not out["waived"].any()
