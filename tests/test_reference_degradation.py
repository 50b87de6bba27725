"""Degraded copies change only what the reference verifies (made-up sentences, hand-built concepts)."""

import random

from hallu_studio.lexicon.forms import plural
from hallu_studio.lexicon.predicates import contrary_preposition
from hallu_studio.model import AttributeConcept, ConceptSet, CountConcept, ObjectConcept, RelationConcept
from reference_degradation import ALL, KINDS, degrade, summary


def _span(text: str, word: str, start: int = 0) -> tuple[int, int]:
    i = text.index(word, start)
    return (i, i + len(word))


CAPTION = "Two dogs sit on a red sofa."
SAID = ConceptSet([ObjectConcept("dog", _span(CAPTION, "dogs")), ObjectConcept("sofa", _span(CAPTION, "sofa"))],
                  [AttributeConcept("sofa", "red", _span(CAPTION, "red"))],
                  [RelationConcept("dog", "sit on", "sofa", (4, 26))], [CountConcept("dog", 2, _span(CAPTION, "Two"))])


def test_changes_what_the_reference_states_and_only_that():
    ref = ConceptSet([ObjectConcept("dog"), ObjectConcept("couch")], [AttributeConcept("couch", "red")],
                     [RelationConcept("dog", "on", "couch")], [CountConcept("dog", 2)])
    d = degrade(CAPTION, SAID, ref, random.Random(0))
    assert d.copy(["relations swapped"]) == "Two dogs sit under a red sofa."
    assert d.copy(["counts changed"]) == "Three dogs sit on a red sofa."
    colour = d.copy(["colours changed"])
    assert colour.startswith("Two dogs sit on a ") and "red" not in colour
    added = d.copy(["objects added"])
    assert added.startswith(CAPTION + " There is also ")
    both = d.copy(KINDS)
    assert both.startswith("Three dogs sit under a ") and "red" not in both and "There is also" in both
    assert all(e.how == "changed" for k in KINDS[:3] for e in d.edits[k])
    assert summary({"x": d})[ALL] == (1, 0)


def test_a_silent_or_contradicting_reference_gives_no_change_in_place():
    # The reference gives the sofa another colour, no number, and links dog and sofa by no edge.
    ref = ConceptSet([ObjectConcept("dog"), ObjectConcept("sofa")], [AttributeConcept("sofa", "blue")], [], [])
    d = degrade(CAPTION, SAID, ref, random.Random(0))
    assert not d.edits["relations swapped"] and not d.edits["counts changed"]
    # The caption's own colour is already wrong: nothing to make wrong in place, and the caption has told it.
    assert not d.edits["colours changed"]
    assert d.copy(["relations swapped"]) is None and d.copy(KINDS) is None
    assert summary({"x": d})["relations swapped"] == (0, 0)


def test_a_concept_the_caption_does_not_state_is_stated_wrongly_in_an_added_sentence():
    caption = "A dog and a cat."
    said = ConceptSet([ObjectConcept("dog", _span(caption, "dog")), ObjectConcept("cat", _span(caption, "cat"))])
    ref = ConceptSet([ObjectConcept("dog"), ObjectConcept("cat")], [AttributeConcept("cat", "black")],
                     [RelationConcept("cat", "on", "dog")], [CountConcept("dog", 3)])
    d = degrade(caption, said, ref, random.Random(1))
    assert d.copy(["counts changed"]) == caption + " There are four dogs in the image."
    assert d.copy(["relations swapped"]) == caption + " The cat is under the dog."
    colour = d.copy(["colours changed"])
    assert colour.startswith(caption + " The cat is ") and "black" not in colour[len(caption):]
    assert summary({"x": d})["counts changed"] == (1, 1)


def test_added_objects_are_ones_the_reference_never_names():
    caption = "A giraffe."
    said = ConceptSet([ObjectConcept("giraffe", _span(caption, "giraffe"))])
    ref = ConceptSet([ObjectConcept("giraffe"), ObjectConcept("umbrella"), ObjectConcept("elephant")])
    for seed in range(10):
        added = degrade(caption, said, ref, random.Random(seed)).copy(["objects added"])[len(caption):]
        assert "giraffe" not in added and "umbrella" not in added and "elephant" not in added


def test_contrary_prepositions_and_unmarked_plurals():
    assert contrary_preposition("to the left of") == "right of"
    assert contrary_preposition("beside") == "far from"
    assert contrary_preposition("of") is None
    assert plural("people") == "people" and plural("dog") == "dogs"


def test_a_count_of_several_kinds_is_their_sum_and_of_one_kind_named_twice_the_largest():
    # "two women ... a man": three individuals, so "three individuals" is no wrong count; "two individuals ... the
    # person": two, so the added count is three.
    ref = ConceptSet([ObjectConcept("woman"), ObjectConcept("man")], [], [], [CountConcept("woman", 2)])
    caption = "Three individuals stand by a desk."
    said = ConceptSet([ObjectConcept("individual", (6, 17)), ObjectConcept("desk", (29, 33))], [], [],
                      [CountConcept("individual", 3, (0, 5))])
    d = degrade(caption, said, ref, random.Random(0))
    assert d.copy(["counts changed"]) == "Four individuals stand by a desk."
    ref2 = ConceptSet([ObjectConcept("individual"), ObjectConcept("person")], [], [], [CountConcept("individual", 2)])
    said2 = ConceptSet([ObjectConcept("man", (4, 7))], [], [], [])
    d2 = degrade("The man waves.", said2, ref2, random.Random(0))
    assert d2.copy(["counts changed"]) == "The man waves. There are three men in the image."
