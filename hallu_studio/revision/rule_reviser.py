"""An offline, deterministic stand-in for VISCON's LLM reviser: edits driven by the scene graph.

``SceneGraphRuleReviser`` parses the response with spaCy and queries the scene-graph database
like the LLM would (Figure 12), then edits only what the answers justify:

* an object the database answers NONE is removed with the smallest phrase that holds it: a
  prepositional phrase ("on a table"), a conjunct ("and a phone"), the clause it is the object
  of ("holding a phone"), or the whole sentence when it is a subject or the main object;
* a colour or material that conflicts with the object's annotated ones is replaced ("a red car"
  with a blue car in the graph -> "a blue car");
* everything else is KEEP: attributes and relations the graph does not mention stay.

Relations are queried and reported but never rewritten: a scene graph's missing relation is
inconclusive (KEEP), and a different annotated predicate is often a paraphrase. This reviser is
not an LLM: it cannot rephrase, so its edits are a lower bound of what GPT-4 would change.

>>> from hallu_studio.model import SceneGraph
>>> g = SceneGraph.from_dict({"objects": [{"id": "1", "name": "car", "attributes": ["blue"]},
...                                       {"id": "2", "name": "street"}]})
>>> from hallu_studio.components import Components
>>> SceneGraphRuleReviser(Components().parser()).revise("A red car is parked on the street next to a dog.", g).revised
'A blue car is parked on the street.'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..extraction.parser import ParserExtractor
from ..extraction.token_rules import is_thing, object_name
from ..lexicon.words import COLORS, MATERIALS
from ..reference_scope import CLOSED, Scope
from ..model import SceneGraph
from .database import KEEP, NONE, QueryResult, SceneGraphDatabase
from .matching import ObjectMatcher

CONFLICT_GROUPS: tuple[frozenset[str], ...] = (COLORS, MATERIALS)
_PLACE_NOUNS = frozenset({"front", "top", "side", "middle", "back", "center", "centre", "edge", "bottom"})


@dataclass
class Revision:
    """A response and its revision, with the database queries that justified each edit."""

    original: str
    revised: str
    reviser: str
    queries: list[dict[str, str]] = field(default_factory=list)


def _phrase_range(token: Any) -> tuple[int, int]:
    """Character range of a noun's own phrase: its subtree without the conjuncts that follow it."""
    skip: set[int] = set()
    for child in token.children:
        if child.dep_ in ("conj", "cc") or (child.dep_ == "punct" and child.i > token.i):
            skip.update(t.i for t in child.subtree)
    tokens = [t for t in token.subtree if t.i not in skip]
    return tokens[0].idx, tokens[-1].idx + len(tokens[-1].text)


def _clause_range(clause: Any) -> tuple[int, int]:
    """A subordinate or second clause, with the "and" / comma that joins it, without the final stop."""
    doc, sent = clause.doc, clause.sent
    last = clause.right_edge
    while last.i > clause.i and last.is_punct:
        last = doc[last.i - 1]
    start = clause.left_edge.idx
    before = doc[clause.left_edge.i - 1] if clause.left_edge.i > sent.start else None
    if before is not None and (before.dep_ == "cc" or before.text in {",", ";"}):
        start = before.idx
        prev = doc[before.i - 1] if before.i - 1 >= sent.start else None
        if prev is not None and prev.text == "," and before.dep_ == "cc":
            start = prev.idx
    return start, last.idx + len(last.text)


def _removal_range(token: Any) -> tuple[int, int]:
    """The smallest stretch of text whose removal drops ``token``'s object and keeps a sentence."""
    doc = token.doc
    sent = token.sent
    whole = (sent.start_char, sent.end_char)
    if token.dep_ == "conj" or any(c.dep_ == "conj" for c in token.children):
        start, end = _phrase_range(token)
        if token.dep_ == "conj":
            # Take the "and" / comma before it with it: "a cat and a dog" -> "a cat".
            before = doc[token.left_edge.i - 1] if token.left_edge.i > sent.start else None
            if before is not None and (before.dep_ == "cc" or before.text in {",", ";"}):
                start = before.idx
                prev = doc[before.i - 1] if before.i - 1 >= sent.start else None
                if prev is not None and prev.text == "," and before.dep_ == "cc":
                    start = prev.idx
            return start, end
        following = doc[token.right_edge.i + 1] if token.right_edge.i + 1 < sent.end else None
        nxt = [c for c in token.children if c.dep_ in ("cc",) or (c.dep_ == "punct" and c.i > token.i)]
        if nxt:
            end = max(end, max(c.idx + len(c.text) for c in nxt))
        elif following is not None and following.dep_ == "cc":
            end = following.idx + len(following.text)
        # "a cat and a dog" without the cat: drop "a cat and", the dog fills the slot.
        return start, end
    if token.dep_ == "pobj" and token.head.dep_ in ("prep", "agent"):
        prep = token.head
        anchor = prep
        while True:
            head = anchor.head
            if head.dep_ == "advmod" and head.i < anchor.i:  # "next to a dog"
                anchor = head
            elif head.dep_ == "pobj" and head.head.dep_ == "prep" and head.lower_ in _PLACE_NOUNS:
                anchor = head.head  # "in front of a dog", "on top of a table"
            else:
                break
        start = min(anchor.left_edge.idx, prep.left_edge.idx)
        end = prep.right_edge.idx + len(prep.right_edge.text)
        return start, end
    if token.dep_ in ("nsubj", "nsubjpass", "dobj", "attr", "oprd", "npadvmod") and \
            token.head.dep_ in ("conj", "advcl", "relcl", "ccomp", "acl", "xcomp"):
        return _clause_range(token.head)
    if token.dep_ == "appos":
        start, end = token.left_edge.idx, token.right_edge.idx + len(token.right_edge.text)
        before = doc[token.left_edge.i - 1] if token.left_edge.i > sent.start else None
        if before is not None and before.text == ",":
            start = before.idx
        return start, end
    return whole


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _tidy(text: str) -> str:
    """Whitespace and punctuation left over from removals: " ," -> ",", ", ." -> ".", ",," -> ","."""
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    text = re.sub(r"[,;:]\s*([.!?])", r"\1", text)
    text = re.sub(r"(^|[.!?]\s+)[,;:]\s*", r"\1", text)
    text = re.sub(r"\n[ \t]+", "\n", text)
    return text.strip()


def _conflicting(word: str, annotated: list[str]) -> str | None:
    """The annotated value to use instead of ``word`` when both are in one conflict group."""
    lower = word.lower()
    for group in CONFLICT_GROUPS:
        if lower in group:
            same_group = [a for a in annotated if a.lower() in group]
            if same_group and lower not in {a.lower() for a in same_group}:
                return same_group[0]
    return None


class SceneGraphRuleReviser:
    """Revise a response against a scene graph by rules (see the module docstring)."""

    name = "scene-graph-rule"

    def __init__(self, extractor: ParserExtractor, matcher: ObjectMatcher | None = None) -> None:
        self.extractor = extractor  # the parser ``components.Components`` builds
        self.matcher = matcher or ObjectMatcher()

    def config(self) -> dict[str, Any]:
        # version 2: against open-world references an object is removed only where they settle it is not there
        return {"reviser": self.name, "version": 2, "extractor": self.extractor.config(),
                "matcher": self.matcher.config()}

    def revise(self, text: str, graph: SceneGraph, scope: Scope = CLOSED) -> Revision:
        return self.revise_many([text], [graph], [scope])[0]

    def revise_many(self, texts: Sequence[str], graphs: Sequence[SceneGraph],
                    scopes: Sequence[Scope] | None = None,
                    absents: Sequence[Callable[[str], bool] | None] | None = None) -> list[Revision]:
        """``scopes``: what each reference can settle (a scene graph's, complete, by default): against open-world
        references an object is removed only where they settle that it is not there, or (``absents``: per text, the
        image judge's check) where the image judge says it is not in the image."""
        if len(texts) != len(graphs):
            raise ValueError(f"got {len(texts)} texts and {len(graphs)} scene graphs")
        docs = list(self.extractor.nlp.pipe(list(texts), batch_size=self.extractor.batch_size))
        concepts = self.extractor.extract(list(texts))
        return [self._revise(doc, graph, cs, scope, absent) for doc, graph, cs, scope, absent in
                zip(docs, graphs, concepts, scopes or [CLOSED] * len(texts), absents or [None] * len(texts))]

    def _revise(self, doc: Any, graph: SceneGraph, concepts: Any, scope: Scope = CLOSED,
                absent: Callable[[str], bool] | None = None) -> Revision:
        text = doc.text
        db = SceneGraphDatabase(graph, self.matcher, scope, absent)
        queries: dict[str, QueryResult] = {}

        def ask(call: str, answer: Any) -> str:
            if call not in queries:
                queries[call] = QueryResult(call, answer())
            return queries[call].result

        removals: list[tuple[int, int]] = []
        substitutions: list[tuple[int, int, str]] = []
        for token in doc:
            if token.pos_ not in ("NOUN", "PROPN") or not is_thing(token):
                continue
            if token.dep_ == "compound":
                continue
            name = object_name(token)
            description = ask(f"GetDescription({name})", lambda: db.get_description(name))
            if description == NONE:
                removals.append(_removal_range(token))
                continue
            annotated = db.attributes_of(name)
            adjectives = [c for c in token.children if c.dep_ == "amod" or
                          (c.dep_ == "compound" and c.lower_ in COLORS | MATERIALS)]
            if token.dep_ in ("nsubj", "nsubjpass"):
                adjectives += [c for c in token.head.children if c.dep_ == "acomp"]
            for adj in adjectives:
                if _conflicting(adj.text, annotated) is None:
                    continue
                ask(f"GetAttributes({name})", lambda: db.get_attributes(name))
                replacement = _conflicting(adj.text, annotated) or adj.text
                substitutions.append((adj.idx, adj.idx + len(adj.text), replacement))
        for rel in concepts.relations:
            ask(f"GetRelation({rel.subject}, {rel.object})", lambda r=rel: db.get_relation(r.subject, r.object))
        revised = self._apply(text, _merge(removals), substitutions)
        return Revision(original=text, revised=revised, reviser=self.name,
                        queries=[q.to_dict() for q in queries.values()])

    @staticmethod
    def _apply(text: str, removals: list[tuple[int, int]], substitutions: list[tuple[int, int, str]]) -> str:
        edits = [(s, e, "") for s, e in removals]
        edits += [(s, e, r) for s, e, r in substitutions if not any(rs <= s < re_ for rs, re_ in removals)]
        out: list[str] = []
        cursor = 0
        for start, end, replacement in sorted(edits):
            if start < cursor:
                continue
            out.append(text[cursor:start])
            out.append(replacement)
            cursor = end
        out.append(text[cursor:])
        return _tidy("".join(out))


__all__ = ["Revision", "SceneGraphRuleReviser", "KEEP", "NONE"]
