"""Metric-vs-human tables for imported studies (studies.human_agreement, human_sources, fact_judging), worked
examples checked by hand."""

import json
from pathlib import Path

import numpy as np
import pytest

from hallu_studio.cli import main
from hallu_studio.model import HumanEvent, Sample, SceneGraph, Score
from hallu_studio.importers.registry import ImportRequest
from hallu_studio.pipelines.importing import import_format
from hallu_studio.studies.human_agreement import binary_agreement, fact_agreement, group_means, span_agreement
from hallu_studio.studies.human_labels import marked_spans, rating_targets, response_calls
from hallu_studio.studies.human_sources import human_agreement, human_sources


# --------------------------------------------------------------------------- pure functions


def test_auroc_and_ap_by_hand_with_a_tie():
    # hallucinated: 0.9, 0.5; clean: 0.5, 0.1. Pairs: (0.9 > 0.5), (0.9 > 0.1), (0.5 = 0.5: half), (0.5 > 0.1):
    # AUROC = 3.5 / 4. AP: threshold 0.9 -> precision 1, recall 1/2; threshold 0.5 -> precision 2/3, recall 1:
    # AP = 1 * 0.5 + 2/3 * 0.5 = 0.8333.
    r = binary_agreement([0.9, 0.5, 0.5, 0.1], [True, True, False, False], clusters=["a", "a", "b", "b"], n_boot=200)
    assert r.auroc.value == pytest.approx(0.875) and r.ap.value == pytest.approx(5 / 6)
    assert r.positives == 2 and r.prevalence == 0.5 and r.clusters == 2
    assert r.auroc.low <= r.auroc.value <= r.auroc.high
    reversed_ = binary_agreement([0.1, 0.5, 0.5, 0.9], [True, True, False, False], n_boot=10)
    assert reversed_.auroc.value == pytest.approx(0.125)  # a score pointing the wrong way is below 0.5


def test_auroc_undefined_with_one_class():
    r = binary_agreement([0.2, 0.3], [True, True], n_boot=10)
    assert np.isnan(r.auroc.value) and np.isnan(r.auroc.low)


def test_span_precision_and_recall_by_hand():
    # Response 1 flags 0-5 (overlaps marked 3-8) and 20-25 (nothing): 1 of 2 right; marked 3-8 found, 30-35 missed.
    # Response 2 (clean) flags 0-4: wrong. Precision 1/3, recall 1/2.
    r = span_agreement([[(0, 5), (20, 25)], [(0, 4)]], [[(3, 8), (30, 35)], []], n_boot=50)
    assert (r.flagged, r.flagged_right, r.marked, r.marked_found) == (3, 1, 2, 1)
    assert r.precision.value == pytest.approx(1 / 3) and r.recall.value == 0.5


def test_fact_agreement_counts_unsettled_facts_as_coverage_not_errors():
    human = {k: "hallucinated" for k in range(4)} | {k: "accurate" for k in range(4, 10)}
    judged = {0: "hallucinated", 1: "hallucinated", 2: "accurate", 3: "not settled",
              4: "accurate", 5: "accurate", 6: "accurate", 7: "hallucinated", 8: "not settled", 9: "not settled"}
    r = fact_agreement(judged, human, n_boot=50)
    # settled: 7 of 10. hallucinated recall 2/3, accurate recall 3/4: balanced (2/3 + 3/4) / 2.
    assert (r.facts, r.settled) == (10, 7)
    assert r.coverage.value == pytest.approx(0.7)
    assert r.balanced_accuracy.value == pytest.approx((2 / 3 + 3 / 4) / 2)
    assert r.accuracy == pytest.approx(5 / 7)
    assert r.confusion["hallucinated"] == {"accurate": 1, "hallucinated": 2, "not settled": 1}
    with pytest.raises(ValueError, match="unknown verdict"):
        fact_agreement({0: "maybe"}, {0: "accurate"})


def test_group_means():
    means = group_means([1.0, 3.0, 10.0], ["a", "a", "b"], n_boot=20)
    assert means["a"].value == 2.0 and means["b"].value == 10.0 and means["a"].n == 2


def test_response_calls_majority_ties_and_facts():
    e = [HumanEvent("x", "label", "r1", {"label": "hallucinated"}, source="s"),
         HumanEvent("y", "label", "r1", {"label": "hallucinated"}, source="s"),
         HumanEvent("z", "label", "r1", {"label": "accurate"}, source="s"),
         HumanEvent("x", "label", "r2", {"label": "hallucinated"}, source="s"),
         HumanEvent("y", "label", "r2", {"label": "accurate"}, source="s"),
         HumanEvent("x", "label", "r3", {"label": "unsure"}, source="s"),
         HumanEvent("x", "fact_label", "r4", {"fact": "A.", "label": "accurate"}, target="fact:0", source="s"),
         HumanEvent("x", "fact_label", "r4", {"fact": "B.", "label": "hallucinated"}, target="fact:1", source="s")]
    calls, how = response_calls(e)
    assert calls == {"r1": True, "r4": True} and how == {"r1": "labels", "r4": "fact labels"}


def test_marked_spans_cover_every_judged_response_and_rating_targets():
    e = [HumanEvent("s", "label", "r1", {"label": "accurate"}, source="s"),
         HumanEvent("s", "span_label", "r2", {"start": 1, "end": 3, "label": "hallucinated"}, target="span:1-3",
                    source="s"),
         HumanEvent("s", "span_label", "r2", {"start": 5, "end": 9, "label": "accurate"}, target="span:5-9", source="s")]
    assert marked_spans(e) == {"r1": [], "r2": [(1, 3)]}
    assert marked_spans(e[:1]) == {}
    ratings = [HumanEvent("a", "rating", "r1", 4, source="s"), HumanEvent("b", "rating", "r1", 2, source="s"),
               HumanEvent("a", "comparison", "r1", {"other": "h", "aspect": "hallucination", "score": -2},
                          target="vs:h:hallucination", source="s")]
    assert rating_targets(ratings) == {"rating 1-5": {"r1": 3.0}, "comparison hallucination vs h": {"r1": -2.0}}


# --------------------------------------------------------------------------- from a store


class ToyEncoder:
    """Texts mentioning a cat point one way, the rest another: the naive baseline without loading a model."""

    def encode(self, texts):
        return np.array([[1.0, 0.2] if "cat" in t else [0.1, 1.0] for t in texts])


def _study_store(store, tmp_path):
    lines = []
    texts = {"img-1": ("A dog on grass.", "accurate", []), "img-2": ("A dog and a cat.", "hallucinated", [(12, 15)]),
             "img-3": ("A cat on a sofa.", "hallucinated", [(2, 5)]), "img-4": ("A dog runs.", "accurate", [])}
    for sid, (text, label, spans) in texts.items():
        lines.append({"source": "pilot", "sample_id": sid, "reference_text": ["A dog outside."], "model": "m1",
                      "response": text, "label": label, "rating": 5 if label == "accurate" else 2,
                      "spans": [{"start": a, "end": b, "label": "hallucinated"} for a, b in spans]})
    path = tmp_path / "pilot.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    import_format(store, "human-judgements", ImportRequest(path=Path(path)))
    responses = {r.text: r for r in store.iter_responses()}
    # Stored scores as the pipeline would write them: a Tri-HE share that ranks the two hallucinated responses first,
    # flagging "cat" in one of them and "grass" in a clean one; CHAIR flags "cat" where it appears.
    share = {"A dog on grass.": (1, 4), "A dog and a cat.": (2, 4), "A cat on a sofa.": (3, 4), "A dog runs.": (0, 2)}
    trihe_spans = {"A dog on grass.": [[9, 14]], "A dog and a cat.": [[12, 15]], "A cat on a sofa.": [],
                   "A dog runs.": []}
    scores = []
    for text, r in responses.items():
        h, n = share[text]
        scores.append(Score(r.id, "trihe", "k1", {"n_triplets": n, "hallucinated": h},
                            {"judge": "graph", "triplets": [{"triplet": ["x", "is", "y"], "span": sp, "verdict": "object",
                                                             "hallucinated": True} for sp in trihe_spans[text]]}))
        cat = "cat" in text
        scores.append(Score(r.id, "chair", "k2", {"hallucinated_objects": int(cat), "mentioned_objects": 2,
                                                   "chair_i_item": 50.0 if cat else 0.0},
                            {"hallucinated": ["cat"] if cat else [], "mentioned": []}))
    store.put_score_batch(scores, [None] * len(scores))
    return responses


def test_human_agreement_tables_from_stored_scores(store, tmp_path):
    _study_store(store, tmp_path)
    assert [s["source"] for s in human_sources(store)] == ["pilot"]
    report = human_agreement(store, "pilot", n_boot=50, encoder=ToyEncoder(), judge_facts=False)
    binary = {r["score"]: r for r in report.binary}
    # trihe share: accurate 0.25, 0 ; hallucinated 0.5, 0.75: every pair won.
    assert binary["trihe share"]["auroc"] == 1.0 and binary["trihe share"]["n"] == 4
    assert binary["chair-i"]["auroc"] == 1.0 and binary["trihe share"]["higher_means"] == "more hallucination"
    assert binary["naive 1-cosine"]["config_key"] == "baseline" and binary["naive 1-cosine"]["auroc"] == 1.0
    spans = {r["metric"]: r for r in report.spans}
    assert (spans["trihe"]["flagged"], spans["trihe"]["flagged_right"], spans["trihe"]["marked"],
            spans["trihe"]["marked_found"]) == (2, 1, 2, 1)
    assert spans["chair"]["precision"] == 1.0 and spans["chair"]["recall"] == 1.0
    rank = {r["score"]: r for r in report.rank if r["human"] == "rating 1-5"}
    assert rank["trihe share"]["spearman"] < 0 and rank["trihe share"]["agreeing_sign"] == "negative"
    groups = {(r["score"], r["group"]): r["mean"] for r in report.groups}
    assert groups[("trihe share", "accurate")] == pytest.approx(0.125)
    assert groups[("trihe share", "hallucinated")] == pytest.approx(0.625)
    tables = {row["table"] for row in report.rows()}
    assert tables == {"human_binary", "human_rank", "human_spans", "human_groups"}
    with pytest.raises(ValueError, match="unknown human judgement source 'pilott'"):
        human_agreement(store, "pilott")


def test_study_cli_prints_an_imported_source(tmp_path, capsys):
    from hallu_studio.store import Store

    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        _study_store(store, tmp_path)
    assert main(["study", "--db", str(db), "--source", "pilot", "--no-baseline", "--n-boot", "20"]) == 0
    out = capsys.readouterr().out
    assert "Human judgements imported from pilot (4 responses judged" in out
    assert "trihe share" in out and "Flagged spans against the spans people marked" in out
    assert main(["study", "--db", str(db), "--source", "pilot", "--no-baseline", "--n-boot", "20",
                 "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["table"] for r in rows} == {"human_binary", "human_rank", "human_spans", "human_groups"}
    assert all(r["source"] == "pilot" for r in rows)
    assert main(["study", "--db", str(db), "--source", "nobody"]) == 2
    assert "unknown judgement source 'nobody'" in capsys.readouterr().err
    assert main(["study", "--db", str(db), "--source", "app"]) == 0
    assert "imported from" not in capsys.readouterr().out


# --------------------------------------------------------------------------- facts


def test_fact_judge_settles_what_the_reference_can_and_no_more():
    from hallu_studio.config import Settings
    from hallu_studio.studies.fact_judging import FactJudge

    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "dog"}, {"id": "2", "name": "ball"}],
                                  "relations": [{"subject": "1", "predicate": "chasing", "object": "2"}]})
    sample = Sample(id="t/1", benchmark="t", image_key="1", scene_graph=graph)
    bare = Sample(id="t/2", benchmark="t", image_key="2")
    judge = FactJudge(Settings())
    got = judge.judge([("dog", "There is a dog.", sample), ("elephant", "There is an elephant.", sample),
                       ("bare", "There is a dog.", bare)])
    assert got["dog"].verdict == "accurate"
    assert got["elephant"].verdict == "hallucinated"
    assert got["bare"].verdict == "not settled" and got["bare"].reason


def test_human_written_and_machine_outputs_are_compared(store, tmp_path):
    rows = [{"source": "caps", "sample_id": f"img-{i}", "reference_text": "A dog.", "label": "accurate",
             "model": model, "written_by": by, "response": f"{model} caption {i}."}
            for i in range(3) for model, by in (("people", "human"), ("llava", "model"))]
    path = tmp_path / "caps.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_format(store, "human-judgements", ImportRequest(path=Path(path)))
    scores = [Score(r.id, "trihe", "k", {"n_triplets": 4, "hallucinated": 1 if r.text.startswith("people") else 3}, {})
              for r in store.iter_responses()]
    store.put_score_batch(scores, [None] * len(scores))
    report = human_agreement(store, "caps", baseline=False, judge_facts=False, n_boot=20)
    means = {r["group"]: r["mean"] for r in report.groups if r["split"] == "human vs machine"}
    assert means == {"human-written": 0.25, "machine": 0.75}
    assert report.binary == [] and "every response caps labelled is accurate: no AUROC" in report.notes


@pytest.mark.parametrize("module", ["hallu_studio.studies.human_agreement", "hallu_studio.studies.human_sources",
                                    "hallu_studio.studies.baselines",
                                    "hallu_studio.model.events", "hallu_studio.model.graph",
                                    "hallu_studio.model.concepts"])
def test_worked_examples_in_the_docstrings(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_the_study_view_shows_an_imported_sources_tables(store, tmp_path):
    from hallu_studio.app.context import AppContext
    from hallu_studio.app.tabs.study_compute import all_tables_html, source_choices

    _study_store(store, tmp_path)
    ctx = AppContext(store)
    assert [value for _, value in source_choices(ctx)] == ["app", "pilot"]
    html = all_tables_html(ctx, "pilot")["imported"]
    for shown in ("AUROC", "trihe share", "chair-i", "naive 1-cosine", "Flagged spans", "Mean score by group",
                  "Spearman"):
        assert shown in html, shown
    assert "Kinds no table of this view reads yet" not in html  # labels, spans and ratings all have their table
