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
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations
from typing import Any, Callable, Sequence

from ..grounding import Grounder, Match, ReferenceGraph, edge_support, instances_fitting
from ..model import Sample, SceneGraph, SceneObject, content_key
from .base import GenerationRequest, GenerationResult
from ..lexicon.attributes import alternatives, attribute_family
from ..lexicon.forms import count_of, head_noun, is_countable, normalize_name, takes_plural_verb
from ..lexicon.nouns import is_adjective_only, is_noun, is_noun_only, is_visual_noun
from ..lexicon.predicates import PREPOSITIONS, parse_predicate
from ..extraction.spans import speculative_spans
from ..lexicon.words import NEGATIONS, PRONOUNS
from .probe_text import (
    CO_OCCURRENCE, COMMON_OBJECTS, FALLBACK_ATTRIBUTES, FALLBACK_RELATIONS, RELATION_SWAPS, SpanText,
    concept_record, counted,
)

INJECTION_TYPES: tuple[str, ...] = ("object", "attribute", "relation", "count")
_ARTICLES = frozenset({"a", "an", "the"})
MAX_OBJECT_GROUPS = 12
MAX_RELATIONS = 15


@dataclass(frozen=True)
class ProbeOptions:
    rate: float = 0.0
    mix: tuple[str, ...] = INJECTION_TYPES
    seed: int = 0
    delay_ms: int = 0  # per item; lets tests kill a run part-way
    fail: float = 0.0  # probability that an item fails (exercises failure recording)

    def __post_init__(self) -> None:
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"probe rate must be within [0, 1], got {self.rate}")
        if not 0.0 <= self.fail <= 1.0:
            raise ValueError(f"probe fail must be within [0, 1], got {self.fail}")
        unknown = set(self.mix) - set(INJECTION_TYPES)
        if unknown or not self.mix:
            raise ValueError(f"probe mix must be a '+'-joined subset of {INJECTION_TYPES}, got {self.mix}")

    @classmethod
    def parse(cls, text: str) -> "ProbeOptions":
        """``rate=0.3,mix=object+attribute,seed=1,delay_ms=50,fail=0.1`` (every part optional)."""
        kwargs: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"probe option {part!r} is not key=value")
            key = key.strip()
            try:
                if key in ("rate", "fail"):
                    kwargs[key] = float(value)
                elif key in ("seed", "delay_ms"):
                    kwargs[key] = int(value)
                elif key == "mix":
                    kwargs[key] = tuple(m.strip() for m in value.split("+") if m.strip())
                else:
                    raise ValueError(f"unknown probe option {key!r}; known: rate, mix, seed, delay_ms, fail")
            except ValueError as exc:
                if "unknown probe option" in str(exc):
                    raise
                raise ValueError(f"probe option {key}={value!r} is not a valid value") from exc
        return cls(**kwargs)

    def label(self) -> str:
        """The model name of a probe run (delay is not part of it: it changes no output)."""
        fail = f",fail={self.fail:g}" if self.fail else ""
        return f"probe rate={self.rate:g} mix={'+'.join(self.mix)} seed={self.seed}{fail} [synthetic]"


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
    return _caption(sample, options, rng)


def _inject(options: ProbeOptions, rng: random.Random, kind: str) -> bool:
    # Draw even when the type is off, so turning one type on does not reshuffle the others.
    draw = rng.random()
    return kind in options.mix and draw < options.rate


def _absent_object(present: set[str], near: str, rng: random.Random,
                   truth: "SceneTruth | None" = None) -> str | None:
    """An object to say that is not there: one that co-occurs with ``near``, else a common one; not a name in
    ``present``, nor (with ``truth``) one the judges ground to the scene ("plant" where trees are, "bottle" where
    the graph says "bottles")."""
    def absent(o: str) -> bool:
        return o not in present and (truth is None or not truth.grounds(o))

    pool = [o for o in CO_OCCURRENCE.get(near, ()) if absent(o)]
    if not pool:
        pool = [o for o in COMMON_OBJECTS if absent(o)]
    return rng.choice(pool) if pool else None


def _wrong_attribute(attr: str, own: set[str], rng: random.Random) -> str:
    """Another attribute of the same kind (a colour for a colour) where the lexicon knows one."""
    pool = [a for a in alternatives(attr) if a not in own]
    if pool:
        return rng.choice(pool)
    return rng.choice([a for a in FALLBACK_ATTRIBUTES if a not in own] or ["striped"])


def _wrong_predicate(pred: str, rng: random.Random, holds: "Callable[[str], bool] | None" = None) -> str | None:
    """A predicate that replaces ``pred``: its opposite where there is one, else another common one.

    ``holds`` says whether a predicate is true of the pair the sentence names (where the scene is known):
    a swap the scene makes true anyway ("holding" for a man the graph has "holding" the camera too, "right
    of" between two cubes of which one is left of the other) is no hallucination, so the next candidate is
    tried; None when every candidate is true.
    """
    swap = RELATION_SWAPS.get(pred)
    if swap and (holds is None or not holds(swap)):
        return swap
    others = [p for p in FALLBACK_RELATIONS if p != pred and p != swap and (holds is None or not holds(p))]
    return rng.choice(others) if others else None


_GROUNDER = Grounder()  # lexicon only (lemma, synonym, hypernym, hyponym): the probe loads no embedding model


class SceneTruth:
    """What a sample's scene graph (and its gold triplets) make true of a relation, by the judges' own check.

    The graph is read as the judges read it (``grounding.ReferenceGraph``: objects of one name merged into
    a node, agentive edges written backwards turned round), the names are grounded as they ground them
    (``grounding.Grounder``, no embeddings), and a relation holds when ``grounding.edge_support`` finds an
    edge that entails it either way round (an inverse: "under" for "on"; a symmetric predicate; a passive).
    Built once per response, only when a swap needs checking.
    """

    def __init__(self, sample: Sample) -> None:
        self.sample = sample
        self._grounded: dict[str, list[Match]] = {}

    @cached_property
    def graph(self) -> ReferenceGraph:
        return ReferenceGraph.from_scene_graph(self.sample.scene_graph,
                                               extra=[tuple(t) for t in self.sample.gold_triplets])  # type: ignore[misc]

    def _ground(self, name: str) -> list[Match]:
        if name not in self._grounded:
            self._grounded[name] = _GROUNDER.ground(name, self.graph)
        return self._grounded[name]

    def grounds(self, name: str) -> bool:
        """Whether the judges would find ``name`` in the scene (by lemma, synonym or kind)."""
        return bool(self._ground(name))

    def holds(self, subj: str, pred: str, obj: str, subject_attributes: Sequence[str] = (),
              object_attributes: Sequence[str] = ()) -> bool:
        """Whether "the <subject_attributes> <subj> <pred> the <object_attributes> <obj>" is true of some pair of
        objects the sentence can mean (``instances_fitting``: "the red cube" is the red one; no adjective, any)."""
        subjects, objects = self._ground(subj), self._ground(obj)
        if not subjects or not objects:
            return False
        return edge_support(self.graph, [m.index for m in subjects], parse_predicate(pred), [m.index for m in objects],
                            instances_fitting(subjects, subject_attributes),
                            instances_fitting(objects, object_attributes)).supported


# Adjectives in the order English puts them before a noun ("the small red metal cube").
_ADJECTIVE_ORDER = ("size", "shape", "state", "pattern", "colour", "material")


def _adjective_rank(attr: str) -> int:
    family = attribute_family(attr)
    return _ADJECTIVE_ORDER.index(family) if family in _ADJECTIVE_ORDER else len(_ADJECTIVE_ORDER)


def referring_attributes(obj: SceneObject, graph: SceneGraph) -> tuple[str, ...]:
    """The fewest of ``obj``'s attributes that tell it from the other objects of its name, as a describer
    would say them ("the red cube" beside a blue one); () when its name is its own, or when no attributes tell
    it apart (two identical towers: the name is then ambiguous, and ``SceneTruth.holds`` checks every pair it can
    mean).

    A colour is tried first, then size, then the rest, in adjective order.
    """
    others = [o for o in graph.objects if o.id != obj.id and normalize_name(o.name) == normalize_name(obj.name)]
    if not others:
        return ()
    own = list(dict.fromkeys(a.strip().lower() for a in obj.attributes if a.strip()))
    preference = sorted(own, key=lambda a: (("colour", "size").index(attribute_family(a))
                                             if attribute_family(a) in ("colour", "size") else 2))
    for k in range(1, len(preference) + 1):
        for chosen in combinations(preference, k):
            if not any(set(chosen) <= {a.strip().lower() for a in o.attributes} for o in others):
                return tuple(sorted(chosen, key=_adjective_rank))
    return ()


def _is_object(name: str, annotated: set[str]) -> bool:
    """Whether a triplet end names a thing one could see: an object the scene graph's annotators listed
    (``annotated``, normalised names), else not an adjective ("large"), a number, a noun the lexicon
    knows as unseen ("familiarity"), nor a phrase led by a preposition ("on street")."""
    if normalize_name(name) in annotated:
        return True
    words = name.lower().split()
    # A head WordNet does not know as a noun ("unmowed", "curious/excited", "alone in the room") is no thing either.
    return bool(words) and words[0] not in PREPOSITIONS and attribute_family(name) is None and \
        count_of(name) is None and not is_adjective_only(name) and is_visual_noun(name) is not False and \
        is_noun(head_noun(name)) is not False


def _false_predicate(pred: str, holds: "Callable[[str], bool]", rng: random.Random) -> str | None:
    """A predicate to say instead of ``pred`` that ``holds`` (``SceneTruth.holds`` of the triplet's two ends)
    finds false; None if none is left.

    The swap table's contrary comes first, then the fallbacks in random order (shuffled whether or not they are
    needed, so the draws that follow do not depend on the graph). A candidate the graph supports ("on" for
    "piled on", "under" for "(desk, on, book)" read the other way round, "holding" for Tri-HE's backwards
    "(kite, holding, boy)") would be no error, and is refused.
    """
    fallbacks = [p for p in FALLBACK_RELATIONS if p != pred]
    rng.shuffle(fallbacks)
    swap = RELATION_SWAPS.get(pred)
    for candidate in ([swap] if swap else []) + fallbacks:
        if not holds(candidate):
            return candidate
    return None


def _wrong_count(n: int, rng: random.Random) -> int:
    return 2 if n <= 1 else rng.choice([n - 1, n + 1])


def _takes_article(pred: str, obj: str) -> bool:
    """Whether a sentence says "the" before a triplet's object: before a noun ("is left of the cube"), not before
    an adjective or participle a copula gives ("(sky, is, clear)": "the sky is clear", not "the sky is the clear",
    which a parser reads as a thing called "clear"), nor before a phrase with its own determiner, number, negation
    or preposition ("two giraffes", "no water flowing", "in the image")."""
    words = obj.lower().split()
    if not words:
        return False
    first, head = words[0], words[-1]
    if first in PRONOUNS or first in _ARTICLES or first in NEGATIONS or first in PREPOSITIONS or \
            count_of(first) is not None:
        return False
    if is_noun(head) is False or is_adjective_only(first):
        return False  # "shirtless", "well-maintained", "alone in the room"
    copula = pred.lower() in ("is", "are")
    return not (copula and len(words) == 1 and (attribute_family(obj) is not None or is_noun_only(obj) is False))


def _relation_sentence(t: SpanText, subj: str, pred: str, obj: str, subject_attributes: Sequence[str] = (),
                       object_attributes: Sequence[str] = (), object_is_thing: bool = False) -> tuple[int, int]:
    """ "The red cube is left of the small cube. ": the span runs from the subject's first word to the object's
    last, so it covers the words that say which objects are meant. ``object_is_thing``: the object is a thing
    whatever else its word can be (an injected "umbrella", which WordNet also knows as an adjective)."""
    t.add("The ")
    start = t.length
    verb_led = pred.split()[0] in {"has", "have", "is", "are", "wears", "holds", "lacks", "lack"}
    said_subj = " ".join([*subject_attributes, subj])
    said_obj = " ".join([*object_attributes, obj])
    article = "the " if object_attributes or object_is_thing or _takes_article(pred, obj) else ""
    t.add(f"{said_subj} {pred if verb_led else ('are ' if takes_plural_verb(subj) else 'is ') + pred} {article}"
          f"{said_obj}")
    end = t.length
    t.add(". ")
    return start, end


def _caption(sample: Sample, options: ProbeOptions, rng: random.Random) -> tuple[str, dict[str, Any]]:
    graph = sample.scene_graph
    if graph.is_empty():
        raise ValueError(f"sample {sample.id}: the probe model needs a scene graph to describe, and it is empty")
    injected: list[dict[str, Any]] = []
    stated: list[dict[str, Any]] = []
    groups: "OrderedDict[str, int]" = OrderedDict()
    for o in graph.objects:
        groups[o.name] = groups.get(o.name, 0) + 1
    present = set(groups)
    names = list(groups)[:MAX_OBJECT_GROUPS]
    t = SpanText()

    t.add("The image shows ")
    for i, name in enumerate(names):
        if i:
            t.add(" and " if i == len(names) - 1 else ", ")
        n = groups[name]
        countable = is_countable(name)
        # Mass nouns ("grass", "sky") have no number to get wrong; the draw happens all the same.
        said = _wrong_count(n, rng) if _inject(options, rng, "count") and countable else n
        start = t.length
        before, noun_text = counted(said, name)
        t.add(before)
        noun = t.mark(noun_text)
        phrase = (start, t.length)
        stated.append(concept_record("object", [name], noun))
        if said != n:
            injected.append(concept_record("count", [name, said], phrase, truth=[name, n]))
        elif countable:
            stated.append(concept_record("count", [name, n], phrase))
    t.add(". ")

    added: set[str] = set()
    for name in names:
        if not _inject(options, rng, "object"):
            continue
        fake = _absent_object(present | added, name, rng)
        if fake is None:
            continue
        added.add(fake)
        before, _ = counted(1, fake)
        t.add(f"There is also {before}")
        span = t.mark(fake)
        t.add(f" near the {name}. ")
        injected.append(concept_record("object", [fake], span))

    for obj in graph.objects:
        if obj.name not in names or not obj.attributes:
            continue
        own = set(obj.attributes)
        t.add(f"The {obj.name} {'are' if takes_plural_verb(obj.name) else 'is'} ")
        for j, attr in enumerate(obj.attributes):
            if j:
                t.add(" and " if j == len(obj.attributes) - 1 else ", ")
            if _inject(options, rng, "attribute"):
                wrong = _wrong_attribute(attr, own, rng)
                injected.append(concept_record("attribute", [obj.name, wrong], t.mark(wrong), truth=[obj.name, attr]))
            else:
                stated.append(concept_record("attribute", [obj.name, attr], t.mark(attr)))
        t.add(". ")

    by_id = graph.object_by_id()
    truth = SceneTruth(sample)
    for rel in graph.relations[:MAX_RELATIONS]:
        s_obj, o_obj, pred = by_id[rel.subject], by_id[rel.object], rel.predicate
        subj, obj = s_obj.name, o_obj.name
        # Where a name is shared ("cube" twice), the sentence says which one, as a describer would.
        s_attrs, o_attrs = referring_attributes(s_obj, graph), referring_attributes(o_obj, graph)
        wrong = None
        if _inject(options, rng, "relation"):
            wrong = _wrong_predicate(pred, rng, lambda p: truth.holds(subj, p, obj, s_attrs, o_attrs))
        said = wrong or pred
        span = _relation_sentence(t, subj, said, obj, s_attrs, o_attrs, object_is_thing=True)  # a node: a thing
        qualifiers = [list(s_attrs), list(o_attrs)] if s_attrs or o_attrs else None
        if wrong is not None:
            injected.append(concept_record("relation", [subj, wrong, obj], span, truth=[subj, pred, obj],
                                           qualifiers=qualifiers))
        else:
            stated.append(concept_record("relation", [subj, pred, obj], span, qualifiers=qualifiers))
    return t.text.strip(), {"injected": injected, "stated": stated, "probe": options.label()}


def _answer_vqa(sample: Sample, options: ProbeOptions, rng: random.Random) -> tuple[str, dict[str, Any]]:
    injected: list[dict[str, Any]] = []
    stated: list[dict[str, Any]] = []
    present = set(sample.scene_graph.object_names()) | {x for t in sample.gold_triplets for x in (t[0], t[2])}
    t = SpanText()
    if not sample.gold_triplets:
        answer = str(sample.answer).strip()
        if _inject(options, rng, "object"):
            fake = _absent_object(present | {answer}, answer, rng) or answer
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
        ends_are_objects = _is_object(subj, annotated) and _is_object(obj, annotated)
        false_pred = _false_predicate(pred, lambda p: truth.holds(subj, p, obj), rng) if ends_are_objects else None
        wrong_relation = _inject(options, rng, "relation") and false_pred is not None
        # An object hallucination puts a thing that is not there where the triplet names a thing: "(documents,
        # indicating, work or study)" has no object to replace, and the replacement must be one the judges do not
        # find in the scene.
        wrong_object = not wrong_relation and _inject(options, rng, "object") and _is_object(obj, annotated)
        said_pred = false_pred if wrong_relation and false_pred else pred
        fake = _absent_object(present, obj, rng, truth) if wrong_object else None
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
            span = _relation_sentence(t, subj, said_pred, said_obj, object_is_thing=wrong_object)
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
