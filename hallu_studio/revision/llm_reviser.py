"""VISCON's query-and-revise procedure with an LLM (Figure 12, D.3).

Step 1: the LLM reads the caption and the seen objects and writes database calls between
``[BEGIN API]`` and ``[END API]`` (as structured output, ``{"api_calls": [...]}``, where the
server takes a JSON schema; the revised caption likewise comes as ``{"caption": ...}``). Step 2: the calls run against ``SceneGraphDatabase`` and the
LLM gets their results and rewrites the caption: NONE concepts removed, KEEP kept, conflicts
corrected. A call the database cannot read is answered ``ERROR: <reason>`` (the LLM sees it,
and it is kept with the queries).

The paper's prompt says the image "is from a view of a 3D rendered indoor room"; ``scene``
replaces that phrase (default: a real-world photo).

The prompt depends on the caption and the scene graph alone: the paper's ``<CASE {caption-id}>`` is
always ``<CASE 1>`` (each conversation holds one case), so a response gets the same prompt, and the
same cached answers, whatever batch it is scored in.

Each answer is capped to what it holds (``llm/dispatch.py``, measured by
``benchmarks/bench_reviser_caps.py``): the calls at ``revise_queries_tokens(caption)``, the revised
caption at ``revise_caption_tokens(caption)`` (about the caption's own length: an edit removes or
replaces words). An answer cut at its cap (finish_reason "length") is unusable: ``LLMAnswerError``,
counted as a parse failure, not cached; the pipeline records the response as failed and the next
``score`` asks again.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..llm.dispatch import revise_caption_tokens, revise_queries_tokens
from ..reference_scope import CLOSED, Scope
from ..model import SceneGraph
from .database import QueryResult, SceneGraphDatabase
from .matching import ObjectMatcher
from .rule_reviser import Revision

if TYPE_CHECKING:
    from ..extraction.llm import ChatCompleter

PROMPT_VERSION = "viscon-fig12-v2"  # v2: <CASE 1> for every response (v1 held its batch position)

INTRO = ("You are an expert database assistant and programmer. Correct the following image caption labeled after "
         "[Caption]. It is from {scene}. It may contain errors like wrong or not existing object, object relation or "
         "object attributes. Objects after [Seen Objects] label are all objects can be seen from the view, and are "
         "always correct.")
# Against open-world references (human captions, an object list: ``reference_scope.Scope``) the paper's "all objects"
# is untrue: the listed objects are there, others may be too, and the database answers KEEP for those.
OPEN_WORLD_INTRO = INTRO.replace("are all objects can be seen from the view, and are always correct.",
                                 "can be seen in the image and are always correct; other objects may be there too: "
                                 "keep what the API does not say is wrong.")
QUERY_TASK = """{intro}
---
Generate necessary JavaScript code-like API calls to access an database constructed with the image, including the objects, object relations and object attributes. According to the response/return value, correct the caption. If some object, relation or attribute does not exist, remove in the final caption.
---
[AVAILABLE API DOCUMENTATION]
<object X>: in following documentation, this annotation represents an object with name X and an ID number indicating which object among same category. E.g., plant_0, plant_1, dresser_0, etc.
GetRelation(<object A>, <object B>): return the relation of A to B. E.g., returns "supported by" or "close to".
GetDescription(<object A>): return the object description of one single object. E.g., return "an L-shaped blue sofa"
GetAttributes(<object A>): return a JSON list of the attributes that an object holds. E.g., return {{"material": "plastic"}}
---
If any API call corresponds to object, relation or attribute that does not exist, the API returns NONE. If the object, relation or attribute is not given in the database, the API returns KEEP. Objects with same name are identified by its numeral IDs. E.g., <object apple_1> and <object apple_2> are two different apple objects.
---
<CASE 1>
[Caption]: {caption}
[Seen Objects]: {objects}
---
First, generate the JavaScript API calls, each about single object, relation or attribute. ONLY output minimal necessary API calls, thus ignore the object, relation or attribute not involved in the caption. Begin API calls after output [BEGIN API]. Output [END API] after all calls. Responses will be given later, and stop after [END API]."""
REVISE_TASK = """{results}
---
[Caption]: {caption}
---
Consider the API call return values of the room information. Correct the caption. REMOVE descriptions about non-existent objects, relations or attributes (those with NONE return values). KEEP the same descriptions in [Caption] about objects, relations or attributes with KEEP query result. ONLY output the caption."""

_BLOCK = re.compile(r"\[BEGIN API\](.*?)(?:\[END API\]|$)", re.DOTALL)
_CALL_LINE = re.compile(r"(GetRelation|GetDescription|GetAttributes)\s*\([^()]*\)")


CALLS_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"api_calls": {"type": "array",
                                                                             "items": {"type": "string"}}},
                                "required": ["api_calls"], "additionalProperties": False}
CAPTION_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"caption": {"type": "string"}},
                                  "required": ["caption"], "additionalProperties": False}


def _read_calls(value: Any) -> str:
    """The structured answer's calls, one a line (as the text between [BEGIN API] and [END API])."""
    calls = value.get("api_calls") if isinstance(value, dict) else None
    if not isinstance(calls, list) or not all(isinstance(c, str) for c in calls):
        raise ValueError(f"expected {{'api_calls': [strings]}}, got {str(value)[:160]!r}")
    return "\n".join(calls)


def _read_caption(value: Any) -> str:
    caption = value.get("caption") if isinstance(value, dict) else None
    if not isinstance(caption, str):
        raise ValueError(f"expected {{'caption': string}}, got {str(value)[:160]!r}")
    return caption.strip()


def _calls_text(answer: str) -> str:
    block = _BLOCK.search(answer)
    return block.group(1) if block else answer


def _caption_text(answer: str) -> str:
    fenced = re.search(r"```[a-zA-Z]*\s*\n?(.*?)```", answer, re.DOTALL)
    text = fenced.group(1) if fenced else answer
    text = re.sub(r"^\s*(?:\[Caption\]|Caption|Revised caption|Corrected caption)\s*:\s*", "", text.strip(),
                  flags=re.IGNORECASE)
    return text.strip().strip('"').strip()


class LLMReviser:
    """Evaluate-by-Edit's reviser as in the paper: an LLM writes the queries and the revision."""

    name = "llm"

    def __init__(self, llm: "ChatCompleter", matcher: ObjectMatcher | None = None, *,
                 scene: str = "a real-world photo", model_name: str | None = None) -> None:
        self.llm = llm
        self.matcher = matcher or ObjectMatcher()
        self.scene = scene
        self.model_name = model_name or getattr(llm, "name", type(llm).__name__)

    def config(self) -> dict[str, Any]:
        return {"reviser": self.name, "model": self.model_name, "prompt_version": PROMPT_VERSION, "open_world": 1,
                "scene": self.scene, "matcher": self.matcher.config()}

    def revise(self, text: str, graph: SceneGraph, scope: Scope = CLOSED,
               absent: Callable[[str], bool] | None = None) -> Revision:
        db = SceneGraphDatabase(graph, self.matcher, scope, absent)
        system = (INTRO if scope.objects else OPEN_WORLD_INTRO).format(scene=self.scene)
        first = QUERY_TASK.format(intro=system, caption=text, objects=", ".join(db.seen_objects()))
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": first}]
        calls = self.llm.complete_checked(messages, namespace="edit-queries", prompt_version=PROMPT_VERSION,
                                          json_schema=CALLS_SCHEMA, check=_read_calls, lenient=_calls_text,
                                          max_tokens=revise_queries_tokens(text))
        results: list[QueryResult] = []
        for match in _CALL_LINE.finditer(calls):
            try:
                results.append(db.execute(match.group(0)))
            except ValueError as exc:
                results.append(QueryResult(call=match.group(0), result=f"ERROR: {exc}"))
        listing = "\n".join(f"{r.call} -> {r.result}" for r in results) or "(no API calls were made)"
        # The model's first answer is shown back as the calls it made (the same in either answer format).
        messages += [{"role": "assistant", "content": f"[BEGIN API]\n{calls.strip()}\n[END API]"},
                     {"role": "user", "content": REVISE_TASK.format(results=listing, caption=text)}]
        revised = self.llm.complete_checked(messages, namespace="edit-revise", prompt_version=PROMPT_VERSION,
                                            json_schema=CAPTION_SCHEMA, check=_read_caption, lenient=_caption_text,
                                            max_tokens=revise_caption_tokens(text))
        return Revision(original=text, revised=revised, reviser=self.name, queries=[r.to_dict() for r in results])

    def revise_many(self, texts: list[str], graphs: list[SceneGraph], scopes: Sequence[Scope] | None = None,
                    absents: Sequence[Callable[[str], bool] | None] | None = None) -> list[Revision]:
        """``scopes``: what each reference can settle (a scene graph's, complete, by default); ``absents``: per text,
        the image judge's check of an object the reference leaves open."""
        if len(texts) != len(graphs):
            raise ValueError(f"got {len(texts)} texts and {len(graphs)} scene graphs")
        return [self.revise(t, g, s, a) for t, g, s, a in zip(texts, graphs, scopes or [CLOSED] * len(texts),
                                                                 absents or [None] * len(texts))]
