"""``hallu-studio run``: run a model (or a probe) over a benchmark; re-running resumes."""

from __future__ import annotations

import argparse

from ..backends.mitigation import MITIGATIONS
from ..prompts import GENERATION_PRESETS, PROMPTS
from .common import add_db_option, check_benchmark, open_store, settings_from, split_names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run an LVLM or a probe model over a benchmark",
                       description="Run a model over a benchmark. SPEC is transformers:<hub id or path>, "
                                   "openai:<model>@<base url>, probe:<options> or a preset name. "
                                   "Re-running the same command resumes where it stopped.")
    add_db_option(p)
    p.add_argument("--benchmark", required=True, help="benchmark name in the store")
    p.add_argument("--model", required=True, metavar="SPEC", help="model spec (see above)")
    p.add_argument("--prompt", default=None,
                   help=f"prompt name ({', '.join(PROMPTS)}) or literal text; default: per task "
                        "(captions: VISCON's 'Describe the image in detail.', questions: the question)")
    p.add_argument("--generation", default="greedy", choices=sorted(GENERATION_PRESETS))
    p.add_argument("--max-new-tokens", type=int, default=512)
    p.add_argument("--mitigation", default="none", choices=MITIGATIONS)
    p.add_argument("--task", default=None, help="comma-separated tasks to run (caption,vqa,yes_no,mcq)")
    p.add_argument("--limit", type=int, default=None, help="run the first N samples only")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--concurrency", type=int, default=8, help="parallel requests (openai backend)")
    p.add_argument("--batch-size", type=int, default=8,
                   help="batch size (transformers backend); responses are committed every batch")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per request (openai backend)")
    p.add_argument("--logit-lens", type=int, default=0, metavar="K",
                   help="record the top-K tokens of every layer at the answer position (transformers)")
    p.add_argument("--no-logprobs", action="store_true", help="do not record per-token log-probabilities")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..backends import make_backend
    from ..pipelines.running import RunOptions, execute_run

    settings = settings_from(args)
    with open_store(args) as store:
        check_benchmark(store, args.benchmark)  # before a model spends minutes loading
        backend = make_backend(args.model, batch_size=args.batch_size, concurrency=args.concurrency,
                               timeout_s=args.timeout)
        # Responses are committed once per chunk: a batch, or one round of concurrent requests.
        chunk = args.concurrency if backend.kind == "openai" else args.batch_size
        options = RunOptions(
            benchmark=args.benchmark, prompt=args.prompt, generation=args.generation,
            max_new_tokens=args.max_new_tokens, mitigation=args.mitigation, seed=args.seed,
            token_logprobs=not args.no_logprobs, logit_lens_top_k=args.logit_lens, decoding=settings.decoding,
            tasks=split_names(args.task), limit=args.limit, chunk_size=max(1, chunk))
        try:
            summary = execute_run(store, backend, options, progress=not args.quiet)
        finally:
            backend.close()
    print(summary.line())
    return 0 if summary.status in ("completed", "cancelled") else 1
