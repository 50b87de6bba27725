"""A response's scores do not depend on what it is scored with: the batch it falls in, the lines around it, their
order. Shards over worker processes (``score --workers``, ``--engine ray``) rest on it: a shard is a batch
of other company. Values and evidence are compared whole, bit for bit (the JSON text of each line)."""

from __future__ import annotations

import ast
import json

import pytest

from hallu_studio.config import Settings
from hallu_studio.pipelines.scoring_jsonl import score_records

from conftest import shared_dataset

METRICS = ["trihe", "halfscore", "emd", "chair"]
CAPTIONS = ["A grey cat lies on a blue mat.", "A cat resting on a mat beside a lamp.",
            "A lamp stands behind a sleeping cat.", "The cat on the rug is grey.", "A small grey cat and a lamp."]
LINES = [
    {"id": "a", "response": "A grey cat sits on a red mat next to a dog. A lamp is behind it.",
     "reference_text": CAPTIONS},
    {"id": "b", "response": "A cat on a mat.", "reference_text": CAPTIONS},
    {"id": "c", "response": "Two dogs play with a ball in a green park while a man watches from a wooden bench.",
     "reference_text": ["A dog runs across the grass with a ball.", "Two dogs playing in a park.",
                        "A man sits on a bench in a park.", "Dogs chase a ball near a bench.",
                        "A park with dogs and a man."]},
    {"id": "d", "response": "The kitchen has a white fridge, a wooden table with three chairs and a window.",
     "reference_text": "A kitchen with a white refrigerator. A table stands by the window with two chairs."},
    {"id": "e", "response": "A red bus drives down a busy street past tall buildings and people on the sidewalk.",
     "reference_text": ["A red double decker bus on a city street.", "A bus driving past buildings.",
                        "People walk on the sidewalk as a bus passes.", "A red bus in traffic.",
                        "A city street with a bus and pedestrians."]},
]


def _scored(lines: list[dict], batch_size: int) -> dict[str, str]:
    records = [(i + 1, json.dumps(line)) for i, line in enumerate(lines)]
    out = score_records(records, Settings(), METRICS, batch_size=batch_size)
    return {r["id"]: json.dumps(r, sort_keys=True) for r in out if "error" not in r}


def _assert_same(lines: list[dict], batch_sizes: tuple[int, ...]) -> None:
    whole = _scored(lines, len(lines))
    assert len(whole) == len(lines)
    for size in batch_sizes:
        assert _scored(lines, size) == whole, f"batch size {size} moved a score"
    reordered = _scored(list(reversed(lines)), max(2, len(lines) // 3))
    assert reordered == whole, "the order of the lines moved a score"


@pytest.mark.slow
def test_scores_are_the_same_in_any_batch_and_order():
    _assert_same(LINES, (1, 2))


@pytest.mark.slow
def test_real_coco_val_descriptions_score_the_same_in_any_batch():
    """24 of VILA-8B's COCO_VAL descriptions (~100 words each, five COCO captions as references), as a shard
    of a real run holds them."""
    pd = pytest.importorskip("pandas")
    path = shared_dataset("toolkits", "vlmevalkit-vila_8b", "vila_8b_COCO_VAL.xlsx")
    rows = pd.read_excel(path).head(24)
    lines = []
    for row in rows.itertuples():
        captions = ast.literal_eval(row.answer)  # VLMEvalKit writes the list as Python prints it
        lines.append({"id": str(row.index), "response": str(row.prediction), "reference_text": captions})
    _assert_same(lines, (5, 7))
