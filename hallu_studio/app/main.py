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
import time
from functools import partial
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from ..config import apply_offline_env_defaults, load_settings
from . import serial_ast

if TYPE_CHECKING:
    from .bootstrap import BootstrapSteps
    from .context import AppContext


DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 7860
HOST_ENV, PORT_ENV = "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"
# How long a stop waits for background work to reach its next batch (a service manager's own limit
# is usually 90 s). Threads the app starts are named with this prefix, so the stop finds every one.
STOP_WAIT_S = 60.0
WARM_UP_GRACE_S = 2.0  # for threads that only load libraries or read (see ``stop_background``)
THREAD_PREFIX = "hallu-studio-"


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
    from .bootstrap import (BootstrapSteps, DemoProgress, finish_demo, needs_bootstrap, run_probe_models,
                            start_demo_import)

    store = ctx.store
    if not needs_bootstrap(store):
        return
    print(f"first start: building the offline demo in {store.path}", flush=True)
    progress = DemoProgress(store)
    stopping = ctx.background.stopping  # set when the app stops: probes and scoring end at their next batch
    steps = steps or BootstrapSteps(run_probes=partial(run_probe_models, cancel=stopping),
                                    score=partial(progress.score, cancel=stopping))
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

    try:
        ctx.background.start("building the offline demo in the background", probes_then_scores,
                             progress=progress.line, done=progress.done_line)
    except RuntimeError:
        if stopping.is_set():  # stopped during the import: the next start runs the probes and scores
            return
        raise
    print("first start: running the probe models [synthetic] and scoring in the background; "
          "the app opens now and fills in as scores land", flush=True)


class StopRequest:
    """SIGTERM and SIGINT ask the app to stop. The handler only tells the background work (which ends at
    its next batch) and records the request; the main thread stops at its next safe point: between the
    first start's steps, or in the loop that waits while the server runs.

    It raises nothing. The old handler raised KeyboardInterrupt wherever the main thread was, and during
    start-up that can be inside the import system while it holds its global lock (a module lock's
    clean-up): the lock is never released, and the background thread's next import waits forever.
    What it calls (``on_stop``) must not take a lock the main thread can hold, or the handler, which runs
    on the main thread, would wait for itself.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self._on_stop: list[Callable[[], object]] = []

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, self._handle)

    def on_stop(self, fn: Callable[[], object]) -> None:
        self._on_stop.append(fn)

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is None:
            # os.write, not print: the main thread may be inside a print to the same stream.
            try:
                os.write(sys.stdout.fileno(), f"stop requested ({signal.Signals(signum).name}); stopping\n".encode())
            except (AttributeError, OSError, ValueError):
                pass  # no stdout to say it on (a service without one): stopping matters, not the line
            for fn in self._on_stop:
                fn()
        self.signum = signum

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` here, at a safe point, once a stop was asked for."""
        if self.signum is not None:
            raise KeyboardInterrupt("stop requested")


def stop_background(ctx: "AppContext | None", timeout: float = STOP_WAIT_S,
                    grace: float = WARM_UP_GRACE_S) -> list[str]:
    """Stop the app's own threads before the interpreter exits; returns the names of those still running.

    Work that writes (the first start's probes and scoring, the Run queue's jobs) is asked to stop and
    waited for, up to ``timeout``: it ends at its next batch or chunk, with every finished batch stored.
    The warm-ups (library imports, metric and leaderboard builds) only load or read; they get ``grace``.
    Why it matters: a daemon thread still inside torch, spaCy or DuckDB when the interpreter finalizes is
    ended by a forced unwind that their C++ code turns into an abort ("terminate called without an active
    exception", status 134), which is what stopping the app during the first start's scoring used to do.
    """
    deadline = time.monotonic() + timeout
    if ctx is not None:
        ctx.background.stopping.set()
        ctx.jobs.cancel_all()  # waited for below, beside the first start's work
        ctx.background.wait(max(0.0, deadline - time.monotonic()))
        ctx.jobs.shutdown(timeout=max(0.0, deadline - time.monotonic()))
    me = threading.current_thread()
    ours = [t for t in threading.enumerate() if t is not me and t.name.startswith(THREAD_PREFIX)]
    deadline = time.monotonic() + grace
    for thread in ours:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t.name for t in ours if t.is_alive()]


def main(argv: Sequence[str] | None = None, prog: str = "app.py") -> int:
    apply_offline_env_defaults()
    serial_ast.install()  # before any thread starts: the app imports in several at once (serial_ast says why)
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
    from .context import AppContext
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
    stop = StopRequest()
    stop.install()
    ctx: AppContext | None = None
    try:
        ctx = AppContext(store=store, settings=settings, auth_enabled=users is not None)
        # Neither takes a lock the main thread holds: the background's event is set, never waited on, here.
        stop.on_stop(ctx.background.stopping.set)
        stop.on_stop(ctx.jobs.cancel_all)
        if not args.no_bootstrap:
            start_demo(ctx)
        stop.check()
        return serve(ctx, host, port, users, stop)
    except KeyboardInterrupt:
        return 0  # stopped before the server ran (during the first start's import, say)
    finally:
        # Checkpointed on close: the .duckdb file alone then holds every event and score written while it ran.
        # A second Ctrl-C or SIGTERM must not cut the checkpoint short.
        if threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, signal.SIG_IGN)
        if ctx is not None and (ctx.background.running() or any(j.active for j in ctx.jobs.jobs())):
            print("stopping: background work ends at its next batch", flush=True)
        left = stop_background(ctx)
        store.close()
        print(f"stopped; the store {store.path} is saved", flush=True)
        if left:
            # Still inside a library call (an import, a model load): finalizing the interpreter under it
            # would abort. The store is checkpointed and closed, so ending without finalizing loses nothing.
            print(f"(not waiting for {', '.join(left)}: nothing of theirs is left to save)", flush=True)
            sys.stderr.flush()
            os._exit(0)


def serve(ctx: "AppContext", host: str, port: int, users: object, stop: StopRequest) -> int:
    """Build the app and serve it until a stop is asked for; 0, or 2 when the port was taken meanwhile."""
    from .build import build_app, launch_kwargs
    from .tabs import overview

    demo = build_app(ctx)
    # The leaderboard bootstraps every run and metric: build it while the server starts, so the
    # first visitor finds it cached (a visitor arriving earlier waits for this same build).
    threading.Thread(target=overview.compute, args=(ctx, None, False), daemon=True,
                     name=f"{THREAD_PREFIX}warm-overview").start()
    demo.queue(default_concurrency_limit=8)
    stop.check()
    try:
        demo.launch(server_name=host, server_port=port, auth=users, footer_links=[], prevent_thread_lock=True,
                    **launch_kwargs())
    except OSError:
        # Taken meanwhile: Gradio's own message advises a launch() argument that does not apply here.
        problem = why_cannot_listen(host, port)
        if problem is None:
            raise
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        while demo.is_running and stop.signum is None:
            time.sleep(0.2)
    finally:
        demo.close(verbose=False)
    return 0
