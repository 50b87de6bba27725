"""The probe's caption writer: a fluent description of the scene graph that injects hallucinations at the
probe's rate and mix and records where each was said (see ``probe`` for the signals).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from itertools import combinations
from typing import TYPE_CHECKING, Any

from ..model import Sample, SceneGraph, SceneObject
from ..lexicon.attributes import attribute_family
from ..lexicon.forms import is_countable, normalize_name, takes_plural_verb
from .probe_text import SpanText, concept_record, counted
from .probe_scene import (MAX_RELATIONS, SceneTruth, absent_object, inject, relation_sentence, wrong_attribute,
                          wrong_count, wrong_predicate)

if TYPE_CHECKING:
    from .probe_options import ProbeOptions

MAX_OBJECT_GROUPS = 12


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


def write_caption(sample: Sample, options: ProbeOptions, rng: random.Random) -> tuple[str, dict[str, Any]]:
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
    # The order of the parts is the order of the random draws: changing it changes every probe run.
    _say_objects(t, groups, names, options, rng, injected, stated)
    _say_absent_objects(t, names, present, options, rng, injected)
    _say_attributes(t, graph, names, options, rng, injected, stated)
    _say_relations(t, sample, options, rng, injected, stated)
    return t.text.strip(), {"injected": injected, "stated": stated, "probe": options.label()}


def _say_objects(t: SpanText, groups: "OrderedDict[str, int]", names: list[str], options: ProbeOptions,
                 rng: random.Random, injected: list[dict[str, Any]], stated: list[dict[str, Any]]) -> None:
    """"The image shows two cubes, a ball and grass. ", a count drawn wrong at the probe's rate."""
    t.add("The image shows ")
    for i, name in enumerate(names):
        if i:
            t.add(" and " if i == len(names) - 1 else ", ")
        n = groups[name]
        countable = is_countable(name)
        # Mass nouns ("grass", "sky") have no number to get wrong; the draw happens all the same.
        said = wrong_count(n, rng) if inject(options, rng, "count") and countable else n
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


def _say_absent_objects(t: SpanText, names: list[str], present: set[str], options: ProbeOptions,
                        rng: random.Random, injected: list[dict[str, Any]]) -> None:
    """"There is also a cat near the cube. ", an object absent from the scene, at the probe's rate."""
    added: set[str] = set()
    for name in names:
        if not inject(options, rng, "object"):
            continue
        fake = absent_object(present | added, name, rng)
        if fake is None:
            continue
        added.add(fake)
        before, _ = counted(1, fake)
        t.add(f"There is also {before}")
        span = t.mark(fake)
        t.add(f" near the {name}. ")
        injected.append(concept_record("object", [fake], span))


def _say_attributes(t: SpanText, graph: SceneGraph, names: list[str], options: ProbeOptions, rng: random.Random,
                    injected: list[dict[str, Any]], stated: list[dict[str, Any]]) -> None:
    """"The cube is red and large. " for each described object with attributes, some drawn wrong."""
    for obj in graph.objects:
        if obj.name not in names or not obj.attributes:
            continue
        own = set(obj.attributes)
        t.add(f"The {obj.name} {'are' if takes_plural_verb(obj.name) else 'is'} ")
        for j, attr in enumerate(obj.attributes):
            if j:
                t.add(" and " if j == len(obj.attributes) - 1 else ", ")
            if inject(options, rng, "attribute"):
                wrong = wrong_attribute(attr, own, rng)
                injected.append(concept_record("attribute", [obj.name, wrong], t.mark(wrong), truth=[obj.name, attr]))
            else:
                stated.append(concept_record("attribute", [obj.name, attr], t.mark(attr)))
        t.add(". ")


def _say_relations(t: SpanText, sample: Sample, options: ProbeOptions, rng: random.Random,
                   injected: list[dict[str, Any]], stated: list[dict[str, Any]]) -> None:
    """A sentence per relation of the graph (the first ``MAX_RELATIONS``), some with a predicate that does not
    hold."""
    graph = sample.scene_graph
    by_id = graph.object_by_id()
    truth = SceneTruth(sample)
    for rel in graph.relations[:MAX_RELATIONS]:
        s_obj, o_obj, pred = by_id[rel.subject], by_id[rel.object], rel.predicate
        subj, obj = s_obj.name, o_obj.name
        # Where a name is shared ("cube" twice), the sentence says which one, as a describer would.
        s_attrs, o_attrs = referring_attributes(s_obj, graph), referring_attributes(o_obj, graph)
        wrong = None
        if inject(options, rng, "relation"):
            wrong = wrong_predicate(pred, rng, lambda p: truth.holds(subj, p, obj, s_attrs, o_attrs))
        said = wrong or pred
        span = relation_sentence(t, subj, said, obj, s_attrs, o_attrs, object_is_thing=True)  # a node: a thing
        qualifiers = [list(s_attrs), list(o_attrs)] if s_attrs or o_attrs else None
        if wrong is not None:
            injected.append(concept_record("relation", [subj, wrong, obj], span, truth=[subj, pred, obj],
                                           qualifiers=qualifiers))
        else:
            stated.append(concept_record("relation", [subj, pred, obj], span, qualifiers=qualifiers))
