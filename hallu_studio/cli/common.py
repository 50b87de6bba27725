"""Options and helpers shared by subcommands."""

from __future__ import annotations

import argparse
import sys

from ..config import Settings, load_settings
from ..store import Store, default_db_path


def add_db_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="FILE", default=None,
                        help=f"DuckDB store (default: $HALLU_STUDIO_DB or {default_db_path()})")
    parser.add_argument("--config", metavar="TOML", default=None,
                        help="settings file (default: ./hallu-studio.toml or $HALLU_STUDIO_CONFIG)")


def settings_from(args: argparse.Namespace) -> Settings:
    settings = load_settings(getattr(args, "config", None))
    if settings.source and not getattr(args, "config", None):
        # A settings file picked up from the working directory changes scores: say so.
        print(f"note: using settings from {settings.source}", file=sys.stderr)
    if getattr(args, "db", None):
        settings.db = args.db
    return settings


def open_store(args: argparse.Namespace, *, read_only: bool = False) -> Store:
    return Store(settings_from(args).db, read_only=read_only)
