"""Data flows one way (issue 15): ruff's banned-api refuses a wrong import in each package,
and the tree as it is passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def _ruff(code: str, filename: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(RUFF), "check", "--no-cache", "--select", "TID251", "--stdin-filename", filename, "-"],
        input=code,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


@pytest.mark.parametrize(
    ("filename", "code", "banned"),
    [
        (
            "gis_sw/outputs/maps/new_sheet.py",
            "from gis_sw.analysis.engine import run_rules\n",
            "gis_sw.analysis.engine",
        ),
        (
            "gis_sw/outputs/new_output.py",
            "from gis_sw.analysis import siting\n",
            "gis_sw.analysis.siting",
        ),
        (
            "gis_sw/outputs/new_output.py",
            "from gis_sw.analysis.permits.threshold import check_permit\n",
            "gis_sw.analysis.permits",
        ),
        (
            "gis_sw/outputs/new_output.py",
            "from gis_sw.screening import device_siting\n",
            "gis_sw.screening.device_siting",
        ),
        (
            "gis_sw/analysis/new_check.py",
            "import gis_sw.outputs.report\n",
            "gis_sw.outputs",
        ),
        (
            "gis_sw/analysis/new_check.py",
            "from gis_sw.cli.check import command\n",
            "gis_sw.cli",
        ),
        (
            "gis_sw/layers/new_reader.py",
            "from gis_sw.analysis.registry import RULES\n",
            "gis_sw.analysis",
        ),
    ],
)
def test_a_wrong_import_fails_ruff(filename: str, code: str, banned: str) -> None:
    result = _ruff(code, filename)
    assert result.returncode == 1, result.stdout
    assert f"TID251 `{banned}` is banned" in result.stdout


@pytest.mark.parametrize(
    ("filename", "code"),
    [
        ("gis_sw/outputs/new_output.py", "from gis_sw.analysis.wording import fmt_usd\n"),
        ("gis_sw/outputs/new_output.py", "from gis_sw.analysis.registry import RULES\n"),
        ("gis_sw/analysis/new_check.py", "from gis_sw.layers.layerset import LayerSet\n"),
        ("gis_sw/cli/new_command.py", "from gis_sw.analysis.engine import run_rules\n"),
    ],
)
def test_an_allowed_import_passes(filename: str, code: str) -> None:
    result = _ruff(code, filename)
    assert result.returncode == 0, result.stdout


def test_the_tree_keeps_the_direction() -> None:
    result = subprocess.run(
        [str(RUFF), "check", "--no-cache", "--select", "TID251", "gis_sw"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stdout


def test_nested_configs_keep_the_root_rules() -> None:
    """Each nested ruff.toml extends pyproject.toml: the root's rules still apply there."""
    result = subprocess.run(
        [str(RUFF), "check", "--no-cache", "--stdin-filename", "gis_sw/outputs/x.py", "-"],
        input='print("x")\n',
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert "T201" in result.stdout
