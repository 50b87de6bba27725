"""Baselines a hallucination score should beat when compared with people.

``naive_dissimilarity``: 1 - the mean cosine similarity (the project's sentence encoder, MiniLM by default)
between a response and each of its sample's reference texts: each reference caption, or, for an object list,
the list as one text ("person, surfboard"). It reads no concept, no claim and no vocabulary: a score that
agrees with people less than this does not yet earn its complexity. Higher means less like the references,
read as more hallucination.

>>> from hallu_studio.model import Sample
>>> reference_texts(Sample(id="b/1", benchmark="b", image_key="1", reference_objects=["person", "surfboard"],
...                        reference_vocabulary="coco-80"))
['person, surfboard']
>>> class Toy:  # a two-dimensional "encoder": texts with a dog point one way, others the other
...     def encode(self, texts):
...         import numpy as np
...         return np.array([[1.0, 0.0] if "dog" in t else [0.0, 1.0] for t in texts])
>>> naive_dissimilarity([("a dog runs", ["a dog", "a cat"])], Toy())
[0.5]
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..model import Sample
from ..vectors import unit_rows


def reference_texts(sample: Sample) -> list[str]:
    """The texts a response is compared with: its reference captions, else its object list as one text, else
    the names of its scene graph's objects as one text."""
    if sample.reference_captions:
        return list(sample.reference_captions)
    if sample.reference_objects:
        return [", ".join(dict.fromkeys(sample.reference_objects))]
    names = sample.scene_graph.object_names()
    return [", ".join(dict.fromkeys(names))] if names else []


def naive_dissimilarity(pairs: Sequence[tuple[str, Sequence[str]]], encoder: Any) -> list[float | None]:
    """For each ``(response text, reference texts)``: 1 - mean cosine to the references (None without any).

    All texts are encoded in one call (each distinct text once).
    """
    texts = list(dict.fromkeys([t for response, refs in pairs for t in (response, *refs)]))
    if not texts:
        return [None] * len(pairs)
    vectors = dict(zip(texts, unit_rows(np.asarray(encoder.encode(texts), dtype=float))))
    out: list[float | None] = []
    for response, refs in pairs:
        if not refs:
            out.append(None)
            continue
        sims = [float(vectors[response] @ vectors[r]) for r in refs]
        out.append(1.0 - sum(sims) / len(sims))
    return out
