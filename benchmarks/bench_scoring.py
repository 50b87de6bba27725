"""Scoring throughput per metric: batched cold, batched warm and the naive pipeline, side by side.

Data (read, never copied): real Tri-HE answers against their images' scene graphs for the
free-text metrics (emd, edit, trihe, halfscore, chair) and probe-model answers to the real
Reefknot questions for reefknot (the released files hold no answers), from
``../shared/datasets`` when present; otherwise probe-model responses on
the embedded sample benchmark (labelled synthetic).

Concepts are extracted once per response, as the scoring pipeline does (``ScoringItem.mentioned``);
that extraction is timed on its own row. Per metric, on the same items, in one run:

* ``cold``: freshly built metric (``make_metrics`` under default settings), empty phrase and
  parse caches, ``update_many`` in batches of ``--batch``. Model loading is NOT in it: each
  metric first scores a few warm-up items that are not in the timed set;
* ``warm``: the same call again on the same items (phrase / parse caches filled);
* ``naive``: a fresh metric whose embedder and parser forget everything before every call,
  scoring one response at a time with ``update`` (per-response encoding, no cache), on
  ``--naive-n`` items and reported per response.

The ``phrases`` column counts the distinct phrases the cold pass sent to the embedding model:
cold throughput is mostly the encoder's phrases/s divided by new phrases per response (each
new image brings its whole reference side).

    python benchmarks/bench_scoring.py [--n 300] [--naive-n 40] [--reefknot-n 3000] [--metrics emd,edit,...]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.config import Settings, apply_offline_env_defaults  # noqa: E402

apply_offline_env_defaults()

import hallu_studio.embedding as embedding_module  # noqa: E402
from hallu_studio.extraction import ParserExtractor  # noqa: E402
from hallu_studio.metrics.base import ScoringItem  # noqa: E402
from hallu_studio.metrics.registry import make_metrics, not_applicable_reason  # noqa: E402

SHARED = ROOT.parent / "shared" / "datasets"
FREE_TEXT = ("emd", "edit", "trihe", "halfscore", "chair")
ALL_METRICS = (*FREE_TEXT, "reefknot")
WARMUP = 8


class ForgetfulEmbedder(embedding_module.Embedder):
    """The naive pipeline's encoder: nothing is remembered from one call to the next."""

    _shared_model: Any = None

    @property
    def model(self):  # noqa: ANN201 - one loaded SentenceTransformer for every instance
        if ForgetfulEmbedder._shared_model is None:
            ForgetfulEmbedder._shared_model = super().model
        return ForgetfulEmbedder._shared_model

    def encode(self, texts):  # noqa: ANN001, ANN201 - same signature as Embedder.encode
        self._cache.clear()
        return super().encode(texts)


class CountingEmbedder(embedding_module.Embedder):
    """The ordinary embedder, remembering its instances so the phrases they encoded can be counted."""

    instances: list["CountingEmbedder"] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        CountingEmbedder.instances.append(self)

    @classmethod
    def phrases_encoded(cls) -> int:
        return sum(len(e._cache) for e in cls.instances)


class ForgetfulExtractor(ParserExtractor):
    """The naive pipeline's parser: parses every text again on every call."""

    def extract(self, texts):  # noqa: ANN001, ANN201 - same signature as ParserExtractor.extract
        self._cache.clear()
        return super().extract(texts)


# ----------------------------------------------------------------------------------- data


def _free_text_items(n: int) -> tuple[list[ScoringItem], str]:
    tri_he = SHARED / "tri-he" / "tri-he.json"
    if tri_he.exists():
        from hallu_studio.importers.tri_he import read_tri_he

        samples = [s for s in read_tri_he(tri_he).samples if s.answer]
        items = [ScoringItem(f"tri-he-answer/{s.id}", s.answer or "", s) for s in samples]
        return items[:n + WARMUP], f"Tri-HE reference answers vs. scene graphs ({tri_he.parent})"
    return _probe_items(("caption", "vqa"), n + WARMUP), "probe responses on the embedded sample benchmark [synthetic]"


def _reefknot_items(n: int) -> tuple[list[ScoringItem], str]:
    folder = SHARED / "reefknot"
    if folder.is_dir():
        from hallu_studio.backends.probe import ProbeOptions, describe
        from hallu_studio.importers.reefknot import read_reefknot

        # The released files carry no model answers (empty ``response``), so a probe model
        # answers the real questions; the metric's cost does not depend on who answered.
        samples = list(read_reefknot(folder)[0].samples)
        random.Random(0).shuffle(samples)  # the three tasks mixed, not the first file only
        options = ProbeOptions(rate=0.3)
        items = []
        for s in samples[:n + WARMUP]:
            text, signals = describe(s, options, random.Random(s.id))
            items.append(ScoringItem(f"probe/{s.id}", text, s, signals=signals))
        return items, f"probe answers [synthetic] to real Reefknot questions, Y/N + MCQ + VQA mixed ({folder})"
    return _probe_items(("yes_no", "mcq", "vqa"), n + WARMUP, relation=True), \
        "probe answers to the sample benchmark's relation questions [synthetic]"


def _probe_items(tasks: tuple[str, ...], n: int, relation: bool = False) -> list[ScoringItem]:
    from hallu_studio.backends.probe import ProbeOptions, describe
    from hallu_studio.sample.build import build_sample_benchmark

    samples = [s for s in build_sample_benchmark(with_variants=False).samples
               if s.task in tasks and (not relation or s.relation_category)]
    items: list[ScoringItem] = []
    for k in range(max(1, -(-n // max(1, len(samples))))):  # several probe seeds to reach n
        options = ProbeOptions(rate=0.3, seed=k)
        for s in samples:
            text, signals = describe(s, options, random.Random(f"{k}/{s.id}"))
            items.append(ScoringItem(f"probe{k}/{s.id}", text, s, signals=signals))
    return items[:n]


# ------------------------------------------------------------------------------ timing


def _timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _batched(metric: Any, items: list[ScoringItem], batch: int) -> None:
    many = getattr(metric, "update_many", None)
    for start in range(0, len(items), batch):
        chunk = items[start:start + batch]
        if many is not None:
            many(chunk)
        else:
            for item in chunk:
                metric.update(item)


def _with_concepts(items: list[ScoringItem], extractor: ParserExtractor) -> list[ScoringItem]:
    concepts = extractor.extract([it.response for it in items])
    return [ScoringItem(it.response_id, it.response, it.sample, mentioned=c, signals=it.signals)
            for it, c in zip(items, concepts)]


def _applicable(name: str, items: list[ScoringItem]) -> list[ScoringItem]:
    return [it for it in items if not_applicable_reason(name, it.sample) is None]


def bench_metric(name: str, items: list[ScoringItem], settings: Settings, args: argparse.Namespace) -> dict[str, float]:
    warmup, timed = items[:WARMUP], items[WARMUP:]
    extractor = ParserExtractor(batch_size=settings.scoring.batch_size)
    extractor.extract(["A cat sits on a mat."])  # spaCy load, outside the timings
    original = embedding_module.Embedder
    embedding_module.Embedder = CountingEmbedder
    CountingEmbedder.instances = []
    try:
        metric = make_metrics([name], settings, None, extractor)[0]
    finally:
        embedding_module.Embedder = original
    def load() -> None:  # the embedding model and judges; also when the warm-up items need no encoding
        _batched(metric, warmup, args.batch)
        for embedder in CountingEmbedder.instances:
            _ = embedder.model

    load_s = _timed(load)
    before = CountingEmbedder.phrases_encoded()
    cold_s = _timed(lambda: _batched(metric, timed, args.batch))
    phrases = CountingEmbedder.phrases_encoded() - before
    warm_s = _timed(lambda: _batched(metric, timed, args.batch))

    embedding_module.Embedder = ForgetfulEmbedder  # what make_metrics builds for the naive run
    try:
        naive_extractor = ForgetfulExtractor(batch_size=settings.scoring.batch_size)
        naive_extractor.extract(["A cat sits on a mat."])
        naive = make_metrics([name], settings, None, naive_extractor)[0]
        naive.update(warmup[0])  # model load, outside the timing
    finally:
        embedding_module.Embedder = original
    few = timed[:args.naive_n]
    naive_s = _timed(lambda: [naive.update(it) for it in few])
    return {"n": len(timed), "load_s": load_s, "cold": len(timed) / cold_s, "warm": len(timed) / warm_s,
            "naive": len(few) / naive_s, "naive_n": len(few), "phrases": phrases, "cold_s": cold_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="free-text responses per metric (emd, edit, trihe, ...)")
    ap.add_argument("--reefknot-n", type=int, default=3000, help="Reefknot answers")
    ap.add_argument("--naive-n", type=int, default=40, help="responses for the naive pipeline, per metric")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--metrics", default=",".join(ALL_METRICS))
    ap.add_argument("--torch-threads", type=int, default=0,
                    help="torch intra-op threads (0: torch's default; see bench_encoder_threads.py)")
    args = ap.parse_args()
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    names = [m.strip() for m in args.metrics.split(",") if m.strip()]
    settings = Settings()
    print(f"machine: {os.cpu_count()} CPUs; load average at start {os.getloadavg()[0]:.2f}")
    import torch

    print(f"settings: extractor {settings.scoring.extractor}, embeddings {settings.scoring.embedding_model}, "
          f"trihe judge {settings.scoring.trihe_judge}, batch {args.batch}, torch threads {torch.get_num_threads()}")

    free, free_source = _free_text_items(args.n) if set(names) & set(FREE_TEXT) else ([], "")
    if free:
        print(f"free-text data: {free_source}; {len(free) - WARMUP} timed responses, "
              f"{sum(len(i.response.split()) for i in free) / len(free):.0f} words/response")
        extractor = ParserExtractor(batch_size=settings.scoring.batch_size)
        extractor.extract(["A cat sits on a mat."])
        start = time.perf_counter()
        free = _with_concepts(free, extractor)
        parse_s = time.perf_counter() - start
        print(f"{'extraction (parser, cold)':28s} {len(free) / parse_s:9.1f} responses/s  "
              f"(shared by every free-text metric; not in the rows below)")
    reef, reef_source = _reefknot_items(args.reefknot_n) if "reefknot" in names else ([], "")
    if reef:
        print(f"reefknot data: {reef_source}; {len(reef) - WARMUP} timed answers")

    print(f"{'metric':10s} {'n':>6s} {'load s':>7s} {'cold r/s':>10s} {'warm r/s':>10s} {'naive r/s':>10s} "
          f"{'cold/naive':>10s} {'warm/naive':>10s} {'phrases':>8s}")
    for name in names:
        data = reef if name == "reefknot" else free
        items = _applicable(name, data)
        if len(items) <= WARMUP:
            print(f"{name:10s} no applicable items")
            continue
        r = bench_metric(name, items, settings, args)
        print(f"{name:10s} {r['n']:6d} {r['load_s']:7.1f} {r['cold']:10.1f} {r['warm']:10.1f} {r['naive']:10.1f} "
              f"{r['cold'] / r['naive']:9.1f}x {r['warm'] / r['naive']:9.1f}x {r['phrases']:8d}  (naive on {r['naive_n']}; "
              f"cold encoded {r['phrases'] / r['cold_s']:.0f} phrases/s)",
              flush=True)
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
