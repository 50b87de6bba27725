"""People's labels beside the judges' verdicts (``studies.people_judges``), Inspect's panel of them and Browse's
"people and judges disagree" filter: hand-made events and toy specs, and M-HalDetect's real spans (skipped without
../shared)."""

from __future__ import annotations

import pytest

from conftest import shared_dataset
from hallu_studio.app.columns import headline_columns
from hallu_studio.app.render.people import people_html
from hallu_studio.app.tabs.browse import PEOPLE, PEOPLE_JUDGES, column_order
from hallu_studio.metrics.spec import MetricSpec, Number
from hallu_studio.model import HumanEvent, Score
from hallu_studio.studies.people_judges import (ACCURATE, HALLUCINATED, people_beside, people_labels,
                                                source_calls)

TEXT = "A dog sits on a red mat near a cat."  # dog 2-5, red 16-19, mat 20-23, cat 31-34


def _spec(name: str, display: str, words: bool = True) -> MetricSpec:
    # A toy metric whose evidence lists the spans it flags.
    return MetricSpec(name, display, ("caption",), Number("n", "n", "", True), (), flags_words=words,
                      flagged_spans=lambda values, evidence, text, concepts: [tuple(s) for s in evidence["bad"]])


SPECS = [_spec("a", "Judge A"), _spec("b", "Judge B")]


def _scores(flags_a: list, flags_b: list | None = None, undefined: dict | None = None) -> dict[str, Score]:
    undefined = undefined or {}
    out = {"a": Score("r", "a", "k", {}, {"bad": flags_a}, undefined_reason=undefined.get("a"))}
    if flags_b is not None:
        out["b"] = Score("r", "b", "k", {}, {"bad": flags_b}, undefined_reason=undefined.get("b"))
    return out


def _span(start: int, end: int, label: str = HALLUCINATED, source: str = "study", id: int = 1) -> HumanEvent:
    return HumanEvent("them", "span_label", "r", {"start": start, "end": end, "label": label},
                      f"span:{start}-{end}", id=id, source=source)


def test_a_marked_span_a_judge_flags_agrees_and_one_it_misses_names_the_judge():
    beside = people_beside([_span(16, 19)], TEXT, SPECS, _scores([[16, 23]], [[31, 34]]))
    (check,) = beside.spans
    assert check.label.text == "red" and check.agree == ("Judge A",) and check.disagree == ("Judge B",)
    # Judge B flags "cat", which nobody marked: flagged only by the judge.
    assert [(o.metric, o.text, o.against) for o in beside.judge_only] == [("Judge B", "cat", "not marked")]
    # Both call the response hallucinated, as the person does: no disagreement on the whole response.
    assert beside.disagreeing == []


def test_a_judge_that_flags_nothing_on_a_marked_response_disagrees():
    beside = people_beside([_span(16, 19)], TEXT, SPECS, _scores([[16, 19]], []))
    assert beside.disagreeing == ["Judge B"]
    assert [(c.metric, c.people, c.judge, c.agree) for c in beside.calls] == [
        ("Judge A", HALLUCINATED, HALLUCINATED, True), ("Judge B", HALLUCINATED, ACCURATE, False)]


def test_words_people_call_accurate_that_a_judge_flags_are_a_disagreement():
    beside = people_beside([_span(2, 5, ACCURATE)], TEXT, SPECS, _scores([[2, 5]], []))
    (check,) = beside.spans
    assert check.agree == ("Judge B",) and check.disagree == ("Judge A",)
    assert [(o.metric, o.against) for o in beside.judge_only] == [("Judge A", "labelled accurate")]


def test_an_undefined_score_makes_no_call_and_takes_no_side():
    beside = people_beside([_span(16, 19)], TEXT, SPECS, _scores([], [[16, 19]], {"a": "no claim"}))
    assert beside.disagreeing == [] and [c.metric for c in beside.calls] == ["Judge B"]
    assert [s.disagree for s in beside.spans] == [()]


def test_a_whole_answer_metric_makes_a_call_but_no_span_verdict():
    specs = [_spec("a", "Judge A", words=False)]
    beside = people_beside([_span(16, 19)], TEXT, specs, {"a": Score("r", "a", "k", {}, {"bad": []})})
    assert beside.disagreeing == ["Judge A"] and [(s.agree, s.disagree) for s in beside.spans] == [((), ())]


def test_ratings_five_is_clean_one_to_four_is_not_and_an_undone_rating_is_gone():
    rated = [HumanEvent("ann", "rating", "r", 5, id=1), HumanEvent("bob", "rating", "r", 4, id=2),
             HumanEvent("cy", "rating", "r", 2, id=3)]
    assert source_calls(people_labels(rated, TEXT)) == {"app": (HALLUCINATED, "ratings")}
    undone = rated + [HumanEvent("cy", "undo", "r", None, undoes=3, id=4)]
    assert source_calls(people_labels(undone, TEXT)) == {}  # 5 against 4: a tie, no call
    beside = people_beside(rated[:1], TEXT, SPECS, _scores([[2, 5]]))
    assert beside.disagreeing == ["Judge A"]  # rated 5 (none), yet the judge flags "dog"


def test_facts_labels_and_comparisons():
    events = [HumanEvent("f", "fact_label", "r", {"fact": "There is a cat.", "label": "accurate"}, "fact:0", id=1,
                         source="facts"),
              HumanEvent("f", "fact_label", "r", {"fact": "The mat is red.", "label": "hallucinated"}, "fact:1",
                         id=2, source="facts"),
              HumanEvent("h", "label", "r", {"label": "accurate"}, id=3, source="haelm"),
              HumanEvent("i", "comparison", "r", {"other": "human", "aspect": "hallucination", "score": -1},
                         "vs:human:hallucination", id=4, source="iiw")]
    calls = source_calls(people_labels(events, TEXT))
    assert calls == {"facts": (HALLUCINATED, "fact labels"), "haelm": (ACCURATE, "labels")}  # iiw: no call
    beside = people_beside(events, TEXT, SPECS[:1], _scores([]))
    assert beside.disagreeing == ["Judge A"]  # the facts' source says hallucinated, the judge flags nothing
    # The haelm source calls it accurate as a whole: its agreement with the judge is kept too.
    assert {(c.source, c.agree) for c in beside.calls} == {("facts", False), ("haelm", True)}
    flagging = people_beside(events[2:3], TEXT, SPECS[:1], _scores([[2, 5]]))
    assert [(o.text, o.against) for o in flagging.judge_only] == [("dog", "response called accurate")]


def test_a_correction_is_placed_on_its_claim_and_checked_there():
    claims = {"triplets": [{"triplet": ["mat", "is", "red"], "span": [16, 19], "verdict": "relation"}], "bad": []}
    judge = {"a": Score("r", "a", "k", {}, claims)}
    fixed = [HumanEvent("ann", "correction", "r", {"verdict": "supported", "reason": "it is red",
                                                   "triplet": ["mat", "is", "red"]}, "triplet:0", id=1)]
    (label,) = people_labels(fixed, TEXT, [claims])
    assert label.span == (16, 19) and label.says == ACCURATE and "the judge said relation" in label.detail
    beside = people_beside(fixed, TEXT, SPECS[:1], judge)
    assert [(s.agree, s.disagree) for s in beside.spans] == [(("Judge A",), ())]  # flags nothing there: agrees
    assert beside.calls == []  # a supported claim says nothing of the rest of the response
    # The same correction naming another claim is not placed on this one.
    other = [HumanEvent("ann", "correction", "r", {"verdict": "object", "reason": "", "triplet": ["x", "y", "z"]},
                        "triplet:0", id=1)]
    assert people_labels(other, TEXT, [claims])[0].span is None


def test_the_panel_escapes_what_people_and_judges_wrote():
    hostile = "<script>alert(1)</script> & a dog"
    event = HumanEvent("<b>x</b>", "span_label", "r", {"start": 0, "end": 8, "label": HALLUCINATED}, "span:0-8",
                       id=1, source="<i>study</i>")
    html = people_html(people_beside([event], hostile, [_spec("a", "<u>Judge</u>")], _scores([])), hostile)
    assert "<script>" not in html and "<i>study" not in html and "<u>Judge" not in html and "<b>x" not in html
    assert "&lt;script&gt;" in html and "disagree" in html
    assert "no person has judged" in people_html(people_beside([], TEXT, SPECS, _scores([])), TEXT)


def test_browse_puts_the_sorted_and_filtered_columns_after_the_response():
    cols = list(headline_columns())
    last = cols[-1]
    order = column_order({"sort": last.key, "disagreement": PEOPLE_JUDGES, "annotated": True}, cols)
    assert order[:5] == ["model", "response", last.title, PEOPLE, "annotated"]
    assert len(order) == len(set(order)) and set(c.title for c in cols) <= set(order)
    # Without a filter, the first metric column sorted on comes right after the response.
    assert column_order({"sort": cols[0].key}, cols, people=False)[2] == cols[0].title
    assert PEOPLE not in column_order({}, cols, people=False)


def test_the_store_keeps_the_ids_it_is_given_and_none_for_an_empty_choice(store):
    from synthetic_store import fill_synthetic_store

    ids = fill_synthetic_store(store, n_samples=3)
    assert set(store.browse_response_ids({"ids": ids[:2]})) == set(ids[:2])
    assert store.browse_response_ids({"ids": []}) == []
    assert len(store.browse_response_ids({})) == len(ids)


def test_mhaldetect_spans_appear_beside_a_judge_that_flags_one_of_them(store):
    from hallu_studio.app.inspection import inspect_response
    from hallu_studio.importers.human import read_human_judgements
    from hallu_studio.metrics.registry import metric_specs
    from hallu_studio.pipelines.importing import import_human_study
    from hallu_studio.studies.in_force import configs_in_force
    from hallu_studio.studies.people_judges import disagreeing_responses, response_beside

    import_human_study(store, read_human_judgements(shared_dataset("human", "mhaldetect")))
    marked = [e for e in store.list_events(source="mhaldetect") if e.kind == "span_label"]
    assert len(marked) == 759
    first = marked[0]
    text = store.get_response(first.response_id).text
    assert text[first.value["start"]:first.value["end"]] == first.value["text"]
    # A word-flagging metric's score that flags exactly the first marked span of that response (a real spec).
    spec = next(s for s in metric_specs() if s.flags_words and s.flagged_spans is not None and s.item is not None)
    in_force = configs_in_force(store)
    assert response_beside(store, first.response_id, in_force).judges == []
    beside = people_beside(store.list_events(response_id=first.response_id), text,
                           [_spec(spec.name, spec.display_name)], {spec.name: Score(first.response_id, spec.name, "k", {},
                                             {"bad": [[first.value["start"], first.value["end"]]]})})
    assert any(c.label.text == first.value["text"] and c.agree == (spec.display_name,) for c in beside.spans)
    assert beside.disagreeing == []
    # Inspect draws every marked span of the response, escaped, with no judge yet; Browse's filter keeps none.
    panel = inspect_response(store, first.response_id, in_force, with_graphs=False).people
    spans = [e for e in marked if e.response_id == first.response_id]
    assert panel.count('class="hs-marked"') == len(spans) and "mhaldetect" in panel
    assert disagreeing_responses(store, in_force) == {}
