"""Precision and recall of an extractor against hand-labelled sentences.

The labels (``tests/data/extraction_gold.jsonl``) hold no dataset text: each line points
at a sentence (a dataset file under the shared datasets folder, a JSON path to the text
in it, the sentence's character range and a sha256 of it) and gives the objects,
attributes, relations and counts a person read in it. ``resolve`` reads the sentences
back and checks each hash, so a changed dataset fails loudly instead of scoring the
wrong text. A line may instead carry its own ``text``: a short caption written for the
gold itself (never copied from a dataset), which needs no dataset to be scored.

Matching is on comparable forms: object names through ``normalize_name``; attributes by
object and ``same_attribute``; relations by both ends and the parsed predicate (equal, or
the same preposition where one side has no verb: "seen in front of" ~ "in front of", or
the same verb); counts by object and number. Scores are micro-averaged over sentences.

>>> gold = [{"objects": ["dog", "ball"], "attributes": [["ball", "red"]],
...          "relations": [["dog", "chasing", "ball"]], "counts": [["dog", 2]]}]
>>> from hallu_studio.model import ConceptSet
>>> found = ConceptSet.from_dict({"objects": ["dogs", "grass"], "attributes": [["balls", "red"]],
...                               "relations": [["dog", "chases", "ball"]], "counts": [["dog", 2]]})
>>> {k: (s.precision, s.recall) for k, s in score([found], gold).items()}
{'objects': (0.5, 0.5), 'attributes': (1.0, 1.0), 'relations': (1.0, 1.0), 'counts': (1.0, 1.0)}
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from hallu_studio.lexicon.attributes import same_attribute
from hallu_studio.lexicon.forms import normalize_name
from hallu_studio.lexicon.predicates import parse_predicate
from hallu_studio.model import ConceptSet
from hallu_studio.extraction.spans import sentence_spans

CONCEPT_TYPES: tuple[str, ...] = ("objects", "attributes", "relations", "counts")


@dataclass(frozen=True)
class GoldSentence:
    dataset: str  # a file under the datasets folder: "tri-he/tri-he.json"; "" for a written sentence
    pointer: tuple[Any, ...]  # JSON path to the text in it: ["2327560", "instance", 2, "answer"]
    chars: tuple[int, int]  # the sentence's character range in that text
    sha256: str
    labels: dict[str, list[Any]]
    text: str | None = None  # a sentence written for the gold (no dataset text): "Sheep graze in a field."

    @property
    def written(self) -> bool:
        return self.text is not None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "GoldSentence":
        labels = {k: list(d.get(k) or []) for k in CONCEPT_TYPES}
        if "text" in d:
            text = str(d["text"])
            if not text.strip():
                raise ValueError("a written gold sentence has no text")
            return cls(dataset="", pointer=(), chars=(0, len(text)), sha256=sentence_hash(text), labels=labels,
                       text=text)
        return cls(dataset=str(d["dataset"]), pointer=tuple(d["pointer"]), chars=(int(d["chars"][0]), int(d["chars"][1])),
                   sha256=str(d["sha256"]), labels=labels)


def sentence_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_gold(path: str | Path) -> list[GoldSentence]:
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                out.append(GoldSentence.from_dict(json.loads(line)))
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{n}: not a gold sentence: {exc}") from exc
    return out


def resolve(gold: Sequence[GoldSentence], datasets_dir: str | Path | None) -> list[str]:
    """The sentences the labels point at, read from ``datasets_dir`` (each file read once); a written sentence
    is its own text (``datasets_dir`` may be None when every sentence is written)."""
    files: dict[str, Any] = {}
    out = []
    for g in gold:
        if g.text is not None:
            out.append(g.text)
            continue
        if datasets_dir is None:
            raise ValueError(f"{g.dataset} {list(g.pointer)}: the sentence lives in a dataset, and no datasets "
                             "folder was given")
        if g.dataset not in files:
            files[g.dataset] = json.loads((Path(datasets_dir) / g.dataset).read_text(encoding="utf-8"))
        node = files[g.dataset]
        for key in g.pointer:
            node = node[key]
        sentence = str(node)[g.chars[0]:g.chars[1]]
        if sentence_hash(sentence) != g.sha256:
            raise ValueError(f"{g.dataset} {list(g.pointer)} {list(g.chars)}: the text there is not the labelled "
                             "sentence (sha256 differs); the dataset changed")
        out.append(sentence)
    return out


@dataclass(frozen=True)
class TypeScore:
    matched_found: int  # found concepts that match a label
    found: int
    matched_gold: int  # labels that some found concept matches
    gold: int

    @property
    def precision(self) -> float | None:
        """None when nothing was found (an extractor without counts has no count precision)."""
        return self.matched_found / self.found if self.found else None

    @property
    def recall(self) -> float | None:
        return self.matched_gold / self.gold if self.gold else None


def _same_predicate(a: str, b: str) -> bool:
    pa, pb = parse_predicate(a), parse_predicate(b)
    if pa == pb:
        return True
    if pa.prep is not None and pa.prep == pb.prep and (pa.verb is None or pb.verb is None):
        return True
    return pa.verb is not None and pa.verb == pb.verb and (pa.prep is None or pb.prep is None or pa.prep == pb.prep)


def _matches(kind: str, x: Sequence[Any], y: Sequence[Any]) -> bool:
    if kind == "objects":
        return normalize_name(x[0]) == normalize_name(y[0])
    if kind == "attributes":
        return normalize_name(x[0]) == normalize_name(y[0]) and same_attribute(str(x[1]), str(y[1]))
    if kind == "relations":
        return (normalize_name(x[0]) == normalize_name(y[0]) and normalize_name(x[2]) == normalize_name(y[2])
                and _same_predicate(str(x[1]), str(y[1])))
    return normalize_name(x[0]) == normalize_name(y[0]) and int(x[1]) == int(y[1])


def _found(cs: ConceptSet, kind: str) -> list[list[Any]]:
    d = cs.to_dict()
    return [[o] for o in d["objects"]] if kind == "objects" else list(d.get(kind) or [])


def score(found: Iterable[ConceptSet], gold: Sequence[dict[str, list[Any]]]) -> dict[str, TypeScore]:
    """Per concept type, how many found concepts match a label and how many labels are found."""
    totals = {k: [0, 0, 0, 0] for k in CONCEPT_TYPES}
    for cs, labels in zip(found, gold, strict=True):
        for kind in CONCEPT_TYPES:
            mine = _found(cs, kind)
            theirs = [[x] if kind == "objects" else x for x in labels.get(kind) or []]
            t = totals[kind]
            t[0] += sum(any(_matches(kind, m, g) for g in theirs) for m in mine)
            t[1] += len(mine)
            t[2] += sum(any(_matches(kind, m, g) for m in mine) for g in theirs)
            t[3] += len(theirs)
    return {k: TypeScore(*v) for k, v in totals.items()}


# ---------------------------------------------------------------- people's span labels

Span = tuple[int, int]


@dataclass(frozen=True)
class SpanCoverage:
    """How well extracted concepts can point at spans people marked (M-HalDetect's INACCURATE spans).

    A judge flags concepts, and a flag lands on the concept's span: a marked span no concept overlaps cannot be
    pointed at by any concept-level judge (``span_recall``); concepts that overlap marks more often than the marked
    share of the text would predict (``lift``) sit where people found errors.
    """

    marks: int
    marks_hit: dict[str, int]  # per concept type, and "any": marked spans overlapped by at least one such concept
    concepts: int
    concepts_on_marks: int  # concept spans that overlap a marked span
    marked_char_share: float  # share of the texts' characters inside marked spans
    concept_chars: int  # total length of the concept spans (a long span overlaps more by itself)
    marked_sentences: int
    marked_sentences_with_concept: int
    clean_sentences: int
    clean_sentences_with_concept: int
    concepts_in_marked_sentences: int
    concepts_in_clean_sentences: int

    @property
    def span_recall(self) -> float | None:
        return self.marks_hit["any"] / self.marks if self.marks else None

    @property
    def on_marks(self) -> float | None:
        return self.concepts_on_marks / self.concepts if self.concepts else None

    @property
    def lift(self) -> float | None:
        """Share of concepts on marks over the marked share of characters (1.0: concepts ignore the marks)."""
        on = self.on_marks
        return on / self.marked_char_share if on is not None and self.marked_char_share else None


def _overlaps(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def span_coverage(texts: Sequence[str], marks: Sequence[Sequence[Span]], found: Sequence[ConceptSet]) -> SpanCoverage:
    """Concept spans of ``found`` against the character spans people marked in each text.

    >>> from hallu_studio.model import ObjectConcept, RelationConcept
    >>> text = "A dog sits. A cat flies a kite."
    >>> cs = ConceptSet(objects=[ObjectConcept("dog", (2, 5)), ObjectConcept("cat", (14, 17))],
    ...                 relations=[RelationConcept("cat", "flies", "kite", (14, 30))])
    >>> cov = span_coverage([text], [[(12, 31)]], [cs])
    >>> cov.span_recall, cov.marks_hit["relations"], cov.on_marks, cov.marked_sentences_with_concept
    (1.0, 1, 0.6666666666666666, 1)
    """
    hit = {k: 0 for k in ("any", *CONCEPT_TYPES)}
    n_marks = n_concepts = on_marks = marked_chars = total_chars = concept_chars = 0
    sent = {"marked": 0, "marked_with": 0, "clean": 0, "clean_with": 0, "in_marked": 0, "in_clean": 0}
    for text, spans, cs in zip(texts, marks, found, strict=True):
        typed = {"objects": [c.span for c in cs.objects], "attributes": [c.span for c in cs.attributes],
                 "relations": [c.span for c in cs.relations], "counts": [c.span for c in cs.counts]}
        typed = {k: [s for s in v if s is not None] for k, v in typed.items()}
        every = [s for v in typed.values() for s in v]
        n_marks += len(spans)
        for m in spans:
            hit["any"] += any(_overlaps(m, s) for s in every)
            for kind, ss in typed.items():
                hit[kind] += any(_overlaps(m, s) for s in ss)
        n_concepts += len(every)
        on_marks += sum(any(_overlaps(s, m) for m in spans) for s in every)
        concept_chars += sum(b - a for a, b in every)
        covered = set()
        for a, b in spans:
            covered.update(range(a, b))
        marked_chars += len(covered)
        total_chars += len(text)
        for a, b in sentence_spans(text):
            if not text[a:b].strip():
                continue
            inside = sum(a <= s[0] < b for s in every)
            key = "marked" if any(_overlaps((a, b), m) for m in spans) else "clean"
            sent[key] += 1
            sent[f"{key}_with"] += inside > 0
            sent[f"in_{key}"] += inside
    return SpanCoverage(marks=n_marks, marks_hit=hit, concepts=n_concepts, concepts_on_marks=on_marks,
                        marked_char_share=marked_chars / total_chars if total_chars else 0.0,
                        concept_chars=concept_chars, marked_sentences=sent["marked"],
                        marked_sentences_with_concept=sent["marked_with"], clean_sentences=sent["clean"],
                        clean_sentences_with_concept=sent["clean_with"],
                        concepts_in_marked_sentences=sent["in_marked"], concepts_in_clean_sentences=sent["in_clean"])
