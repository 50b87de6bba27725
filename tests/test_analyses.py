"""The papers' analyses on tiny stores built by hand: every number below is computed by hand."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from hallu_studio.config import Settings
from hallu_studio.model import (
    Benchmark,
    ConceptSet,
    ObjectConcept,
    Response,
    Run,
    Sample,
    SceneGraph,
    Score,
)
from hallu_studio.studies.analyses import ANALYSES, AnalysisResult, run_analysis
from hallu_studio.studies.analyses.confidence_layers import (
    answer_layer_probs,
    entropy_buckets,
    mean_curve,
)
from hallu_studio.studies.analyses.domain_shift import fid_emd_correlation
from hallu_studio.studies.analyses.extractor_robustness import pearson_between
from hallu_studio.studies.analyses.fid import features_fid, frechet_distance
from hallu_studio.studies.analyses.frequent_pairs import frequent_pair_rates
from hallu_studio.studies.analyses.grouping import simple_lemma
from hallu_studio.studies.analyses.judge_agreement import (
    agreement_rows,
    sentence_level,
    split_sentences,
)
from hallu_studio.studies.analyses.length import covariance_ellipse
from hallu_studio.studies.analyses.paired import paired_difference
from hallu_studio.studies.analyses.probe_validity import (
    probe_rate,
    rate_rank_correlation,
)
from hallu_studio.studies.analyses.rescoring import Answer
from hallu_studio.studies.analyses.synonyms import BUILT_IN, swap_words
from hallu_studio.studies.analyses.vocabulary_shift import ranks
from hallu_studio.lexicon.wordnet import load_wordnet

GRAPH = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat"}, {"id": "2", "name": "sofa"}],
                              "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})


# Objects only: the word extractor below finds objects only, and EMD is undefined when one side lacks a type.
OBJECTS_ONLY = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat"}, {"id": "2", "name": "sofa"}]})


def _sample(i: int, *, domain: str = "original", task: str = "caption", image: str | None = None,
            graph: SceneGraph = GRAPH) -> Sample:
    return Sample(id=f"b/s{i}", benchmark="b", image_key=image or f"img{i}", task=task, domain=domain,
                  source_kind="real" if domain == "original" else "synthetic", scene_graph=graph,
                  relation_category="perception" if task == "yes_no" else None,
                  question="Is the cat on the sofa?" if task == "yes_no" else None)


def _run(model: str, **meta) -> Run:
    return Run(id=f"run-{model}", benchmark="b", model=model, backend="recorded", meta=meta)


def _store_with(store, samples, runs, responses, scores, stats=None):
    store.add_samples(Benchmark("b"), samples)
    store.add_runs_and_responses(runs, responses)
    store.put_score_batch(scores, stats if stats is not None else [None] * len(scores))
    return store


# --------------------------------------------------------------------------- registry, result


def test_registry_lists_the_nine_analyses_and_refuses_unknown_names(store):
    assert list(ANALYSES) == ["frequent-pairs", "length", "domain-shift", "vocabulary-shift", "extractor-robustness",
                              "judge-agreement", "confidence-layers", "run-comparison", "probe-validity"]
    with pytest.raises(ValueError, match="unknown analysis 'bleu'; known analyses: frequent-pairs"):
        run_analysis(store, "bleu")


@pytest.mark.parametrize("name", ["frequent-pairs", "domain-shift", "confidence-layers", "run-comparison",
                                  "probe-validity", "judge-agreement", "length"])
def test_an_empty_store_gives_no_rows_and_says_why(store, name):
    result = run_analysis(store, name, Settings())
    assert isinstance(result, AnalysisResult) and result.rows == []
    assert result.notes and result.figure is not None


# --------------------------------------------------------------------------- 1. frequent pairs


def test_frequent_pairs_worked_example():
    r = frequent_pair_rates([("cat", "sofa", "relation"), ("cat", "sofa", "supported"), ("cats", "sofa", "supported"),
                             ("dog", "ball", "relation"), ("man", "hat", "relation")], simple_lemma)
    assert (r.triplets, r.pairs, r.top_pairs, r.top_triplets) == (5, 3, 1, 3)
    assert r.rate_top == pytest.approx(1 / 3) and r.rate_all == pytest.approx(3 / 5)
    with pytest.raises(ValueError, match="share"):
        frequent_pair_rates([], simple_lemma, share=0)


def _trihe(response_id: str, triplets: list[tuple[str, str, str, str]]) -> Score:
    return Score(response_id, "trihe", "k1", {"n_triplets": len(triplets)},
                 {"judge": "j", "triplets": [{"triplet": [s, p, o], "verdict": v} for s, p, o, v in triplets]})


def test_frequent_pairs_from_a_store_leaves_attribute_claims_out(store):
    run = _run("m1")
    responses = [Response(run.id, "b/s0", "a"), Response(run.id, "b/s1", "b")]
    scores = [_trihe(responses[0].id, [("cat", "on", "sofa", "relation"), ("cat", "is", "grey", "object"),
                                       ("dog", "near", "ball", "relation")]),
              _trihe(responses[1].id, [("cats", "on", "sofa", "supported"), ("cat", "under", "sofa", "supported"),
                                       ("man", "on", "hat", "supported")])]
    _store_with(store, [_sample(0), _sample(1)], [run], responses, scores)
    result = run_analysis(store, "frequent-pairs", Settings())
    (row,) = result.rows
    # pairs (cat, sofa) x3, (dog, ball) x1, (man, hat) x1; the attribute claim is not a pair
    assert (row["triplets"], row["pairs"], row["top_pairs"]) == (5, 3, 1)
    assert row["rate_top"] == pytest.approx(1 / 3) and row["rate_all"] == pytest.approx(2 / 5)
    assert any("grouped by" in n for n in result.notes)


def test_wordnet_groups_synonyms():
    wn = load_wordnet()  # shipped with the package: never missing
    assert wn is not None
    assert wn.synset_name("couch") == wn.synset_name("sofa") == wn.synset_name("sofas")
    assert wn.base_form("mice") == "mouse" and wn.base_form("men") == "man"
    assert "large" in wn.synonyms("big", "a")


# --------------------------------------------------------------------------- 2. length


def test_covariance_ellipse_worked_example():
    e = covariance_ellipse([1, 2, 3], [2, 4, 6])
    assert e.center == (2.0, 4.0)
    assert e.width == pytest.approx(4 * math.sqrt(5)) and e.height == pytest.approx(0.0, abs=1e-9)
    assert e.angle == pytest.approx(math.degrees(math.atan2(2, 1)))
    round_ = covariance_ellipse([0, 2, 0, 2], [0, 0, 2, 2])  # covariance (4/3) I: a circle
    assert round_.width == pytest.approx(round_.height) == pytest.approx(4 * math.sqrt(4 / 3))


# --------------------------------------------------------------------------- 3. domain shift


def test_frechet_distance_and_fid_correlation_worked_examples():
    assert frechet_distance([0.0], [[1.0]], [3.0], [[4.0]]) == pytest.approx(10.0)
    a = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    assert features_fid(a, a + 1.0) == pytest.approx(2.0)  # same covariance, means 1 apart on both axes
    r, n = fid_emd_correlation({"cartoon": 10, "sketch": 20, "oil": 30, "line": 5}, {"cartoon": 1, "sketch": 3,
                                                                                  "oil": 2})
    assert (round(r, 6), n) == (0.5, 3)


def _emd(response_id: str, total: float) -> tuple[Score, dict[str, float]]:
    return (Score(response_id, "emd", "e1", {"total": total}, {}),
            {"total": total, "total_defined": 1.0})


def test_domain_shift_from_a_store(store):
    run = _run("m1")
    samples = [_sample(0), _sample(1), _sample(2, domain="cartoon"), _sample(3, domain="cartoon")]
    responses = [Response(run.id, s.id, "text") for s in samples]
    pairs = [_emd(r.id, v) for r, v in zip(responses, [10.0, 20.0, 40.0, 60.0])]
    _store_with(store, samples, [run], responses, [p[0] for p in pairs], [p[1] for p in pairs])
    result = run_analysis(store, "domain-shift", Settings(), n_boot=50)
    by_group = {r["group"]: r for r in result.rows}
    assert by_group["domain: original"]["emd"] == pytest.approx(15.0)
    assert by_group["domain: cartoon"]["emd"] == pytest.approx(50.0)
    assert by_group["source: real"]["emd"] == pytest.approx(15.0)
    assert by_group["source: synthetic"]["emd"] == pytest.approx(50.0)
    assert 40.0 <= by_group["domain: cartoon"]["emd_low"] <= 50.0 <= by_group["domain: cartoon"]["emd_high"] <= 60.0
    assert any("FID" in n for n in result.notes)


# --------------------------------------------------------------------------- 4. vocabulary shift


def test_swap_words_worked_example_and_repeatability():
    table = {"big": ["large"], "sofa": ["couch"]}
    cands = [((2, 5), "big", "a"), ((6, 9), "dog", "n"), ((20, 24), "sofa", "n")]
    text, swaps = swap_words("A big dog sits on a sofa.", cands, lambda w, p: table.get(w, []), 2, seed=0)
    assert text == "A large dog sits on a couch." and swaps == [("big", "large"), ("sofa", "couch")]
    one = [swap_words("A big dog sits on a sofa.", cands, lambda w, p: table.get(w, []), 1, seed="r1")
           for _ in range(3)]
    assert len({t for t, _ in one}) == 1 and len(one[0][1]) == 1
    assert swap_words("Big dog.", [((0, 3), "big", "a")], lambda w, p: BUILT_IN.get(w, []))[0] == "Large dog."
    assert ranks({"A": 10.0, "B": 5.0, "C": 7.5}) == {"B": 1, "C": 2, "A": 3}


class _WordExtractor:
    """Every word is an object (with its span): enough to exercise the in-memory re-scoring."""

    name = "words"

    def config(self):
        return {"extractor": "words"}

    def extract(self, texts):
        out = []
        for text in texts:
            objs, pos = [], 0
            for word in text.replace(".", "").split():
                start = text.index(word, pos)
                objs.append(ObjectConcept(word.lower(), (start, start + len(word))))
                pos = start + len(word)
            out.append(ConceptSet(objects=objs))
        return out


class _LetterEncoder:
    """Phrase vectors from letter counts: similar spellings are similar, and nothing is downloaded."""

    model_name = "letters"

    def encode(self, texts):
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def _caption_store(store):
    runs = [_run("m1"), _run("m2")]
    samples = [_sample(i, graph=OBJECTS_ONLY) for i in range(4)]
    texts = {"m1": ["cat sofa", "cat sofa", "cat couch", "sofa"], "m2": ["dog ball", "cat", "cat sofa", "sofa"]}
    responses = [Response(r.id, s.id, t) for r in runs for s, t in zip(samples, texts[r.model])]
    return _store_with(store, samples, runs, responses, [])


def test_vocabulary_shift_rescoring_in_memory(store):
    _caption_store(store)
    result = run_analysis(store, "vocabulary-shift", Settings(), encoder=_LetterEncoder(),
                          extractor=_WordExtractor(), n_boot=50)
    rows = {r["model"]: r for r in result.rows}
    assert set(rows) == {"m1", "m2"} and all(r["responses"] == 4 for r in rows.values())
    for r in rows.values():
        assert r["change"] == pytest.approx(r["emd_shifted"] - r["emd_original"])
    assert {r["rank_original"] for r in rows.values()} == {1, 2}
    assert any("ranking" in n for n in result.notes)
    with pytest.raises(ValueError, match="n_words"):
        run_analysis(store, "vocabulary-shift", Settings(), n_words=3)


# --------------------------------------------------------------------------- 5. extractor robustness


def test_extractor_robustness_worked_example_and_two_extractors(store):
    r, n = pearson_between({"r1": 1, "r2": 2, "r3": 3}, {"r1": 2, "r2": 4, "r3": 7, "r4": 1})
    assert n == 3 and r == pytest.approx(5 / math.sqrt(2 * 114 / 9))
    _caption_store(store)
    result = run_analysis(store, "extractor-robustness", Settings(), encoder=_LetterEncoder(),
                          extractors={"words": _WordExtractor(), "words-again": _WordExtractor()})
    assert result.columns == ["model", "responses", "emd[words]", "emd[words-again]"]
    for row in result.rows:
        assert row["emd[words]"] == pytest.approx(row["emd[words-again]"])
    assert any("words vs words-again: 1.000" in n for n in result.notes)


# --------------------------------------------------------------------------- 6. judge agreement


def test_agreement_rows_worked_example():
    # judge shares (0, .5, 1, 1) against human (5, 3, 2, 1): Pearson = -2.375 / sqrt(.6875 * 8.75)
    values = {("emb", "triplet"): {"a": 0.0, "b": 0.5, "c": 1.0, "d": 1.0}}
    human = {"a": 5.0, "b": 3.0, "c": 2.0, "d": 1.0}
    rows = agreement_rows(values, human, {k: "m" for k in human}, {k: k for k in human}, n_boot=50)
    overall = rows[0]
    assert (overall["judge"], overall["level"], overall["model"], overall["n"]) == ("emb", "triplet", "all", 4)
    assert overall["pearson"] == pytest.approx(-2.375 / math.sqrt(0.6875 * 8.75))
    assert [r["model"] for r in rows] == ["all", "m"]


class _KeywordJudge:
    """Supported when the claim mentions "cat"; a stand-in judge with known verdicts."""

    name = "keyword"

    def config(self):
        return {}

    def judge(self, claims, reference):
        from hallu_studio.judges.base import TripletJudgement

        return [TripletJudgement(tuple(c), "supported" if "cat" in " ".join(c) else "object") for c in claims]


def test_sentence_level_baseline_splits_and_judges_each_sentence():
    assert split_sentences("A cat sits. A dog runs!  Why? ok") == ["A cat sits.", "A dog runs!", "Why?", "ok"]
    answer = Answer(Response("r", "b/s0", "A cat sits. A dog runs. A cat naps."), _sample(0), "m")
    assert sentence_level(_KeywordJudge(), [answer]) == {answer.response.id: pytest.approx(1 / 3)}


def test_judge_agreement_needs_ratings(store):
    _caption_store(store)
    result = run_analysis(store, "judge-agreement", Settings(), judges={"keyword": _KeywordJudge()},
                          encoder=_LetterEncoder(), extractor=_WordExtractor())
    assert result.rows == [] and "rated responses" in result.notes[-1]


# --------------------------------------------------------------------------- 7. confidence and layers


def test_entropy_buckets_and_layer_probabilities_worked_example():
    buckets = entropy_buckets([0.1, 0.15, 0.5, 0.55, 0.9], [False, False, True, False, True], (0, 0.3, 0.6, 1.0))
    assert [(b.label, b.answers, b.hallucinated) for b in buckets] == [
        ("[0, 0.3)", 2, 0), ("[0.3, 0.6)", 2, 1), ("[0.6, 1]", 1, 1)]
    lens = {"layers": [{"layer": 1, "tokens": ["No", "▁yes"], "probs": [0.6, 0.3]},
                       {"layer": 2, "tokens": ["yes", "Yes"], "probs": [0.5, 0.4]}]}
    assert answer_layer_probs(lens, "yes") == pytest.approx([0.3, 0.9])
    assert answer_layer_probs({"yes": [0.2, 0.8]}, "Yes") == [0.2, 0.8]
    assert answer_layer_probs(lens, "") is None
    assert mean_curve([[0.2, 0.4], [0.4, 0.8, 1.0]]) == pytest.approx([0.3, 0.6, 1.0])
    with pytest.raises(ValueError, match="increasing"):
        entropy_buckets([0.1], [True], (1.0, 0.0))


def test_confidence_layers_from_a_store(store):
    run = _run("m1")
    samples = [_sample(i, task="yes_no") for i in range(4)]
    entropies, flags = [0.1, 0.3, 0.7, 0.9], [False, False, True, True]
    lens_yes = {"layers": [{"layer": 1, "tokens": ["yes"], "probs": [0.2]}, {"layer": 2, "tokens": ["yes"],
                                                                              "probs": [0.9]}]}
    responses = [Response(run.id, s.id, "yes", signals={"logit_lens": lens_yes}) for s in samples]
    scores = [Score(r.id, "reefknot", "r1", {"task": "yes_no", "hallucinated": h, "entropy": e},
                    {"parsed_answer": "yes"}) for r, e, h in zip(responses, entropies, flags)]
    _store_with(store, samples, [run], responses, scores)
    result = run_analysis(store, "confidence-layers", Settings(), edges=(0.0, 0.5, 1.0))
    assert [(r["bucket"], r["answers"], r["rate"]) for r in result.rows] == [("[0, 0.5)", 2, 0.0),
                                                                           ("[0.5, 1]", 2, 1.0)]
    assert any("logit lens recorded for 4 answers (2 hallucinated)" in n for n in result.notes)
    assert len(result.figure.axes) == 2


# --------------------------------------------------------------------------- 8. run comparison


def test_paired_difference_worked_example():
    d = paired_difference([1, 2, 3, 4], [2, 2, 5, 4], ["i1", "i1", "i2", "i3"], n_boot=400)
    assert (d.mean_a, d.mean_b, d.difference, d.n, d.clusters) == (2.5, 3.25, 0.75, 4, 3)
    assert d.low <= 0.75 <= d.high and 0 < d.p_value <= 1
    assert paired_difference([1, 2], [1, 2], n_boot=50).p_value == 1.0
    big = paired_difference([0.0] * 30, [1.0 + 0.01 * i for i in range(30)], n_boot=200)
    assert big.p_value == pytest.approx(1 / 201)  # no replicate is as far from 1.15 as 0 is
    with pytest.raises(ValueError, match="paired"):
        paired_difference([1, 2], [1])


def test_run_comparison_pairs_by_sample_and_clusters_by_image(store):
    runs = [_run("greedy"), _run("beam")]
    samples = [_sample(0, image="imgA"), _sample(1, image="imgA"), _sample(2, image="imgB")]
    responses = [Response(r.id, s.id, "x") for r in runs for s in samples] + [Response(runs[1].id, "b/s9", "x")]
    values = {"greedy": [10.0, 20.0, 30.0], "beam": [12.0, 20.0, 34.0]}
    scores = [Score(Response.make_id(r.id, s.id), "emd", "e1", {"total": v})
              for r in runs for s, v in zip(samples, values[r.model])]
    _store_with(store, samples + [_sample(9)], runs, responses, scores)
    result = run_analysis(store, "run-comparison", Settings(), runs=["run-greedy", "run-beam"], n_boot=100)
    (row,) = result.rows
    assert (row["metric"], row["baseline"], row["run"], row["n"], row["images"]) == ("emd", "greedy", "beam", 3, 2)
    assert row["difference"] == pytest.approx(2.0) and row["mean_baseline"] == pytest.approx(20.0)
    one = run_analysis(store, "run-comparison", Settings(), runs=["run-greedy"])
    assert one.rows == [] and "two or more" in one.notes[-1]
    with pytest.raises(ValueError, match="no run 'run-x'"):
        run_analysis(store, "run-comparison", Settings(), runs=["run-greedy", "run-x"])


# --------------------------------------------------------------------------- 9. probe validity


def test_probe_rate_and_rank_correlation_worked_example():
    assert probe_rate("probe rate=0.3 mix=object seed=0 [synthetic]") == 0.3 and probe_rate("llava") is None
    assert rate_rank_correlation([(0.0, 1.0), (0.1, 3.0), (0.3, 2.0), (0.5, 4.0)]) == pytest.approx(0.8)
    assert math.isnan(rate_rank_correlation([(0.0, 1.0), (0.1, 3.0)]))


def test_table_text_formats_missing_values():
    from hallu_studio.studies.analyses.result import message_figure

    r = AnalysisResult("x", "t", ["a", "b"], [{"a": 1.23456, "b": float("nan")}, {"a": True, "b": "s"}],
                       message_figure("m"))
    assert r.table_text().splitlines() == ["a     b", "1.23  —", "yes   s"]


# --------------------------------------------------------------------------- the command line


def test_study_command_runs_an_analysis_prints_its_table_and_writes_the_plot(tmp_path, capsys):
    from hallu_studio.cli import main
    from hallu_studio.store import Store

    db = tmp_path / "cli.duckdb"
    with Store(db) as st:
        test_run_comparison_pairs_by_sample_and_clusters_by_image(st)
    code = main(["study", "--db", str(db), "--analysis", "run-comparison", "--runs", "run-greedy,run-beam",
                 "--n-boot", "50", "--output-dir", str(tmp_path / "plots")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Runs compared per metric" in out
    assert re.search(r"^emd +greedy +beam +3 +2 +20 +22 +2 ", out, re.MULTILINE)  # difference 2 (presentation.number)
    assert (tmp_path / "plots" / "run-comparison.png").stat().st_size > 1000
    assert main(["study", "--db", str(db), "--analysis", "nope"]) == 2
    assert "unknown analysis 'nope'" in capsys.readouterr().err


def test_without_wordnet_objects_group_by_lemma_and_synonyms_come_from_the_table(monkeypatch, tmp_path):
    from hallu_studio.studies.analyses.grouping import object_grouper
    from hallu_studio.studies.analyses.synonyms import synonym_source

    monkeypatch.setenv("WORDNET_DIR", str(tmp_path))  # an empty folder: no WordNet there
    group, note = object_grouper()
    assert group("the Red Cars") == "car" and note.startswith("objects grouped by lemma")
    synonyms, how = synonym_source()
    assert synonyms("sofa", "n") == ["couch"] and how.startswith("synonyms from the built-in table")


# --------------------------------------------------------------------------- worked examples in the docstrings

DOCTESTED = ["common", "confidence_layers", "domain_shift", "extractor_robustness", "fid", "frequent_pairs",
             "grouping", "judge_agreement", "length", "paired", "probe_validity", "synonyms", "vocabulary_shift"]


@pytest.mark.parametrize("module", DOCTESTED)
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"hallu_studio.studies.analyses.{module}"))
    assert result.attempted > 0 and result.failed == 0


def test_confidence_plot_orders_entropy_buckets_by_their_lower_edge():
    from hallu_studio.studies.analyses.confidence_layers import _figure, entropy_buckets

    labels = [b.label for b in entropy_buckets([0.1, 0.5, 0.9], [True, False, True], [0, 0.3, 0.6, 1.0])]
    # model "b" only has the top bucket and comes first: first-appearance order would put it first
    rows = [{"model": "b", "bucket": labels[2], "rate": 1.0}, {"model": "a", "bucket": labels[0], "rate": 0.5},
            {"model": "a", "bucket": labels[1], "rate": 0.2}]
    fig = _figure(rows, {True: [], False: []}, {})
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == labels
