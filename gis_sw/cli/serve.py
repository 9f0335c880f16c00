"""``gis-sw serve``: live placement, a local web app over a town loaded once.

Binds to 127.0.0.1 (this machine only) unless ``--host`` says otherwise; ``--host 0.0.0.0``
is allowed with a warning that anyone on the network can then use it.  Ctrl-C stops it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import click

from gis_sw.cli import options

log = logging.getLogger("gis_sw.cli.serve")

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@click.command("serve")
@options.layers_opt
@options.ruleset_opt
@options.proposals_opt("A proposals file to open in the page at start.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; 0.0.0.0 lets anyone on the network use the app.",
)
@options.strict_opt
def command(
    *,
    source: Path,
    ruleset_name: str | None,
    proposals_path: Path | None,
    port: int,
    host: str,
    strict: bool,
) -> None:
    """Live placement: a local web page that re-checks the law as devices are drawn and moved.

    The town is read and validated once at start.  The page shows where on the chosen lot a
    device may legally go (area in sq ft, each setback labelled), and the findings of the
    proposal as it is edited.  Export the proposal as the GeoPackage `gis-sw check` reads.
    Stop it with Ctrl-C.
    """
    import uvicorn

    from gis_sw.api import read_proposals, read_town
    from gis_sw.ruleset import load_ruleset
    from gis_sw.serve.app import create_app

    started = time.perf_counter()
    ruleset = load_ruleset(ruleset_name)
    proposals = (
        read_proposals(proposals_path, ruleset=ruleset, strict=strict)
        if proposals_path is not None
        else None
    )
    town = read_town(source, ruleset=ruleset, strict=strict)
    local = host in LOCAL_HOSTS
    app = create_app(town, proposals=proposals, allowed_hosts=LOCAL_HOSTS if local else ("*",))
    click.echo(f"gis-sw: town loaded in {time.perf_counter() - started:.1f} s ({town!r})", err=True)
    if not local:
        click.echo(
            f"gis-sw: warning: listening on {host}: anyone who can reach this machine on port "
            f"{port} can use the app and read the town's layers. Use --host 127.0.0.1 to keep "
            "it on this machine.",
            err=True,
        )
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host  # noqa: S104 (compared, not bound)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    server = uvicorn.Server(config)

    original = server.startup

    async def startup(sockets: object = None) -> None:
        await original(sockets=sockets)  # type: ignore[arg-type]
        bound = port
        for srv in getattr(server, "servers", []):
            for sock in srv.sockets:
                bound = sock.getsockname()[1]
        click.echo(f"gis-sw: live placement at http://{shown}:{bound}/ (Ctrl-C to stop)")

    server.startup = startup  # type: ignore[method-assign]
    server.run()
