"""``hallu-studio app [options]``: serve the web app, exactly as ``python app.py [options]``.

Its options are the app's own (``hallu-studio app --help`` lists them); they are handed over
as they are, so the app (and Gradio) load only when this command runs.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("app", add_help=False,
                       help="serve the web app (options as python app.py: --db, --host, --port, --auth ...)")
    p.set_defaults(func=run, passes_options_on=True)


def run(args: argparse.Namespace) -> int:
    from ..app.main import main

    return main(args.passed_on, prog="hallu-studio app")
