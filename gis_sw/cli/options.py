"""The options the ``gis-sw`` commands share: one definition, one help text, one name each.

As rasterio's ``rio/options.py``: each option is a decorator made once here, and every
command stacks the ones it takes (``@options.layers_opt``, ``@options.ruleset_opt``), so
``--ruleset`` means the same thing, reads the same in ``--help`` and reaches the command
under the same parameter name everywhere.  Where an option has more than one meaning
(``--out`` a folder a command must have, or one it may go without) a factory makes one
variant per meaning, each with its own help text.

This module imports click and nothing heavy: ``gis-sw --help`` and every command's
``--help`` stay fast.  ``--select`` and ``--ignore`` check their prefixes against the table
of rules only when given.

Exit codes (:class:`ExitCode`) are defined here and nowhere else.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(enum.IntEnum):
    """What a ``gis-sw`` run tells a script, the same for every command."""

    OK = 0
    """The run finished (and no finding reaches ``check --fail-on``)."""
    FINDINGS = 1
    """``check``: at least one unwaived finding reaches ``--fail-on``."""
    BAD_INPUT = 2
    """Bad input or environment: a missing or unreadable file, a layer with a problem, a bad
    ruleset, waiver or option, an existing output without ``--overwrite``, a full disk.  One
    line on stderr starting ``gis-sw: error:`` and naming the fix."""
    INTERNAL = 3
    """A bug in gis-sw: one line asking for a report (the traceback only with ``-v``)."""


EXIT_CODES_HELP = (
    "Exit codes: 0 done (and no finding reaches check --fail-on); 1 a finding reaches "
    "check --fail-on; 2 bad input (one line on stderr naming the fix); 3 a bug in gis-sw."
)
"""The one description of :class:`ExitCode` users read (the end of ``gis-sw --help``)."""

# -- help texts: one per option and meaning -------------------------------------------------

LAYERS_HELP = (
    "Town layers: a layers manifest (layers.toml), a GeoPackage of town layers, or a folder "
    "with layers.toml."
)
RULESET_HELP = (
    "Ruleset: a packaged name (default mount_pleasant_ny) or the TOML file of another "
    "town's numbers."
)
OUT_HELP = "Folder to write the outputs into (created when missing; the files are listed above)."
OUT_OPTIONAL_HELP = (
    "Folder to write the outputs into (created when missing; the files are listed above). "
    "Without it nothing is written."
)
OVERWRITE_HELP = (
    "Replace outputs an earlier run left in --out; without it nothing is written when one "
    "exists (exit 2)."
)
CRS_HELP = (
    "CRS of the proposals file's coordinates: for a file with none (DXF), and it overrides "
    "a wrong one (a state-plane GeoJSON without a crs member)."
)
STRICT_HELP = "Refuse invalid geometries instead of repairing them with make_valid."
SELECT_HELP = "Only rules with these id prefixes, repeatable or comma-separated (SW1,SW205)."
IGNORE_HELP = "Skip rules with these id prefixes, repeatable or comma-separated (SW107)."
PROFILE_HELP = (
    "Print on stderr the seconds each stage of the run took (import, read, screen, write, draw)."
)


def rule_prefixes(values: tuple[str, ...], option: str) -> list[str] | None:
    """Return the rule id prefixes in repeated, comma-separated option values.

    Parameters
    ----------
    values
        What was given, one item per use of the option (``("SW1,SW205", "sw4")``).
    option
        The option's name, for the error.

    Returns
    -------
    list of str or None
        Upper-cased prefixes in the order given; None when none was given.

    Raises
    ------
    click.BadParameter
        When a prefix matches no rule id (exit 2, naming it and ``gis-sw rules``).
    """
    prefixes = [p.strip().upper() for v in values for p in v.split(",") if p.strip()]
    if not prefixes:
        return None
    from gis_sw.analysis.registry import RULES  # the checks: only when a prefix is given

    for prefix in prefixes:
        if not any(r.rule_id.startswith(prefix) for r in RULES):
            raise click.BadParameter(
                f"{prefix!r} matches no rule id (see `gis-sw rules`).", param_hint=option
            )
    return prefixes


def _prefix_callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    return rule_prefixes(tuple(value or ()), f"--{param.name}")


def chosen_rules(select: list[str] | None, ignore: list[str] | None) -> tuple[Any, ...]:
    """Return the rules ``--select`` and ``--ignore`` leave to run.

    Raises
    ------
    click.BadParameter
        When every selected rule is ignored (exit 2).
    """
    from gis_sw.analysis.registry import select_rules

    chosen = select_rules(select, ignore)
    if not chosen:
        raise click.BadParameter("--select and --ignore leave no rule to run.")
    return chosen


FORMATS: dict[str, tuple[str, ...]] = {
    "pdf": ("pdf",),
    "png": ("png",),
    "both": ("pdf", "png"),
    "none": (),
}
"""Values of the drawing options (``--map``, ``--format``, ``--sheets``) and the formats."""


# -- the options ------------------------------------------------------------------------------

proposal_arg = click.argument("proposal", type=click.Path(path_type=Path))
"""PROPOSAL: a proposals GeoPackage or one disturbance file."""


def layers_option(*, exists: bool = False) -> Callable[[F], F]:
    """Return the ``--layers`` option (parameter ``source``).

    Parameters
    ----------
    exists
        Let click refuse a missing path while parsing ("does not exist", exit 2) instead of
        the reader's error naming the fix (``batch`` keeps click's check).
    """
    return click.option(
        "--layers",
        "source",
        required=True,
        type=click.Path(exists=exists, path_type=Path),
        help=LAYERS_HELP,
    )


layers_opt = layers_option()
ruleset_opt = click.option("--ruleset", "ruleset_name", default=None, help=RULESET_HELP)
overwrite_opt = click.option("--overwrite", is_flag=True, help=OVERWRITE_HELP)
crs_opt = click.option("--crs", default=None, help=CRS_HELP)
strict_opt = click.option("--strict", is_flag=True, help=STRICT_HELP)
select_opt = click.option("--select", multiple=True, callback=_prefix_callback, help=SELECT_HELP)
ignore_opt = click.option("--ignore", multiple=True, callback=_prefix_callback, help=IGNORE_HELP)
profile_opt = click.option("--profile", is_flag=True, help=PROFILE_HELP)


def out_opt(*, required: bool = True) -> Callable[[F], F]:
    """Return the ``--out`` folder option (parameter ``out_dir``).

    Parameters
    ----------
    required
        False for a command that may run without writing files (``check`` prints a table).
    """
    return click.option(
        "--out",
        "out_dir",
        required=required,
        default=None,
        type=click.Path(file_okay=False, path_type=Path),
        help=OUT_HELP if required else OUT_OPTIONAL_HELP,
    )


def proposals_opt(help_text: str, *, exists: bool = False) -> Callable[[F], F]:
    """Return the ``--proposals`` file option (parameter ``proposals_path``).

    Parameters
    ----------
    help_text
        What the command does with the file (``validate`` checks it, ``serve`` opens it).
    exists
        Refuse a path that does not exist while parsing (exit 2).
    """
    return click.option(
        "--proposals",
        "proposals_path",
        default=None,
        type=click.Path(exists=exists, dir_okay=False, path_type=Path),
        help=help_text,
    )


def formats_opt(flag: str, dest: str, help_text: str, *, none: bool = True) -> Callable[[F], F]:
    """Return an option choosing drawing formats from :data:`FORMATS` (default ``both``).

    Parameters
    ----------
    flag, dest
        The option (``--map``) and its parameter name (``map_choice``).
    help_text
        What is drawn.
    none
        Offer ``none`` (draw nothing).
    """
    return click.option(
        flag,
        dest,
        type=click.Choice([k for k in FORMATS if none or FORMATS[k]]),
        default="both",
        show_default=True,
        help=help_text,
    )
