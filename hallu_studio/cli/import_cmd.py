"""``hallu-studio import``: read a benchmark or recorded responses into the store.

Exit status: 0 every record went through, 1 some records failed (listed), 2 usage or
fatal error (the file cannot be read at all).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..importers import registry
from ..importers.base import ImportProblem
from ..pipelines.importing import import_format
from ..store import Store
from .common import add_db_option, settings_from

MAX_PROBLEM_LINES = 20


def register(sub: argparse._SubParsersAction) -> None:
    formats = registry.formats()
    listing = "\n".join(f"  {f.name:<17} {f.summary}" for f in formats)
    p = sub.add_parser("import", help="import a benchmark, recorded responses or human judgements made elsewhere "
                                      "(formats: docs/formats.md)",
                       description=f"formats:\n{listing}", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", required=True, choices=[f.name for f in formats], metavar="FORMAT",
                   help="one of: " + ", ".join(f.name for f in formats))
    p.add_argument("path", metavar="PATH", nargs="?",
                   help="file or folder to import (not needed for 'sample'); " + "; ".join(
                       f"{f.name}: {f.path_help}" for f in formats if f.path_help))
    p.add_argument("--images", metavar="DIR", help="folder of the images (by image id or file name)")
    p.add_argument("--regions", metavar="FILE", help="vg: region_descriptions.json")
    p.add_argument("--benchmark", metavar="NAME",
                   help="benchmark files: import under this name; responses: the benchmark (or id prefix such "
                        "as reefknot/vqa) they answer")
    p.add_argument("--model", metavar="NAME", help="model name of recorded responses")
    p.add_argument("--responses", metavar="FILE", help="image-folder: responses to the images (JSONL or CSV: image, "
                                                       "response, model)")
    add_db_option(p)
    p.set_defaults(func=run)


def print_problems(problems: list[ImportProblem], limit: int = MAX_PROBLEM_LINES) -> None:
    """One line per problem (errors first), capped at ``limit`` lines."""
    ordered = [p for p in problems if p.fatal] + [p for p in problems if not p.fatal]
    for p in ordered[:limit]:
        print(f"{'error' if p.fatal else 'warning'}: {p}", file=sys.stderr)
    if len(ordered) > limit:
        print(f"… {len(ordered) - limit} more", file=sys.stderr)


def request_from(args: argparse.Namespace) -> registry.ImportRequest:
    def path(value: str | None) -> Path | None:
        return None if value is None else Path(value)

    return registry.ImportRequest(path(args.path), path(args.images), path(args.regions), args.benchmark, args.model,
                                  path(args.responses))


def refuse_missing_paths(args: argparse.Namespace) -> None:
    """A PATH, ``--images`` folder, ``--regions`` or ``--responses`` file that is not there is refused before any
    store is made."""
    for flag, value in (("PATH", args.path), ("--images", args.images), ("--regions", args.regions),
                        ("--responses", args.responses)):
        if value is not None and not Path(value).exists():
            raise FileNotFoundError(f"{flag} {value} does not exist; nothing was imported and no store was created")


def run(args: argparse.Namespace) -> int:
    request = request_from(args)
    registry.refuse_unread_options(registry.import_format(args.format), request)
    refuse_missing_paths(args)
    target = Path(settings_from(args).db).expanduser()
    existed = target.exists()
    try:
        with Store(target) as store:  # only import creates a store
            reports = import_format(store, args.format, request)
    except BaseException:
        if not existed:  # a store this command made for an import that did not happen: leave nothing behind
            for leftover in (target, target.with_name(target.name + ".wal")):
                leftover.unlink(missing_ok=True)
        raise
    status = 0
    for report in reports:
        print_problems(report.problems)
        print(report.summary())
        if not report.ok:
            status = 1
    return status
