"""Issue 15's layout rule: no module under ``gis_sw/`` is over 500 lines (split by topic).

The counter is tested on a tree built here (exactly 500 lines is allowed, 501 is not); the
package itself is checked by the second test, expected to fail until the other splits of
this session are merged.
"""

from __future__ import annotations

from pathlib import Path

import gis_sw

MAX_MODULE_LINES = 500
PACKAGE = Path(gis_sw.__file__).parent


def long_modules(root: Path, limit: int = MAX_MODULE_LINES) -> dict[str, int]:
    """Return every ``.py`` file under ``root`` with more than ``limit`` lines, by its path."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            found[path.relative_to(root).as_posix()] = count
    return found


def test_counter_allows_500_lines_and_lists_501(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "at_limit.py").write_text("x = 1\n" * 500, encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "over.py").write_text("x = 1\n" * 501, encoding="utf-8")
    (tmp_path / "pkg" / "notes.txt").write_text("x\n" * 900, encoding="utf-8")
    assert long_modules(tmp_path / "pkg") == {"sub/over.py": 501}


def test_no_module_over_500_lines() -> None:
    offenders = long_modules(PACKAGE)
    listed = ", ".join(f"gis_sw/{path} ({count} lines)" for path, count in offenders.items())
    assert not offenders, f"modules over {MAX_MODULE_LINES} lines: {listed}"
