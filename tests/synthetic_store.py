"""Fill a store with synthetic, already-scored responses: UI tests and the Inspect benchmark.

Nothing here is a measurement. Every run it adds is ``synthetic=True`` (shown as
"[synthetic]" by the app) and the scores are made-up numbers in the shapes of
``docs/architecture.md``, so the views can be exercised without models or judges.
"""

from __future__ import annotations

import hashlib
import io
import random
from typing import Sequence

from PIL import Image

from hallu_studio.model import Benchmark, HumanEvent, Response, Run, Sample, SceneGraph, Score
from hallu_studio.store import Store

SYNTHETIC_CONFIG_KEY = "synthetic-ui"
_OBJECTS = ["dog", "cat", "table", "cup", "man", "bicycle", "tree", "car", "ball", "window"]
_PREDICATES = ["on", "next to", "holding", "under", "behind"]
_ATTRIBUTES = ["red", "small", "wooden", "white", "old"]
_DOMAINS = ["original", "cartoon", "sketch", "oil", "line"]
# The backends' logit-lens signal shape (see backends/base.py), made up.
_LENS = {"position": 0, "top_k": 2, "layers": [
    {"layer": 1, "tokens": ["the", "no"], "probs": [0.3, 0.2]}, {"layer": 2, "tokens": ["no", "yes"], "probs": [0.5, 0.3]},
    {"layer": 3, "tokens": ["yes", "no"], "probs": [0.8, 0.1]}]}


def _png(seed: int) -> tuple[str, bytes]:
    img = Image.new("RGB", (64, 48), ((seed * 37) % 256, (seed * 91) % 256, (seed * 53) % 256))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    data = buf.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def _sample(benchmark: str, i: int, rng: random.Random, sha: str) -> Sample:
    names = rng.sample(_OBJECTS, 3)
    graph = SceneGraph.from_dict({
        "objects": [{"id": str(k), "name": n, "attributes": [rng.choice(_ATTRIBUTES)]} for k, n in enumerate(names)],
        "relations": [{"subject": "0", "predicate": rng.choice(_PREDICATES), "object": "1"}]})
    task = "yes_no" if i % 4 == 3 else "caption"
    return Sample(id=f"{benchmark}/{i:05d}", benchmark=benchmark, image_key=f"img{i:05d}", task=task,
                  image_sha256=sha, domain=_DOMAINS[i % len(_DOMAINS)], source_kind="synthetic", scene_graph=graph,
                  question="Is the dog on the table?" if task == "yes_no" else "Describe the image.",
                  answer="yes" if task == "yes_no" else None,
                  relation_category="perception" if task == "yes_no" else None)


def _response_text(sample: Sample, rng: random.Random) -> tuple[str, list[tuple[str, int, int]]]:
    """A caption naming two reference objects and one invented one, with the spans of each."""
    real = [o.name for o in sample.scene_graph.objects[:2]]
    fake = rng.choice([o for o in _OBJECTS if o not in real])
    pred = sample.scene_graph.relations[0].predicate if sample.scene_graph.relations else "near"
    text = f"A {real[0]} {pred} a {real[1]}, and a {fake} in the corner."
    spans = []
    for name in (real[0], real[1], fake):
        start = text.index(f" {name}") + 1
        spans.append((name, start, start + len(name)))
    return text, spans


def _scores(response: Response, sample: Sample, text: str, spans: list[tuple[str, int, int]],
            rng: random.Random) -> list[Score]:
    (a, sa, ea), (b, _, eb), (fake, sf, ef) = spans
    pred = sample.scene_graph.relations[0].predicate if sample.scene_graph.relations else "near"
    ref = sample.scene_graph.object_names()
    resp = [a, b, fake]
    # reference rows x response columns, as metrics.emd stores them
    cost = [[0.0 if r == c else round(rng.uniform(0.3, 1.0), 3) for r in resp] for c in ref]
    plan = [[round(1 / 3 if (r == c or (r == fake and c == ref[-1])) else 0.0, 3) for r in resp] for c in ref]
    emd_total = round(rng.uniform(5, 60), 2)
    verdict = rng.choice(["supported", "object", "relation"])
    hallucinated = int(verdict != "supported")
    words = text.split()
    distance = rng.randint(1, 4)
    rid, key = response.id, SYNTHETIC_CONFIG_KEY
    scores = [
        Score(rid, "concepts", key, {"objects": 3, "attributes": 0, "relations": 1},
              {"extractor": "synthetic", "concepts": {"objects": resp, "attributes": [], "relations": [[a, pred, b]],
                                                      "object_spans": [[sa, ea], [text.index(b), eb], [sf, ef]],
                                                      "attribute_spans": [], "relation_spans": [[sa, eb]]}}),
        Score(rid, "emd", key, {"object": emd_total, "attribute": None, "relation": round(rng.uniform(5, 80), 2),
                                "total": emd_total},
              {"model": "synthetic", "types": {"object": {"reference": ref, "response": resp, "cost": cost,
                                                          "plan": plan, "per_concept_cost": [0.0, 0.0, 0.8]}}}),
        Score(rid, "edit", key, {"distance": distance, "per_word": round(distance / len(words), 3),
                                 "words": len(words)},
              {"reviser": "synthetic", "original": text, "revised": text.replace(f", and a {fake} in the corner", ""),
               "alignment": [["equal", words[:5], words[:5]], ["delete", words[5:], []]], "queries": []}),
        Score(rid, "trihe", key, {"n_triplets": 2, "hallucinated": hallucinated + 1, "object": 1 + (verdict == "object"),
                                  "relation": int(verdict == "relation"), "prediction_error": 0, "unparseable": 0},
              {"judge": "synthetic", "triplets": [
                  {"triplet": [a, pred, b], "span": [sa, eb], "verdict": verdict, "score": round(rng.random(), 3),
                   "reason": f"synthetic reason for {a} {pred} {b}"},
                  {"triplet": [fake, "in", "corner"], "span": [sf, ef], "verdict": "object", "score": 0.1,
                   "reason": f"no {fake} in the reference"}]}),
        Score(rid, "halfscore", key, {"precision": 0.67, "recall": round(2 / len(ref), 3), "f": 0.67, "matched": 2,
                                      "hallucinated": 1, "omitted": len(ref) - 2},
              {"matcher": "synthetic", "hallucinated": [["object", fake]], "omitted": [["object", o] for o in ref[2:]],
               "matched": [[["object", a], ["object", a], 1.0], [["object", b], ["object", b], 1.0]]}),
    ]
    if sample.task == "yes_no":
        correct = rng.random() < 0.6
        scores.append(Score(rid, "reefknot", key, {"task": "yes_no", "correct": correct, "hallucinated": not correct,
                                                   "answered_yes": correct, "entropy": round(rng.random(), 3)},
                            {"parsed_answer": "yes" if correct else "no", "label": "yes", "method": "synthetic"}))
    return scores


def fill_synthetic_store(store: Store, n_samples: int = 12, models: Sequence[str] = ("probe-a", "probe-b"),
                         benchmark: str = "synthetic-ui", seed: int = 0) -> list[str]:
    """Add ``n_samples`` samples, one synthetic run per model and a scored response each.

    Returns the response ids, in the store's (run, sample) order.
    """
    rng = random.Random(seed)
    images, samples = [], []
    for i in range(n_samples):
        sha, data = _png(i % 50)
        images.append((sha, "image/png", 64, 48, data))
        samples.append(_sample(benchmark, i, rng, sha))
    store.add_samples(Benchmark(benchmark, "synthetic data for UI tests", "tests/synthetic_store.py"),
                      samples, images)
    for model in models:
        run = Run(id=Run.make_id(benchmark, model, "probe", "", {}, "none", seed), benchmark=benchmark, model=model,
                  backend="probe", synthetic=True)
        store.add_run(run)
        responses, scores = [], []
        for s in samples:
            text, spans = _response_text(s, rng)
            r = Response(run.id, s.id, text, signals={"logit_lens": _LENS}
                         if s.task == "yes_no" else {})
            responses.append(r)
            scores += _scores(r, s, text, spans, rng)
        store.add_responses(responses)
        store.put_scores(scores)
        store.set_run_status(run.id, "done")
    return store.response_ids()


def fill_rated_store(store: Store, n_samples: int, n_ratings: int, models: Sequence[str] = ("probe-a", "probe-b"),
                     annotators: int = 50, benchmark: str = "synthetic-rated", seed: int = 0) -> list[str]:
    """A year of a lab's annotation, fast: ``n_samples`` samples x ``models`` unscored responses (bulk, one
    image), and ``n_ratings`` of this studio's ratings by ``annotators`` people (one bulk append).

    For the constant-work tests of Annotate's actions; returns the response ids.
    """
    rng = random.Random(seed)
    sha, data = _png(0)
    samples = [_sample(benchmark, i, rng, sha) for i in range(n_samples)]
    store.add_samples(Benchmark(benchmark, "synthetic data for the annotation tests", "tests/synthetic_store.py"),
                      samples, [(sha, "image/png", 64, 48, data)])
    runs = [Run(id=Run.make_id(benchmark, m, "probe", "", {}, "none", seed), benchmark=benchmark, model=m,
                backend="probe", synthetic=True) for m in models]
    responses = [Response(run.id, s.id, f"A {s.scene_graph.objects[0].name} in the picture.")
                 for run in runs for s in samples]
    store.add_runs_and_responses(runs, responses)
    ids = [r.id for r in responses]
    store.append_events([HumanEvent(f"annotator-{k % annotators:02d}", "rating", ids[(k * 7919) % len(ids)],
                                    1 + k % 5, meta={"mode": "api"}) for k in range(n_ratings)])
    return ids
