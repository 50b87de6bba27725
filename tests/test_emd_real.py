"""The offline EMD default ranks real LLaVA captions above degraded ones (DCI dense references).

Reads ../shared/datasets/halfscore (skips when absent); uses the packaged MiniLM weights.
"""

import json
import random

import pytest

from conftest import shared_dataset

pytestmark = [pytest.mark.slow]

N = 60


@pytest.fixture(scope="module")
def pairs():
    ann_path = shared_dataset("halfscore", "annotation.json")
    cap_path = shared_dataset("halfscore", "llava-1.5-7b_captions.jsonl")
    refs = {a["image"]: a["caption"] for a in json.loads(ann_path.read_text())}
    caps = {json.loads(line)["image"]: json.loads(line)["caption"] for line in cap_path.read_text().splitlines()
            if line.strip()}
    images = sorted(set(refs) & set(caps))[:N]
    return [caps[i] for i in images], [refs[i] for i in images]


def test_real_captions_beat_other_images_captions_and_human_captions_beat_both(pairs):
    from hallu_studio.embedding import Embedder
    from hallu_studio.extraction import ParserExtractor
    from hallu_studio.metrics.base import ScoringItem
    from hallu_studio.metrics.emd import EMDMetric
    from hallu_studio.model import Sample

    captions, references = pairs
    rng = random.Random(0)
    perm = list(range(N))
    rng.shuffle(perm)
    metric = EMDMetric(Embedder(), ParserExtractor(), empty_side="unit_cost")

    def score(texts):
        items = [ScoringItem(response_id=str(i), response=t, sample=Sample(
            id=f"dci/{i}", benchmark="dci", image_key=str(i), reference_text=references[i]))
            for i, t in enumerate(texts)]
        return metric.compute([r.stats for r in metric.update_many(items)])

    own = score(captions)
    other = score([captions[j] for j in perm])
    human = score([" ".join(r.split()[:100]) for r in references])
    for kind in ("object", "attribute", "relation", "total"):
        assert own[kind] < other[kind], kind
        assert human[kind] < own[kind], kind
