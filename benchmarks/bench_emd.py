"""Throughput of VISCON EMD scoring, batched and cached vs. a naive per-response pipeline.

Data: LLaVA-1.5-7B captions against the DCI dense human captions of the same images
(``../shared/datasets/halfscore``) when present, else synthetic captions built from a small
vocabulary (same shape: ~80-word responses, ~110-word references).

What is timed (model loading excluded everywhere; the MiniLM weights are loaded once):

* ``naive``: per response, each concept type of the response and of the reference encoded in its
  own encoder call, no phrase cache, then EMD (extraction precomputed; measured on --naive-n
  responses, reported per response);
* ``batched cold``: ``EMDMetric.update_many`` in batches of 64 with an empty phrase cache
  (extraction precomputed);
* ``warm``: the same call again (phrase cache filled; extraction precomputed);
* ``end-to-end cold``: a fresh extractor and an empty phrase cache: parsing responses and
  references, encoding and EMD.

``--sanity`` instead prints the ranking check of docs/metrics_viscon.md: real captions vs.
degraded ones (truncated, half swapped with another image's caption, another image's caption,
one generic caption), human captions cut to 100 words, and Tri-HE answers vs. scene graphs.

    python benchmarks/bench_emd.py            # throughput, 1,000 responses
    python benchmarks/bench_emd.py --sanity   # the ranking check
    python benchmarks/bench_emd.py --edit     # Evaluate-by-Edit, rule reviser, own vs. other responses
    python benchmarks/bench_emd.py --ground-costs  # grounded vs cosine ground cost, warm, side by side

``--ground-costs`` scores the same items (extraction precomputed, phrase caches filled by a first
pass) with ``ground_cost="cosine"`` (VISCON as published) and ``"grounded"`` (the default: the graph
matcher decides each response concept's cost), best of ``--rounds`` alternating rounds each, and
prints responses/s and the ratio grounded / cosine.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.config import apply_offline_env_defaults  # noqa: E402

apply_offline_env_defaults()

from hallu_studio.embedding import Embedder  # noqa: E402
from hallu_studio.extraction import ParserExtractor  # noqa: E402
from hallu_studio.metrics.base import ScoringItem  # noqa: E402
from hallu_studio.metrics.emd import CONCEPT_TYPES, EMDMetric, concept_phrases, emd_between  # noqa: E402
from hallu_studio.model import ConceptSet, Sample  # noqa: E402

SHARED = ROOT.parent / "shared" / "datasets"
HALFSCORE = SHARED / "halfscore"


def load_pairs(n: int) -> tuple[list[str], list[str], str]:
    """(responses, references, source) for n images."""
    ann_path, cap_path = HALFSCORE / "annotation.json", HALFSCORE / "llava-1.5-7b_captions.jsonl"
    if ann_path.exists() and cap_path.exists():
        refs = {a["image"]: a["caption"] for a in json.loads(ann_path.read_text())}
        caps = {}
        for line in cap_path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                caps[row["image"]] = row["caption"] if isinstance(row["caption"], str) else " ".join(row["caption"])
        images = sorted(set(refs) & set(caps))
        images = (images * (n // len(images) + 1))[:n]
        return [caps[i] for i in images], [refs[i] for i in images], "LLaVA-1.5-7B captions vs DCI (../shared)"
    rng = random.Random(0)
    things = ["dog", "cat", "table", "chair", "car", "tree", "man", "woman", "building", "window", "bench",
              "lamp", "sofa", "cup", "book", "bicycle", "street", "sky", "cloud", "boat"]
    colors = ["red", "blue", "green", "white", "black", "brown", "wooden", "small", "large", "tall"]
    preps = ["on", "next to", "under", "behind", "near", "in front of"]

    def caption(words: int) -> str:
        out: list[str] = []
        while sum(len(s.split()) for s in out) < words:
            a, b = rng.sample(things, 2)
            out.append(f"A {rng.choice(colors)} {a} is {rng.choice(preps)} the {rng.choice(colors)} {b}.")
        return " ".join(out)

    return [caption(80) for _ in range(n)], [caption(110) for _ in range(n)], "synthetic captions"


def items_for(responses: list[str], references: list[str], mentioned: list[ConceptSet] | None) -> list[ScoringItem]:
    out = []
    for i, (resp, ref) in enumerate(zip(responses, references)):
        sample = Sample(id=f"bench/{i}", benchmark="bench", image_key=str(i), reference_text=ref,
                        reference_kind="dense")  # one long caption of the whole image, as DCI's
        out.append(ScoringItem(response_id=f"r{i}", response=resp, sample=sample,
                               mentioned=mentioned[i] if mentioned else None))
    return out


def fresh_embedder(loaded: Embedder) -> Embedder:
    e = Embedder(loaded.model_name)
    e._model = loaded.model  # share the loaded weights; the phrase cache starts empty
    return e


def naive_score(model: object, response: ConceptSet, reference: ConceptSet) -> float:
    total = 0.0
    rp, mp = concept_phrases(reference), concept_phrases(response)
    for kind in CONCEPT_TYPES:
        if rp[kind].phrases and mp[kind].phrases:
            a = model.encode(rp[kind].phrases, convert_to_numpy=True, normalize_embeddings=True,  # type: ignore[attr-defined]
                             show_progress_bar=False)
            b = model.encode(mp[kind].phrases, convert_to_numpy=True, normalize_embeddings=True,  # type: ignore[attr-defined]
                             show_progress_bar=False)
            total += emd_between(a, b).distance
    return total


def throughput(args: argparse.Namespace) -> None:
    responses, references, source = load_pairs(args.n)
    print(f"data: {source}; {len(responses)} responses; "
          f"{np.mean([len(r.split()) for r in responses]):.0f} words/response, "
          f"{np.mean([len(r.split()) for r in references]):.0f} words/reference")
    base = Embedder()
    _ = base.model  # load once, outside every timing

    t = time.perf_counter()
    extractor = ParserExtractor()
    mentioned = extractor.extract(responses)
    ref_concepts = extractor.extract(references)
    t_parse = time.perf_counter() - t
    words = sum(len(r.split()) for r in responses + references)
    print(f"parsing (cold, incl. spaCy load): {t_parse:.1f} s, {words / t_parse:,.0f} words/s")

    n_naive = min(args.naive_n, len(responses))
    t = time.perf_counter()
    for i in range(n_naive):
        naive_score(base.model, mentioned[i], ref_concepts[i])
    naive_rate = n_naive / (time.perf_counter() - t)
    print(f"naive (per-response encoding, no cache; {n_naive} responses): {naive_rate:8.1f} responses/s")

    metric = EMDMetric(fresh_embedder(base), extractor)
    items = items_for(responses, references, mentioned)
    t = time.perf_counter()
    for start in range(0, len(items), args.batch):
        metric.update_many(items[start:start + args.batch])
    cold_rate = len(items) / (time.perf_counter() - t)
    print(f"batched cold (empty phrase cache):                 {cold_rate:8.1f} responses/s  "
          f"({cold_rate / naive_rate:.1f}x naive)")

    t = time.perf_counter()
    for start in range(0, len(items), args.batch):
        metric.update_many(items[start:start + args.batch])
    warm_rate = len(items) / (time.perf_counter() - t)
    print(f"warm (phrase + parse caches filled):               {warm_rate:8.1f} responses/s  "
          f"({warm_rate / naive_rate:.1f}x naive)")

    e2e = EMDMetric(fresh_embedder(base), ParserExtractor())
    e2e_items = items_for(responses, references, None)
    e2e.extractor.extract(["warm up spaCy"])  # model load is not timed
    t = time.perf_counter()
    for start in range(0, len(e2e_items), args.batch):
        e2e.update_many(e2e_items[start:start + args.batch])
    e2e_rate = len(e2e_items) / (time.perf_counter() - t)
    print(f"end-to-end cold (parse + encode + EMD):            {e2e_rate:8.1f} responses/s")


def ground_cost_ratio(args: argparse.Namespace) -> None:
    responses, references, source = load_pairs(args.n)
    extractor = ParserExtractor()
    items = items_for(responses, references, extractor.extract(responses))
    base = Embedder()
    metrics = {cost: EMDMetric(fresh_embedder(base), extractor, ground_cost=cost) for cost in ("cosine", "grounded")}
    for metric in metrics.values():  # warm: references parsed, phrases and names encoded
        for start in range(0, len(items), args.batch):
            metric.update_many(items[start:start + args.batch])
    best = dict.fromkeys(metrics, 0.0)
    for _ in range(args.rounds):
        for cost, metric in metrics.items():
            t = time.perf_counter()
            for start in range(0, len(items), args.batch):
                metric.update_many(items[start:start + args.batch])
            best[cost] = max(best[cost], len(items) / (time.perf_counter() - t))
    print(f"data: {source}; {len(items)} responses; warm, best of {args.rounds} alternating rounds")
    for cost, rate in best.items():
        print(f"{cost:9s} {rate:8.1f} responses/s  ({rate / best['cosine']:.2f}x cosine)")


# --------------------------------------------------------------------------- sanity check

def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _first_words(text: str, n: int) -> str:
    out: list[str] = []
    for s in _sentences(text):
        out.append(s)
        if len(" ".join(out).split()) >= n:
            break
    return " ".join(out)


def _report(name: str, metric: EMDMetric, items: list[ScoringItem]) -> None:
    res = metric.update_many(items)
    agg = metric.compute([r.stats for r in res])
    words = np.mean([len(it.response.split()) for it in items])
    print(f"  {name:28s} words {words:6.1f}  object {agg['object']:6.2f}  attribute {agg['attribute']:6.2f}  "
          f"relation {agg['relation']:6.2f}  total {agg['total']:7.2f}  (total defined {agg['n_total']:.0f}/"
          f"{agg['n_items']:.0f})")


def sanity(args: argparse.Namespace) -> None:
    if not HALFSCORE.exists():
        print("../shared/datasets/halfscore is not available; the sanity check needs the real captions")
        return
    responses, references, _ = load_pairs(1000)
    n = min(args.sanity_n, len(responses))
    responses, references = responses[:n], references[:n]
    rng = random.Random(0)
    perm = list(range(n))
    rng.shuffle(perm)
    variants = {
        "human caption, first 100 w": [_first_words(r, 100) for r in references],
        "LLaVA-1.5-7B": responses,
        "LLaVA half + other image": [" ".join(_sentences(responses[i])[:max(1, len(_sentences(responses[i])) // 2)]
                                              + _sentences(responses[j])[len(_sentences(responses[j])) // 2:])
                                     for i, j in zip(range(n), perm)],
        "LLaVA first sentence": [_sentences(r)[0] for r in responses],
        "generic caption": ["The image shows a busy street with people, cars and buildings under a blue sky."] * n,
        "other image's caption": [responses[j] for j in perm],
    }
    embedder = Embedder()
    extractor = ParserExtractor()
    for policy in ("undefined", "unit_cost"):
        metric = EMDMetric(embedder, extractor, empty_side=policy)
        print(f"DCI dense captions, {n} images, EMD x100 (lower is better), empty_side={policy}:")
        for name, texts in variants.items():
            _report(name, metric, items_for(texts, references, None))
    tri_he = SHARED / "tri-he" / "tri-he.json"
    if tri_he.exists():
        from hallu_studio.importers.tri_he import read_tri_he

        samples = [s for s in read_tri_he(tri_he).samples if s.answer][:args.sanity_n]
        shuffled = list(range(len(samples)))
        rng.shuffle(shuffled)
        metric = EMDMetric(embedder, extractor, empty_side="unit_cost")
        print(f"Tri-HE: {len(samples)} reference answers vs. their image's scene graph, empty_side=unit_cost:")
        for name, texts in (("own answer", [s.answer for s in samples]),
                            ("another image's answer", [samples[j].answer for j in shuffled])):
            items = [ScoringItem(response_id=f"t{i}", response=t or "", sample=s)
                     for i, (t, s) in enumerate(zip(texts, samples))]
            _report(name, metric, items)


def edit_sanity(args: argparse.Namespace) -> None:
    """Evaluate-by-Edit with the rule reviser: own responses vs. another image's responses."""
    from hallu_studio.metrics.evaluate_by_edit import EvaluateByEditMetric
    from hallu_studio.revision import SceneGraphRuleReviser

    from hallu_studio.revision import ObjectMatcher

    extractor = ParserExtractor()
    matcher = ObjectMatcher(Embedder()) if args.synonyms else ObjectMatcher()
    metric = EvaluateByEditMetric(SceneGraphRuleReviser(extractor, matcher), extractor)
    print(f"object matching: {'lemma, head noun and embedding cosine >= 0.75' if args.synonyms else 'lemma and head noun'}")
    rng = random.Random(0)

    def report(name: str, items: list[ScoringItem]) -> None:
        agg = metric.compute([r.stats for r in metric.update_many(items)])
        print(f"  {name:28s} distance {agg['distance']:6.2f}  per word {agg['per_word']:5.3f}  "
              f"alpha {agg['alpha']:5.2f}  (n {agg['n']:.0f})")

    n = min(args.edit_n, 1000)
    if HALFSCORE.exists():
        responses, references, _ = load_pairs(n)
        perm = list(range(n))
        rng.shuffle(perm)
        print(f"Evaluate-by-Edit, rule reviser, {n} DCI images (graph built from the dense caption's concepts):")
        report("LLaVA-1.5-7B", items_for(responses, references, None))
        report("other image's caption", items_for([responses[j] for j in perm], references, None))
    tri_he = SHARED / "tri-he" / "tri-he.json"
    if tri_he.exists():
        from hallu_studio.importers.tri_he import read_tri_he

        samples = [s for s in read_tri_he(tri_he).samples if s.answer][:n]
        shuffled = list(range(len(samples)))
        rng.shuffle(shuffled)
        print(f"Evaluate-by-Edit, rule reviser, {len(samples)} Tri-HE reference answers vs. scene graphs:")
        for name, texts in (("own answer", [s.answer for s in samples]),
                            ("another image's answer", [samples[j].answer for j in shuffled])):
            report(name, [ScoringItem(response_id=f"t{i}", response=t or "", sample=s)
                          for i, (t, s) in enumerate(zip(texts, samples))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000, help="responses to score")
    parser.add_argument("--naive-n", type=int, default=200, help="responses for the naive pipeline")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--sanity", action="store_true", help="print the ranking check instead")
    parser.add_argument("--sanity-n", type=int, default=500)
    parser.add_argument("--edit", action="store_true", help="print the Evaluate-by-Edit check instead")
    parser.add_argument("--edit-n", type=int, default=300)
    parser.add_argument("--synonyms", action="store_true", help="--edit: match objects by embedding too")
    parser.add_argument("--ground-costs", action="store_true", help="grounded vs cosine ground cost, side by side")
    parser.add_argument("--rounds", type=int, default=5, help="--ground-costs: alternating timed rounds")
    args = parser.parse_args()
    if args.ground_costs:
        ground_cost_ratio(args)
    elif args.edit:
        edit_sanity(args)
    elif args.sanity:
        sanity(args)
    else:
        throughput(args)


if __name__ == "__main__":
    main()
