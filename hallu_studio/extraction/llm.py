"""Concept extraction with an LLM: VISCON's three-step prompts (Figure 11) or Tri-HE-style triplets.

VISCON asks for objects first, then the attributes of those objects, then the relations
between them, each in a plain-text format ("apple, desk"; "clock:antique, gold; wall:stone";
"cat, on, rug;cat, in front of, fireplace" or NONE). Each step asks for structured output (a
JSON schema per step, read strictly); a server without it answers in the paper's text formats,
parsed tolerantly: code fences, a leading "Objects:" label, JSON arrays and "none" are all
accepted. Tri-HE prints its extraction prompt only as an image (Figure 5); the wording here
paraphrases its description (extract (object, relation, object) triplets from the answer).
``extract(texts)`` sends each step's calls for all texts together, so a batch keeps a server busy.

Spans are found by locating the concept words in the response (``spans.find_span``).

>>> parse_list("```\\napple, desk\\n```"), parse_list("NONE"), parse_list('["apple", "desk"]')
(['apple', 'desk'], [], ['apple', 'desk'])
>>> parse_attributes("clock:antique, gold; wall:stone; floor:")
[('clock', 'antique'), ('clock', 'gold'), ('wall', 'stone')]
>>> parse_relations("cat, on, rug;cat, in front of, fireplace")
[('cat', 'on', 'rug'), ('cat', 'in front of', 'fireplace')]
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Protocol, Sequence

from ..llm.dispatch import EXTRACT_ANSWER_TOKENS
from ..model import AttributeConcept, ConceptSet, ObjectConcept, RelationConcept
from .spans import find_span

VISCON_PROMPT_VERSION = "viscon-fig11-v1"
TRIHE_PROMPT_VERSION = "trihe-triplets-paraphrase-v1"
TRIHE_STYLE = "trihe"  # Tri-HE's own triplet prompt (``scoring.trihe_extraction = "llm-trihe"``)
STYLES: tuple[str, ...] = ("viscon", TRIHE_STYLE)

SYSTEM = "You are a helpful assistant with advanced visual and linguistic context analysis function."

OBJECT_INSTRUCTION = ("Extract the object entity words in appearance order in following sentence, ONLY output the "
                      "entity words, ignore attributes or relations: {sentence}")
ATTRIBUTE_INSTRUCTION = (
    "Identify the attributes of mentioned objects in the following sentence. If an object has multiple attributes, "
    "separate them with commas. If an object has no attributes, leave it blank after the colon. Ignore positional "
    "attributes relative to image such as 'at the center of image'. IGNORE contents of paintings or pictures, "
    "IGNORE the sentence incompleteness and errors. If there are repetitions in sentence, ignore repeated sentence "
    "part. Follow the above output format.; Sentence: {sentence}; Objects: {objects}; Attributes:")
RELATION_INSTRUCTION = (
    "List the object relations in following sentence. Output each relation in 'object 1,predicate,object 2' format. "
    "Ignore positional relations about the image such as 'object, at the center, image'. IGNORE contents of "
    "paintings or pictures, IGNORE the sentence incompleteness or errors. If there are repetitions in sentence, "
    "ignore repeated sentence part. If no relation is found, output NONE. Follow the above output format.; "
    "Sentence: {sentence}; Objects: {objects}; Relations:")

# Figure 11's first few-shot example of each step (the paper elides the others).
OBJECT_SHOTS = [("an red apple under the blue desk", "apple, desk")]
ATTRIBUTE_SHOTS = [('"an antique clock with gold trimmings hanging on a stone wall"', "clock,wall",
                    "clock:antique, gold; wall:stone")]
RELATION_SHOTS = [('"A cat is sleeping on the rug in front of the fireplace"', "cat, rag, fireplace",
                   "cat, on, rug;cat, in front of, fireplace")]
# The shots as conversation turns (user prompt, assistant answer).
OBJECT_SHOTS_FULL = [(OBJECT_INSTRUCTION.format(sentence=s), a) for s, a in OBJECT_SHOTS]
ATTRIBUTE_SHOTS_FULL = [(ATTRIBUTE_INSTRUCTION.format(sentence=s, objects=o), a) for s, o, a in ATTRIBUTE_SHOTS]
RELATION_SHOTS_FULL = [(RELATION_INSTRUCTION.format(sentence=s, objects=o), a) for s, o, a in RELATION_SHOTS]

TRIHE_INSTRUCTION = (
    "Extract the knowledge graph of the following answer as (object 1, relation, object 2) triplets. Objects and "
    "relations may be a word or a short phrase with attributes; write an attribute as (object, is, attribute). "
    "Only include what the answer states. Answer with JSON: {{\"triplets\": [[object 1, relation, object 2], ...]}}."
    "\n\nAnswer: {sentence}")
TRIHE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"triplets": {"type": "array", "items": {"type": "array", "items": {"type": "string"},
                                                          "minItems": 3, "maxItems": 3}}},
    "required": ["triplets"],
    "additionalProperties": False,
}


# Structured output (a strict JSON schema per step); a server without it answers in the
# paper's plain-text formats, read by the parse_* functions below.
_STRINGS = {"type": "array", "items": {"type": "string"}}
OBJECTS_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"objects": _STRINGS}, "required": ["objects"],
                                  "additionalProperties": False}
ATTRIBUTES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"attributes": {"type": "array", "items": {
        "type": "object", "properties": {"object": {"type": "string"}, "attributes": _STRINGS},
        "required": ["object", "attributes"], "additionalProperties": False}}},
    "required": ["attributes"], "additionalProperties": False}
RELATIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"relations": {"type": "array", "items": {
        "type": "object", "properties": {k: {"type": "string"} for k in ("subject", "predicate", "object")},
        "required": ["subject", "predicate", "object"], "additionalProperties": False}}},
    "required": ["relations"], "additionalProperties": False}


class ChatCompleter(Protocol):
    """The part of ``hallu_studio.llm.LLMClient`` this module uses (cached, checked chat completions)."""

    def complete_checked(self, messages: list[dict[str, Any]], *, namespace: str, prompt_version: str,
                         check: Callable[[Any], Any], json_schema: dict[str, Any] | None = None,
                         lenient: Callable[[str], Any] | None = None, **params: Any) -> Any: ...


def _field(value: Any, key: str) -> list[Any]:
    """``value[key]`` of a structured answer, which must be a list (``ValueError`` otherwise)."""
    if not isinstance(value, dict) or not isinstance(value.get(key), list):
        raise ValueError(f"expected {{{key!r}: [...]}}, got {str(value)[:160]!r}")
    return value[key]


def read_objects(value: Any) -> list[str]:
    return [w for w in (_word(x) for x in _field(value, "objects")) if w]


def read_attributes(value: Any) -> list[tuple[str, str]]:
    out = []
    for row in _field(value, "attributes"):
        if not isinstance(row, dict) or not isinstance(row.get("attributes"), list):
            raise ValueError(f"an attribute entry is not {{object, attributes}}: {str(row)[:120]!r}")
        obj = _word(row.get("object", ""))
        out += [(obj, a) for a in (_word(x) for x in row["attributes"]) if a and obj]
    return out


def read_relations(value: Any) -> list[tuple[str, str, str]]:
    out = []
    for row in _field(value, "relations"):
        if not isinstance(row, dict):
            raise ValueError(f"a relation entry is not {{subject, predicate, object}}: {str(row)[:120]!r}")
        s, p, o = (_word(row.get(k, "")) for k in ("subject", "predicate", "object"))
        if s and p and o:
            out.append((s, p, o))
    return out


def read_triplets(value: Any) -> list[tuple[str, str, str]]:
    return [(_word(r[0]), _word(r[1]), _word(r[2])) for r in _field(value, "triplets")
            if isinstance(r, (list, tuple)) and len(r) == 3 and all(_word(x) for x in r)]


_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)
_NONE = re.compile(r"^\s*(?:none|n/a|no (?:objects|relations|attributes)(?: found)?)\.?\s*$", re.IGNORECASE)


def _clean(answer: str) -> str:
    fenced = _FENCE.search(answer)
    text = fenced.group(1) if fenced else answer
    return re.sub(r"^\s*(?:objects|attributes|relations)\s*:\s*", "", text.strip(), flags=re.IGNORECASE)


def _json_list(text: str) -> list[Any] | None:
    start, end = text.find("["), text.rfind("]")
    if 0 <= start < end:
        try:
            value = json.loads(text[start:end + 1])
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, list) else None
    return None


def _word(s: Any) -> str:
    return " ".join(str(s).strip().strip("\"'.").split()).lower()


def parse_list(answer: str) -> list[str]:
    """``"apple, desk"`` -> ``["apple", "desk"]``; NONE -> ``[]``."""
    text = _clean(answer)
    if _NONE.match(text) or not text:
        return []
    as_json = _json_list(text)
    items = as_json if as_json is not None else re.split(r"[,;\n]", text)
    return [w for w in (_word(i) for i in items) if w and not _NONE.match(w)]


def parse_attributes(answer: str) -> list[tuple[str, str]]:
    """``"clock:antique, gold; wall:stone"`` -> ``[(clock, antique), (clock, gold), (wall, stone)]``."""
    text = _clean(answer)
    if _NONE.match(text):
        return []
    out: list[tuple[str, str]] = []
    for part in re.split(r"[;\n]", text):
        if ":" not in part:
            continue
        obj, attrs = part.split(":", 1)
        for attr in attrs.split(","):
            a = _word(attr)
            if a and _word(obj) and not _NONE.match(a):
                out.append((_word(obj), a))
    return out


def parse_relations(answer: str) -> list[tuple[str, str, str]]:
    """``"cat, on, rug;cat, in front of, fireplace"`` -> two triplets; NONE -> ``[]``.

    Parts that do not have exactly three fields are skipped (the model wrote prose)."""
    text = _clean(answer)
    if _NONE.match(text):
        return []
    as_json = _json_list(text)
    if as_json is not None and all(isinstance(t, list) for t in as_json):
        rows = [[_word(x) for x in t] for t in as_json]
    else:
        rows = [[_word(x) for x in part.strip().strip("()").split(",")] for part in re.split(r"[;\n]", text)]
    return [(r[0], r[1], r[2]) for r in rows if len(r) == 3 and all(r)]


def parse_triplets(answer: str) -> list[tuple[str, str, str]]:
    """Tri-HE style: ``{"triplets": [[s, p, o], ...]}`` or any list of 3-item lists / "(s, p, o)" lines."""
    from ..llm.parsing import parse_json_tolerant

    try:
        value = parse_json_tolerant(answer)
    except ValueError:
        return parse_relations(answer)
    try:
        return read_triplets(value if isinstance(value, dict) else {"triplets": value})
    except ValueError:
        return []


class LLMExtractor:
    """Extract concepts with an LLM through ``llm.complete`` (one cached call per step and text)."""

    name = "llm"

    def __init__(self, llm: ChatCompleter, *, style: str = "viscon", model_name: str | None = None) -> None:
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, got {style!r}")
        self.llm = llm
        self.style = style
        self.model_name = model_name or getattr(llm, "name", type(llm).__name__)

    def config(self) -> dict[str, Any]:
        version = VISCON_PROMPT_VERSION if self.style == "viscon" else TRIHE_PROMPT_VERSION
        return {"extractor": self.name, "style": self.style, "model": self.model_name, "prompt_version": version}

    def extract(self, texts: Sequence[str]) -> list[ConceptSet]:
        """All texts step by step: each step's calls for every text go out together (see ``_ask_all``)."""
        todo = [i for i, t in enumerate(texts) if t.strip()]
        out = [ConceptSet() for _ in texts]
        if self.style == "trihe":
            for i, triplets in zip(todo, self._ask_all([self._trihe_messages(texts[i]) for i in todo],
                                                       "triplets", TRIHE_PROMPT_VERSION, TRIHE_SCHEMA, read_triplets,
                                                       parse_triplets)):
                out[i] = _from_triplets(texts[i], triplets)
            return out
        v = VISCON_PROMPT_VERSION
        found = self._ask_all([self._viscon_messages(OBJECT_INSTRUCTION.format(sentence=texts[i]), OBJECT_SHOTS_FULL)
                               for i in todo], "objects", v, OBJECTS_SCHEMA, read_objects, parse_list)
        objects = {i: list(dict.fromkeys(got)) for i, got in zip(todo, found) if got}
        rest = list(objects)
        names = {i: ", ".join(objects[i]) for i in rest}
        attributes = self._ask_all([self._viscon_messages(ATTRIBUTE_INSTRUCTION.format(sentence=texts[i],
                                                                                       objects=names[i]),
                                                          ATTRIBUTE_SHOTS_FULL) for i in rest],
                                   "attributes", v, ATTRIBUTES_SCHEMA, read_attributes, parse_attributes)
        relations = self._ask_all([self._viscon_messages(RELATION_INSTRUCTION.format(sentence=texts[i],
                                                                                     objects=names[i]),
                                                         RELATION_SHOTS_FULL) for i in rest],
                                  "relations", v, RELATIONS_SCHEMA, read_relations, parse_relations)
        for i, attrs, rels in zip(rest, attributes, relations):
            out[i] = _with_spans(texts[i], objects[i], attrs, rels)
        return out

    def extract_one(self, text: str) -> ConceptSet:
        return self.extract([text])[0]

    def _ask_all(self, conversations: list[list[dict[str, Any]]], step: str, version: str, schema: dict[str, Any],
                 read: Callable[[Any], Any], lenient: Callable[[str], Any]) -> list[Any]:
        """One call per conversation, side by side when the client batches (``complete_many``).

        ``read`` takes the structured answer, ``lenient`` a plain-text one. The first failed
        call raises: the scoring pipeline then extracts text by text to find the failing one
        (the answers that worked are cached by then).
        """
        namespace = f"extract-{step}"
        # A cap on the answer: a small model that falls into repeating one relation would otherwise hold
        # a one-slot server until its context is full (minutes), and its answer is unusable anyway.
        params = {"max_tokens": EXTRACT_ANSWER_TOKENS}
        many = getattr(self.llm, "complete_many", None)
        if many is None or len(conversations) <= 1:
            return [self.llm.complete_checked(m, namespace=namespace, prompt_version=version, check=read,
                                              json_schema=schema, lenient=lenient, **params) for m in conversations]
        from ..llm import LLMRequest

        answers = many([LLMRequest(m, namespace, version, json_schema=schema, params=params, check=read,
                                   lenient=lenient) for m in conversations])
        for a in answers:
            if isinstance(a, BaseException):
                raise a
        return answers

    # ------------------------------------------------------------------ VISCON Figure 11

    @staticmethod
    def _viscon_messages(instruction: str, shots: list[tuple[str, str]]) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        for user, assistant in shots:
            messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        messages.append({"role": "user", "content": instruction})
        return messages

    # ------------------------------------------------------------------ Tri-HE triplets

    @staticmethod
    def _trihe_messages(text: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": TRIHE_INSTRUCTION.format(sentence=text)}]


def _from_triplets(text: str, triplets: list[tuple[str, str, str]]) -> ConceptSet:
    objects: list[str] = []
    attributes: list[tuple[str, str]] = []
    relations: list[tuple[str, str, str]] = []
    for s, p, o in triplets:
        objects.append(s)
        if p in ("is", "are"):
            attributes.append((s, o))
        else:
            objects.append(o)
            relations.append((s, p, o))
    return _with_spans(text, list(dict.fromkeys(objects)), attributes, relations)


def _with_spans(text: str, objects: list[str], attributes: list[tuple[str, str]],
                relations: list[tuple[str, str, str]]) -> ConceptSet:
    return ConceptSet(
        objects=[ObjectConcept(o, find_span(text, [o])) for o in objects],
        attributes=[AttributeConcept(o, a, find_span(text, [a, o])) for o, a in dict.fromkeys(attributes)],
        relations=[RelationConcept(s, p, o, find_span(text, [s, p, o])) for s, p, o in dict.fromkeys(relations)],
    )
