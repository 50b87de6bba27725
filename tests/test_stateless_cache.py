"""``score --input --cache FILE``: what a second stateless run reads back instead of computing, and what it never
keeps (a failure; a result that depends on the whole input)."""

import dataclasses
import json
from typing import Any, Iterable

import numpy as np
import pytest

from hallu_studio.caching import CONCEPTS_NAMESPACE, RESULTS_NAMESPACE
from hallu_studio.cli import main
from hallu_studio.config import Settings
from hallu_studio.embedding import ENCODER_THREADS_ENV, Embedder
from hallu_studio.metrics.base import ItemResult, ScoringItem
from hallu_studio.model import Sample
from hallu_studio.pipelines.scoring_jsonl import score_jsonl
from hallu_studio.store import CacheFile

from test_scoring_pipeline import GRAPH, FakeCHAIR, WordExtractor


class CountingCHAIR(FakeCHAIR):
    """FakeCHAIR whose configuration can change, counting the items it scores."""

    def __init__(self, version: int = 1) -> None:
        super().__init__()
        self.version = version

    def config(self) -> dict[str, Any]:
        return {"version": self.version}


class WholeInputMetric(CountingCHAIR):
    """A metric that reads the whole input before scoring (as CHAIR's ``benchmark`` vocabulary does)."""

    name = "wholeinput"
    needs_benchmark = True

    def observe_benchmark(self, benchmark: str, samples: Iterable[Sample]) -> None:
        self.names = sorted({n for s in samples for n in s.scene_graph.object_names()})

    def update(self, item: ScoringItem) -> ItemResult:
        self.seen.append(item.response_id)
        return ItemResult({"n": 1}, {"vocabulary": len(self.names)})


LINES = [{"id": "a", "response": "cat dog", "scene_graph": GRAPH},
         {"id": "b", "response": "cat mat", "scene_graph": GRAPH},
         {"id": "c", "response": "cat FAIL", "scene_graph": GRAPH},
         {"id": "d", "response": "cat", "reference_text": "A grey cat sits on a mat."}]


def _input(tmp_path, lines=LINES):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return src


def _run(src, out, metrics, cache_path, extractor=None):
    with CacheFile(cache_path) as cache_file:
        report = score_jsonl(src, out, Settings(), metrics, extractor=extractor or WordExtractor(),
                             cache=cache_file.cache)
        kept = cache_file.cache.values(RESULTS_NAMESPACE)
    return report, kept


def test_a_second_run_is_served_from_the_cache_with_identical_lines(tmp_path):
    src, cache = _input(tmp_path), tmp_path / "cache.duckdb"
    first, second = CountingCHAIR(), CountingCHAIR()
    extractor = WordExtractor()
    report1, kept = _run(src, tmp_path / "1.jsonl", [first], cache)
    assert report1.scored == 3 and sorted(first.seen) == ["a", "b", "c", "d"]
    assert len(kept) == 3  # a, b and d (c failed)
    report2, _ = _run(src, tmp_path / "2.jsonl", [second], cache, extractor)
    assert (tmp_path / "2.jsonl").read_bytes() == (tmp_path / "1.jsonl").read_bytes()
    assert report2.scored == report1.scored and report2.errors == report1.errors
    assert second.seen == ["c"]  # only the failure is tried again
    assert extractor.calls == 0  # the concepts the lines report come from the cache too


def test_a_failure_is_never_kept_and_is_tried_again(tmp_path):
    src, cache = _input(tmp_path), tmp_path / "cache.duckdb"
    _, kept = _run(src, tmp_path / "1.jsonl", [CountingCHAIR()], cache)
    rows = [json.loads(x) for x in (tmp_path / "1.jsonl").read_text().splitlines()]
    assert "metric blew up" in rows[2]["errors"]["fakechair"]
    assert all("FAIL" not in json.dumps(v) for v in kept.values())
    # the same line, now scorable: the next run computes it (nothing of the failure was kept)
    fixed = [dict(x, response=x["response"].replace("FAIL", "mat")) if x["id"] == "c" else x for x in LINES]
    again = CountingCHAIR()
    report, _ = _run(_input(tmp_path, fixed), tmp_path / "2.jsonl", [again], cache)
    assert again.seen == ["c"] and report.scored == 4


def test_a_changed_setting_or_line_misses_the_cache(tmp_path):
    src, cache = _input(tmp_path), tmp_path / "cache.duckdb"
    _run(src, tmp_path / "1.jsonl", [CountingCHAIR(version=1)], cache)
    changed = CountingCHAIR(version=2)  # another configuration: another config key
    _run(src, tmp_path / "2.jsonl", [changed], cache)
    assert sorted(changed.seen) == ["a", "b", "c", "d"]
    edited = [dict(x, reference_text="A dog.") if x["id"] == "d" else x for x in LINES]  # another reference
    third = CountingCHAIR(version=1)
    _run(_input(tmp_path, edited), tmp_path / "3.jsonl", [third], cache)
    assert third.seen == ["c", "d"]


def test_results_that_read_the_whole_input_are_not_kept(tmp_path):
    src, cache = _input(tmp_path), tmp_path / "cache.duckdb"
    _, kept = _run(src, tmp_path / "1.jsonl", [WholeInputMetric()], cache)
    assert kept == {}
    again = WholeInputMetric()
    _run(src, tmp_path / "2.jsonl", [again], cache)
    assert len(again.seen) == 4


def test_without_a_cache_file_no_result_is_kept_between_runs(tmp_path):
    src = _input(tmp_path)
    for _ in range(2):
        metric = CountingCHAIR()
        score_jsonl(src, tmp_path / "out.jsonl", Settings(), [metric], extractor=WordExtractor())
        assert len(metric.seen) == 4


@pytest.mark.slow
def test_real_metrics_second_run_identical_and_a_changed_setting_rescores_its_metric_only(tmp_path, capsys):
    lines = [{"id": "a", "response": "A grey cat sits on a red mat next to a dog.",
              "reference_text": "A grey cat lies on a blue mat. A lamp stands behind it."},
             {"id": "b", "response": "A cat on a mat.",
              "reference_text": "A grey cat lies on a blue mat. A lamp stands behind it."}]
    src, cache = _input(tmp_path, lines), tmp_path / "cache.duckdb"
    args = ["score", "--input", str(src), "--metrics", "emd,halfscore", "--cache", str(cache)]
    assert main(args + ["--output", str(tmp_path / "1.jsonl")]) == 0
    assert main(args + ["--output", str(tmp_path / "2.jsonl")]) == 0
    assert (tmp_path / "2.jsonl").read_bytes() == (tmp_path / "1.jsonl").read_bytes()
    with CacheFile(cache) as f:
        assert len(f.cache.values(RESULTS_NAMESPACE)) == 4 and f.cache.values(CONCEPTS_NAMESPACE)
    settings = tmp_path / "s.toml"
    settings.write_text("[scoring]\nunverifiable_weight = 0.5\n")  # HalFscore's precision reads it, EMD does not
    assert main(args + ["--output", str(tmp_path / "3.jsonl"), "--config", str(settings)]) == 0
    with CacheFile(cache) as f:
        assert len(f.cache.values(RESULTS_NAMESPACE)) == 6  # two new halfscore results, EMD's read back
    one, three = ([json.loads(x) for x in (tmp_path / n).read_text().splitlines()] for n in ("1.jsonl", "3.jsonl"))
    assert [r["emd"] for r in one] == [r["emd"] for r in three]


@pytest.mark.slow
def test_a_phrase_vector_does_not_depend_on_what_shares_its_encoding_call():
    """Shards of a run (``score --workers``) encode different phrase sets: each phrase's vector must be the same
    bits whatever else is encoded with it, in whatever order (sentence-transformers' own batching moved 134 of
    640)."""
    phrases = [f"Object: {a} {b}" for a in ("red", "small", "wooden", "old") for b in
               ("cat", "dog", "table", "chair", "lamp", "kite", "bus", "tree", "person standing near the window")]
    whole = Embedder().encode(phrases)
    alone = np.stack([Embedder().encode([p])[0] for p in phrases[:5]])
    shuffled_order = list(reversed(phrases))
    shuffled = Embedder().encode(shuffled_order)[[shuffled_order.index(p) for p in phrases]]
    assert whole[:5].tobytes() == alone.tobytes()
    assert whole.tobytes() == shuffled.tobytes()


@pytest.mark.slow
def test_a_small_batch_vectors_do_not_depend_on_the_thread_setting(monkeypatch):
    """One or two phrases in a batch: torch's split of the work moved the vectors' last bits with the thread count
    (59 of 60 single phrases differed between one thread and two)."""
    phrases = ["Object: cat", "Attribute: grey cat", "Relation: cat on mat", "Object: lamp"]
    got = []
    for threads in ("1", "2"):
        monkeypatch.setenv(ENCODER_THREADS_ENV, threads)
        embedder = Embedder()
        got.append([embedder.encode([p])[0].tobytes() for p in phrases])
    assert got[0] == got[1]
