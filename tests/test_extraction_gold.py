"""The offline extractor against sentences labelled by hand (DCI references and Tri-HE gold answers).

``tests/data/extraction_gold.jsonl`` points at each sentence (file, JSON path, character range,
sha256) and holds only the labels; the sentences are read from ../shared at test time.
Floors are the figures reached with parser rules 7 (docs/validity.md) less 0.03.
"""

import json
from pathlib import Path

import pytest

from conftest import shared_dataset
from hallu_studio.extraction import ParserExtractor
from hallu_studio.extraction.evaluation import CONCEPT_TYPES, load_gold, resolve, score

GOLD = Path(__file__).parent / "data" / "extraction_gold.jsonl"
# (precision, recall) per type reached by rules 7, less a margin of 0.03.
FLOORS = {"objects": (0.82, 0.90), "attributes": (0.77, 0.72), "relations": (0.70, 0.47), "counts": (0.97, 0.97)}
POINTER_KEYS = {"dataset", "pointer", "sentence_index", "chars", "sha256", *CONCEPT_TYPES}


def test_gold_holds_pointers_and_labels_only():
    rows = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert all(set(r) == POINTER_KEYS for r in rows)
    sources = [r["dataset"] for r in rows]
    assert sources.count("halfscore/annotation.json") >= 20 and sources.count("tri-he/tri-he.json") >= 20
    assert len(load_gold(GOLD)) == len(rows)


def test_parser_precision_and_recall_per_type():
    shared_dataset("halfscore", "annotation.json")
    datasets = shared_dataset("tri-he", "tri-he.json").parents[1]
    gold = load_gold(GOLD)
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
