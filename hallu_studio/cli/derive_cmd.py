"""``hallu-studio derive pope``: a VISCON-QA / POPE benchmark from a stored benchmark's scene graphs.

The existence questions (objects, attributes, relations; negatives sampled at random,
by popularity or adversarially) become a benchmark of their own, ``<source>-pope-<strategy>``,
that `run` and `score --metrics pope` treat like any other.
"""

from __future__ import annotations

import argparse

from .common import add_db_option, check_benchmark, open_store, split_names


def register(sub: argparse._SubParsersAction) -> None:
    from ..metrics.pope import CONCEPT_KINDS, STRATEGIES

    p = sub.add_parser("derive", help="derive a benchmark from a stored one (POPE / VISCON-QA questions)")
    p.add_argument("what", choices=("pope",), help="pope: existence questions from the scene graphs")
    add_db_option(p)
    p.add_argument("--benchmark", required=True, help="the stored benchmark whose scene graphs to ask about")
    p.add_argument("--strategy", choices=STRATEGIES, default="random", help="how negatives are sampled")
    p.add_argument("--kinds", default=",".join(CONCEPT_KINDS),
                   help=f"comma-separated concept kinds (default: {','.join(CONCEPT_KINDS)})")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--name", default=None, help="name of the new benchmark (default: <benchmark>-pope-<strategy>)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..importers.base import ParsedBenchmark
    from ..metrics.pope import CONCEPT_KINDS, existence_samples
    from ..model import Benchmark
    from ..pipelines.importing import import_benchmark

    kinds = split_names(args.kinds) or []
    unknown = sorted(set(kinds) - set(CONCEPT_KINDS))
    if unknown or not kinds:
        raise ValueError(f"--kinds takes {', '.join(CONCEPT_KINDS)}; got {args.kinds!r}")
    name = args.name or f"{args.benchmark}-pope-{args.strategy}"
    with open_store(args) as store:
        check_benchmark(store, args.benchmark)
        source = list(store.iter_samples(args.benchmark))
        if not source:
            raise ValueError(f"benchmark {args.benchmark!r} has no samples")
        samples = existence_samples(source, benchmark=name, strategy=args.strategy, kinds=kinds, seed=args.seed)
        if not samples:
            raise ValueError(f"benchmark {args.benchmark!r} has no scene graphs to ask about")
        description = (f"VISCON-QA / POPE existence questions ({args.strategy} negatives; {', '.join(kinds)}) "
                       f"from the scene graphs of {args.benchmark}")
        parsed = ParsedBenchmark(Benchmark(name, description, source=f"derived from {args.benchmark}",
                                           meta={"strategy": args.strategy, "kinds": kinds, "seed": args.seed}),
                                 samples=samples)
        report = import_benchmark(store, parsed)
    print(report.summary())
    return 0
