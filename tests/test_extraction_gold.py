"""The offline extractor against sentences labelled by hand (DCI references and Tri-HE gold answers), and
against short COCO-style captions written for the gold.

``tests/data/extraction_gold.jsonl`` points at each dataset sentence (file, JSON path, character range,
sha256) and holds only the labels; the sentences are read from ../shared at test time. The written captions
carry their own text and run without ../shared.
Floors are the figures reached with parser rules 7 (docs/validity.md) less 0.03; for the written captions,
those of rules 12 less 0.03.
"""

import json
from pathlib import Path

import pytest

from conftest import shared_dataset
from hallu_studio.extraction import ParserExtractor
from extraction_evaluation import CONCEPT_TYPES, load_gold, resolve, score

GOLD = Path(__file__).parent / "data" / "extraction_gold.jsonl"
# (precision, recall) per type reached by rules 7, less a margin of 0.03.
FLOORS = {"objects": (0.82, 0.90), "attributes": (0.77, 0.72), "relations": (0.70, 0.47), "counts": (0.97, 0.97)}
# Written captions (rules 12: verbs glued into compounds, WordNet compounds, participles, nouns read as verbs).
WRITTEN_FLOORS = {"objects": (0.96, 0.96), "attributes": (0.89, 0.97), "relations": (0.91, 0.89),
                  "counts": (0.97, 0.97)}
POINTER_KEYS = {"dataset", "pointer", "sentence_index", "chars", "sha256", *CONCEPT_TYPES}
WRITTEN_KEYS = {"text", *CONCEPT_TYPES}


def test_gold_holds_pointers_and_labels_only():
    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    pointed = [r for r in rows if "text" not in r]
    assert all(set(r) == POINTER_KEYS for r in pointed)
    sources = [r["dataset"] for r in pointed]
    assert sources.count("halfscore/annotation.json") >= 20 and sources.count("tri-he/tri-he.json") >= 20
    # Written captions are short sentences of our own wording, never dataset text.
    written = [r for r in rows if "text" in r]
    assert written and all(set(r) == WRITTEN_KEYS and len(r["text"].split()) <= 15 for r in written)
    assert len(load_gold(GOLD)) == len(rows)


def test_written_captions_need_no_dataset():
    gold = [g for g in load_gold(GOLD) if g.written]
    assert resolve(gold, None) == [g.text for g in gold]
    with pytest.raises(ValueError, match="no datasets folder"):
        resolve([g for g in load_gold(GOLD) if not g.written][:1], None)


def test_parser_on_written_short_captions():
    gold = [g for g in load_gold(GOLD) if g.written]
    scores = score(ParserExtractor().extract(resolve(gold, None)), [g.labels for g in gold])
    reached = {k: (round(s.precision or 0.0, 3), round(s.recall or 0.0, 3)) for k, s in scores.items()}
    for kind, (p_floor, r_floor) in WRITTEN_FLOORS.items():
        p, r = reached[kind]
        assert p >= p_floor and r >= r_floor, f"{kind}: precision {p}, recall {r}; all: {reached}"


def test_parser_precision_and_recall_per_type():
    shared_dataset("halfscore", "annotation.json")
    datasets = shared_dataset("tri-he", "tri-he.json").parents[1]
    gold = [g for g in load_gold(GOLD) if not g.written]
    scores = score(ParserExtractor().extract(resolve(gold, datasets)), [g.labels for g in gold])
    reached = {k: (round(s.precision or 0.0, 3), round(s.recall or 0.0, 3)) for k, s in scores.items()}
    for kind, (p_floor, r_floor) in FLOORS.items():
        p, r = reached[kind]
        assert p >= p_floor and r >= r_floor, f"{kind}: precision {p}, recall {r}; all: {reached}"


def test_a_changed_sentence_is_refused(tmp_path):
    data = tmp_path / "d.json"
    data.write_text(json.dumps([{"caption": "A dog runs. A cat sleeps."}]))
    row = {"dataset": "d.json", "pointer": [0, "caption"], "sentence_index": 1, "chars": [12, 25],
           "sha256": "0" * 64, "objects": ["cat"], "attributes": [], "relations": [], "counts": []}
    (tmp_path / "g.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="sha256 differs"):
        resolve(load_gold(tmp_path / "g.jsonl"), tmp_path)


def test_evaluation_examples_and_span_coverage():
    import doctest

    import extraction_evaluation as evaluation
    from hallu_studio.model import ConceptSet, ObjectConcept

    result = doctest.testmod(evaluation)
    assert result.attempted > 0 and result.failed == 0
    text = "A dog sits on a mat. Two cats play."
    found = ConceptSet(objects=[ObjectConcept("dog", (2, 5)), ObjectConcept("mat", (16, 19))])
    cov = evaluation.span_coverage([text], [[(21, 35)]], [found])
    # No concept reaches the mark in the second sentence: a concept-level judge could not point at it.
    assert cov.span_recall == 0.0 and cov.on_marks == 0.0 and cov.marked_sentences == 1
    assert (cov.clean_sentences, cov.clean_sentences_with_concept, cov.concepts_in_clean_sentences) == (1, 1, 2)
    assert round(cov.marked_char_share, 2) == round(14 / len(text), 2)
