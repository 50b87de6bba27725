"""Three VQA questions per synthetic scene (counting, attribute, spatial), answered from the exact graph."""

from __future__ import annotations

import random
from collections import Counter

from .photos import VQAItem
from .synthetic import SyntheticScene


def _plural(shape: str, n: int) -> str:
    return shape if n == 1 else shape + "s"


def synthetic_vqa(scene: SyntheticScene, rng: random.Random) -> list[VQAItem]:
    objs = scene.objects
    counts = Counter(p.shape for p in objs)
    shape = rng.choice(sorted(counts))
    n = counts[shape]
    counting = VQAItem(
        f"How many {_plural(shape, 2)} are there in the scene?",
        f"There {'is' if n == 1 else 'are'} {n} {_plural(shape, n)} in the scene.",
        [("scene", "contains", p.label) for p in objs if p.shape == shape])

    target = rng.choice(objs)
    attribute = VQAItem(
        f"What material is the {target.label} made of, and is it small or large?",
        f"The {target.label} is made of {target.material} and it is {target.size}.",
        [(target.label, "made of", target.material), (target.label, "is", target.size)])

    by_id = {p.id: p for p in objs}
    horizontal = [r for r in scene.graph.relations if r.predicate in ("left of", "on top of")]
    r = rng.choice(horizontal)
    a, b = by_id[r.subject], by_id[r.object]
    if r.predicate == "on top of":
        spatial = VQAItem(f"What is on top of the {b.label}?", f"The {a.label} is on top of the {b.label}.",
                          [(a.label, "on top of", b.label)])
    elif rng.random() < 0.5:
        spatial = VQAItem(f"Is the {a.label} to the left or to the right of the {b.label}?",
                          f"The {a.label} is to the left of the {b.label}.", [(a.label, "left of", b.label)])
    else:
        spatial = VQAItem(f"Is the {b.label} to the left or to the right of the {a.label}?",
                          f"The {b.label} is to the right of the {a.label}.", [(b.label, "right of", a.label)])
    return [counting, attribute, spatial]
