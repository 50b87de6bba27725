"""``python app.py [--db FILE] [--host H] [--port N] [--auth users.json]``: open the store, bootstrap
an empty one with the offline demo, and serve the app until interrupted."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from typing import TYPE_CHECKING, Sequence

from ..config import apply_offline_env_defaults, load_settings

if TYPE_CHECKING:
    from .bootstrap import BootstrapSteps
    from .context import AppContext


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="app.py", description="HalluStudio web app")
    p.add_argument("--db", help="DuckDB store (default: $HALLU_STUDIO_DB or the user data dir)")
    p.add_argument("--config", help="settings TOML (default: ./hallu-studio.toml or $HALLU_STUDIO_CONFIG)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--auth", metavar="USERS_JSON", help="users file for annotator sign-in "
                   "(or set $HALLU_STUDIO_USERS=name:password,...)")
    p.add_argument("--no-bootstrap", action="store_true", help="do not populate an empty store with the demo")
    return p.parse_args(argv)


def start_demo(ctx: "AppContext", steps: "BootstrapSteps | None" = None) -> None:
    """First start (or an interrupted one): import and run the probes now, score in the background."""
    from .bootstrap import BootstrapSteps, DemoProgress, finish_demo, needs_bootstrap, prepare_demo

    store = ctx.store
    if not needs_bootstrap(store):
        return
    print(f"first start: building the offline demo in {store.path}", flush=True)
    try:
        for line in prepare_demo(store, steps):
            print(f"first start: {line}", flush=True)
    except (ImportError, NotImplementedError) as exc:
        # The app still serves what the store holds; the message says what is missing.
        print(f"first start: the offline demo could not be built ({exc}); "
              "import a benchmark with `hallu-studio import` instead", file=sys.stderr)
        return
    progress = DemoProgress(store)
    steps = steps or BootstrapSteps(score=progress.score)
    ctx.background.start("scoring the offline demo in the background",
                         lambda: finish_demo(store, ctx.settings, steps), progress=progress.line)
    print("first start: scoring in the background; the app opens now and fills in as scores land", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    apply_offline_env_defaults()
    args = parse_args(argv)
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
        demo.launch(server_name=args.host, server_port=args.port, auth=users, footer_links=[],
                    **launch_kwargs())
    finally:
        store.close()
    return 0
