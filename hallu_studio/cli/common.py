"""Options and helpers shared by subcommands."""

from __future__ import annotations

import argparse
import sys

from ..config import Settings, load_settings
from ..names import unknown_name
from ..store import Store, default_db_path, existing_store_path


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


def open_store(args: argparse.Namespace, *, create: bool = False) -> Store:
    """The store to write to; only ``create`` (importing) makes a new file, a typo is an error."""
    db = settings_from(args).db
    return Store(db if create else existing_store_path(db))


def open_store_for_reading(args: argparse.Namespace) -> Store:
    """The store to read from, never created; answered from a read-only snapshot while another
    process (the app) holds it, and said so on stderr."""
    store = Store.open_for_reading(settings_from(args).db)
    if store.snapshot_taken_at is not None:
        print(f"note: store held by another process (the app?); answered from a read-only snapshot taken at "
              f"{store.snapshot_taken_at:%H:%M:%S}", file=sys.stderr)
    return store


def check_benchmark(store: Store, name: str | None) -> None:
    """Refuse a benchmark name the store does not hold (None: every benchmark), listing those it does."""
    if name is not None and name not in (held := store.benchmark_names()):
        raise ValueError(unknown_name("benchmark", name, held, listing="the store holds"))


def split_names(text: str | None) -> list[str] | None:
    """``"a, b,"`` -> ``["a", "b"]``; None for no option."""
    return [n.strip() for n in text.split(",") if n.strip()] if text else None


def check_metrics(store: Store, text: str | None, benchmark: str | None = None) -> list[str] | None:
    """The metrics named in ``text`` (None: no option), each one the store holds scores of (on
    ``benchmark``); a typo names the known metrics and the closest, a known but unscored metric
    says what is scored."""
    from ..metrics.registry import parse_metric_names
    from ..studies.leaderboard import CONCEPTS

    names = split_names(text.lower() if text else None)
    if names is None:
        return None
    scored = [m for m in store.scored_metrics(benchmark) if m != CONCEPTS]
    for name in names:
        if name in scored:
            continue
        parse_metric_names([name])  # refuses a name no metric has, suggesting the closest
        where = f"on benchmark {benchmark!r}" if benchmark else "in the store"
        raise ValueError(f"no {name} scores {where} (scored: {', '.join(scored) or 'none'}); "
                         f"score them with `hallu-studio score --metrics {name}`")
    return list(dict.fromkeys(names))
