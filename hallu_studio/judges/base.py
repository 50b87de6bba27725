"""What every triplet judge takes and returns.

A judge sees a response's claims ``(subject, predicate, object)`` and a
``JudgeReference`` (the image's scene-graph triplets, its object names, and for
Tri-HE the question's gold answer), and returns one ``TripletJudgement`` per claim
with a verdict from ``VERDICTS`` (Tri-HE §3.1):

- ``supported``: the claim follows from the reference;
- ``object``: object hallucination, a subject or object is not in the image;
- ``relation``: relation hallucination, both ends are in the image, the relation is not;
- ``prediction_error``: both ends and the relation occur in the graph, but not as this triplet;
- ``unparseable``: the judge's answer could not be read (counts in Hallu_Q's
  denominator, not as a hallucination, as in the released code). No judge here gives it
  any more: the LLM judge fails the response instead, and the next ``score`` asks again
  (``llm_judge``); it stays for LLM-judge scores stored before that and for imported verdicts;
- ``unverifiable``: the graph is silent on what the claim says (an attribute it gives no
  value of the same kind); the scene-graph judge's policy says whether it counts;
- ``inference``: a claim about what is not seen ("used for transportation") that no gold
  triplet of the question supports; Hallu_Q is reported with and without such claims.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Sequence

if TYPE_CHECKING:
    from ..model import SceneGraph

from ..reference_scope import CLOSED, Scope
from ..vectors import PhraseEncoder, unit_rows  # noqa: F401 - re-exported: judges take encoders

Triplet = tuple[str, str, str]
VERDICTS: tuple[str, ...] = ("supported", "object", "relation", "prediction_error", "unparseable", "unverifiable",
                             "inference")
HALLUCINATION_VERDICTS: tuple[str, ...] = ("object", "relation")
# The claim that an object is in the picture (``metrics.trihe.response_claims`` makes it for objects a
# response names outside every relation and attribute).
EXISTENCE_PREDICATE, EXISTENCE_OBJECT = "is in", "the image"
CAPTION_SOURCE = "reference caption"  # ``JudgeReference.source`` of a dense caption's concepts
CAPTIONS_SOURCE = "reference captions"  # of several captions' concepts (COCO's five)
OBJECT_LIST_SOURCE = "object list"  # of an object list complete within a vocabulary


@dataclass
class TripletJudgement:
    triplet: Triplet
    verdict: str
    score: float | None = None  # the judge's support score (cosine, entailment probability); None for the LLM
    reason: str = ""
    kind: str = ""  # what was checked: object, attribute, count, relation, inference ("" when the judge says not)
    # The image judge's probability that the claim holds (its yes-probability), where its backend gives one.
    probability: float | None = None
    # Which judge decided, where several did (a reference judge and the image judge: ``judges.vlm_judge``); "": the
    # metric's one judge.
    judge: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r} for {self.triplet}; expected one of {VERDICTS}")


@dataclass
class JudgeReference:
    """What a claim is checked against."""

    triplets: list[Triplet] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)  # scene-graph object names
    question: str | None = None
    answer: str | None = None  # the gold answer (Tri-HE)
    gold: list[Triplet] = field(default_factory=list)  # the question's own gold triplets (also in ``triplets``)
    graph: "SceneGraph | None" = None  # the scene graph itself, where there is one (multiplicities, attributes)
    speculative: frozenset[int] = frozenset()  # indices of the claims the response states as guesses ("might be")
    sentences: tuple[int, ...] = ()  # per claim, the index of the response's sentence it comes from (-1: unknown)
    # How many of an object a graph-less reference (a dense caption) says there are, by name; a name it
    # gives no number for has no known multiplicity.
    counts: dict[str, int] = field(default_factory=dict)
    # Per claim, the attributes the response gives its subject and object where it names them ("the red cube is
    # left of the blue cube": (("red",), ("blue",))): which of several objects of one name it means. () : none known.
    qualifiers: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    # What the reference was read from, for the evidence: "scene graph", "gold triplets", both joined by " + ",
    # "reference caption(s)" (captions' concepts, ``metrics.trihe.reference_from_concepts``), "object list", captions
    # and an object list joined by " + ", or "none".
    source: str = "scene graph"
    # What the reference can settle (``reference_scope.Scope``): a scene graph is complete; captions and object lists are
    # open-world, an object list complete within its vocabulary.
    scope: Scope = CLOSED
    # Object names from an object list: things in the picture, of unknown number and with unknown attributes.
    listed: list[str] = field(default_factory=list)
    # The image itself, for a judge that looks at it (``judges.vlm_judge``), and its sha256 (what its answers are
    # cached under); None: no image known.
    image: bytes | None = None
    image_sha256: str | None = None

    def is_empty(self) -> bool:
        """Whether the reference holds nothing to judge against (no triplet, object or object list)."""
        return not self.triplets and not self.objects and not self.listed and self.scope.vocabulary is None

    def nodes(self) -> list[str]:
        """Everything that counts as "in the image": object names and both ends of every reference triplet.

        Tri-HE's references hold attribute triplets such as ``(laptop, is, black)``;
        their second end is a node too, as in the benchmark's own graphs.
        """
        seen: dict[str, None] = {}
        for name in [*self.objects, *self.listed]:
            seen.setdefault(name.strip(), None)
        for s, _, o in self.triplets:
            seen.setdefault(s.strip(), None)
            seen.setdefault(o.strip(), None)
        return [n for n in seen if n]

    def predicates(self) -> list[str]:
        return list(dict.fromkeys(p.strip() for _, p, _ in self.triplets if p.strip()))


def triplet_text(t: Sequence[str]) -> str:
    """The phrase a triplet is embedded or judged as: ``"man holding pen"``."""
    return " ".join(part.strip() for part in t if part.strip())


class TripletJudge(Protocol):
    name: str

    def config(self) -> dict[str, Any]:
        """The settings that shape the verdicts (part of the score's config key)."""

    def judge(self, claims: Sequence[Triplet], reference: JudgeReference) -> list[TripletJudgement]:
        """One judgement per claim, in order."""
