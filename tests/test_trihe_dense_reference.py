"""Tri-HE against a dense reference caption (no scene graph): its concepts, counts included, are the graph."""

from hallu_studio.judges.graph_judge import SceneGraphAlignmentJudge
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.trihe import TriHEMetric, reference_for, reference_from_concepts
from hallu_studio.model import AttributeConcept, ConceptSet, CountConcept, ObjectConcept, RelationConcept, Sample

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
