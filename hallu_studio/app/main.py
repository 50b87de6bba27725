"""``python app.py [--db FILE] [--host H] [--port N] [--auth users.json]``: open the store, bootstrap
an empty one with the offline demo, and serve the app until interrupted."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from typing import Sequence

from ..config import apply_offline_env_defaults, load_settings


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


def main(argv: Sequence[str] | None = None) -> int:
    apply_offline_env_defaults()
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per local request is noise
    from ..store import Store, StoreError
    from .bootstrap import bootstrap
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
        if not args.no_bootstrap:
            from .bootstrap import needs_bootstrap

            if needs_bootstrap(store):
                print("first start: building the offline demo in "
                      f"{store.path} (a few minutes on 2 cores; later starts take seconds)", flush=True)
            try:
                for line in bootstrap(store, settings):
                    print(f"first start: {line}")
            except (ImportError, NotImplementedError) as exc:
                # The app still serves what the store holds; the message says what is missing.
                print(f"first start: the offline demo could not be built ({exc}); "
                      "import a benchmark with `hallu-studio import` instead", file=sys.stderr)
        ctx = AppContext(store=store, settings=settings, auth_enabled=users is not None)
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
