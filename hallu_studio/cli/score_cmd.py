"""``hallu-studio score``: score what is missing in the store, or a JSONL file statelessly."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext

from ..llm.endpoint import in_force
from ..names import unknown_name
from .common import add_db_option, open_store, settings_from

DEFAULT_METRICS = "emd,edit,trihe,halfscore,reefknot,chair,accuracy"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score responses with metrics (resumable), or a JSONL file",
                       description="Score every stored response a metric has not scored under the current "
                                   "settings; or, with --input/--output, score a JSONL file without a store.")
    add_db_option(p)
    p.add_argument("--metrics", default=DEFAULT_METRICS, help=f"comma-separated (default: {DEFAULT_METRICS})")
    p.add_argument("--run", metavar="RUN", default=None, help="only this run's responses")
    p.add_argument("--input", metavar="IN.jsonl", default=None, help="stateless mode: lines to score")
    p.add_argument("--output", metavar="OUT.jsonl", default=None, help="stateless mode: where to write")
    p.add_argument("--cache", metavar="FILE", default=None,
                   help="stateless mode: keep concepts, phrase vectors, LLM answers and each line's results in FILE "
                        "(a DuckDB file, made if missing) for the next run, which reads a line scored before under "
                        "the same settings back instead of scoring it (failures are scored again); without it a run "
                        "remembers them only while it runs. A store always caches them")
    p.add_argument("--batch-size", type=int, default=None, help="responses per transaction")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="score batches in N processes (each loads its models once; this process alone writes the "
                        "store); default: scoring.workers, 0 = one per core. With --engine ray: N actors (default: "
                        "one per CPU of the cluster)")
    p.add_argument("--engine", choices=("processes", "ray"), default="processes",
                   help="processes: on this machine; ray: on Ray actors (pip install 'hallu-studio[ray]'), a local "
                        "Ray or the cluster at --ray-address")
    p.add_argument("--ray-address", metavar="ADDR", default=None, help="a Ray cluster's address (e.g. HOST:6379)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..metrics.registry import check_llm_configured, llm_steps, metrics_depending_on, parse_metric_names

    names = parse_metric_names(args.metrics)
    settings = settings_from(args)
    check_llm_configured(settings, names, reachable=True)  # one line, before anything slow is imported or built
    if llm_steps(settings, names):
        print(f"note: {', '.join(llm_steps(settings, names))}: {in_force(settings)}", file=sys.stderr)
    sc = settings.scoring
    judged = set(metrics_depending_on("scoring.vlm_judge_model")) & set(names)
    if sc.vlm_judge_model and judged and (sc.trihe_judge == "vlm" or sc.vlm_judge_unsettled == "image"):
        what = "every Tri-HE claim" if sc.trihe_judge == "vlm" else "what the reference leaves unverifiable"
        print(f"note: image judge {sc.vlm_judge_model} ({sc.vlm_judge_template} wording) for {what}", file=sys.stderr)
        from ..judges.factory import build_image_judge

        check = getattr(build_image_judge(settings).backend, "check_endpoint", None)
        if check is not None:  # a server that is not there, or does not serve the model: one line, before any work
            check()
    from ..pipelines.scoring import score_store
    from ..pipelines.scoring_jsonl import score_jsonl

    if args.batch_size is not None:
        if args.batch_size < 1:
            raise ValueError("--batch-size must be at least 1")
        settings.scoring.batch_size = args.batch_size
    from ..pipelines.engines import make_engine

    workers = args.workers if args.workers is not None else settings.scoring.workers
    engine = make_engine(args.engine, workers if args.engine != "ray" or args.workers is not None else None,
                         args.ray_address)
    if (args.input is None) != (args.output is None):
        raise ValueError("stateless scoring needs both --input and --output")
    if args.cache is not None and args.input is None:
        raise ValueError("--cache is for stateless scoring (--input/--output): a store keeps its own cache")
    if args.input is not None:
        from ..store import CacheFile

        with CacheFile(args.cache) if args.cache is not None else nullcontext() as cache_file:
            report = score_jsonl(args.input, args.output, settings, names, progress=not args.no_progress,
                                 cache=cache_file.cache if cache_file is not None else None, engine=engine)
        for warning in report.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        for error in report.errors[:20]:
            print(f"bad input: {error}", file=sys.stderr)
        for failure in report.llm_failures[:20]:
            print(f"failed: {failure}", file=sys.stderr)
        print(f"{report.summary()} -> {args.output}")
        # as `import` and `run`: 1 when some item did not go through
        return 1 if report.errors or report.llm_failures else 0
    with open_store(args) as store:
        if args.run is not None and store.get_run(args.run) is None:
            raise ValueError(unknown_name("run", args.run, [r["id"] for r in store.list_runs()],
                                          listing="runs in the store"))
        report = score_store(store, settings, names, run_id=args.run, progress=not args.no_progress, engine=engine)
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for failure in report.failures:
        print(f"failed: {failure}", file=sys.stderr)
    print(report.summary())
    return 1 if report.failed else 0
