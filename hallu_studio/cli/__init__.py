"""The ``hallu-studio`` command line: a thin caller of the library.

Each subcommand lives in its own module with ``register(subparsers)`` that adds its
parser and sets ``func(args) -> int`` (the exit status).
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import threading
from typing import Any, Sequence

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


def _interrupt_on_sigterm() -> Any:
    """SIGTERM (a service manager's stop, ``kill``) ends a command as Ctrl-C does: through its ``finally`` and
    ``with`` blocks, so a store is checkpointed and closed and every finished batch stays. Python's default for
    SIGTERM ends the process at once. (``app`` installs its own handlers.)"""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    if threading.current_thread() is threading.main_thread():
        return signal.signal(signal.SIGTERM, interrupt)  # the handler before, put back on return
    return None


def main(argv: Sequence[str] | None = None) -> int:
    apply_offline_env_defaults()
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    # Only a command that hands its options on (``app``) takes options this parser does not know.
    if rest and not getattr(args, "passes_options_on", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.passed_on = rest
    before = _interrupt_on_sigterm()
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt as exc:
        which = "SIGTERM" if str(exc) == "SIGTERM" else "SIGINT"
        print(f"interrupted ({which}): what finished before is saved (a store keeps every finished batch, and "
              f"the same command resumes from there)", file=sys.stderr)
        return 143 if which == "SIGTERM" else 130
    except Exception as exc:  # noqa: BLE001 - the CLI's last line of defence: one clear line, no traceback
        from ..store import StoreError
        if isinstance(exc, (StoreError, FileNotFoundError, ValueError)):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
