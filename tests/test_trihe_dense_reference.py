"""Tri-HE against a dense reference caption (no scene graph): its concepts, counts included, are the graph;
built by the registry and run by the scoring pipeline on DCI-like samples."""

import pytest

from hallu_studio.app.inspection import inspect_response
from hallu_studio.config import Settings
from hallu_studio.judges.graph_judge import SceneGraphAlignmentJudge
from hallu_studio.metrics import registry
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.trihe import TriHEMetric, reference_for, reference_from_concepts
from hallu_studio.model import (AttributeConcept, Benchmark, ConceptSet, CountConcept, ObjectConcept, RelationConcept,
                                Response, Run, Sample, SceneGraph)
from hallu_studio.pipelines.scoring import score_store
from test_trihe import BagOfWordsEncoder

REFERENCE = ConceptSet([ObjectConcept("dog"), ObjectConcept("sofa")], [AttributeConcept("sofa", "red")],
                       [RelationConcept("dog", "on", "sofa")], [CountConcept("dog", 2)])


def test_reference_from_concepts_keeps_the_numbers_the_caption_states():
    ref = reference_from_concepts(REFERENCE)
    assert ref.counts == {"dog": 2} and ("sofa", "is", "red") in ref.triplets and ("dog", "on", "sofa") in ref.triplets
    verdicts = [j.verdict for j in SceneGraphAlignmentJudge().judge(
        [("dog", "is", "two"), ("dog", "is", "three"), ("sofa", "is", "blue"), ("dog", "under", "sofa")], ref)]
    assert verdicts == ["supported", "object", "relation", "relation"]


def test_a_sample_with_only_a_reference_caption_is_judged_against_it():
    sample = Sample("s1", "dci", "img", "caption", reference_text="Two dogs on a red sofa.")
    assert reference_for(sample).triplets == []  # without an extractor there is nothing to judge against
    metric = TriHEMetric(SceneGraphAlignmentJudge(), reference_extract=lambda text: REFERENCE)
    said = ConceptSet([ObjectConcept("dog")], [], [RelationConcept("dog", "under", "sofa")], [CountConcept("dog", 3)])
    result = metric.update(ScoringItem("r1", "Three dogs under the sofa.", sample, mentioned=said))
    assert result.stats["n_triplets"] == 2 and result.stats["hallucinated"] == 2


CAPTION, WRONG, RIGHT = "Two dogs on a red sofa.", "Three dogs under the sofa.", "Two dogs sit on the sofa."
CONCEPTS = {CAPTION: REFERENCE,
            WRONG: ConceptSet([ObjectConcept("dog"), ObjectConcept("sofa")], [],
                              [RelationConcept("dog", "under", "sofa")], [CountConcept("dog", 3)]),
            RIGHT: ConceptSet([ObjectConcept("dog"), ObjectConcept("sofa")], [],
                              [RelationConcept("dog", "on", "sofa")], [CountConcept("dog", 2)])}


class CaptionExtractor:
    """The pipeline's concept extractor, reduced to the three texts here; records each call."""

    name = "stub"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def config(self):
        return {"extractor": self.name}

    def extract(self, texts):
        self.calls.append(list(texts))
        return [CONCEPTS.get(t, ConceptSet()) for t in texts]


@pytest.fixture
def offline_encoder(monkeypatch):
    """The judge's phrase encoder without loading a model; the config keys computed meanwhile (which name the
    encoder) are kept apart from the process's cache of them."""
    from hallu_studio.metrics import keys

    monkeypatch.setattr(registry.Components, "encoder", lambda self: BagOfWordsEncoder())
    monkeypatch.setattr(keys, "_CACHE", {})


def dci_sample(i: int = 1, caption: str | None = CAPTION) -> Sample:
    return Sample(f"dci/{i}", "dci", f"img{i}", "caption", reference_text=caption, reference_kind="dense")


def test_the_registry_builds_trihe_judging_a_dci_sample_against_its_caption(offline_encoder):
    extractor = CaptionExtractor()
    [metric] = registry.make_metrics(["trihe"], Settings(), None, extractor)
    dci = dci_sample()
    assert registry.not_applicable_reason("trihe", dci) is None
    wrong, right = metric.update_many([ScoringItem("r1", WRONG, dci, mentioned=CONCEPTS[WRONG]),
                                       ScoringItem("r2", RIGHT, dci, mentioned=CONCEPTS[RIGHT])])
    assert wrong.undefined_reason is None and wrong.stats["n_triplets"] == 2 and wrong.stats["hallucinated"] == 2
    assert sorted(t["verdict"] for t in wrong.evidence["triplets"]) == ["object", "relation"]
    assert right.stats["n_triplets"] == 2 and right.stats["hallucinated"] == 0
    assert wrong.evidence["reference"] == right.evidence["reference"] == "reference caption"
    # The caption is read by the pipeline's extractor once for both responses, and not again later.
    metric.update(ScoringItem("r3", WRONG, dci, mentioned=CONCEPTS[WRONG]))
    assert extractor.calls == [[CAPTION]]


def test_trihe_still_refuses_a_sample_with_no_graph_no_gold_triplets_and_no_caption():
    for sample in (dci_sample(caption=None), dci_sample(caption="  ")):
        reason = registry.not_applicable_reason("trihe", sample)
        assert reason == "trihe needs a scene graph, reference triplets, reference captions or an object list"


def test_score_store_gives_dci_samples_trihe_values_and_refuses_bare_ones(store, offline_encoder):
    store.add_samples(Benchmark("dci"), [dci_sample(1), dci_sample(2, caption=None)])
    for run in ("a", "b"):
        store.add_run(Run(id=run, benchmark="dci", model=run, backend="recorded"))
    wrong, right, bare = Response("a", "dci/1", WRONG), Response("b", "dci/1", RIGHT), Response("a", "dci/2", WRONG)
    store.add_responses([wrong, right, bare])
    extractor = CaptionExtractor()
    report = score_store(store, Settings(), ["trihe"], progress=False, extractor=extractor)
    assert report.scored["trihe"] == 2 and report.not_applicable["trihe"] == 1 and not report.failed
    assert not report.undefined["trihe"]
    [score] = store.get_scores(wrong.id, "trihe")
    assert score.undefined_reason is None and score.values["hallucinated"] == 2 and score.values["n_triplets"] == 2
    assert score.evidence["reference"] == "reference caption"
    assert {t["verdict"] for t in score.evidence["triplets"]} == {"object", "relation"}
    assert store.get_scores(right.id, "trihe")[0].values["hallucinated"] == 0
    assert not store.get_scores(bare.id, "trihe")
    assert sum(call.count(CAPTION) for call in extractor.calls) == 1  # once for two responses to it
    panels = inspect_response(store, wrong.id, with_graphs=False)  # Inspect names what the claims were judged on
    assert "judged against the reference caption" in panels.evidence and "hallucinated (count)" in panels.evidence
    assert "reference: a dense description (what it doesn&#x27;t name is absent)" in panels.header


def test_a_reference_caption_is_silent_where_a_scene_graph_is_complete():
    """Against a caption, what it names but does not relate or describe is unverifiable and left out of the
    share (scene-graph, the default); contradictions and things it never names still count."""
    caption_ref = reference_from_concepts(ConceptSet(
        [ObjectConcept("dog"), ObjectConcept("sofa"), ObjectConcept("lamp")], [AttributeConcept("sofa", "red")],
        [RelationConcept("dog", "on", "sofa")], [CountConcept("dog", 2)]))
    claims = [("dog", "next to", "lamp"), ("lamp", "is", "blue"), ("dog", "under", "sofa"), ("cat", "is in", "the image")]
    default = SceneGraphAlignmentJudge()
    verdicts = default.judge(claims, caption_ref)
    assert [j.verdict for j in verdicts] == ["unverifiable", "unverifiable", "relation", "object"]
    assert "do not say how they relate; counted as 0.1 of a hallucination" in verdicts[0].reason
    assert [default.counts_as_hallucination(j.verdict, caption_ref.scope.closed) for j in verdicts] == [
        False, False, True, True]
    # The paper's counting against a caption too; and a scene graph stays complete under the default.
    always = SceneGraphAlignmentJudge(unverifiable="hallucination")
    assert [always.counts_as_hallucination(j.verdict, caption_ref.scope.closed) for j in verdicts] == [True] * 4
    assert default.counts_as_hallucination("unverifiable", closed=True)
    graph_ref = reference_for(Sample("g1", "t", "img", scene_graph=SceneGraph.from_dict({
        "objects": [{"id": "1", "name": "dog"}, {"id": "2", "name": "lamp"}]})))
    [no_edge] = default.judge([("dog", "next to", "lamp")], graph_ref)
    assert no_edge.verdict == "relation" and no_edge.reason.startswith("no edge")


def test_tri_he_share_against_a_caption_leaves_silence_out_of_the_numerator():
    sample = Sample("s2", "dci", "img", "caption", reference_text="Two dogs on a red sofa beside a lamp.")
    ref = ConceptSet([ObjectConcept("dog"), ObjectConcept("sofa"), ObjectConcept("lamp")],
                     [AttributeConcept("sofa", "red")], [RelationConcept("dog", "on", "sofa")])
    said = ConceptSet([ObjectConcept("dog"), ObjectConcept("lamp")], [AttributeConcept("lamp", "blue")],
                      [RelationConcept("dog", "under", "sofa")])
    result = TriHEMetric(SceneGraphAlignmentJudge(), reference_extract=lambda text: ref).update(
        ScoringItem("r2", "A dog under the sofa; a blue lamp.", sample, mentioned=said))
    # The contrary relation whole; the lamp's colour, which the caption does not give, a tenth (unverifiable_weight).
    assert result.stats["n_triplets"] == 2 and result.stats["hallucinated"] == pytest.approx(1.1)
    assert result.stats["unverifiable"] == 1
