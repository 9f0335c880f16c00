"""Helpers shared by test modules (imported by name, as ``maps_town`` is)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def live_children() -> set[int]:
    """Pids of this process's children that are alive (not zombies), from ``/proc``."""
    me = os.getpid()
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == me and stat[0] != "Z":
                found.add(int(entry.name))
    return found


def load_bench(name: str) -> ModuleType:
    """Import a benchmark script by its own name, as ``bench_peers`` imports ``bench_batch``."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)
