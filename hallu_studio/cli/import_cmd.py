"""``hallu-studio import``: read a benchmark or recorded responses into the store.

Exit status: 0 every record went through, 1 some records failed (listed), 2 usage or
fatal error (the file cannot be read at all).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from ..importers.base import ImportProblem, ParsedBenchmark, ParsedResponses
from ..pipelines.importing import ImportReport, import_benchmark, import_events, import_responses
from ..store import Store
from .common import add_db_option, check_benchmark, settings_from

FORMATS = ("sample", "tri-he", "reefknot", "vg", "gqa", "halfscore", "coco", "lmms-eval", "vlmevalkit", "jsonl",
           "human-judgements")
# The options each format reads; any other given would be dropped silently, so it is refused.
FORMAT_OPTIONS: dict[str, tuple[str, ...]] = {
    "sample": (),
    "tri-he": ("path", "images", "benchmark"),
    "reefknot": ("path", "images", "benchmark"),
    "vg": ("path", "images", "regions", "benchmark"),
    "gqa": ("path", "images", "benchmark"),
    "halfscore": ("path", "images", "benchmark", "model"),
    "coco": ("path", "images", "benchmark"),
    "lmms-eval": ("path", "benchmark", "model"),
    "vlmevalkit": ("path", "benchmark", "model"),
    "jsonl": ("path", "images", "benchmark", "model"),
    "human-judgements": ("path",),
}
MAX_PROBLEM_LINES = 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import a benchmark, recorded responses or human judgements made elsewhere "
                                      "(formats: docs/formats.md)")
    p.add_argument("--format", required=True, choices=FORMATS)
    p.add_argument("path", metavar="PATH", nargs="?",
                   help="file or folder to import (not needed for 'sample'); human-judgements: a study's folder "
                        "(haelm, mhaldetect, faithscore, iiw400) or a generic human-judgement JSONL")
    p.add_argument("--images", metavar="DIR", help="folder of the images (by image id or file name)")
    p.add_argument("--regions", metavar="FILE", help="vg: region_descriptions.json")
    p.add_argument("--benchmark", metavar="NAME",
                   help="benchmark files: import under this name; responses: the benchmark (or id prefix such "
                        "as reefknot/vqa) they answer")
    p.add_argument("--model", metavar="NAME", help="model name of recorded responses")
    add_db_option(p)
    p.set_defaults(func=run)


def print_problems(problems: list[ImportProblem], limit: int = MAX_PROBLEM_LINES) -> None:
    """One line per problem (errors first), capped at ``limit`` lines."""
    ordered = [p for p in problems if p.fatal] + [p for p in problems if not p.fatal]
    for p in ordered[:limit]:
        print(f"{'error' if p.fatal else 'warning'}: {p}", file=sys.stderr)
    if len(ordered) > limit:
        print(f"… {len(ordered) - limit} more", file=sys.stderr)


def _benchmarks(args: argparse.Namespace) -> list[ParsedBenchmark]:
    fmt, path = args.format, args.path
    if fmt == "sample":
        try:
            from ..sample import build_sample_benchmark
        except ImportError as exc:
            raise ValueError(f"the embedded sample benchmark is not available ({exc})") from exc
        return [build_sample_benchmark()]
    if fmt == "tri-he":
        from ..importers.tri_he import read_tri_he
        return [read_tri_he(path, args.images, **_name(args, "tri-he"))]
    if fmt == "vg":
        from ..importers.scene_graphs import read_visual_genome
        return [read_visual_genome(path, args.regions, args.images, **_name(args, "vg"))]
    if fmt == "gqa":
        from ..importers.scene_graphs import read_gqa
        return [read_gqa(path, args.images, **_name(args, "gqa"))]
    raise AssertionError(fmt)


def _name(args: argparse.Namespace, default: str) -> dict[str, str]:
    return {"benchmark": args.benchmark or default}


def _responses(args: argparse.Namespace, store: Store, reader: Callable[..., ParsedResponses],
               path: str | Path, benchmark: str | None) -> ParsedResponses:
    """Run a recorded-responses reader against the stored samples of ``benchmark`` (a name or id prefix)."""
    if not benchmark:
        raise ValueError(f"--format {args.format} needs --benchmark NAME (the benchmark the responses answer)")
    check_benchmark(store, benchmark.split("/")[0])
    known = store.sample_ids(benchmark.split("/")[0])
    if not known:
        raise ValueError(f"the store holds no samples of benchmark {benchmark.split('/')[0]!r}; import it first")
    return reader(path, known, benchmark=benchmark, model=args.model)


def _run_format(args: argparse.Namespace, store: Store) -> list[ImportReport]:
    fmt, path = args.format, args.path
    if fmt != "sample" and not path:
        raise ValueError(f"--format {fmt} needs a PATH")
    if fmt in ("sample", "tri-he", "vg", "gqa"):
        return [import_benchmark(store, b) for b in _benchmarks(args)]
    if fmt == "reefknot":
        from ..importers.reefknot import read_reefknot
        bench, recorded = read_reefknot(path, args.images, **_name(args, "reefknot"))
        reports = [import_benchmark(store, bench)]
        if recorded.responses:
            reports.append(import_responses(store, recorded, f"{bench.benchmark.name} recorded responses"))
        return reports
    if fmt == "halfscore":
        from ..importers import halfscore
        p = Path(path)
        reports = []
        if p.is_dir() or p.suffix == ".json":
            reports.append(import_benchmark(store, halfscore.read_halfscore_annotations(
                p, args.images, **_name(args, "halfscore"))))
        caption_files = sorted(p.glob(f"*{halfscore.CAPTIONS_SUFFIX}")) if p.is_dir() else (
            [p] if p.suffix == ".jsonl" else [])
        for f in caption_files:
            parsed = _responses(args, store, halfscore.read_halfscore_captions, f, args.benchmark or "halfscore")
            reports.append(import_responses(store, parsed, f.name))
        if not reports:
            raise ValueError(f"{p}: expected annotation.json, a *{halfscore.CAPTIONS_SUFFIX} file or a folder of them")
        return reports
    if fmt == "coco":
        from ..importers.coco import read_coco
        reports = []
        for parsed in read_coco(path, args.images, benchmark=args.benchmark):
            report = import_benchmark(store, parsed)
            report.name += f" ({' + '.join(parsed.benchmark.meta['files'])})"  # say which files were found
            reports.append(report)
        return reports
    if fmt == "lmms-eval":
        from ..importers.toolkits import read_lmms_eval
        parsed = _responses(args, store, read_lmms_eval, path, args.benchmark)
        return [import_responses(store, parsed, Path(path).name)]
    if fmt == "vlmevalkit":
        from ..importers.toolkits import read_vlmevalkit
        parsed = _responses(args, store, read_vlmevalkit, path, args.benchmark)
        return [import_responses(store, parsed, Path(path).name)]
    if fmt == "human-judgements":
        from ..pipelines.importing import import_human_judgements
        return import_human_judgements(store, path)
    if fmt == "jsonl":
        from ..importers import jsonl
        kind = jsonl.detect_kind(path)
        if kind == "samples":
            return [import_benchmark(store, b) for b in jsonl.read_jsonl_samples(path, args.images)]
        if kind == "judgments":
            events, problems = jsonl.read_jsonl_judgments(path)
            return [import_events(store, events, problems, Path(path).name)]
        known = store.sample_ids(args.benchmark.split("/")[0] if args.benchmark else None)
        return [import_responses(store, jsonl.read_jsonl_responses(path, known, benchmark=args.benchmark,
                                                                   model=args.model), Path(path).name)]
    raise ValueError(f"unknown format {fmt!r}")


def refuse_unread_options(args: argparse.Namespace) -> None:
    """Name the first option given that ``--format`` does not read, and the formats that do."""
    for option in ("path", "images", "regions", "benchmark", "model"):
        if getattr(args, option) is not None and option not in FORMAT_OPTIONS[args.format]:
            flag = "a PATH" if option == "path" else f"--{option}"
            readers = [f for f, options in FORMAT_OPTIONS.items() if option in options]
            raise ValueError(f"--format {args.format} does not take {flag} (formats that do: {', '.join(readers)})")


def refuse_missing_paths(args: argparse.Namespace) -> None:
    """A PATH, ``--images`` folder or ``--regions`` file that is not there is refused before any store is made."""
    if args.format != "sample" and not args.path:
        raise ValueError(f"--format {args.format} needs a PATH")
    for flag, value in (("PATH", args.path), ("--images", args.images), ("--regions", args.regions)):
        if value is not None and not Path(value).exists():
            raise FileNotFoundError(f"{flag} {value} does not exist; nothing was imported and no store was created")


def run(args: argparse.Namespace) -> int:
    refuse_unread_options(args)
    refuse_missing_paths(args)
    target = Path(settings_from(args).db).expanduser()
    existed = target.exists()
    try:
        with Store(target) as store:  # only import creates a store
            reports = _run_format(args, store)
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
