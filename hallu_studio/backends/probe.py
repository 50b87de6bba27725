"""Probe models: deterministic describers that hallucinate on purpose, and say exactly where.

A probe writes fluent captions and answers from the sample's scene graph and
gold answer, and injects hallucinations at a chosen rate and mix. Every
response records what it injected and what it stated cleanly, so the metrics can
be checked against a known truth. Probe runs are synthetic and labelled so.

``signals["injected"]`` and ``signals["stated"]`` are lists of::

    {"type": "object" | "attribute" | "relation" | "count" | "answer",
     "concept": [...],          # object: [name]; attribute: [object, attribute];
                                # relation: [subject, predicate, object]; count: [object, n];
                                # answer: [answer given]
     "span": [start, end],      # characters of the response that state it
     "truth": [...]}            # injected only, where something true was replaced

Injection decisions: each concept slot (an object group for "object" and
"count", an attribute, a relation) is corrupted with probability ``rate`` when
its type is in ``mix``; a yes/no or MCQ answer is flipped with probability
``rate``. Decisions depend only on (seed, sample id, options), never on order.
In an answer built from gold triplets, a relation is corrupted only where both ends
are things one could see, and only into a predicate no triplet of the graph between
those ends supports (a swap the graph supports would be no hallucination); an object
only where the triplet's object is such a thing, replaced by one the judges do not
find in the scene by lemma, synonym or kind ("plant" where the graph has trees is no
error). A corrupted triplet is said in a sentence of its own, never inside an answer
that only guesses ("they are likely still on the oven rack"), since a guess claims
nothing seen. Whether a swap is true of the scene is decided, for captions and answers
alike, by the judges' own check (``grounding.edge_support`` on the sample's ``ReferenceGraph``: entailment,
inverses, symmetric predicates, agentive edges written backwards), so a probe never
injects an error the judges would have to call supported.

>>> opts = ProbeOptions.parse("rate=0.3,mix=object+relation,seed=1")
>>> opts.rate, opts.mix, opts.seed
(0.3, ('object', 'relation'), 1)
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Any, Sequence

from ..grounding import ReferenceGraph, edge_support
from ..model import Sample, content_key
from .base import GenerationRequest, GenerationResult
from ..lexicon.forms import normalize_name
from ..extraction.spans import speculative_spans
from .probe_options import INJECTION_TYPES, ProbeOptions
from .probe_text import SpanText, concept_record
from .probe_caption import write_caption
from .probe_scene import (MAX_RELATIONS, SceneTruth, absent_object, false_predicate, inject, is_object,
                          relation_sentence)

class ProbeBackend:
    """A synthetic LVLM that answers from the scene graph and hallucinates at a known rate."""

    kind = "probe"
    synthetic = True

    def __init__(self, options: ProbeOptions) -> None:
        self.options = options
        self.model = options.label()

    def checkpoint(self) -> str:
        return "probe-v1"

    def close(self) -> None:
        pass

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        return [self._one(r) for r in requests]

    def _one(self, request: GenerationRequest) -> GenerationResult:
        if self.options.delay_ms:
            time.sleep(self.options.delay_ms / 1000.0)
        sample = request.sample
        if sample is None:
            return GenerationResult(request.sample_id, error="probe model needs the sample (scene graph, answer)")
        rng = random.Random(content_key("probe", self.options.seed, sample.id, self.options.rate,
                                        list(self.options.mix), request.prompt))
        if self.options.fail and rng.random() < self.options.fail:
            return GenerationResult(request.sample_id, error=f"probe: simulated failure (fail={self.options.fail:g})")
        try:
            text, signals = describe(sample, self.options, rng)
        except ValueError as exc:
            return GenerationResult(request.sample_id, error=str(exc))
        return GenerationResult(request.sample_id, text=text, signals=signals)


def describe(sample: Sample, options: ProbeOptions, rng: random.Random) -> tuple[str, dict[str, Any]]:
    """The probe's response to one sample and its ``injected`` / ``stated`` signals."""
    if sample.task == "yes_no":
        return _answer_yes_no(sample, options, rng)
    if sample.task == "mcq":
        return _answer_mcq(sample, options, rng)
    if sample.task == "vqa" and (sample.gold_triplets or sample.answer):
        return _answer_vqa(sample, options, rng)
    return write_caption(sample, options, rng)


def _answer_vqa(sample: Sample, options: ProbeOptions, rng: random.Random) -> tuple[str, dict[str, Any]]:
    injected: list[dict[str, Any]] = []
    stated: list[dict[str, Any]] = []
    present = set(sample.scene_graph.object_names()) | {x for t in sample.gold_triplets for x in (t[0], t[2])}
    t = SpanText()
    if not sample.gold_triplets:
        answer = str(sample.answer).strip()
        if inject(options, rng, "object"):
            fake = absent_object(present | {answer}, answer, rng) or answer
            span = t.mark(fake.capitalize())
            injected.append(concept_record("object", [fake], span, truth=[answer]))
        else:
            t.mark(answer)
        t.add(".")
        return t.text, {"injected": injected, "stated": stated, "probe": options.label()}
    answer = str(sample.answer or "").strip().rstrip(".")
    in_answer = False  # the first triplet the answer spells out is corrupted inside the answer itself
    truth = SceneTruth(sample)
    # The graph's own objects, not the triplet ends an importer added to it (Tri-HE: ``meta["added_objects"]``).
    added = {normalize_name(n) for n in sample.meta.get("added_objects", ())}
    annotated = {normalize_name(n) for n in sample.scene_graph.object_names()} - added
    for subj, pred, obj in sample.gold_triplets[:MAX_RELATIONS]:
        # A relation hallucination pairs two objects of the image with a relation the graph does not hold
        # (Tri-HE §3.1): a triplet whose end is no object ("(stadium, size, large)") has no relation to get
        # wrong, and a swap the graph supports would be no error at all.
        ends_are_objects = is_object(subj, annotated) and is_object(obj, annotated)
        false_pred = false_predicate(pred, lambda p: truth.holds(subj, p, obj), rng) if ends_are_objects else None
        wrong_relation = inject(options, rng, "relation") and false_pred is not None
        # An object hallucination puts a thing that is not there where the triplet names a thing: "(documents,
        # indicating, work or study)" has no object to replace, and the replacement must be one the judges do not
        # find in the scene.
        wrong_object = not wrong_relation and inject(options, rng, "object") and is_object(obj, annotated)
        said_pred = false_pred if wrong_relation and false_pred else pred
        fake = absent_object(present, obj, rng, truth) if wrong_object else None
        wrong_object = fake is not None
        said_obj = fake or obj
        # A wrong triplet is said in a sentence of its own, not inside an answer that only guesses ("they are
        # likely still on the oven rack"): a guess is no claim of what is seen, so the error would not be one.
        guessing = (wrong_relation or wrong_object) and bool(speculative_spans(answer))
        where = None if in_answer or guessing else _locate_triplet(answer, subj, pred, obj)
        if where is not None:
            in_answer = True
            s0, p0, p1, o0, o1 = where
            t.add(answer[:p0])
            t.add(said_pred)
            t.add(answer[p1:o0])
            obj_span = t.mark(said_obj)
            t.add(answer[o1:] + ". ")
            span = (s0, obj_span[1])
        else:
            if answer and t.length == 0:
                t.add(answer + ". ")
                in_answer = True  # written whole: a later triplet is not spelt inside it again
            span = relation_sentence(t, subj, said_pred, said_obj, object_is_thing=wrong_object)
            obj_span = (span[1] - len(said_obj), span[1])
        if wrong_relation:
            injected.append(concept_record("relation", [subj, said_pred, obj], span, truth=[subj, pred, obj]))
        elif wrong_object:
            injected.append(concept_record("object", [said_obj], obj_span, truth=[obj]))
        else:
            stated.append(concept_record("relation", [subj, pred, obj], span))
    if answer and t.length == 0:
        t.add(answer + ".")
    return t.text.strip(), {"injected": injected, "stated": stated, "probe": options.label()}


def _locate_triplet(answer: str, subj: str, pred: str, obj: str) -> tuple[int, int, int, int, int] | None:
    """Where ``answer`` says "subj ... pred ... obj": (subject start, predicate start/end, object start/end)."""
    low = answer.lower()
    s0 = low.find(subj.lower())
    if s0 < 0 or not pred.strip():
        return None
    p0 = low.find(f" {pred.lower()} ", s0 + len(subj))
    if p0 < 0:
        return None
    p0 += 1
    p1 = p0 + len(pred)
    o0 = low.find(obj.lower(), p1)
    if o0 < 0:
        return None
    return s0, p0, p1, o0, o0 + len(obj)


def _synthetic_answer_signal(candidates: Sequence[str], chosen: str, injected: bool,
                             rng: random.Random) -> dict[str, Any]:
    """Candidate probabilities for a probe answer: hallucinated answers come out less confident.

    Reefknot (Table 4) reports ~70% answer probability when a model hallucinates
    and ~95% otherwise; the probe mimics that so the entropy detector has something
    to find. Synthetic, and marked so.
    """
    top = rng.uniform(0.5, 0.7) if injected else rng.uniform(0.85, 0.99)
    rest = (1.0 - top) / (len(candidates) - 1)
    probs = [top if c == chosen else rest for c in candidates]
    return {"candidates": list(candidates), "logits": None, "probs": probs, "raw_probs": probs,
            "entropy": -sum(p * math.log2(p) for p in probs if p > 0), "entropy_unit": "bits", "position": 0,
            "synthetic": True}


def _answer_yes_no(sample: Sample, options: ProbeOptions, rng: random.Random) -> tuple[str, dict[str, Any]]:
    gold = (sample.answer or "").strip().lower()
    if not gold.startswith(("yes", "no")):
        raise ValueError(f"sample {sample.id}: yes/no question without a yes/no gold answer ({sample.answer!r})")
    truth = "yes" if gold.startswith("yes") else "no"
    flip = rng.random() < options.rate
    said = ("no" if truth == "yes" else "yes") if flip else truth
    text = said.capitalize()
    signals: dict[str, Any] = {"injected": [], "stated": [], "probe": options.label(),
                               "answer": _synthetic_answer_signal(("yes", "no"), said, flip, rng)}
    record = concept_record("answer", [said], (0, len(text)), truth=[truth] if flip else None)
    signals["injected" if flip else "stated"].append(record)
    return text, signals


def _answer_mcq(sample: Sample, options: ProbeOptions, rng: random.Random) -> tuple[str, dict[str, Any]]:
    gold = (sample.answer or "").strip()[:1].upper()
    n = len(sample.options) or 4
    letters = [chr(ord("A") + i) for i in range(n)]
    if gold not in letters:
        raise ValueError(f"sample {sample.id}: MCQ gold answer {sample.answer!r} is not one of {letters}")
    flip = rng.random() < options.rate
    said = rng.choice([x for x in letters if x != gold]) if flip else gold
    signals: dict[str, Any] = {"injected": [], "stated": [], "probe": options.label(),
                               "answer": _synthetic_answer_signal(letters, said, flip, rng)}
    record = concept_record("answer", [said], (0, 1), truth=[gold] if flip else None)
    signals["injected" if flip else "stated"].append(record)
    return said, signals
