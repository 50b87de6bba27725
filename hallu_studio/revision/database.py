"""VISCON's visual-concept database (§3.2.2, Figure 12) over one image's scene graph.

The three query functions answer ``NONE`` (the concept does not exist), ``KEEP`` (the database
does not say: keep the text) or what the database knows:

* ``GetDescription(o)``: NONE when no object matches ``o``; else its description
  (a region description naming it when there is one, else its attributes and name: "blue car");
* ``GetAttributes(o)``: NONE when no object matches; KEEP when it has no annotated attributes;
  else a JSON list of its attributes;
* ``GetRelation(a, b)``: NONE when either object does not exist; KEEP when both exist but no
  relation between them is annotated (scene graphs are incomplete); else the predicate(s).

"Does not exist" is what the reference settles (``reference_scope.Scope``): a scene graph or a dense
description lacks the object; several captions or an object list only where the list's vocabulary
names it and the list lacks it. An object they do not mention is KEEP: they cannot say it is not there, unless an
image judge is asked (``absent``: ``judges.vlm_judge``'s "There is a ... in the image." answered no), which makes it
NONE.

>>> from hallu_studio.model import SceneGraph
>>> db = SceneGraphDatabase(SceneGraph.from_dict({"objects": [
...     {"id": "1", "name": "car", "attributes": ["blue"]}, {"id": "2", "name": "street"}],
...     "relations": [{"subject": "1", "predicate": "parked on", "object": "2"}]}))
>>> db.get_description("cars"), db.get_attributes("car"), db.get_attributes("street"), db.get_relation("car", "street")
('blue car', '["blue"]', 'KEEP', 'parked on')
>>> db.execute("GetRelation(<object car_0>, <object dog_1>)").result
'NONE'
>>> from hallu_studio.reference_scope import Scope
>>> from hallu_studio.lexicon.vocabularies import vocabulary
>>> captions = SceneGraphDatabase(db.graph, scope=Scope(objects=False, details=False, vocabulary=vocabulary("coco-80"),
...                                                    present=frozenset({"car"})))
>>> captions.get_description("tree"), captions.get_description("dog")
('KEEP', 'NONE')
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable
from ..reference_scope import CLOSED, Scope
from ..model import SceneGraph, SceneObject
from .matching import ObjectMatcher, normalize_name

NONE = "NONE"
KEEP = "KEEP"
_CALL = re.compile(r"\b(GetRelation|GetDescription|GetAttributes)\s*\(([^()]*)\)")


@dataclass(frozen=True)
class QueryResult:
    call: str  # e.g. "GetRelation(car, street)"
    result: str  # NONE, KEEP or what the database knows

    def to_dict(self) -> dict[str, str]:
        return {"call": self.call, "result": self.result}


def _argument_name(raw: str) -> str:
    """``<object plant_1>`` -> ``plant_1``, ``"plant"`` -> ``plant`` (``normalize_name`` drops the id)."""
    text = raw.strip().strip("\"'`⟨⟩<>").strip()
    text = re.sub(r"^object\s+", "", text, flags=re.IGNORECASE)
    return text.strip("\"'`⟨⟩<> ")


class SceneGraphDatabase:
    """Query one scene graph by object names (synonym-tolerant through ``matcher``)."""

    def __init__(self, graph: SceneGraph, matcher: ObjectMatcher | None = None, scope: Scope = CLOSED,
                 absent: Callable[[str], bool] | None = None) -> None:
        self.graph = graph
        self.matcher = matcher or ObjectMatcher()
        self.scope = scope
        self.absent = absent  # the image judge's "not in the image", for what the reference leaves open
        self._by_id = graph.object_by_id()

    def _unknown(self, name: str) -> str:
        """The answer about an object no annotated one matches: NONE where the reference settles that it is not
        there, else KEEP."""
        if self.scope.objects or self.scope.absence(name):
            return NONE
        return NONE if self.absent is not None and self.absent(name) else KEEP

    def seen_objects(self) -> list[str]:
        """Object names with per-name numeral ids, as the Figure 12 prompt lists them ("plant_0")."""
        counts: dict[str, int] = {}
        out = []
        for o in self.graph.objects:
            i = counts.get(o.name, 0)
            counts[o.name] = i + 1
            out.append(f"{o.name}_{i}")
        return out

    def find(self, name: str) -> list[SceneObject]:
        return self.matcher.match(name, self.graph.objects)

    def get_description(self, name: str) -> str:
        found = self.find(name)
        if not found:
            return self._unknown(name)
        wanted = normalize_name(found[0].name)
        for region in self.graph.regions:
            if wanted and re.search(rf"\b{re.escape(wanted)}", region.lower()):
                return region
        described = next((o for o in found if o.attributes), found[0])
        return " ".join([*described.attributes, described.name])

    def get_attributes(self, name: str) -> str:
        found = self.find(name)
        if not found:
            return self._unknown(name)
        attributes = list(dict.fromkeys(a for o in found for a in o.attributes))
        return json.dumps(attributes) if attributes else KEEP

    def attributes_of(self, name: str) -> list[str]:
        return list(dict.fromkeys(a for o in self.find(name) for a in o.attributes))

    def get_relation(self, a: str, b: str) -> str:
        subjects, objects = self.find(a), self.find(b)
        if not subjects or not objects:
            missing = [self._unknown(n) for n, found in ((a, subjects), (b, objects)) if not found]
            return NONE if NONE in missing else KEEP
        s_ids = {o.id for o in subjects}
        o_ids = {o.id for o in objects}
        predicates = [r.predicate for r in self.graph.relations if r.subject in s_ids and r.object in o_ids]
        return "; ".join(dict.fromkeys(predicates)) if predicates else KEEP

    def execute(self, call: str) -> QueryResult:
        """Run one API call written by an LLM; an unknown or malformed call raises ``ValueError``."""
        match = _CALL.search(call)
        if not match:
            raise ValueError(f"not a database call: {call.strip()[:120]!r}")
        func, raw_args = match.group(1), [_argument_name(x) for x in match.group(2).split(",")]
        args = [a for a in raw_args if a]
        expected = 2 if func == "GetRelation" else 1
        if len(args) != expected:
            raise ValueError(f"{func} takes {expected} object(s), got {len(args)} in {call.strip()[:120]!r}")
        if func == "GetRelation":
            result = self.get_relation(args[0], args[1])
        elif func == "GetDescription":
            result = self.get_description(args[0])
        else:
            result = self.get_attributes(args[0])
        return QueryResult(call=f"{func}({', '.join(args)})", result=result)

    def execute_all(self, text: str) -> list[QueryResult]:
        """Every call found in ``text`` (an LLM's [BEGIN API] ... [END API] block), in order."""
        return [self.execute(m.group(0)) for m in _CALL.finditer(text)]
