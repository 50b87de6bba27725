"""Reefknot-style relation questions (Y/N, multiple choice, open VQA) generated from a scene graph.

The wording follows the prompts of Reefknot's released files. Relation category
rule (documented in docs/sample_benchmark.md): a predicate is *cognition* when it
starts with an action verb in -ing that is not a bodily posture or physical
contact (holding, wearing, looking at, riding ...); everything else —
prepositions, "part of", "has", postures like "standing on" — is *perception*.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..model import SceneGraph

CAP_PER_TASK = 4
YES_NO_TEMPLATE = "{be} the {s} {r} {o} in this photo? Please answer yes or no."
MCQ_TEMPLATE = "What is the relation with {s} and {o} in this photo? {options}, please choose."
OPEN_TEMPLATE = "What is the relation with {s} and {o} in this photo? Please answer in the following format:{s} {be} <relation> {o}."

OPPOSITES: dict[str, str] = {
    "left of": "right of", "right of": "left of", "above": "below", "below": "above",
    "in front of": "behind", "behind": "in front of", "on": "under", "under": "on",
    "on top of": "under", "in": "outside", "inside": "outside", "next to": "far from",
    "holding": "dropping", "wearing": "taking off", "looking at": "looking away from",
}
# Fallback predicates for MCQ distractors when the graph has too few of its own.
COMMON_PREDICATES: tuple[str, ...] = ("on", "under", "behind", "in front of", "next to", "above", "below",
                                      "inside", "holding", "left of", "right of", "near")
PHYSICAL_ING = {"standing", "sitting", "lying", "leaning", "hanging", "covering", "supporting", "floating",
                "resting", "facing"}


def relation_category(predicate: str) -> str:
    """``perception`` or ``cognition`` by the rule above.

    >>> relation_category("holding"), relation_category("left of"), relation_category("standing on")
    ('cognition', 'perception', 'perception')
    """
    first = predicate.split()[0].lower() if predicate.split() else ""
    return "cognition" if first.endswith("ing") and first not in PHYSICAL_ING else "perception"


def _be(noun: str) -> str:
    last = noun.split()[-1]
    return "are" if last.endswith("s") and not last.endswith("ss") and last not in {"glass", "bus"} else "is"


def object_labels(graph: SceneGraph) -> dict[str, str]:
    """A label per object id: its name, or "<first attribute> <name>" where the name repeats."""
    names = [o.name for o in graph.objects]
    labels: dict[str, str] = {}
    for o in graph.objects:
        if names.count(o.name) > 1 and o.attributes:
            labels[o.id] = f"{o.attributes[0]} {o.name}"
        else:
            labels[o.id] = o.name
    return labels


@dataclass
class RelationQuestion:
    task: str  # yes_no | mcq | vqa (open)
    kind: str  # "yes_no" | "mcq" | "open"
    question: str
    answer: str
    triplet: tuple[str, str, str]  # the true relation the question is about
    relation_category: str
    options: list[str] = field(default_factory=list)
    asked_predicate: str = ""  # Y/N: the predicate in the question (false for a negative)


def true_label_triplets(graph: SceneGraph) -> set[tuple[str, str, str]]:
    labels = object_labels(graph)
    return {(labels[r.subject], r.predicate, labels[r.object]) for r in graph.relations}


def _false_predicate(s: str, p: str, o: str, graph_preds: list[str], truths: set[tuple[str, str, str]],
                     rng: random.Random) -> str | None:
    """A plausible but false predicate between s and o: the opposite, else another one from the graph."""
    candidates = [OPPOSITES[p]] if p in OPPOSITES else []
    others = [q for q in graph_preds if q != p]
    rng.shuffle(others)
    for q in candidates + others:
        if (s, q, o) not in truths and q != p:
            return q
    return None


def reefknot_questions(graph: SceneGraph, rng: random.Random, cap: int = CAP_PER_TASK) -> list[RelationQuestion]:
    """Up to ``cap`` Y/N (half true, half adversarial false), ``cap`` MCQ and ``cap`` open questions."""
    labels = object_labels(graph)
    truths = true_label_triplets(graph)
    shared = {lab for lab in labels.values() if list(labels.values()).count(lab) > 1}
    # A label two objects share would make the question ambiguous, so those relations are skipped.
    triples = sorted({(labels[r.subject], r.predicate, labels[r.object]) for r in graph.relations
                      if labels[r.subject] != labels[r.object] and not {labels[r.subject], labels[r.object]} & shared})
    rng.shuffle(triples)
    graph_preds = sorted({p for _, p, _ in triples})
    out: list[RelationQuestion] = []

    n_pos = (cap + 1) // 2
    for k, (s, p, o) in enumerate(triples[:cap]):
        if k < n_pos:
            asked, answer = p, "yes"
        else:
            false = _false_predicate(s, p, o, graph_preds, truths, rng)
            if false is None:
                continue
            asked, answer = false, "no"
        out.append(RelationQuestion("yes_no", "yes_no", YES_NO_TEMPLATE.format(be=_be(s).capitalize(), s=s, r=asked, o=o),
                                    answer, (s, p, o), relation_category(p), asked_predicate=asked))

    for s, p, o in triples[:cap]:
        pool = [q for q in dict.fromkeys([OPPOSITES.get(p, "")] + graph_preds + list(COMMON_PREDICATES))
                if q and q != p and (s, q, o) not in truths]
        distractors = rng.sample(pool, 3) if len(pool) >= 3 else pool
        if len(distractors) < 3:
            continue
        options = distractors + [p]
        rng.shuffle(options)
        letters = "ABCD"
        text = " ".join(f"{letters[i]}. {q}" for i, q in enumerate(options))
        out.append(RelationQuestion("mcq", "mcq", MCQ_TEMPLATE.format(s=s, o=o, options=text),
                                    letters[options.index(p)], (s, p, o), relation_category(p), options=options))

    for s, p, o in triples[:cap]:
        out.append(RelationQuestion("vqa", "open", OPEN_TEMPLATE.format(s=s, o=o, be=_be(s)),
                                    f"{s} {_be(s)} {p} {o}.", (s, p, o), relation_category(p)))
    return out
