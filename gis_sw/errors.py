"""Errors raised by gis_sw.

Every error a user can cause derives from :class:`GisSwError` and also from the builtin
exception a Python caller would expect (``ValueError``, ``FileNotFoundError``, ``OSError``),
so ``except ValueError`` keeps working.  The CLI turns any ``GisSwError`` into exit code 2
and one readable line; the message therefore always names the file, layer, column or feature
at fault and the fix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


class GisSwError(Exception):
    """Base class of every error gis_sw raises for bad input or a bad environment."""


class InputFileError(GisSwError, FileNotFoundError):
    """An input file is missing, unreadable or not geodata."""


class CRSError(GisSwError, ValueError):
    """A layer has no CRS, or one that cannot be used in the working CRS."""


class RulesetError(GisSwError, ValueError):
    """A ruleset file is missing a value, or a value has the wrong type or range."""


class ProposalError(GisSwError, ValueError):
    """A proposal (disturbance, devices, attributes) cannot be screened as given."""


class OutputError(GisSwError, OSError):
    """An output cannot be written (exists without ``--overwrite``, not writable, disk full)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem found while validating a layer.

    Attributes
    ----------
    layer
        The layer kind (``parcels``) or file the problem is in.
    message
        What is wrong, naming the column, feature id and value.
    fix
        What the user should do about it.
    """

    layer: str
    message: str
    fix: str = ""

    def __str__(self) -> str:
        """Return ``LAYER: MESSAGE Fix: FIX`` (no ``Fix:`` part when there is no fix)."""
        text = f"{self.layer}: {self.message}"
        return f"{text} Fix: {self.fix}" if self.fix else text


class LayerError(GisSwError, ValueError):
    """One or more problems with input layers, collected and raised once.

    Parameters
    ----------
    problems
        Every problem found; the message lists them all.
    """

    def __init__(self, problems: Iterable[Problem] | Problem | str, layer: str = "") -> None:
        if isinstance(problems, str):
            problems = [Problem(layer or "input", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("; ".join(str(p) for p in self.problems))

    def __reduce__(self) -> tuple[type[LayerError], tuple[tuple[Problem, ...]]]:
        """Pickle as the problems (a Dask worker's error arrives with the same message)."""
        return (type(self), (self.problems,))
