"""The ``hallu-studio`` command line: a thin caller of the library.

Each subcommand lives in its own module with ``register(subparsers)`` that adds its
parser and sets ``func(args) -> int`` (the exit status).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from ..config import apply_offline_env_defaults

# Modules providing subcommands, in the order ``--help`` lists them.
COMMAND_MODULES = ["info_cmd", "import_cmd", "export_cmd", "run_cmd", "score_cmd", "study_cmd", "leaderboard_cmd",
                   "derive_cmd", "app_cmd", "report_cmd"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hallu-studio",
        description="Measure and inspect hallucination in vision-language models.")
    from .. import __version__
    parser.add_argument("--version", action="version", version=f"hallu-studio {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    apply_offline_env_defaults()
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    # Only a command that hands its options on (``app``) takes options this parser does not know.
    if rest and not getattr(args, "passes_options_on", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.passed_on = rest
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the CLI's last line of defence: one clear line, no traceback
        from ..store import StoreError
        if isinstance(exc, (StoreError, FileNotFoundError, ValueError)):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
