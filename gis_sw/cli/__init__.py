"""The ``gis-sw`` command line: a thin layer over the library, one module per command.

Commands are imported only when used, so ``gis-sw --help`` stays fast; the options they
share are defined once in :mod:`gis_sw.cli.options`, with the exit codes
(:class:`~gis_sw.cli.options.ExitCode`).  Any :class:`~gis_sw.errors.GisSwError` becomes
:attr:`~gis_sw.cli.options.ExitCode.BAD_INPUT` and one readable line on stderr (the
traceback too with ``-v``, which never changes the exit code); so does an ``OSError`` or a
GDAL data-source error the library did not catch (disk full, permission denied).  Any other
exception is a bug: :attr:`~gis_sw.cli.options.ExitCode.INTERNAL`, "internal error, please
report", the traceback only with ``-v``.
"""

from __future__ import annotations

import errno
import importlib
import logging
import sys
import time
import traceback
from typing import Any

import click

from gis_sw import __version__
from gis_sw.cli.options import EXIT_CODES_HELP, ExitCode
from gis_sw.cli.profile import STARTED_KEY, process_started
from gis_sw.errors import GisSwError
from gis_sw.redact import RedactingFilter, shown

COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("gis_sw.cli.validate", "Read and validate town layers; print a report per layer."),
    "check": ("gis_sw.cli.check", "Screen proposals against the law; write findings and maps."),
    "rules": ("gis_sw.cli.rules", "List every rule: id, citation, title."),
    "siting": ("gis_sw.cli.siting", "Where on a parcel an infiltration device may legally go."),
    "calendar": (
        "gis_sw.cli.calendar",
        "Inspection and notice calendar of a proposal (CSV, .ics).",
    ),
    "map": ("gis_sw.cli.map", "Engineering-scale map sheets and an offline web map."),
    "batch": ("gis_sw.cli.batch", "Screen every parcel (and proposal) of a town in one run."),
    "sample": ("gis_sw.cli.sample", "Generate a synthetic sample town of any size."),
    "serve": ("gis_sw.cli.serve", "Live placement: a local web app that re-checks as you edit."),
}


class LazyGroup(click.Group):
    """A click group that imports a command's module only when it runs."""

    started: float | None = None
    """When the process started (set by :func:`main`), for ``--profile``'s import stage."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Return the names of every command, in the order of :data:`COMMANDS`."""
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import the module of command ``cmd_name`` and return its command (None: unknown)."""
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = module.command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands with their one-line help, without importing them."""
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; turn bad input into exit 2 and a bug into exit 3, one line each."""
        ctx.meta.setdefault(STARTED_KEY, self.started or time.perf_counter())
        verbose = bool(ctx.find_root().params.get("verbose", 0))
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except GisSwError as exc:
            _show_traceback(verbose)
            click.echo(f"gis-sw: error: {shown(exc)}", err=True)
            ctx.exit(ExitCode.BAD_INPUT)
        except Exception as exc:  # noqa: BLE001  last resort: never a bare traceback
            _show_traceback(verbose)
            if _is_environment_error(exc):
                click.echo(f"gis-sw: error: {shown(_environment_error(exc))}", err=True)
                ctx.exit(ExitCode.BAD_INPUT)
            click.echo(
                f"gis-sw: internal error ({type(exc).__name__}: {shown(exc)}). This is a bug in "
                "gis-sw, not in your data or setup. Fix: please report it with the command "
                "line and the output of the same command run with `gis-sw -v`.",
                err=True,
            )
            ctx.exit(ExitCode.INTERNAL)


def _show_traceback(verbose: bool) -> None:
    """With ``-v``, the traceback of the exception being handled, on stderr.

    The exit code stays the one the error gives (2 bad input, 3 a bug): ``-v`` shows more,
    it never changes what a script sees.
    """
    if verbose:  # passwords masked line by line (a driver's message may quote one)
        text = traceback.format_exc().rstrip()
        click.echo("\n".join(shown(line) for line in text.splitlines()), err=True)


def _is_environment_error(exc: BaseException) -> bool:
    """Tell an OSError or GDAL's DataSourceError (pyogrio is not imported: --help stays fast)."""
    kind = type(exc)
    return isinstance(exc, OSError) or (
        kind.__module__.startswith("pyogrio") and kind.__name__ == "DataSourceError"
    )


def _environment_error(exc: BaseException) -> str:
    """One line for a file that could not be read or written outside the library's checks."""
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        what = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC:
            fix = "free disk space or choose another --out folder."
        elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            fix = "choose a folder you may write to, or ask for access."
        else:
            fix = "check the path, the disk and the permissions."
        return f"{where}{what}. Fix: {fix}"
    return f"{exc}. Fix: check the path, that the disk has room, and the permissions."


@click.group(
    cls=LazyGroup, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, prog_name="gis-sw")
@click.option("-v", "--verbose", count=True, help="More log output; -v also shows tracebacks.")
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr.")
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """Screen land development against a town's stormwater law.

    gis-sw screens; it does not decide. The Town Engineer decides. Default law: Town of
    Mount Pleasant (Westchester County, NY) Code Chapter 183.
    """
    level = (
        logging.ERROR
        if quiet
        else logging.DEBUG
        if verbose > 1
        else (logging.INFO if verbose else logging.WARNING)
    )
    logging.basicConfig(level=level, format="gis-sw: %(levelname)s: %(message)s", stream=sys.stderr)
    _redact_logs()
    ctx.ensure_object(dict)


def _redact_logs() -> None:
    """Mask passwords in every log line, whichever library logs it."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def main() -> None:
    """Run ``gis-sw`` (the console-script entry point)."""
    cli.started = process_started()
    cli(prog_name="gis-sw")
