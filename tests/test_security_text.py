"""Ids and attribute text with control characters cannot forge console lines.

A proposal id holding an escape sequence (clear screen, colour) or a newline followed by a
made-up table row is printed with those characters escaped, by ``check`` (table and notes),
``validate --proposals`` and ``calendar``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from corpus import proposal_frames, write_town

from gis_sw.cli import cli

CLEAR = "P-1\x1b[2J\x1b[31m"
FORGED = "P-2\nSW999  P-0  (proposal)  pass"
SHOWN_CLEAR = "P-1\\x1b[2J\\x1b[31m"
SHOWN_FORGED = "P-2\\nSW999  P-0  (proposal)  pass"


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args)


@pytest.fixture(scope="module")
def town(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("text")
    frames = proposal_frames()
    for frame in frames.values():
        frame["proposal_id"] = frame["proposal_id"].map({"P-1": CLEAR, "P-2": FORGED})
    frames["proposals"]["name"] = ["Smith\radd", "Li\x07patio"]
    write_town(folder, proposals=frames)
    return folder


def assert_clean(text: str) -> None:
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "\r" not in text
    assert not [line for line in text.splitlines() if line.startswith("SW999")]


def test_check_table_and_notes_escape_control_characters(town: Path) -> None:
    result = invoke(
        [
            *("check", str(town / "proposals.gpkg"), "--layers", str(town / "town.gpkg")),
            *("--fail-on", "never", "--map", "none", "--details"),
        ]
    )
    assert result.exit_code == 0, result.output
    assert_clean(result.output)
    lines = result.output.splitlines()
    permit = [line.split() for line in lines if line.startswith("SW101 ")]
    # table rows: RULE PROPOSAL SUBJECT OUTCOME ...; the forged id shows on its own row
    assert [row[:4] for row in permit if row[1] == SHOWN_CLEAR and row[2] != "required:"] == [
        ["SW101", SHOWN_CLEAR, "(proposal)", "required"]
    ]
    assert any(SHOWN_FORGED in line for line in lines)
    notes = [line for line in lines if line.startswith(f"SW101 {SHOWN_CLEAR} required: ")]
    assert len(notes) == 1


def test_validate_lists_ids_escaped(town: Path) -> None:
    result = invoke(
        [
            *("validate", "--layers", str(town / "town.gpkg")),
            *("--proposals", str(town / "proposals.gpkg")),
        ]
    )
    assert result.exit_code == 0, result.output
    assert_clean(result.output)
    assert f"  proposals: 2 ({SHOWN_CLEAR}, {SHOWN_FORGED})" in result.output.splitlines()


def test_calendar_lines_escape_ids(town: Path, tmp_path: Path) -> None:
    result = invoke(["calendar", str(town / "proposals.gpkg"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert_clean(result.output)
    starts = sorted(line.split(":")[0] for line in result.output.splitlines() if "to 20" in line)
    assert starts == [SHOWN_CLEAR, SHOWN_FORGED]


def test_an_error_naming_an_id_is_one_escaped_line(tmp_path: Path, town: Path) -> None:
    result = invoke(
        [
            *("calendar", str(town / "proposals.gpkg"), "--out", str(tmp_path)),
            *("--proposal-id", "nope\x1b[2J"),
        ]
    )
    assert result.exit_code == 2
    assert_clean(result.stderr)
    errors = result.stderr.splitlines()
    assert len(errors) == 1
    assert errors[0].startswith("gis-sw: error: ")
    assert SHOWN_CLEAR in errors[0]
