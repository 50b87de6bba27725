"""Inspect draws every registered metric from its spec: a metric it has never heard of gets its section, its rows
and its drawing, with no change to the app."""

from __future__ import annotations

import sys
import types

from hallu_studio.app.inspection import inspect_response
from hallu_studio.app.render import panels
from hallu_studio.metrics import registry
from hallu_studio.metrics.evidence import HALLUCINATED, SUPPORTED, EvidenceRow, concept_key
from hallu_studio.metrics.spec import MetricSpec, Number
from hallu_studio.model import Score
from synthetic_store import fill_synthetic_store


def _rows(values, evidence, text):
    return [EvidenceRow(str(name), HALLUCINATED if bad else SUPPORTED, kind="object", reason=f"the toy's reason for {name}",
                        score=0.25, score_name="toy distance", concept=concept_key("object", name))
            for name, bad in evidence.get("found") or []]


class ToyMetric:
    spec = MetricSpec("toymetric", "Toy metric", tasks=("caption", "vqa", "yes_no"), settings=(),
                      headline=Number("n", "toy count", "objects", lower_is_better=True,
                                      meaning="objects the toy cannot find in the image"),
                      evidence_rows=_rows, panel="toy_drawing")
    name = spec.name


def test_a_new_metric_with_evidence_rows_gets_its_panel_in_inspect(store, monkeypatch):
    ids = fill_synthetic_store(store, n_samples=2)
    module = types.ModuleType("hallu_studio.metrics._toy_for_test")
    module.ToyMetric = ToyMetric  # type: ignore[attr-defined]
    # registered for this test alone: monkeypatch puts the registry back afterwards
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(registry._METRIC_CLASSES, "toymetric", ("_toy_for_test", "ToyMetric"))
    monkeypatch.setattr(registry, "METRIC_NAMES", (*registry.METRIC_NAMES, "toymetric"))
    monkeypatch.setitem(panels.PANELS, "toy_drawing",
                        lambda values, evidence, ctx: f'<div class="toy-drawing">{len(evidence["found"])} found</div>')
    rid = ids[0]
    store.put_scores([Score(rid, "toymetric", "toy-key", {"n": 1},
                            {"found": [["<lamp>", True], ["dog", False]]})])
    panels_ = inspect_response(store, rid, with_graphs=False)
    section = panels_.evidence.split('data-metric="toymetric"')[1].split("</section>")[0]
    assert '<div class="toy-drawing">2 found</div>' in section  # its own drawing, by the kind its spec names
    assert "Toy metric" in panels_.evidence and "objects the toy cannot find in the image" in section
    assert "hallucinated (object)" in section and "&lt;lamp&gt;" in section and "<lamp>" not in section
    assert "toy distance 0.25" in section and "the toy&#x27;s reason for dog" in section
    assert [v.spec.name for v in panels_.metrics][-1] == "toymetric"
    # a concept it judges otherwise than another metric is set beside it, with what each measures
    other = next((v for v in panels_.metrics if v.spec.name != "toymetric"
                  for r in v.rows if r.concept == concept_key("object", "dog") and r.verdict == HALLUCINATED), None)
    if other is not None:
        assert "objects the toy cannot find in the image" in panels_.disagreements
    # unregistered again after the test: Inspect no longer draws it
    monkeypatch.undo()
    assert 'data-metric="toymetric"' not in inspect_response(store, rid, with_graphs=False).evidence


def test_rows_of_two_metrics_on_one_concept_say_why_they_differ():
    from hallu_studio.app.render.evidence import disagreements_html

    plan = MetricSpec("p", "Plan", ("caption",), Number("d", "distance", "×100", True,
                                                        meaning="how far the concepts are moved"), (), family="V")
    claims = MetricSpec("c", "Claims", ("caption",), Number("h", "claims", "claims", True,
                                                             meaning="claims checked on the graph"), ())
    html = disagreements_html([
        (claims, [EvidenceRow("pagoda is one", SUPPORTED, kind="count", reason="the graph has 1 pagoda",
                              concept=concept_key("count", "pagoda", "one"))]),
        (plan, [EvidenceRow("pagoda: one", "not settled", kind="count", score=46.1, score_name="cost",
                            reason="embedding cost", concept=concept_key("count", "pagoda", "one")),
                EvidenceRow("lake: two", SUPPORTED, concept=concept_key("count", "lake", "two"))])])
    assert "pagoda is one" in html and "cost 46.1" in html and "the graph has 1 pagoda" in html
    assert "V Plan</b> measures how far the concepts are moved" in html and "claims checked on the graph" in html
    assert "lake" not in html  # one metric alone: nothing to compare
    assert disagreements_html([(claims, [EvidenceRow("x", SUPPORTED, concept="object:x")]),
                               (plan, [EvidenceRow("x", SUPPORTED, concept="object:x")])]) == ""
