"""``gemwire serve``: agents behind an HTTP, SSE and WebSocket API (docs/server.md)."""

from __future__ import annotations

import sys
from importlib.util import find_spec

import click

from gemwire.cli.exit_codes import EXIT_USAGE

__all__ = ("serve",)

_EXTRA = ("starlette", "hypercorn", "h2", "wsproto")


def _agent_command(value: str) -> tuple[str, tuple[str, ...]]:
    from gemwire.runners.agents import command_from_text

    name, sep, command = value.partition("=")
    if not sep or not name.strip() or not command.strip():
        raise click.BadParameter(f"{value!r}: expected NAME=COMMAND")
    try:
        return name.strip(), command_from_text(command)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r}: {exc}") from exc


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=int, default=8765, show_default=True, help="Port; 0 picks one.")
@click.option(
    "--token",
    envvar="GEMWIRE_TOKEN",
    help=(
        "The bearer token; default: a new random one. Prefer $GEMWIRE_TOKEN or --token-file: "
        "a command line can be read by every process of the machine."
    ),
)
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False),
    help="Read the token from this file (its first line).",
)
@click.option(
    "--root",
    "roots",
    multiple=True,
    type=click.Path(exists=True, file_okay=False),
    help="A folder sessions may work in (repeatable; default: here).",
)
@click.option(
    "--state-dir",
    help="Where session logs live (default: ~/.local/state/gemwire/server; "
    "on Windows %LOCALAPPDATA%\\gemwire\\server).",
)
@click.option("--allow-origin", "allow_origins", multiple=True, help="Another allowed Origin.")
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="Sessions whose agents run at once; as many /acp/ connections besides.",
)
@click.option(
    "--sessions-per-agent",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Sessions one ACP agent process serves at most (1: a process a session; more "
    "share it, and its exit ends them all: docs/server.md).",
)
@click.option(
    "--idle-timeout",
    "session_idle_timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=3600.0,
    show_default=True,
    help="Seconds a session may sit idle before its agent is stopped.",
)
@click.option(
    "--permission-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=300.0,
    show_default=True,
    help="Seconds a permission request waits for a client's answer, then is denied.",
)
@click.option("--agent", "agents", multiple=True, help="Another agent: NAME=COMMAND (repeatable).")
@click.option(
    "--warm",
    multiple=True,
    metavar="AGENT",
    help=(
        "Keep one AGENT started and primed ahead (initialized, a session open in the first "
        "root), so a new session starts at once (repeatable)."
    ),
)
@click.option(
    "--ssl-certfile",
    type=click.Path(exists=True, dir_okay=False),
    help="Serve HTTPS with this certificate (PEM); with --ssl-keyfile.",
)
@click.option(
    "--ssl-keyfile",
    type=click.Path(exists=True, dir_okay=False),
    help="The certificate's private key (PEM).",
)
@click.option(
    "--http2",
    is_flag=True,
    hidden=True,
    help="Kept for old command lines: HTTP/2 is always served (docs/server.md).",
)
def serve(
    host: str,
    port: int,
    token: str | None,
    token_file: str | None,
    roots: tuple[str, ...],
    state_dir: str | None,
    allow_origins: tuple[str, ...],
    max_sessions: int,
    sessions_per_agent: int,
    session_idle_timeout: float,
    permission_timeout: float,
    agents: tuple[str, ...],
    warm: tuple[str, ...],
    ssl_certfile: str | None,
    ssl_keyfile: str | None,
    http2: bool,
) -> None:
    """Run agents behind an HTTP, SSE and WebSocket API, for one token.

    \b
    gemwire serve                       http://127.0.0.1:8765/?token=... (printed)
    gemwire serve --port 0 --root ~/work --agent mine="my-agent --acp"
    """
    del http2  # HTTP/2 is served beside HTTP/1.1 always; the flag once chose it
    if any(find_spec(name) is None for name in _EXTRA):
        click.echo("gemwire serve needs the [serve] extra: pip install 'gemwire[serve]'", err=True)
        sys.exit(EXIT_USAGE)
    import os
    import secrets
    from urllib.parse import quote

    from gemwire.server import ServerConfig, create_app
    from gemwire.server.config import default_state_dir, is_loopback, weak_token
    from gemwire.server.paths import real_roots, under
    from gemwire.server.responses import ApiError
    from gemwire.server.run import bind, serve as run_server

    # The agents the server starts inherit its environment: never the token.
    os.environ.pop("GEMWIRE_TOKEN", None)
    if token_file is not None:
        if token:
            raise click.UsageError("give the token once: --token-file, or --token/GEMWIRE_TOKEN")
        with open(token_file, encoding="utf-8") as file:
            token = file.readline().strip()
    if not is_loopback(host):
        why = weak_token(token) if token else "without a token"
        if why is not None:
            click.echo(
                f"gemwire serve: refusing to bind {host} (not loopback) {why}: give a strong "
                "one in GEMWIRE_TOKEN or --token-file",
                err=True,
            )
            sys.exit(EXIT_USAGE)
    if bool(ssl_certfile) != bool(ssl_keyfile):
        raise click.UsageError("--ssl-certfile and --ssl-keyfile go together")
    try:
        folders = real_roots(roots or (os.getcwd(),))
    except ApiError as exc:
        raise click.UsageError(str(exc)) from exc
    custom = dict(_agent_command(value) for value in agents)
    state = os.path.realpath(os.path.expanduser(state_dir or default_state_dir()))
    inside = next((root for root in folders if under(state, root)), None)
    if inside is not None:
        raise click.UsageError(
            f"the state folder {state} lies inside the root {inside}: an agent working there "
            "could edit the server's sessions and batches; give a --state-dir outside every --root"
        )
    try:
        os.makedirs(os.path.join(state, "sessions"), mode=0o700, exist_ok=True)
    except OSError as exc:
        raise click.UsageError(f"--state-dir {state}: {exc.strerror}") from exc
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    config = ServerConfig(
        host=host,
        port=sock.getsockname()[1],
        token=token or secrets.token_urlsafe(24),
        roots=folders,
        state_dir=state,
        allow_origins=allow_origins,
        agents=custom,
        warm=warm,
        max_sessions=max_sessions,
        sessions_per_agent=sessions_per_agent,
        idle_timeout=session_idle_timeout,
        permission_timeout=permission_timeout,
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
    )
    click.echo(f"gemwire serve: {config.url}/?token={quote(config.token, safe='')}")
    sys.stdout.flush()
    run_server(create_app(config), config, sock)
