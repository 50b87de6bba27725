"""Sentence embeddings from a server's /v1/embeddings (a local fake serving MiniLM vectors on 127.0.0.1)."""

from __future__ import annotations

import numpy as np
import pytest

from hallu_studio.embedding import Embedder, resolve_model_path
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.emd import EMDMetric
from hallu_studio.model import ConceptSet, Sample, SceneGraph
from test_llm_fake_server import FakeChatServer

GRAPH = SceneGraph.from_dict({
    "objects": [{"id": "0", "name": "cat", "attributes": ["grey"]}, {"id": "1", "name": "sofa", "attributes": ["red"]},
                {"id": "2", "name": "lamp", "attributes": []}],
    "relations": [{"subject": "0", "predicate": "on", "object": "1"}]})
SAMPLE = Sample(id="x/1", benchmark="x", image_key="1", task="caption", scene_graph=GRAPH)
MENTIONED = ConceptSet.from_dict({"objects": ["kitten", "couch", "dog"], "attributes": [["kitten", "white"]],
                                  "relations": [["kitten", "under", "couch"]]})


@pytest.fixture(scope="module")
def minilm():
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(resolve_model_path("all-MiniLM-L6-v2"), device="cpu")


def test_emd_with_server_embeddings_equals_the_local_model(minilm, store):
    # The server sends raw (unnormalised) vectors, in shuffled order; the embedder puts them right.
    def embed(texts):
        return minilm.encode(texts, normalize_embeddings=False, convert_to_numpy=True)

    with FakeChatServer([("ok", "unused")], embed=embed) as server:
        served = Embedder(f"openai:minilm@{server.base_url}", cache=store.cache, batch_size=4)
        assert served.model_name == "openai:minilm"  # where it is served is not part of its name
        item = ScoringItem("r", "A white kitten under a couch next to a dog.", SAMPLE, MENTIONED)
        remote = EMDMetric(served).update(item)
        local = EMDMetric(Embedder()).update(item)
        for key, value in local.values.items():
            if value is None:
                assert remote.values[key] is None
            else:
                assert remote.values[key] == pytest.approx(value, abs=1e-4), key
        calls = len(server.embedding_inputs)
        assert calls >= 2 and all(len(batch) <= 4 for batch in server.embedding_inputs)  # batched
        phrases = sorted({t for batch in server.embedding_inputs for t in batch})
        a = served.encode(phrases)
        assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
        assert len(server.embedding_inputs) == calls  # cached: no new call
        # A fresh embedder on the same store reads the vectors the first one cached.
        again = Embedder(f"openai:minilm@{server.base_url}", cache=store.cache, batch_size=4)
        assert np.allclose(again.encode(phrases), a) and len(server.embedding_inputs) == calls


def test_server_embedding_spec_is_checked():
    with pytest.raises(ValueError, match="openai:<model>@<base url>"):
        Embedder("openai:just-a-name")
