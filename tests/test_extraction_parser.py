"""The offline extractor on the parser failure modes seen on real dense captions."""

import pytest

from hallu_studio.extraction import ParserExtractor


@pytest.fixture(scope="module")
def ex():
    return ParserExtractor()


def concepts(ex, text):
    return ex.extract_one(text).to_dict()


def test_predicative_adjective_becomes_attribute(ex):
    d = concepts(ex, "The column is intricately carved.")
    assert d["objects"] == ["column"]
    assert ["column", "carved"] in d["attributes"]


def test_predicative_adjectives_with_conjunction(ex):
    d = concepts(ex, "The building is tall and white.")
    assert ["building", "tall"] in d["attributes"] and ["building", "white"] in d["attributes"]


def test_participle_and_passive_relations_keep_their_verb(ex):
    d = concepts(ex, "A fountain topped with a statue.")
    assert d["relations"] == [["fountain", "topped with", "statue"]]
    d = concepts(ex, "A house surrounded by greenery.")
    assert ["house", "surrounded by", "greenery"] in d["relations"]


def test_copular_preposition_is_a_relation(ex):
    assert concepts(ex, "The cat is on the table.")["relations"] == [["cat", "on", "table"]]


@pytest.mark.parametrize("text,relation", [
    ("The flag is right of the astronaut.", ("flag", "right of", "astronaut")),
    ("The ring is next to the face.", ("ring", "next to", "face")),
    ("The man is in front of the car.", ("man", "in front of", "car")),
    ("The lamp is on the left side of the sofa.", ("lamp", "on left side of", "sofa")),
])
def test_prepositions_of_several_words_are_relations(ex, text, relation):
    assert [(r.subject, r.predicate, r.object) for r in ex.extract_one(text).relations] == [relation]


def test_hyphenated_word_is_one_attribute(ex):
    d = concepts(ex, "A multi-tiered cake sits on a table.")
    assert ["cake", "multi-tiered"] in d["attributes"]
    assert not any(a in ("multi", "-", "tiere", "tiered") for _, a in d["attributes"])


def test_appositive_hedge_gives_alternatives_without_false_triplets(ex):
    d = concepts(ex, "A group of people in water, likely a river or a stream.")
    assert {"people", "water", "river", "stream"} <= set(d["objects"])
    assert "group" not in d["objects"]
    assert d["relations"] == [["people", "in", "water"]]


def test_or_alternatives_are_both_objects(ex):
    d = concepts(ex, "There is a remote or a phone on the table.")
    assert {"remote", "phone", "table"} <= set(d["objects"])
    assert ["phone", "on", "table"] in d["relations"]


def test_pronouns_are_never_objects_and_relative_pronoun_resolves(ex):
    d = concepts(ex, "A table, which is wooden, stands by the wall. It is red. They are old. This is nice.")
    assert not {"it", "which", "they", "this"} & set(d["objects"])
    assert ["table", "wooden"] in d["attributes"]


def test_framing_words_are_not_objects(ex):
    d = concepts(ex, "The image shows a dog in the background of the scene. The overall atmosphere of the "
                     "picture is calm, and the setting suggests the presence of a park environment.")
    assert "dog" in d["objects"]
    assert not {"image", "background", "scene", "atmosphere", "picture", "setting", "presence",
                "environment"} & set(d["objects"])


def test_number_is_not_an_attribute(ex):
    d = concepts(ex, "Two dogs and several cats.")
    assert d["objects"] == ["dog", "cat"]
    assert d["attributes"] == []


def test_spans_point_into_the_text(ex):
    text = "A man wearing a red hat is riding a horse."
    cs = ex.extract_one(text)
    assert [text[a:b] for a, b in (o.span for o in cs.objects)] == ["man", "hat", "horse"]
    red = next(a for a in cs.attributes if a.attribute == "red")
    assert text[red.span[0]:red.span[1]] == "red hat"
    riding = next(r for r in cs.relations if r.predicate == "riding")
    assert text[riding.span[0]:riding.span[1]] == "man wearing a red hat is riding a horse"


def test_batch_matches_single_and_is_cached(ex):
    texts = ["A cat on a mat.", "A dog under a tree.", "A cat on a mat.", ""]
    batch = ex.extract(texts)
    assert [c.to_dict() for c in batch] == [ex.extract_one(t).to_dict() for t in texts]
    assert batch[0] is batch[2]  # the cached parse
    assert len(batch[3]) == 0


def test_rejects_non_text(ex):
    with pytest.raises(TypeError, match="text 1"):
        ex.extract(["ok", None])  # type: ignore[list-item]


def test_config_names_the_model_and_rules(ex):
    cfg = ex.config()
    assert cfg["extractor"] == "parser" and "en_" in cfg["spacy_model"] and cfg["rules"]


def test_any_text_gives_spans_inside_it(ex):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    words = st.sampled_from(["a", "the", "red", "dog", "is", "on", "table", ",", ".", "which", "it", "multi-tiered",
                             "likely", "or", "and", "surrounded", "by", "image", "two", "café", "\n", "'s", "—"])

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(words, max_size=25))
    def check(tokens):
        text = " ".join(tokens)
        cs = ex.extract_one(text)
        for c in [*cs.objects, *cs.attributes, *cs.relations]:
            assert c.span is not None and 0 <= c.span[0] < c.span[1] <= len(text)
        assert len({o.name for o in cs.objects}) == len(cs.objects)

    check()
