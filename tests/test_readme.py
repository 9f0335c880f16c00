"""The README's rule table is the one `gis-sw rules --markdown` prints."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from gis_sw.cli import cli

README = Path(__file__).resolve().parents[1] / "README.md"


def _block(text: str, name: str) -> str:
    match = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert match, f"README.md has no <!-- {name}:start --> ... <!-- {name}:end --> block"
    return match.group(1)


def test_readme_rule_table_is_current():
    result = CliRunner().invoke(cli, ["rules", "--markdown"])
    assert result.exit_code == 0, result.output
    assert _block(README.read_text(encoding="utf-8"), "rules").strip() == result.output.strip(), (
        "README.md's rule table is out of date: replace the block between the rules markers "
        "with the output of `gis-sw rules --markdown`."
    )


def test_readme_quick_start_has_the_two_commands():
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("## ", 1)[0]
    assert "make demo" in quick
    assert "make test" in quick
