import json
from typing import Any, Sequence

import pytest

from hallu_studio.config import Settings
from hallu_studio.metrics.base import ItemResult, ScoringItem
from hallu_studio.model import Benchmark, ConceptSet, ObjectConcept, Response, Run, Sample, SceneGraph
from hallu_studio.pipelines.scoring import CONCEPTS, score_store
from hallu_studio.pipelines.scoring_jsonl import score_jsonl

GRAPH = {"objects": [{"id": "1", "name": "cat", "attributes": ["grey"]}, {"id": "2", "name": "mat"}],
         "relations": [{"subject": "1", "predicate": "on", "object": "2"}]}


class WordExtractor:
    """Every word is an object, with its span: enough to test the plumbing."""

    name = "words"

    def __init__(self) -> None:
        self.calls = 0

    def config(self) -> dict[str, Any]:
        return {}

    def extract(self, texts: Sequence[str]) -> list[ConceptSet]:
        self.calls += 1
        out = []
        for text in texts:
            if "EXPLODE" in text:
                raise RuntimeError("cannot parse this")
            objs, pos = [], 0
            for word in text.split():
                start = text.index(word, pos)
                objs.append(ObjectConcept(word, (start, start + len(word))))
                pos = start + len(word)
            out.append(ConceptSet(objects=objs))
        return out


class FakeCHAIR:
    """Share of mentioned objects absent from the scene graph (a CHAIR_i stand-in)."""

    name = "fakechair"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def config(self) -> dict[str, Any]:
        return {"version": 1}

    def update(self, item: ScoringItem) -> ItemResult:
        self.seen.append(item.response_id)
        if "FAIL" in item.response:
            raise ValueError("metric blew up")
        names = [o.name for o in item.mentioned.objects]
        if not names:
            return ItemResult({"hallucinated": 0, "mentioned": 0}, {"rate": None}, undefined_reason="empty response")
        truth = set(item.sample.scene_graph.object_names())
        bad = [n for n in names if n not in truth]
        return ItemResult({"hallucinated": len(bad), "mentioned": len(names)},
                          {"rate": len(bad) / len(names)}, {"hallucinated": bad})

    def compute(self, stats):
        total = sum(s["mentioned"] for s in stats)
        return {"rate": sum(s["hallucinated"] for s in stats) / total if total else None}


def _seed(store, texts: list[str], run: str = "r") -> list[str]:
    store.add_samples(Benchmark("b"), [Sample(id=f"b/{i}", benchmark="b", image_key=str(i), task="caption",
                                              scene_graph=SceneGraph.from_dict(GRAPH)) for i in range(len(texts))])
    store.add_run(Run(id=run, benchmark="b", model="m", backend="probe"))
    responses = [Response(run, f"b/{i}", t) for i, t in enumerate(texts)]
    store.add_responses(responses)
    return [r.id for r in responses]


def test_scores_what_is_missing_and_a_second_run_scores_nothing(store):
    ids = _seed(store, ["cat mat", "cat dog", "", "dog dog"])
    metric, extractor = FakeCHAIR(), WordExtractor()
    report = score_store(store, Settings(), [metric], progress=False, extractor=extractor, batch_size=3)
    assert report.scored["fakechair"] == 4 and report.undefined["fakechair"] == 1
    assert report.concepts_extracted == 4 and not report.failed
    score = store.get_scores(ids[1], "fakechair")[0]
    assert score.values == {"rate": 0.5} and score.evidence == {"hallucinated": ["dog"]}
    concepts = store.get_scores(ids[1], CONCEPTS)[0]
    assert concepts.evidence["concepts"]["object_spans"] == [[0, 3], [4, 7]]
    stats = {r["response_id"]: r["stats"] for r in store.score_stat_rows("fakechair")}
    assert stats[ids[3]] == {"hallucinated": 2, "mentioned": 2}

    again = score_store(store, Settings(), [metric], progress=False, extractor=extractor)
    assert sum(again.scored.values()) == 0 and again.concepts_extracted == 0
    assert len(metric.seen) == 4


def test_new_config_rescores_but_reuses_stored_concepts(store):
    _seed(store, ["cat mat", "cat dog"])
    score_store(store, Settings(), [FakeCHAIR()], progress=False, extractor=WordExtractor())

    class FakeCHAIRv2(FakeCHAIR):
        def config(self):
            return {"version": 2}

    extractor = WordExtractor()
    report = score_store(store, Settings(), [FakeCHAIRv2()], progress=False, extractor=extractor)
    assert report.scored["fakechair"] == 2 and extractor.calls == 0


def test_scores_made_without_wordnet_keep_keys_of_their_own_and_say_so(store, tmp_path, monkeypatch):
    # The graph judge's numbers move a lot without WordNet (Tri-HE gold answers: 5.5 -> 9.8), so a pass that has
    # none must not resume, or sit beside, scores made with it under one key, and it says why.
    _seed(store, ["cat mat", "cat dog"])
    with_wordnet = score_store(store, Settings(), [FakeCHAIR()], progress=False, extractor=WordExtractor())
    assert with_wordnet.warnings == []
    monkeypatch.setenv("WORDNET_DIR", str(tmp_path))  # an empty folder: no WordNet there
    extractor = WordExtractor()
    without = score_store(store, Settings(), [FakeCHAIR()], progress=False, extractor=extractor)
    assert without.scored["fakechair"] == 2 and extractor.calls == 1  # concepts too: the parser reads WordNet
    assert len(without.warnings) == 1 and "WordNet is not available" in without.warnings[0]
    assert len({r["config_key"] for r in store.score_stat_rows("fakechair")}) == 2


def test_item_failures_are_recorded_and_do_not_stop_the_run(store):
    ids = _seed(store, ["cat FAIL", "EXPLODE now", "cat mat"])
    report = score_store(store, Settings(), [FakeCHAIR()], progress=False, extractor=WordExtractor())
    assert report.scored["fakechair"] == 1
    assert report.failed == {"score:fakechair": 1, "score:concepts": 1}
    stages = sorted(f["stage"] for f in store.list_failures(run_id="r"))
    assert stages == ["score:concepts", "score:fakechair"]
    assert "FAILED 2" in report.summary() and any("metric blew up" in f for f in report.failures)
    assert store.get_scores(ids[2], "fakechair")


def test_interrupted_run_keeps_finished_batches_and_nothing_half_written(store, monkeypatch):
    _seed(store, [f"cat word{i}" for i in range(7)])
    real = store.put_score_batch
    calls = []

    def crash_on_second(scores, stats, failures=()):
        calls.append(len(scores))
        if len(calls) == 2:
            # Write half of the batch, then die inside the same transaction's caller.
            raise KeyboardInterrupt
        return real(scores, stats, failures)

    monkeypatch.setattr(store, "put_score_batch", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        score_store(store, Settings(), [FakeCHAIR()], progress=False, extractor=WordExtractor(), batch_size=3)
    monkeypatch.setattr(store, "put_score_batch", real)
    assert store.counts()["scores"] == 6  # 3 responses x (concepts + metric), first batch only
    report = score_store(store, Settings(), [FakeCHAIR()], progress=False, extractor=WordExtractor(), batch_size=3)
    assert report.scored["fakechair"] == 4 and report.concepts_extracted == 4
    assert store.counts()["scores"] == 14


def test_a_batch_write_is_one_transaction(store):
    ids = _seed(store, ["cat mat"])
    from hallu_studio.model import Score

    good = Score(ids[0], "x", "k", {"v": 1})
    # The malformed failure row breaks the write after the scores went in: all must roll back.
    with pytest.raises(ValueError):
        store.put_score_batch([good], [{"v": 1}], [("r", "b/0", "too short")])
    assert store.counts()["scores"] == 0 and store.score_stat_rows() == []
    assert store.put_score_batch([good], [{"v": 1}], [("r", "b/0", "score:x", "boom")]) == 1
    assert store.score_stat_rows()[0]["stats"] == {"v": 1} and len(store.list_failures()) == 1


def test_unknown_metric_name_is_a_clear_error(store):
    _seed(store, ["cat"])
    with pytest.raises(ValueError, match="unknown metric 'bleu'"):
        score_store(store, Settings(), ["bleu"], progress=False, extractor=WordExtractor())


def test_jsonl_scores_good_lines_and_names_bad_ones(tmp_path):
    lines = [
        {"id": "a", "response": "cat dog", "scene_graph": GRAPH},
        {"id": "b", "response": "ignored words", "scene_graph": GRAPH,
         "mentioned": {"objects": ["mat"], "attributes": [["mat", "red"]], "relations": []}},
        {"id": "c", "response": "cat"},
        "not json at all",
        {"id": "d", "response": "cat", "reference_text": "A grey cat sits on a mat."},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n")
    out = tmp_path / "out.jsonl"
    report = score_jsonl(src, out, Settings(), [FakeCHAIR()], extractor=WordExtractor())
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert report.lines == 5 and report.scored == 4 and len(report.errors) == 1
    assert rows[0]["mentioned"] == {"objects": ["cat", "dog"], "attributes": [], "relations": []}
    assert rows[0]["fakechair"] == {"rate": 0.5} and rows[0]["evidence"]["fakechair"] == {"hallucinated": ["dog"]}
    assert rows[1]["mentioned"]["attributes"] == [["mat", "red"]] and rows[1]["fakechair"] == {"rate": 0.0}
    # a line with no reference is read (as import reads it); a metric that needs one says so (this one has no spec)
    assert rows[2]["id"] == "c" and "error" not in rows[2]
    assert rows[3]["line"] == 4 and rows[3]["id"] is None
    assert report.errors[0].startswith("line 4: not valid JSON")
    assert rows[4]["id"] == "d"


def test_batched_metrics_use_update_many_and_fall_back_one_by_one(store):
    _seed(store, ["cat mat", "cat FAIL", "dog"])

    class Batched(FakeCHAIR):
        def __init__(self):
            super().__init__()
            self.batches: list[int] = []

        def update_many(self, items):
            self.batches.append(len(items))
            return [self.update(it) for it in items]

    metric = Batched()
    report = score_store(store, Settings(), [metric], progress=False, extractor=WordExtractor())
    # The batch call failed on "FAIL": the items were then scored one by one, only the bad one failing.
    assert metric.batches == [3] and report.scored["fakechair"] == 2 and report.failed["score:fakechair"] == 1


def test_registry_names_applicability_and_builders():
    from hallu_studio.metrics.registry import (
        METRIC_NAMES, make_metric, make_metrics, not_applicable_reason, parse_metric_names,
    )

    assert parse_metric_names(" EMD, chair,emd") == ["emd", "chair"]
    with pytest.raises(ValueError, match="unknown metric 'bleu'"):
        parse_metric_names("emd,bleu")
    with pytest.raises(ValueError, match="no metric named"):
        parse_metric_names(" , ")
    with pytest.raises(ValueError, match="unknown metric"):
        make_metric("bleu", Settings())
    caption = Sample(id="b/1", benchmark="b", image_key="1", task="caption", scene_graph=SceneGraph.from_dict(GRAPH))
    yes_no = Sample(id="b/2", benchmark="b", image_key="1", task="yes_no", answer="yes")
    relation = Sample(id="b/3", benchmark="b", image_key="1", task="mcq", answer="A", relation_category="perception")
    assert not_applicable_reason("emd", caption) is None
    assert "yes_no" in not_applicable_reason("emd", yes_no)
    assert "relation" in not_applicable_reason("reefknot", yes_no)
    assert not_applicable_reason("reefknot", relation) is None
    assert "scene graph" in not_applicable_reason("trihe", Sample(id="b/4", benchmark="b", image_key="1"))
    assert not_applicable_reason("trihe", Sample(id="b/5", benchmark="b", image_key="1", reference_text="A cat.")) \
        is None  # a dense caption (DCI) is a reference
    built = make_metrics(list(METRIC_NAMES), Settings())  # models load lazily: building is cheap
    assert [m.name for m in built] == list(METRIC_NAMES)
    assert all(callable(m.update) and callable(m.compute) for m in built)
