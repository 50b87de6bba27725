"""``python app.py [--db FILE] [--host H] [--port N] [--auth users.json]`` (or ``hallu-studio app ...``):
open the store, bootstrap an empty one with the offline demo, and serve the app until interrupted.

Where it listens: ``--host`` / ``--port``, else Gradio's own ``GRADIO_SERVER_NAME`` /
``GRADIO_SERVER_PORT``, else 127.0.0.1:7860. A port that is taken is one line and exit status 2.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import socket
import sys
import threading
from typing import TYPE_CHECKING, Mapping, Sequence

from ..config import apply_offline_env_defaults, load_settings

if TYPE_CHECKING:
    from .bootstrap import BootstrapSteps
    from .context import AppContext


DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 7860
HOST_ENV, PORT_ENV = "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"


def parse_args(argv: Sequence[str] | None = None, prog: str = "app.py") -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description="HalluStudio web app")
    p.add_argument("--db", help="DuckDB store (default: $HALLU_STUDIO_DB or the user data dir)")
    p.add_argument("--config", help="settings TOML (default: ./hallu-studio.toml or $HALLU_STUDIO_CONFIG)")
    p.add_argument("--host", default=None,
                   help=f"interface to listen on (default: ${HOST_ENV}, else {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=None, help=f"port (default: ${PORT_ENV}, else {DEFAULT_PORT})")
    p.add_argument("--auth", metavar="USERS_JSON", help="users file for annotator sign-in "
                   "(or set $HALLU_STUDIO_USERS=name:password,...)")
    p.add_argument("--no-bootstrap", action="store_true", help="do not populate an empty store with the demo")
    return p.parse_args(argv)


def server_address(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> tuple[str, int]:
    """``(host, port)`` to listen on: the flags win over Gradio's environment variables, which win
    over the defaults. A port that is not a number from 1 to 65535 is a ``ValueError`` naming its source."""
    host = args.host or environ.get(HOST_ENV) or DEFAULT_HOST
    if args.port is not None:
        port, source = args.port, "--port"
    elif environ.get(PORT_ENV):
        port, source = environ[PORT_ENV].strip(), PORT_ENV
    else:
        return host, DEFAULT_PORT
    try:
        number = int(port)
    except ValueError:
        number = 0
    if not 1 <= number <= 65535:
        raise ValueError(f"{source} must be a port number from 1 to 65535, got {port!r}")
    return host, number


def why_cannot_listen(host: str, port: int) -> str | None:
    """Why a server could not listen on ``host:port`` (one line saying what to do), or None when it can.

    Binds a socket the way uvicorn does (``SO_REUSEADDR``), so a port a server listens on counts as
    taken and one merely left in TIME_WAIT does not.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        return f"cannot listen on host {host!r} ({exc.strerror}); pass --host or set {HOST_ENV}"
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (f"port {port} on {host} is already in use (another HalluStudio or server?); "
                        f"choose a free one with --port N or {PORT_ENV}=N")
            return f"cannot listen on {host}:{port} ({exc.strerror}); choose another with --host / --port"
    return None


def start_demo(ctx: "AppContext", steps: "BootstrapSteps | None" = None) -> None:
    """First start (or an interrupted one): import the sample now; run the probes and score in the background.

    The probes run behind the open app too (seconds on 2 cores): the page is up while they run,
    and the Overview ranks the models as soon as the first slice is scored.
    """
    from .bootstrap import BootstrapSteps, DemoProgress, finish_demo, needs_bootstrap, start_demo_import

    store = ctx.store
    if not needs_bootstrap(store):
        return
    print(f"first start: building the offline demo in {store.path}", flush=True)
    progress = DemoProgress(store)
    steps = steps or BootstrapSteps(score=progress.score)
    try:
        benchmark, line = start_demo_import(store, steps)
        print(f"first start: {line}", flush=True)
    except (ImportError, NotImplementedError) as exc:
        # The app still serves what the store holds; the message says what is missing.
        print(f"first start: the offline demo could not be built ({exc}); "
              "import a benchmark with `hallu-studio import` instead", file=sys.stderr)
        return

    def probes_then_scores() -> None:
        progress.step("probes")
        steps.run_probes(store, benchmark)
        finish_demo(store, ctx.settings, steps)

    ctx.background.start("building the offline demo in the background", probes_then_scores,
                         progress=progress.line, done=progress.done_line)
    print("first start: running the probe models [synthetic] and scoring in the background; "
          "the app opens now and fills in as scores land", flush=True)


def stop_on_sigterm() -> None:
    """SIGTERM stops the app as Ctrl-C (SIGINT) does: the server closes and the store is checkpointed and
    closed on the way out, so the ``.duckdb`` file alone holds everything (no ``.wal`` left beside it).

    Python's default for SIGTERM ends the process at once, with no ``finally`` run."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt)


def main(argv: Sequence[str] | None = None, prog: str = "app.py") -> int:
    apply_offline_env_defaults()
    args = parse_args(argv, prog)
    try:
        host, port = server_address(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # Before the store is opened and the demo built: a taken port fails at once, in one line.
    problem = why_cannot_listen(host, port)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per local request is noise
    from ..store import Store, StoreError
    from .build import build_app, launch_kwargs
    from .context import AppContext
    from .tabs import overview
    from .users import resolve_users

    settings = load_settings(args.config)
    if args.db:
        settings.db = args.db
    try:
        users = resolve_users(args.auth)
        store = Store(settings.db)  # held open (and locked) for the app's lifetime
    except (StoreError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop_on_sigterm()
    try:
        ctx = AppContext(store=store, settings=settings, auth_enabled=users is not None)
        if not args.no_bootstrap:
            start_demo(ctx)
        demo = build_app(ctx)
        # The leaderboard bootstraps every run and metric: build it while the server starts, so the
        # first visitor finds it cached (a visitor arriving earlier waits for this same build).
        threading.Thread(target=overview.compute, args=(ctx, None, False), daemon=True,
                         name="hallu-studio-warm-overview").start()
        demo.queue(default_concurrency_limit=8)
        try:
            demo.launch(server_name=host, server_port=port, auth=users, footer_links=[], **launch_kwargs())
        except OSError:
            # Taken meanwhile: Gradio's own message advises a launch() argument that does not apply here.
            problem = why_cannot_listen(host, port)
            if problem is None:
                raise
            print(f"error: {problem}", file=sys.stderr)
            return 2
    except KeyboardInterrupt:
        pass  # stopped before the server ran (during the first start's import, say): close the store all the same
    finally:
        # Checkpointed on close: the .duckdb file alone then holds every event and score written while it ran.
        # A second Ctrl-C or SIGTERM must not cut the checkpoint short.
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, signal.SIG_IGN)
        store.close()
        print(f"stopped; the store {store.path} is saved", flush=True)
    return 0
