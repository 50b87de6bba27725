"""The LLM paths beside the offline ones, on the same probes and real answers (issue 13).

Needs an OpenAI-compatible endpoint in ``--config`` (``[llm] base_url`` and ``model``). On the first
``--captions`` captions of the sample benchmark (probe at ``--rate``, all four types) it reports, per
hallucination type, detection and false alarms of:

* Tri-HE: the graph judge (offline) and the LLM judge, both on the parser's claims; the graph judge on
  the claims of the LLM extractor (VISCON's three prompts);
* HalFscore: the graph matcher (offline) and the LLM matcher (A.8's prompt);

and, on the first ``--questions`` real Tri-HE gold answers (``../shared/datasets/tri-he``), Hallu_Q of
the graph and the LLM judge. Every row says the LLM calls it made, their parse failures and the
seconds per response. Nothing is cached (no store): every row asks the server.

    python benchmarks/bench_llm_validity.py --config hallu-studio.toml [--captions 8] [--questions 20]
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_validity as bv  # noqa: E402 - the probes, detection and Hallu_Q of the offline bench

from hallu_studio.config import Settings, load_settings  # noqa: E402
from hallu_studio.llm.dispatch import all_stats, stats_since  # noqa: E402
from hallu_studio.metrics.registry import make_extractor, make_metrics  # noqa: E402
from hallu_studio.metrics.trihe import TriHEMetric  # noqa: E402


def _with(settings: Settings, **scoring: Any) -> Settings:
    out = copy.deepcopy(settings)
    for key, value in scoring.items():
        setattr(out.scoring, key, value)
    return out


def _calls(before: dict[str, Any], n: int, seconds: float) -> str:
    d = stats_since(before, all_stats())
    failures = sum(d.get("parse_failures", {}).values())
    return f"{d['calls']} calls, {d['failed']} failed, {failures} parse failures, {seconds / max(n, 1):.1f} s/response"


def _detection_cells(row: Any) -> str:
    cells = [f"{bv._rate(row.by_type.get(t, (0, 0))[1], row.by_type.get(t, (0, 0))[0])} "
             f"({row.by_type.get(t, (0, 0))[1]}/{row.by_type.get(t, (0, 0))[0]})" for t in bv.TYPES]
    return " | ".join(cells) + f" | {bv._rate(row.false_alarms, row.stated)} ({row.false_alarms}/{row.stated})"


def section_probes(settings: Settings, n: int, rate: float) -> str:
    from hallu_studio.components import Components
    from hallu_studio.sample.build import build_sample_benchmark

    samples = [s for s in build_sample_benchmark(with_variants=False).samples if s.task == "caption"][:n]
    spec = f"rate={rate},mix=object+attribute+relation+count,seed=1"
    parsed = bv.probe_items(samples, spec, Components(settings).parser())
    lines = [f"### Sample captions: probe rate {rate}, all four types, first {len(parsed)} captions", "",
             "| metric | extraction | " + " | ".join(f"{t} detected" for t in bv.TYPES) +
             " | false alarms | LLM calls |", "|---|---|" + "---|" * (len(bv.TYPES) + 2)]

    def row(label: str, extraction: str, metric: Any, items: Sequence[Any]) -> None:
        before, t0 = all_stats(), time.perf_counter()
        results = bv.score(metric, [i for i, _ in items])
        seconds = time.perf_counter() - t0
        lines.append(f"| {label} | {extraction} | {_detection_cells(bv.detection(label.split(' ')[0], items, results))}"
                     f" | {_calls(before, len(items), seconds)} |")
        print(lines[-1], file=sys.stderr, flush=True)

    row("trihe (graph)", "parser", TriHEMetric.from_settings(_with(settings, trihe_judge="graph")), parsed)
    row("trihe (llm)", "parser", TriHEMetric.from_settings(_with(settings, trihe_judge="llm")), parsed)
    llm_settings = _with(settings, extractor="llm", trihe_judge="graph")
    extractor = make_extractor(llm_settings)
    before, t0 = all_stats(), time.perf_counter()
    by_llm, lost = [], 0
    for sample in samples:  # caption by caption, as the scoring pipeline falls back: a failure loses one
        try:
            by_llm += bv.probe_items([sample], spec, extractor)
        except Exception as exc:  # noqa: BLE001 - counted and said, as the pipeline records a failure
            lost += 1
            print(f"  LLM extraction failed for {sample.id}: {str(exc)[:200]}", file=sys.stderr)
    extraction_cost = _calls(before, len(samples), time.perf_counter() - t0)
    if by_llm:
        row("trihe (graph)", "llm", TriHEMetric.from_settings(llm_settings), by_llm)
    for matcher in ("graph", "llm"):
        metric = make_metrics(["halfscore"], _with(settings, halfscore_matcher=matcher), None, None)[0]
        row(f"halfscore ({matcher} matcher)", "parser", metric, parsed)
    lines.append("")
    lines.append(f"The LLM extractor itself: {extraction_cost}; {lost} of {len(samples)} captions lost to answers "
                 "that could not be used.")
    return "\n".join(lines)


def section_trihe_gold(settings: Settings, questions: int) -> str:
    from hallu_studio.components import Components

    if not (bv.SHARED / "tri-he").exists():
        return "### Real Tri-HE gold answers\n\n(skipped: ../shared/datasets/tri-he is not here)"
    samples = bv._trihe_samples(questions)
    items = bv.probe_items(samples, "rate=0,mix=object+relation,seed=1", Components(settings).parser())
    lines = [f"### Real Tri-HE: gold answers of the first {len(samples)} questions", "",
             "| judge | Hallu_Q of the gold answers | hallucinated claims / claims | LLM calls |", "|---|---|---|---|"]
    for judge in ("graph", "llm"):
        metric = TriHEMetric.from_settings(_with(settings, trihe_judge=judge))
        before, t0 = all_stats(), time.perf_counter()
        results = bv.score(metric, [i for i, _ in items])
        seconds = time.perf_counter() - t0
        stats = [res.stats for res in results]
        out = metric.compute(stats)
        hallucinated = sum(int(st.get("hallucinated", 0)) for st in stats)
        claims = sum(int(st.get("n_triplets", 0)) for st in stats)
        lines.append(f"| {judge} | {out['hallu_q']:.1f} | {hallucinated} / {claims} | "
                     f"{_calls(before, len(items), seconds)} |")
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, help="a hallu-studio.toml whose [llm] names the endpoint")
    ap.add_argument("--captions", type=int, default=8)
    ap.add_argument("--questions", type=int, default=20)
    ap.add_argument("--rate", type=float, default=0.3)
    args = ap.parse_args()
    settings = load_settings(args.config)
    if not settings.llm.configured:
        sys.exit(f"{args.config}: no [llm] base_url and model; this bench measures the LLM paths")
    print(f"_Produced by `python benchmarks/bench_llm_validity.py --captions {args.captions} --questions "
          f"{args.questions}` on {time.strftime('%Y-%m-%d')} against {settings.llm.model} at "
          f"{', '.join(settings.llm.base_urls)}._\n")
    print(section_probes(settings, args.captions, args.rate) + "\n", flush=True)
    print(section_trihe_gold(settings, args.questions), flush=True)


if __name__ == "__main__":
    main()
