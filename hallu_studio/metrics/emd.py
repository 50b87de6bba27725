"""VISCON Evaluate-by-EMD (§3.2.1): Earth Mover's Distance between reference and mentioned concepts.

Each concept is written with VISCON's templates (Table 11) and embedded with a sentence encoder:

* object    ``Object: {o}``
* attribute ``Attribute of {o}: {a}``
* relation  ``Relation: {s} - {p} - {o}``

Per concept type t, with N reference and M mentioned concepts, uniform weights (1/N, 1/M) and the
cost C[i, j] = 1 - cos(v_i, w_j), ``d_t = min_U <U, C>`` over transport plans U (exact, POT
``ot.emd``). VISCON's hallucination score is the **sum** over the three types (eq. 1; Table 4's
"all" column is the sum of the other three), and every number is reported ×100.

Each set is deduplicated first (a concept set: "the man ... the man" is one object).

Empty sides (the paper does not say; our choice, stated in ``undefined_reason``):

* both sides empty: 0 (nothing to transport, nothing hallucinated);
* one side empty: 100 by default (``empty_side="unit_cost"``), the cost of moving all mass to an
  orthogonal concept; with ``empty_side="undefined"`` the type is left out (no transport plan exists
  between mass and nothing), which flatters short answers: a one-sentence answer with no relation
  drops out of the relation mean (docs/guide/metrics-and-weaknesses.md).

The total is defined only when all three types are.

Ground cost (``ground_cost``, the setting ``scoring.emd_ground_cost``): ``cosine`` is VISCON's
``1 - cos`` alone; ``grounded`` (the default) takes the scene-graph grounding's verdict on each
response concept where it has one (0 to the reference concept it matches, 2 to every reference
concept when the reference contradicts it) and ``1 - cos`` elsewhere, with counts as attributes
(``emd_ground_cost``; why, measured: docs/validity.md).

Worked example (unit vectors chosen by hand; costs on the ×100 scale):

    reference objects: cat = (1, 0), sofa = (0, 1); mentioned: kitten = (0.8, 0.6), sofa = (0, 1)
    C = [[1 - 0.8, 1 - 0], [1 - 0.6, 1 - 1]] = [[0.2, 1.0], [0.4, 0.0]]
    uniform mass 1/2 each: the optimal plan moves cat->kitten and sofa->sofa,
    d_object = 0.5 * 0.2 + 0.5 * 0.0 = 0.1  ->  10.0 on the ×100 scale

>>> import numpy as np
>>> r = emd_between(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.8, 0.6], [0.0, 1.0]]))
>>> round(r.distance * 100, 6), [round(c * 100, 6) for c in r.per_concept_cost]
(10.0, [20.0, 0.0])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from ..concept_matching import GraphConceptMatcher
from ..concepts import Concept
from ..config import EMD_EMPTY_SIDE_POLICIES
from ..extraction.base import ConceptExtractor
from ..reference_scope import Scope
from ..judges.base import unit_rows
from ..model import ConceptSet
from .base import ItemResult, ScoringItem
from .emd_ground_cost import GROUND_COSTS, grounded_concepts, label, phrase, reference_list
from .reference_concepts import needs_reference, reference_concepts_many
from ..lexicon.forms import count_of
from .evidence import HALLUCINATED, NOT_SETTLED, SUPPORTED, EvidenceRow, concept_key, span_of
from .flagging import find_phrase, spans_of
from .spec import MetricSpec, Number, Plot

CONCEPT_TYPES: tuple[str, ...] = ("object", "attribute", "relation")
TEMPLATES: dict[str, str] = {
    "object": "Object: {o}",
    "attribute": "Attribute of {o}: {a}",
    "relation": "Relation: {s} - {p} - {o}",
}
SCALE = 100.0
EMPTY_SIDE_POLICIES: tuple[str, ...] = EMD_EMPTY_SIDE_POLICIES  # the setting scoring.emd_empty_side


class PhraseEncoder(Protocol):
    """What EMD needs of an embedder (``hallu_studio.embedding.Embedder`` fits)."""

    model_name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class TypedPhrases:
    """One concept type of one concept set: template phrases, display labels, spans (deduplicated)."""

    phrases: list[str]
    labels: list[str]
    spans: list[list[int] | None]
    grounding: list[str] = field(default_factory=list)  # grounded cost: matched | contradicted | embedding


def concept_phrases(concepts: ConceptSet) -> dict[str, TypedPhrases]:
    """The templated phrase of each distinct concept, per type, in order of first mention.

    >>> from hallu_studio.model import ConceptSet
    >>> p = concept_phrases(ConceptSet.from_dict({"objects": ["wall", "wall"], "attributes": [["wall", "beige"]],
    ...     "relations": [["framed picture", "hangs on", "wall"]]}))
    >>> p["object"].phrases, p["attribute"].phrases, p["relation"].phrases
    (['Object: wall'], ['Attribute of wall: beige'], ['Relation: framed picture - hangs on - wall'])
    """
    out: dict[str, TypedPhrases] = {}
    items: dict[str, list[tuple[str, str, Any]]] = {
        "object": [(TEMPLATES["object"].format(o=c.name), c.name, c.span) for c in concepts.objects],
        "attribute": [(TEMPLATES["attribute"].format(o=c.object, a=c.attribute), f"{c.object}: {c.attribute}", c.span)
                      for c in concepts.attributes],
        "relation": [(TEMPLATES["relation"].format(s=c.subject, p=c.predicate, o=c.object),
                      f"{c.subject} - {c.predicate} - {c.object}", c.span) for c in concepts.relations],
    }
    for kind, rows in items.items():
        seen: dict[str, int] = {}
        phrases: list[str] = []
        labels: list[str] = []
        spans: list[list[int] | None] = []
        for text, shown, span in rows:
            if text in seen:
                continue
            seen[text] = len(phrases)
            phrases.append(text)
            labels.append(shown)
            spans.append(list(span) if span else None)
        out[kind] = TypedPhrases(phrases, labels, spans)
    return out


def _typed(concepts: dict[str, list[Concept]], spans: dict[Concept, Any],
           grounding: dict[Concept, str] | None = None) -> dict[str, TypedPhrases]:
    """Grounded concepts (``emd_ground_cost``) as the phrases, labels, spans and grounding of each type."""
    return {t: TypedPhrases([phrase(c) for c in cs], [label(c) for c in cs],
                            [list(spans[c]) if spans.get(c) else None for c in cs],
                            [grounding[c] for c in cs] if grounding else []) for t, cs in concepts.items()}


@dataclass
class EMDResult:
    """One type's EMD: the distance (0-2 scale), the cost matrix and the optimal plan (reference rows,
    response columns), and each response concept's transported cost per unit of its mass, whose mean is
    the distance (VISCON Figure 8's concept-wise EMD)."""

    distance: float
    cost: np.ndarray
    plan: np.ndarray
    per_concept_cost: list[float]


def emd_between(reference: np.ndarray, response: np.ndarray, decided: np.ndarray | None = None) -> EMDResult:
    """Exact EMD with uniform weights and cost 1 - cosine between rows of two non-empty matrices; where
    ``decided`` (reference rows x response columns) holds a number rather than NaN, that number is the
    cost instead (``emd_ground_cost``)."""
    import ot

    if reference.ndim != 2 or response.ndim != 2 or not len(reference) or not len(response):
        raise ValueError(f"emd_between needs two non-empty matrices, got shapes {reference.shape} and {response.shape}")
    ref = unit_rows(reference, zero="error")
    resp = unit_rows(response, zero="error")
    # 1 - cos lies in [0, 2]; clip the float noise of identical phrases (cos 1.0000001).
    cost = np.clip(1.0 - ref @ resp.T, 0.0, 2.0)
    if decided is not None:
        cost = np.where(np.isnan(decided), cost, decided)
    n, m = cost.shape
    a = np.full(n, 1.0 / n)
    b = np.full(m, 1.0 / m)
    plan = ot.emd(a, b, cost)
    distance = float(np.sum(plan * cost))
    per_concept = (np.sum(plan * cost, axis=0) * m).tolist()
    return EMDResult(distance=distance, cost=cost, plan=plan, per_concept_cost=[float(x) for x in per_concept])


def _round_matrix(m: np.ndarray, digits: int = 5) -> list[list[float]]:
    return [[round(float(v), digits) for v in row] for row in m]



# A response concept whose transport cost reaches this (on the ×100 scale: 1 - cosine >= 0.5 to what it was matched
# with) counts as flagged when probe detection and span agreement read EMD.
EMD_FLAG_COST = 50.0


def flagged_spans(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str,
                  concepts: Mapping[str, Any] | None = None) -> list[tuple[int, int]]:
    """The response concepts whose transport cost is at least ``EMD_FLAG_COST``, where the response says them.

    >>> flagged_spans({}, {"types": {"object": {"per_concept_cost": [80.0, 10.0], "response_spans": [[2, 5], [11, 14]],
    ...                                         "response": ["dog", "mat"]}}}, "A dog on a mat")
    [(2, 5)]
    """
    out: list[tuple[int, int]] = []
    for typed in (evidence.get("types") or {}).values():
        costs = typed.get("per_concept_cost") or []
        spans = typed.get("response_spans") or []
        labels = typed.get("response") or []
        for i, cost in enumerate(costs):
            if cost is None or cost < EMD_FLAG_COST:
                continue
            located = spans_of(spans[i]) if i < len(spans) else []
            if not located and i < len(labels):
                located = find_phrase(text, str(labels[i]).split(":")[-1].split("-")[-1])
            out.extend(located)
    return out



def _label_concept(kind: str, label: str) -> tuple[str, str]:
    """(what it is about, ``concept_key``) of an evidence label ("dog", "sofa: red", "dog: two", "dog - on - sofa")."""
    if kind == "attribute" and ": " in label:
        subject, value = label.split(": ", 1)
        about = "count" if count_of(value) is not None else "attribute"
        return about, concept_key(about, subject, value)
    if kind == "relation" and label.count(" - ") == 2:
        return "relation", concept_key("relation", *label.split(" - "))
    return kind, concept_key(kind, label)


_WHY = {"matched": "the scene-graph grounding matched it (cost 0 to what it matches)",
        "contradicted": "the reference contradicts it (cost 2 to every concept)",
        "embedding": "the grounding cannot settle it: its cost is the embedding's 1 − cosine to the reference's "
                     "concepts of its type"}


def evidence_rows(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str) -> list[EvidenceRow]:
    """One row per response concept: the mean cost of moving it onto the reference's concepts of its type (×100, the
    plan's), hallucinated from ``EMD_FLAG_COST`` or where the reference contradicts it, supported where the
    grounding matched it, else not settled (a distance, not a verdict).

    >>> rows = evidence_rows({}, {"types": {"attribute": {"response": ["pagoda: one", "roof: red"],
    ...     "per_concept_cost": [46.1, 80.0], "response_grounding": ["embedding", "contradicted"]}}}, "")
    >>> [(r.text, r.verdict_words, r.concept, r.score) for r in rows]
    [('pagoda: one', 'not settled', 'count:pagoda|one', 46.1), ('roof: red', 'hallucinated (attribute)', 'attribute:roof|red', 80.0)]
    """
    rows = []
    for kind, typed in (evidence.get("types") or {}).items():
        costs, spans = typed.get("per_concept_cost") or [], typed.get("response_spans") or []
        grounding = typed.get("response_grounding") or []
        for i, concept_text in enumerate(typed.get("response") or []):
            cost = costs[i] if i < len(costs) else None
            how = str(grounding[i]) if i < len(grounding) else ""
            if how == "contradicted" or (cost is not None and cost >= EMD_FLAG_COST):
                verdict = HALLUCINATED
            elif how == "matched":
                verdict = SUPPORTED
            else:
                verdict = NOT_SETTLED
            about, key = _label_concept(str(kind), str(concept_text))
            reason = _WHY.get(how, "its cost is the embedding's 1 − cosine to the reference's concepts of its type")
            reason += f"; flagged from {EMD_FLAG_COST:g}" if verdict != SUPPORTED else ""
            rows.append(EvidenceRow(str(concept_text), verdict, kind=about, reason=reason,
                                    span=span_of(spans[i]) if i < len(spans) else None,
                                    score=None if cost is None else float(cost), score_name="mean cost moved (×100)",
                                    concept=key))
    return rows

class EMDMetric:
    """VISCON's EMD between a sample's reference concepts and the concepts its response mentions.

    ``extractor`` extracts concepts from responses whose ``ScoringItem.mentioned`` is None and from
    dense reference captions; ``embedder`` encodes the templated phrases (cached across responses).
    """

    spec = MetricSpec(
        "emd", "EMD", family="VISCON", tasks=("caption", "vqa"), needs=needs_reference("emd"),
        headline=Number("total", "EMD", "×100", lower_is_better=True,
                        plain="how far an answer's content is from what the image holds (0 = the same things; "
                              "a distance, ×100)",
                        meaning="Earth Mover's Distance between the answer's concepts and the reference's, summed "
                                "over objects, attributes and relations; the mean over all of a model's answers, "
                                "captions and questions alike.",
                        misleads="an answer with no relation drops out of the relation part; short correct VQA "
                                 "answers can score high against a whole scene graph."),
        summary=("object", "attribute", "relation"),
        item=Number("total", "EMD", "×100", lower_is_better=True,
                    meaning="this answer's EMD (the Overview's EMD is the mean of these over a model's answers)."),
        flagged_spans=flagged_spans, evidence_rows=evidence_rows, panel="transport_plan",
        hallucination_scores=(Number("object", "emd object", "×100", lower_is_better=True,
                                     meaning="VISCON EMD of the objects (x100)"),
                              Number("total", "emd total", "×100", lower_is_better=True,
                                     meaning="VISCON EMD, objects + attributes + relations (x100)")),
        plots=(Plot("mean_by", "EMD per image domain",
                    "Fig. 4a; each bar the mean over a model's captions of one domain (the table's EMD: over all its "
                    "answers); lower is closer to the reference", "mean EMD, distance to the reference (×100)",
                    ("total",), by=("domain",), prefer_task="caption"),),
        demo=True,
        settings=("scoring.embedding_model", "scoring.emd_empty_side", "scoring.emd_ground_cost"))
    name = spec.name

    def __init__(self, embedder: PhraseEncoder, extractor: ConceptExtractor | None = None, *,
                 empty_side: str = "unit_cost", ground_cost: str = "grounded") -> None:
        if empty_side not in EMPTY_SIDE_POLICIES:
            raise ValueError(f"empty_side must be one of {EMPTY_SIDE_POLICIES}, got {empty_side!r}")
        if ground_cost not in GROUND_COSTS:
            raise ValueError(f"ground_cost must be one of {GROUND_COSTS}, got {ground_cost!r}")
        self.embedder = embedder
        self.extractor = extractor
        self.empty_side = empty_side
        self.ground_cost = ground_cost
        # The graph judge's grounding (lexicon, then the same embedder's names at cosine >= 0.8).
        self._matcher = GraphConceptMatcher(embedder) if ground_cost == "grounded" else None
        self._references: dict[str, list[Concept]] = {}  # sample id -> its reference concepts (grounded cost)

    def config(self) -> dict[str, Any]:
        own: dict[str, Any] = {}
        if self._matcher is not None:
            own = {"ground_cost": "grounded: matched 0, contradicted 2, else 1 - cosine; counts as attributes",
                   "grounding": self._matcher.config()}
        return {
            "metric": self.name,
            "embedding_model": getattr(self.embedder, "model_name", type(self.embedder).__name__),
            "templates": TEMPLATES,
            "scale": SCALE,
            "total": "sum",
            "empty_side": self.empty_side,
            **own,
            "extractor": self.extractor.config() if self.extractor is not None else None,
        }

    # ------------------------------------------------------------------ scoring

    def update(self, item: ScoringItem) -> ItemResult:
        return self.update_many([item])[0]

    def update_many(self, items: Sequence[ScoringItem]) -> list[ItemResult]:
        """Score a batch: one extraction call for unextracted responses and dense references, and
        one encoder call for every distinct phrase of the batch."""
        mentioned = self._mentioned(items)
        references = reference_concepts_many([it.sample for it in items], self.extractor)
        sides: list[tuple[dict[str, TypedPhrases], dict[str, TypedPhrases], dict[str, np.ndarray] | None]] = []
        scopes = [Scope.of_sample(it.sample) for it in items]
        if self._matcher is None:
            sides = [(concept_phrases(r), concept_phrases(m), None) for r, m in zip(references, mentioned)]
        else:
            for it, r, m, scope in zip(items, references, mentioned, scopes):
                if it.sample.id not in self._references:  # a sample's reference is listed once, not per response
                    self._references[it.sample.id] = reference_list(r, it.sample.scene_graph)
                    if len(self._references) > 4096:
                        self._references.pop(next(iter(self._references)))
                g = grounded_concepts(self._references[it.sample.id], m, it.sample.scene_graph, self._matcher, scope)
                sides.append((_typed(g.reference, {}), _typed(g.response, g.spans, g.grounding), g.decided))
        distinct = list(dict.fromkeys(
            p for r, m, _ in sides for by_type in (r, m) for typed in by_type.values() for p in typed.phrases))
        vectors = self.embedder.encode(distinct) if distinct else np.zeros((0, 1), dtype=np.float32)
        index = {p: i for i, p in enumerate(distinct)}
        return [self._score(r, m, d, vectors, index, scope) for (r, m, d), scope in zip(sides, scopes)]

    def _mentioned(self, items: Sequence[ScoringItem]) -> list[ConceptSet]:
        todo = [i for i, it in enumerate(items) if it.mentioned is None]
        out: list[ConceptSet | None] = [it.mentioned for it in items]
        if todo:
            if self.extractor is None:
                raise ValueError(f"response {items[todo[0]].response_id} has no extracted concepts and "
                                 "the EMD metric was given no extractor")
            for i, concepts in zip(todo, self.extractor.extract([items[i].response for i in todo])):
                out[i] = concepts
        return [c if c is not None else ConceptSet() for c in out]

    def _score(self, ref: dict[str, TypedPhrases], resp: dict[str, TypedPhrases],
               decided: dict[str, np.ndarray] | None, vectors: np.ndarray, index: dict[str, int],
               scope: Scope) -> ItemResult:
        values: dict[str, Any] = {}
        stats: dict[str, float] = {}
        types_evidence: dict[str, Any] = {}
        reasons: list[str] = []
        for kind in CONCEPT_TYPES:
            r, m = ref[kind], resp[kind]
            evidence: dict[str, Any] = {"reference": r.labels, "response": m.labels, "response_spans": m.spans,
                                        "cost": [], "plan": [], "per_concept_cost": []}
            if m.grounding:
                evidence["response_grounding"] = m.grounding
            value: float | None
            if r.phrases and m.phrases:
                result = emd_between(vectors[[index[p] for p in r.phrases]], vectors[[index[p] for p in m.phrases]],
                                     None if decided is None else decided[kind])
                value = result.distance * SCALE
                evidence.update(cost=_round_matrix(result.cost), plan=_round_matrix(result.plan),
                                per_concept_cost=[round(c * SCALE, 4) for c in result.per_concept_cost])
            elif not r.phrases and not m.phrases:
                value = 0.0
            else:
                side = "the response mentions" if not m.phrases else "the reference has"
                reason = f"{kind}: {side} no {kind}s"
                if self.empty_side == "unit_cost":
                    value = SCALE
                    evidence["note"] = reason + "; scored as unit cost (100)"
                else:
                    value = None
                    reasons.append(reason)
                    evidence["undefined_reason"] = reason
            values[kind] = value
            stats[f"{kind}_defined"] = 0.0 if value is None else 1.0
            if value is not None:
                stats[kind] = value
            types_evidence[kind] = evidence
        if reasons:
            values["total"] = None
            stats["total_defined"] = 0.0
        else:
            values["total"] = sum(values[k] for k in CONCEPT_TYPES)
            stats["total"] = values["total"]
            stats["total_defined"] = 1.0
        evidence_all = {"model": getattr(self.embedder, "model_name", type(self.embedder).__name__),
                        "types": types_evidence}
        if not scope.closed:  # what the reference was read as (short captions, a dense description, an object list)
            evidence_all["scope"] = scope.describe()
        return ItemResult(stats=stats, values=values, evidence=evidence_all,
                          undefined_reason="; ".join(reasons) if reasons else None)

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        """Mean of each type (and of the total) over the items where it is defined, with the counts."""
        out: dict[str, float] = {}
        for kind in (*CONCEPT_TYPES, "total"):
            vals = [s[kind] for s in stats if s.get(f"{kind}_defined") and kind in s]
            out[kind] = float(np.mean(vals)) if vals else float("nan")
            out[f"n_{kind}"] = float(len(vals))
        out["n_items"] = float(len(stats))
        return out
