"""A command that fails with a bug, to test the CLI's last-resort handler."""

from __future__ import annotations

import click


@click.command("boom")
def command() -> None:
    """Divide by zero, as a bug would."""
    click.echo(str(1 / len("")))
