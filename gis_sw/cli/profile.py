"""``--profile``: the seconds each stage of a run took, printed on stderr.

A command marks the end of each stage (``import``, ``read``, ``screen``, ``write``,
``draw``) on a :class:`Profile`; with ``--profile`` the stages are printed as one line when
the command ends, also when it ends with an error (the stages it finished)::

    gis-sw: profile: import 0.81 s, read 0.35 s, screen 0.42 s, write 0.05 s, total 1.63 s

``import`` counts from the start of the process when ``gis-sw`` runs as a program (Linux:
read from ``/proc/self/stat``; elsewhere from the start of the command line's dispatch) to
the end of the command's own imports, so it shows what loading the analysis stack costs
before any work.  A stage marked twice adds up.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import click

STARTED_KEY = "gis_sw.started"
"""Key of the run's start (a :func:`time.perf_counter` value) in the root context's meta."""


def process_started() -> float | None:
    """Return when this process started, as a :func:`time.perf_counter` value.

    Returns
    -------
    float or None
        None where the start time cannot be read (not Linux).
    """
    try:
        fields = Path("/proc/self/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        started_s = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # since boot
        alive_s = time.clock_gettime(time.CLOCK_BOOTTIME) - started_s
    except (OSError, ValueError, IndexError, AttributeError):
        return None
    return time.perf_counter() - max(alive_s, 0.0)


class Profile:
    """Stage times of one run.

    Parameters
    ----------
    enabled
        Print the stages when the run ends (``--profile``).
    started
        When the first stage began (:func:`time.perf_counter`).
    """

    def __init__(self, *, enabled: bool, started: float) -> None:
        self.enabled = enabled
        self.started = started
        self.stages: dict[str, float] = {}
        self._last = started

    def mark(self, stage: str) -> float:
        """End ``stage`` now: the time since the previous mark is added to it.

        Returns
        -------
        float
            The seconds added.
        """
        now = time.perf_counter()
        spent = now - self._last
        self.stages[stage] = self.stages.get(stage, 0.0) + spent
        self._last = now
        return spent

    def split(self, first: str, stages: Mapping[str, float]) -> None:
        """End the time since the previous mark as ``stages`` (timed by the library), in order.

        What the library did not time (its checks before the first of them) is ``first``.
        """
        self.mark(first)
        self.stages[first] = max(self.stages[first] - sum(stages.values()), 0.0)
        for name, secs in stages.items():
            self.stages[name] = self.stages.get(name, 0.0) + secs

    def imported(self, *modules: str) -> None:
        """Import ``modules`` (those the run will use) and end the ``import`` stage."""
        for name in modules:
            importlib.import_module(name)
        self.mark("import")

    def line(self) -> str:
        """Return the stages and the total as one line."""
        parts = [f"{name} {secs:.2f} s" for name, secs in self.stages.items()]
        parts.append(f"total {self._last - self.started:.2f} s")
        return "gis-sw: profile: " + ", ".join(parts)


@contextlib.contextmanager
def profiled(enabled: bool) -> Iterator[Profile]:
    """Time the body of a command; with ``enabled`` print its stages on stderr at the end.

    The first stage counts from the run's start the root context recorded
    (:data:`STARTED_KEY`), else from now.
    """
    ctx = click.get_current_context(silent=True)
    meta = ctx.find_root().meta if ctx is not None else {}
    profile = Profile(enabled=enabled, started=meta.get(STARTED_KEY, time.perf_counter()))
    try:
        yield profile
    finally:
        if enabled:
            click.echo(profile.line(), err=True)
