"""Does each offline score track hallucination? Probes with known injected errors, and real data, in one run.

Sections (each prints a Markdown table; ``--write`` puts them all into docs/validity.md between the
``<!-- bench_validity -->`` markers):

* ``sample``: the embedded sample's captions, probe at ``--rate`` (all four types), extracted with the
  offline parser. Per metric × injected type: injected, detected, detection rate; per metric: false
  alarms among the concepts the probe stated correctly (``studies.probe_detection``).
* ``trihe``: real Tri-HE (``../shared/datasets/tri-he``), first ``--questions`` questions. Gold answers
  (probe rate 0) and probes at 0.1, 0.3, 0.5: Hallu_Q with a 95 % bootstrap CI by image, per judge;
  detection of the injected object and relation errors at 0.3.
* ``dci``: real DCI references with LLaVA-1.5-7B's real captions (``../shared/datasets/halfscore``).
  Each caption against copies of itself made more wrong where the reference can tell
  (``benchmarks/reference_degradation.py``): a colour the reference gives that object changed, a
  number it states changed, a relation one of its edges supports given the contrary preposition, two
  objects it never names added (a sentence stating the concept wrongly where the caption states none),
  and one copy with all four together. Per kind: n (images left out have nothing the reference verifies),
  and the share of those where the real caption scores strictly better, with wins / ties / losses.
* ``speed``: responses per second of the graph judge and of the released embedding check on the same
  Tri-HE items, warm, side by side.

Judges compared: ``graph`` (the scene-graph alignment judge, the default), ``embedding`` (Tri-HE's
released embedding-similarity check); an LLM judge where ``--config`` names an endpoint.

    python benchmarks/bench_validity.py [--sections sample,trihe,dci,speed] [--write] [--config FILE]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.config import Settings, apply_offline_env_defaults, load_settings  # noqa: E402

apply_offline_env_defaults()

from hallu_studio.backends.probe import ProbeOptions, describe  # noqa: E402
from hallu_studio.extraction import ParserExtractor  # noqa: E402
from hallu_studio.metrics.aggregate import bootstrap_ci  # noqa: E402
from hallu_studio.metrics.base import ScoringItem  # noqa: E402
from hallu_studio.metrics.registry import make_metrics  # noqa: E402
from hallu_studio.metrics.trihe import TriHEMetric  # noqa: E402
from hallu_studio.studies.probe_detection import ProbeItem, detection_row  # noqa: E402

SHARED = ROOT.parent / "shared" / "datasets"
TYPES = ("object", "attribute", "relation", "count")
MARK_BEGIN, MARK_END = "<!-- bench_validity -->", "<!-- /bench_validity -->"


def _settings(args: argparse.Namespace, judge: str) -> Settings:
    settings = load_settings(args.config) if args.config else Settings()
    settings.scoring.trihe_judge = judge
    return settings


def judges(args: argparse.Namespace) -> list[str]:
    out = ["graph", "embedding"]
    if args.config and load_settings(args.config).llm.configured:
        out.append("llm")
    return out


def probe_items(samples: Sequence[Any], spec: str, extractor: ParserExtractor) -> list[tuple[ScoringItem, dict]]:
    options = ProbeOptions.parse(spec)
    rows = []
    for s in samples:
        text, signals = describe(s, options, random.Random(f"{spec}/{s.id}"))
        rows.append((text, signals, s))
    concepts = extractor.extract([t for t, _, _ in rows])
    return [(ScoringItem(f"{spec}/{s.id}", t, s, mentioned=c), sig) for (t, sig, s), c in zip(rows, concepts)]


def score(metric: Any, items: Sequence[ScoringItem]) -> list[Any]:
    out: list[Any] = []
    for k in range(0, len(items), 64):
        out.extend(metric.update_many(items[k:k + 64]) if hasattr(metric, "update_many")
                   else [metric.update(i) for i in items[k:k + 64]])
    return out


def detection(metric_name: str, items: Sequence[tuple[ScoringItem, dict]], results: Sequence[Any]) -> Any:
    probe = [ProbeItem(i.response, sig.get("injected", []), sig.get("stated", []), r.values, r.evidence, None,
                       i.mentioned.to_dict(with_spans=True) if i.mentioned else None)
             for (i, sig), r in zip(items, results)]
    return detection_row(metric_name, probe)


def _rate(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "n/a"


# ----------------------------------------------------------------------------- sections

def section_sample(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    from hallu_studio.sample.build import build_sample_benchmark

    samples = [s for s in build_sample_benchmark(with_variants=False).samples if s.task == "caption"]
    items = probe_items(samples, f"rate={args.rate},mix=object+attribute+relation+count,seed=1", extractor)
    lines = [f"### Sample captions: probe rate {args.rate}, all four types ({len(items)} captions, offline parser)",
             "", "| metric | " + " | ".join(f"{t} detected" for t in TYPES) + " | false alarms |",
             "|---|" + "---|" * (len(TYPES) + 1)]
    metrics: list[tuple[str, Any]] = [(f"trihe ({j})", TriHEMetric.from_settings(_settings(args, j)))
                                      for j in judges(args)]
    for name in ("halfscore", "emd", "edit"):
        metrics.append((name, make_metrics([name], _settings(args, "graph"), None, extractor)[0]))
    for label, metric in metrics:
        base = label.split(" ")[0]
        t0 = time.perf_counter()
        row = detection(base, items, score(metric, [i for i, _ in items]))
        cells = [f"{_rate(row.by_type.get(t, (0, 0))[1], row.by_type.get(t, (0, 0))[0])} "
                 f"({row.by_type.get(t, (0, 0))[1]}/{row.by_type.get(t, (0, 0))[0]})" for t in TYPES]
        lines.append(f"| {label} | " + " | ".join(cells) +
                     f" | {_rate(row.false_alarms, row.stated)} ({row.false_alarms}/{row.stated}) |")
        print(f"  {label}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return "\n".join(lines)


def _trihe_samples(n: int) -> list[Any]:
    from hallu_studio.importers.tri_he import read_tri_he

    return [s for s in read_tri_he(SHARED / "tri-he").samples if s.answer][:n]


def section_trihe(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    if not (SHARED / "tri-he").exists():
        return "### Real Tri-HE\n\n(skipped: ../shared/datasets/tri-he is not here)"
    samples = _trihe_samples(args.questions)
    rates = (0.0, 0.1, 0.3, 0.5)
    runs = {r: probe_items(samples, f"rate={r},mix=object+relation,seed=1", extractor) for r in rates}
    lines = [f"### Real Tri-HE: first {len(samples)} questions (gold answers = probe rate 0)", "",
             "| judge | " + " | ".join(f"Hallu_Q rate {r:g}" for r in rates) +
             " | Hallu_Q (with inferences) gold | object detected @0.3 | relation detected @0.3 | false alarms @0.3 |",
             "|---|" + "---|" * (len(rates) + 4)]
    for j in judges(args):
        metric = TriHEMetric.from_settings(_settings(args, j))
        cells, strict, det = [], "", None
        for r in rates:
            items = runs[r]
            results = score(metric, [i for i, _ in items])
            stats = [res.stats for res in results]
            v, lo, hi = bootstrap_ci(stats, metric.compute, clusters=[s["image"] for s in stats], n_boot=args.n_boot,
                                     key="hallu_q")
            cells.append(f"{v:.1f} [{lo:.1f}, {hi:.1f}]")
            if r == 0.0:
                out = metric.compute(stats)
                strict = f"{out.get('hallu_q_with_inference', float('nan')):.1f}" \
                    if "hallu_q_with_inference" in out else "n/a"
            if r == 0.3:
                det = detection("trihe", items, results)
        bt = det.by_type if det else {}
        o, rel = bt.get("object", (0, 0)), bt.get("relation", (0, 0))
        lines.append(f"| {j} | " + " | ".join(cells) + f" | {strict} | {_rate(o[1], o[0])} ({o[1]}/{o[0]}) | "
                     f"{_rate(rel[1], rel[0])} ({rel[1]}/{rel[0]}) | "
                     f"{_rate(det.false_alarms, det.stated) if det else 'n/a'} |")
    return "\n".join(lines)


# ------------------------------------------------------------------ DCI degradations

def read_dci(folder: Path, n_images: int) -> tuple[list[str], dict[str, Any], dict[str, str]]:
    """The first ``n_images`` DCI images with a LLaVA-1.5-7B caption, through the HalFscore importers: their
    keys (image stems), the samples (reference captions) and the captions, by key."""
    from hallu_studio.importers.halfscore import image_stem, read_halfscore_annotations, read_halfscore_captions

    parsed = read_halfscore_annotations(folder / "annotation.json").samples
    recorded = read_halfscore_captions(folder / "llava-1.5-7b_captions.jsonl", {s.id for s in parsed})
    by_id = {r.sample_id: r.text for r in recorded.responses}
    samples = {image_stem(s.image_key): s for s in parsed}
    captions = {image_stem(s.image_key): by_id[s.id] for s in parsed if s.id in by_id}
    return [k for k in samples if k in captions][:n_images], samples, captions


def section_dci(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    """Each real caption against copies of itself made more wrong *where the reference can tell*
    (``studies.reference_degradation``): a copy per kind, and one with all four kinds together."""
    from reference_degradation import ALL, KINDS, degrade, summary, wins_ties_losses

    folder = SHARED / "halfscore"
    if not folder.exists():
        return "### Real DCI\n\n(skipped: ../shared/datasets/halfscore is not here)"
    keys, samples, captions = read_dci(folder, args.images)
    said = dict(zip(keys, extractor.extract([captions[k] for k in keys])))
    refs = dict(zip(keys, extractor.extract([samples[k].reference_text or "" for k in keys])))
    plans = {k: degrade(captions[k], said[k], refs[k], random.Random(f"dci/{k}")) for k in keys}
    kinds = [*KINDS, ALL]
    copies = {(k, kind): plans[k].copy(KINDS if kind == ALL else [kind]) for k in keys for kind in kinds}
    copies = {key: text for key, text in copies.items() if text is not None}
    copy_texts = list(dict.fromkeys(copies.values()))
    concepts = {captions[k]: said[k] for k in keys}
    concepts.update(zip(copy_texts, extractor.extract(copy_texts)))
    parsed_references = {samples[k].reference_text or "": refs[k] for k in keys}

    def extract_reference(text: str) -> Any:
        return parsed_references[text] if text in parsed_references else extractor.extract([text])[0]

    def items_for(kind: str | None) -> list[tuple[str, ScoringItem]]:
        out = []
        for k in keys:
            text = captions[k] if kind is None else copies.get((k, kind))
            if text is not None:
                out.append((k, ScoringItem(f"{k}/{kind}", text, samples[k], mentioned=concepts[text])))
        return out

    settings = _settings(args, "graph")
    value_of: dict[str, tuple[Callable[[], Any], str, bool]] = {
        "EMD total (lower is better)": (lambda: make_metrics(["emd"], settings, None, extractor)[0], "total", False),
        "HalFscore F (higher is better)": (lambda: make_metrics(["halfscore"], settings, None, extractor)[0], "f", True),
    }
    for j in judges(args):
        value_of[f"Tri-HE {j} hallucinated share (lower is better)"] = (
            lambda j=j: TriHEMetric.from_settings(_settings(args, j), reference_extract=extract_reference),
            "share", False)
    n = summary({k: plans[k] for k in keys})
    header = [f"{kind} (n={n[kind][0]}" + (f", {n[kind][1]} stated" if n[kind][1] else "") + ")" for kind in kinds]
    lines = [f"### Real DCI references, LLaVA-1.5-7B's real captions ({len(keys)} images)", "",
             "Each copy changes only what the DCI reference verifies and the caption states correctly: a colour the "
             "reference gives that object, a number it states, a spatial relation one of its edges supports (the "
             "contrary preposition); objects added are ones it never names. Where the caption states no such concept, "
             "a sentence stating it wrongly is added (*stated*); an image with neither is left out of that kind, so n "
             "is per kind. *all four*: one copy with every kind's changes, on images where all four apply. Cells: "
             "share of the n images where the real caption scores strictly better (wins / ties / losses).", "",
             "| score | " + " | ".join(header) + " |", "|---|" + "---|" * len(kinds)]
    for label, (build, key, higher) in value_of.items():
        metric = build()

        def values(kind: str | None) -> dict[str, float | None]:
            rows = items_for(kind)
            out: dict[str, float | None] = {}
            for (k, _), r in zip(rows, score(metric, [i for _, i in rows])):
                if key == "share":
                    t = r.stats.get("n_triplets", 0)
                    out[k] = r.stats.get("hallucinated", 0) / t if t else None
                else:
                    v = r.values.get(key)
                    out[k] = None if v is None else float(v)
            return out

        real = values(None)
        cells = []
        for kind in kinds:
            deg = values(kind)
            win, tie, loss = wins_ties_losses(real, deg, higher)
            cells.append(f"{_rate(win, len(deg))} ({win}/{tie}/{loss})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section_speed(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    if not (SHARED / "tri-he").exists():
        return "### Speed\n\n(skipped: ../shared/datasets/tri-he is not here)"
    items = [i for i, _ in probe_items(_trihe_samples(args.questions), "rate=0.3,mix=object+relation,seed=2",
                                       extractor)]
    lines = ["### Speed: Tri-HE judges on the same items, warm (phrase caches filled), same run", "",
             f"Best of {args.rounds} alternating rounds per judge (the machine is shared and noisy).", "",
             "| judge | responses/s | ratio to embedding |", "|---|---|---|"]
    metrics = {j: TriHEMetric.from_settings(_settings(args, j)) for j in ("embedding", "graph")}
    for metric in metrics.values():
        score(metric, items)  # warm: model loaded, phrases encoded
    best: dict[str, float] = {j: 0.0 for j in metrics}
    for _ in range(args.rounds):
        for j, metric in metrics.items():
            t0 = time.perf_counter()
            score(metric, items)
            best[j] = max(best[j], len(items) / (time.perf_counter() - t0))
    rates = best
    for j, r in rates.items():
        lines.append(f"| {j} | {r:.0f} | {r / rates['embedding']:.2f} |")
    return "\n".join(lines)


SECTIONS = {"sample": section_sample, "trihe": section_trihe, "dci": section_dci, "speed": section_speed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--rate", type=float, default=0.3)
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--images", type=int, default=100)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7, help="speed: alternating timed rounds per judge")
    ap.add_argument("--config", default=None, help="a hallu-studio.toml; with an LLM endpoint, the LLM judge joins")
    ap.add_argument("--write", action="store_true", help="write the tables into docs/validity.md")
    args = ap.parse_args()
    extractor = ParserExtractor()
    out = [f"_Produced by `python benchmarks/bench_validity.py --sections {args.sections}` on "
           f"{time.strftime('%Y-%m-%d')}._"]
    for name in args.sections.split(","):
        t0 = time.perf_counter()
        out.append(SECTIONS[name](args, extractor))
        print(out[-1] + "\n", flush=True)
        print(f"[{name}: {time.perf_counter() - t0:.0f}s]", file=sys.stderr)
    if args.write:
        path = ROOT / "docs" / "validity.md"
        text = path.read_text(encoding="utf-8") if path.exists() else "# Validity\n"
        block = f"{MARK_BEGIN}\n" + "\n\n".join(out) + f"\n{MARK_END}"
        if MARK_BEGIN in text:
            text = text[: text.index(MARK_BEGIN)] + block + text[text.index(MARK_END) + len(MARK_END):]
        else:
            text = text.rstrip() + "\n\n" + block + "\n"
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
