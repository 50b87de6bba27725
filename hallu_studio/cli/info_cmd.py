"""``hallu-studio info``: what the store holds, the settings and LLM in force, and the lexical resources the scores
read (WordNet, the spaCy model, the embedding model) and where each comes from."""

from __future__ import annotations

import argparse

from ..config import load_settings
from ..llm.endpoint import in_force
from ..resources import lexical_resources
from ..store import StoreNotFoundError
from .common import add_db_option, open_store_for_reading


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="print what the store holds")
    add_db_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        _store_part(args)
    except StoreNotFoundError:
        _in_force_part(args)  # what is in force is worth saying with no store yet, too (the error follows)
        raise
    _in_force_part(args)
    return 0


def _in_force_part(args: argparse.Namespace) -> None:
    settings = load_settings(getattr(args, "config", None))
    print(f"settings: {settings.source or 'no settings file (defaults and environment)'}")
    print(in_force(settings))
    print("lexical resources:")
    for name, what in lexical_resources(settings):
        print(f"  {name}: {what}")


def _store_part(args: argparse.Namespace) -> None:
    with open_store_for_reading(args) as store:
        snapshot = f", read-only snapshot taken at {store.snapshot_taken_at:%H:%M:%S}" if store.snapshot_of else ""
        print(f"store: {store.snapshot_of or store.path} (schema v{store.schema_version()}{snapshot})")
        infos = store.benchmark_infos()
        print(f"benchmarks: {len(infos)}")
        for b in infos:
            tasks = ", ".join(f"{t} {n}" for t, n in sorted(b.tasks.items()))
            print(f"  {b.name}: {b.images} images ({b.images_found} found), {b.samples} questions [{tasks}]")
        runs = store.list_runs()
        print(f"runs: {len(runs)}")
        for r in runs:
            tag = " [synthetic]" if r["synthetic"] else ""
            print(f"  {r['id']} {r['model']} ({r['backend']}){tag} on {r['benchmark']}: "
                  f"{r['responses']} responses, {r['failures']} failures, {r['status']}")
        c = store.counts()
        print(f"responses: {c['responses']}  scores: {c['scores']}  human events: {c['events']}  "
              f"annotators: {c['annotators']}")
