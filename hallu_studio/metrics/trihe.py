"""Tri-HE: triplet-level object and relation hallucination (Tri-HE §3, eq. 1–2).

A response's claims are its extracted relations ``(s, p, o)`` plus its attribute
pairs written as ``(o, "is", a)`` (the benchmark's own graphs store attributes that
way, e.g. ``(laptop, is, black)``). The reference is the image's scene-graph
triplets, its attribute triplets and the question's gold triplets. A judge
(``hallu_studio.judges``) gives each claim a verdict.

Per question, HT = object + relation hallucinations and TT = all claims, unparseable
ones included (they count in the denominator, never as hallucinations). Where the judge
labels claims *unverifiable* (the graph is silent) or *inference* (not a visual claim, and
no gold triplet supports it), its policy says whether unverifiable ones count (as relation
hallucinations, by default, as the paper counts them); inferences are in TT but not in HT,
and ``hallu_q_with_inference`` counts them in HT too.

- Hallu_Q = mean over questions with TT > 0 of HT / TT, × 100 (questions without
  triplets are skipped);
- Hallu_I = mean over images of the Hallu_Q of that image's questions, × 100.

Both are also split into their object and relation parts. Prediction errors
(§3.1) are not hallucinations; their rate is reported beside.

Worked example. Image A, question 1: 4 claims, verdicts object, relation,
supported, unparseable → 2/4. Question 2: no claims → skipped. Image B, question 3:
2 claims, both supported → 0/2. Hallu_Q = (0.5 + 0) / 2 × 100 = 25;
Hallu_I = mean(image A: 0.5, image B: 0) × 100 = 25; Hallu_Q object = (0.25 + 0)/2
× 100 = 12.5, relation 12.5.

Compute needs each question's image: ``stats["image"]`` holds a 48-bit number
derived from the sample's benchmark and image key (``image_group``), since stats
are numbers.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..judges.base import (CAPTION_SOURCE, CAPTIONS_SOURCE, EXISTENCE_OBJECT, EXISTENCE_PREDICATE,
                           HALLUCINATION_VERDICTS, OBJECT_LIST_SOURCE, JudgeReference, Triplet, TripletJudge)
from ..extraction.spans import sentence_spans, speculative_spans
from ..grounding import stated_counts
from ..reference_scope import DENSE_CAPTION, Scope
from ..lexicon.attributes import attribute_family
from ..lexicon.forms import normalize_name, number_word
from ..lexicon.nouns import is_adjective_only
from ..model import ConceptSet, Sample, Span, content_key
from .base import ItemResult, ScoringItem
from .flagging import find_phrase, spans_of
from .reference_concepts import needs_reference
from .spec import MetricSpec, Number, Plot, as_number
from .trihe_evidence import (ATTRIBUTE_PREDICATE, corrected_claims, evidence_rows, fact_reading)

if TYPE_CHECKING:
    from ..components import Components
    from ..config import Settings
    from ..extraction.base import ConceptExtractor



def image_group(sample: Sample) -> float:
    """A number naming the sample's image, exact in a float (48 bits of a content hash)."""
    return float(int(content_key(sample.benchmark, sample.image_key)[:12], 16))


Qualifiers = tuple[tuple[str, ...], tuple[str, ...]]


def response_claims(concepts: ConceptSet, existence: bool = False) -> list[tuple[Triplet, Span | None]]:
    """Relations, then attributes as ``(object, "is", attribute)``, then counts as ``(object, "is", "two")``,
    then (with ``existence``, for judges that check it) each object named in none of those as
    ``(object, "is in", "the image")``, with their spans; duplicates once (a relation is a duplicate when it
    also names its ends with the same attributes: ``claims_with_qualifiers``)."""
    return [(t, span) for t, span, _ in claims_with_qualifiers(concepts, existence)]


def claims_with_qualifiers(concepts: ConceptSet, existence: bool = False
                           ) -> list[tuple[Triplet, Span | None, Qualifiers]]:
    """``response_claims`` with, per claim, the attributes the response names its ends with (relations only)."""
    seen: dict[tuple[Triplet, Qualifiers], Span | None] = {}
    for r in concepts.relations:
        seen.setdefault(((r.subject, r.predicate, r.object), (r.subject_attributes, r.object_attributes)), r.span)
    claims: dict[Triplet, Span | None] = {}
    for a in concepts.attributes:
        claims.setdefault((a.object, ATTRIBUTE_PREDICATE, a.attribute), a.span)
    for c in getattr(concepts, "counts", ()):
        claims.setdefault((c.object, ATTRIBUTE_PREDICATE, number_word(c.count)), c.span)
    # An object named in no other claim ("There is also a giraffe next to it.", "Bag.") is a claim that it is there.
    named = {normalize_name(x) for t in [*(t for t, _ in seen), *claims] for x in (t[0], t[2])}
    for o in concepts.objects if existence else ():
        # Adjectives an extractor took for things ("the path is the narrow") claim no object.
        if o.name.strip() and normalize_name(o.name) not in named and not is_adjective_only(o.name) \
                and attribute_family(o.name) is None:
            claims.setdefault((o.name, EXISTENCE_PREDICATE, EXISTENCE_OBJECT), o.span)
            named.add(normalize_name(o.name))
    none: Qualifiers = ((), ())
    out = [(t, span, q) for (t, q), span in seen.items()]
    relations = {t for t, _ in seen}
    out += [(t, span, none) for t, span in claims.items() if t not in relations]
    return [(t, span, q) for t, span, q in out if all(part.strip() for part in t)]



def judged_on_caption(sample: Sample) -> bool:
    """Whether Tri-HE judges ``sample`` against its human reference captions (and object list, if it has one): no
    scene graph, no gold triplets, at least one non-blank caption (DCI's dense caption, COCO's five)."""
    return sample.scene_graph.is_empty() and not sample.gold_triplets and bool(sample.reference_captions)


def judged_on_object_list(sample: Sample) -> bool:
    """Whether Tri-HE judges ``sample`` against an object list alone: no scene graph, gold triplets or captions."""
    return (sample.scene_graph.is_empty() and not sample.gold_triplets and not sample.reference_captions
            and sample.reference_objects is not None)


def reference_from_concepts(concepts: ConceptSet, sample: Sample | None = None) -> JudgeReference:
    """Reference captions' concepts as a judge's reference: their relations, their attributes as
    ``(o, is, a)``, their objects, and the numbers they state (``JudgeReference.counts``); read open-world, with
    the sample's object list where it has one (``reference_scope.Scope``); its ``source`` says what it was read from."""
    triplets: list[Triplet] = [(r.subject, r.predicate, r.object) for r in concepts.relations]
    triplets += [(a.object, ATTRIBUTE_PREDICATE, a.attribute) for a in concepts.attributes]
    counts = stated_counts((c.object, c.count) for c in concepts.counts)
    # Without a sample: concepts of one caption marked dense (what it does not name is not there).
    scope = Scope.of_sample(sample) if sample is not None else DENSE_CAPTION
    listed = list(sample.reference_objects or []) if sample is not None else []
    sources = [CAPTION_SOURCE if scope.captions == 1 else CAPTIONS_SOURCE] if scope.captions else []
    sources += [OBJECT_LIST_SOURCE] if scope.listed else []
    return JudgeReference(triplets=list(dict.fromkeys(triplets)), objects=list(dict.fromkeys(o.name for o in
                                                                                             concepts.objects)),
                          question=sample.question if sample else None, answer=sample.answer if sample else None,
                          counts=counts, source=" + ".join(sources) or "none", scope=scope, listed=listed)


def reference_for(sample: Sample, extract: "Callable[[str], ConceptSet] | None" = None) -> JudgeReference:
    """The sample's scene graph (and gold triplets) as the judge's reference; with ``extract``, a sample with
    no graph but reference captions is judged against the union of their concepts."""
    graph = sample.scene_graph
    if extract is not None and judged_on_caption(sample):
        return reference_from_concepts(ConceptSet.union([extract(c) for c in sample.reference_captions]), sample)
    if judged_on_object_list(sample):
        return reference_from_concepts(ConceptSet(), sample)
    triplets = list(graph.triplets())
    triplets += [(o, ATTRIBUTE_PREDICATE, a) for o, a in graph.attribute_pairs()]
    triplets += [tuple(t) for t in sample.gold_triplets]  # type: ignore[misc]
    sources = [name for name, there in (("scene graph", not graph.is_empty()), ("gold triplets", sample.gold_triplets))
               if there]
    return JudgeReference(triplets=list(dict.fromkeys(triplets)), objects=graph.object_names(),
                          question=sample.question, answer=sample.answer,
                          gold=[tuple(t) for t in sample.gold_triplets],  # type: ignore[misc]
                          graph=None if graph.is_empty() else graph, source=" + ".join(sources) or "none")


def _rates(per_question: Sequence[dict[str, float]], key: str) -> float | None:
    """Mean of ``key / n_triplets`` over questions with triplets, × 100."""
    rows = [s for s in per_question if s.get("n_triplets", 0) > 0]
    if not rows:
        return None
    return 100.0 * sum(s[key] / s["n_triplets"] for s in rows) / len(rows)


def _hallucinated_share(values: Mapping[str, Any]) -> float | None:
    n, h = as_number(values.get("n_triplets")), as_number(values.get("hallucinated"))
    return h / n if n and h is not None else None


def flagged_spans(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str,
                  concepts: Mapping[str, Any] | None = None) -> list[tuple[int, int]]:
    """The spans of the claims counted as hallucinated (the judge's policy on unverifiable claims decides, as
    each triplet's ``hallucinated`` says); a claim with no span is found by its object (object hallucination)
    or its predicate.

    >>> flagged_spans({}, {"triplets": [{"triplet": ["dog", "on", "mat"], "verdict": "object", "span": [2, 5]},
    ...                                 {"triplet": ["cat", "is", "grey"], "verdict": "supported"}]}, "A dog on a mat")
    [(2, 5)]
    """
    out: list[tuple[int, int]] = []
    for t in evidence.get("triplets") or []:
        if t.get("hallucinated", t.get("verdict") in ("object", "relation")):
            spans = spans_of(t.get("span"))
            if not spans and t.get("triplet"):
                _, p, o = t["triplet"]
                spans = find_phrase(text, o if t.get("verdict") == "object" else p)
            out.extend(spans)
    return out


def _judged_by(j: Any) -> dict[str, Any]:
    """A verdict's judge (where several judged the response's claims) and its yes-probability, where known."""
    return {**({"judge": j.judge} if j.judge else {}),
            **({"probability": j.probability} if j.probability is not None else {})}




class TriHEMetric:
    spec = MetricSpec(
        "trihe", "Tri-HE", tasks=("caption", "vqa"), needs=needs_reference("trihe"),
        headline=Number("hallu_q", "Hallu_Q", "% of claims", lower_is_better=True,
                        plain="% of an answer's statements that are wrong about the image",
                        meaning="share of each answer's claims (triplets) the judge finds hallucinated, averaged "
                                "over questions.",
                        misleads="precision-like: an answer that claims little scores well; the offline graph judge "
                                 "reads claims by name, so with several objects of one name a swapped relation may "
                                 "still hold for some pair (docs/validity.md)."),
        summary=("hallu_i", "hallu_q_object", "hallu_q_relation"),
        item=Number("hallucinated", "hallucinated claims", "claims", lower_is_better=True,
                    meaning="the claims of this answer the judge finds hallucinated (Hallu_Q divides them by its "
                            "claims)."),
        agreement=Number("hallucinated", "share of claims hallucinated", "share", lower_is_better=True,
                         derive=_hallucinated_share),
        flagged_spans=flagged_spans, fact_reading=fact_reading, corrected_claims=corrected_claims,
        evidence_rows=evidence_rows, panel="claims",
        hallucination_scores=(Number("hallucinated", "trihe share", "share", lower_is_better=True,
                                     meaning="Tri-HE: claims counted as hallucinated / claims",
                                     derive=_hallucinated_share),),
        plots=(Plot("shares", "object vs relation hallucination", "share of each model's claims (triplets)",
                    "claims hallucinated (%)", ("object", "relation"), total="n_triplets"),),
        demo=True,
        settings=("scoring.trihe_judge", "scoring.trihe_extraction", "scoring.unverifiable",
                  "scoring.unverifiable_weight",
                  "scoring.graph_grounding_threshold", "scoring.trihe_reference_threshold",
                  "scoring.trihe_support_threshold", "scoring.trihe_top_k", "scoring.nli_model",
                  "scoring.nli_threshold", "scoring.embedding_model", "llm.model", "scoring.vlm_judge_model",
                  "scoring.vlm_judge_template", "scoring.vlm_judge_unsettled"))
    name = spec.name

    def __init__(self, judge: TripletJudge, extractor: "ConceptExtractor | None" = None,
                 reference_extract: "Callable[[str], ConceptSet] | None" = None) -> None:
        self.judge = judge
        # Tri-HE's own claim extraction (``scoring.trihe_extraction``); None: the pipeline's concepts.
        self.extractor = extractor
        # Turns a dense reference caption (a sample with no scene graph, as DCI's) into the concepts judged against;
        # one with a ``many`` (``reference_concepts.CaptionConcepts``) reads a batch's captions in one call.
        self.reference_extract = reference_extract
        self._captions: dict[str, ConceptSet] = {}  # each caption read once, whatever the responses to it

    @classmethod
    def from_settings(cls, settings: "Settings", *, components: "Components | None" = None,
                      reference_extract: "Callable[[str], ConceptSet] | None" = None) -> "TriHEMetric":
        """The judge named by ``settings.scoring.trihe_judge``, the claims ``scoring.trihe_extraction`` names, both
        asked of ``components`` (built from ``settings`` when not given)."""
        from ..components import Components
        from .registry import check_llm_configured

        parts = components if components is not None else Components(settings)
        if settings.scoring.trihe_extraction == "llm-trihe":
            check_llm_configured(settings, ["trihe"], extraction=False)
        return cls(parts.triplet_judge(), parts.trihe_extractor(), reference_extract)

    def config(self) -> dict[str, Any]:
        own = {"claims_extractor": self.extractor.config()} if self.extractor is not None else {}
        return {"metric": self.name, "claims": "relations + attributes as (o, is, a)", **own, **self.judge.config()}

    def _with_own_claims(self, items: Sequence[ScoringItem]) -> list[ScoringItem]:
        """The items with Tri-HE's own extraction in place of the pipeline's concepts, when it has one."""
        if self.extractor is None:
            return list(items)
        extracted = self.extractor.extract([i.response for i in items])
        return [dataclasses.replace(i, mentioned=cs) for i, cs in zip(items, extracted, strict=True)]

    @property
    def needs_image(self) -> bool:
        """Whether the judge looks at the image (an image judge, alone or for what the reference leaves open)."""
        return bool(getattr(self.judge, "needs_image", False))

    def not_applicable(self, sample: Sample) -> str | None:
        """The spec's reason, except that an image judge judges a sample with an image and no reference."""
        reason = self.spec.not_applicable(sample)
        if not self.needs_image or (reason is not None and reason != needs_reference("trihe")(sample)):
            return reason  # another task (a yes/no question): no judge makes it Tri-HE's
        if sample.image_sha256:
            return None
        if getattr(self.judge, "reference_judge", None) is None:
            return f"the image judge {self.judge.name} needs the image, and sample {sample.id} has none"
        return reason

    @property
    def existence_claims(self) -> bool:
        """Whether objects named outside every relation become claims: for judges that check them (the graph
        judge); the released embedding check sees the claims the paper's code made."""
        return bool(getattr(self.judge, "judges_existence", False))

    def hallucination_weight(self, verdict: str, closed: bool = True) -> float:
        """How much of a hallucination a verdict counts as: object and relation hallucinations 1; other verdicts
        as the judge's own policy says against a complete (``closed``: a scene graph) or open-world reference
        (``JudgeReference.scope``): an unverifiable claim ``scoring.unverifiable_weight`` against captions."""
        policy = getattr(self.judge, "hallucination_weight", None)
        if policy is not None:
            return float(policy(verdict, closed))
        return 1.0 if verdict in HALLUCINATION_VERDICTS else 0.0

    def counts_as_hallucination(self, verdict: str, closed: bool = True) -> bool:
        """Whether a verdict counts whole as a hallucination."""
        return self.hallucination_weight(verdict, closed) >= 1.0

    def _read_captions(self, samples: Sequence[Sample]) -> None:
        """Reads the reference captions of those samples judged against one that were not read yet."""
        if self.reference_extract is None:
            return
        texts = [t for t in dict.fromkeys(c for s in samples if judged_on_caption(s) for c in s.reference_captions)
                 if t not in self._captions]
        if not texts:
            return
        many = getattr(self.reference_extract, "many", None)
        got = list(many(texts)) if callable(many) else [self.reference_extract(t) for t in texts]
        if len(got) != len(texts):
            raise RuntimeError(f"reference_extract returned {len(got)} concept sets for {len(texts)} captions")
        self._captions.update(zip(texts, got))

    def reference(self, sample: Sample) -> JudgeReference:
        """``reference_for`` the sample, its dense reference caption (if judged against one) read once per metric."""
        self._read_captions([sample])
        return reference_for(sample, self._captions.__getitem__ if self.reference_extract is not None else None)

    def update(self, item: ScoringItem) -> ItemResult:
        return self._judged(self._with_own_claims([item])[0])

    def _with_image(self, reference: JudgeReference, item: ScoringItem) -> JudgeReference:
        """The reference with the item's image, for a judge that looks at it."""
        if self.needs_image and item.image is not None:
            reference.image, reference.image_sha256 = item.image, item.sample.image_sha256
        return reference

    def _judged(self, item: ScoringItem, reference: JudgeReference | None = None) -> ItemResult:
        """``reference``: the item's, when the caller already built it (``self.reference``)."""
        image = image_group(item.sample)
        empty = {"n_triplets": 0.0, "hallucinated": 0.0, "object": 0.0, "relation": 0.0,
                 "prediction_error": 0.0, "unparseable": 0.0, "unverifiable": 0.0, "inference": 0.0,
                 "image": image}
        values = {k: v for k, v in empty.items() if k != "image"}
        evidence: dict[str, Any] = {"judge": self.judge.name, "triplets": []}
        if item.mentioned is None:
            return ItemResult(empty, values, evidence,
                              "no concepts were extracted for this response; run concept extraction first")
        reference = reference or self._with_image(self.reference(item.sample), item)
        evidence["reference"] = reference.source
        if not reference.scope.closed:
            evidence["scope"] = reference.scope.describe()
        # An object list (even an empty one: nothing of its vocabulary is there) settles what its vocabulary names.
        if reference.is_empty() and not (self.needs_image and reference.image is not None):
            if reference.source in (CAPTION_SOURCE, CAPTIONS_SOURCE):
                why = f"the reference caption of sample {item.sample.id} gave no concepts to judge against"
            elif self.reference_extract is not None:
                why = (f"sample {item.sample.id} has no scene graph, no gold triplets and no reference caption "
                       "to judge against")
            else:
                why = f"sample {item.sample.id} has no scene graph and no gold triplets to judge against"
            return ItemResult(empty, values, evidence, why)
        qualified = claims_with_qualifiers(item.mentioned, self.existence_claims)
        claims = [(t, span) for t, span, _ in qualified]
        if not claims:
            return ItemResult(empty, values, evidence,
                              "no triplets in the response (empty, or nothing the extractor could parse); "
                              "Hallu_Q skips this question")
        guesses = speculative_spans(item.response)
        # A claim ends where its last part is said ("a game, possibly on a console": the console is guessed).
        reference.speculative = frozenset(i for i, (_, span) in enumerate(claims)
                                          if span and any(a < span[1] <= b for a, b in guesses))
        bounds = sentence_spans(item.response)
        reference.sentences = tuple(next((k for k, (a, b) in enumerate(bounds) if a <= span[0] < b), -1) if span else -1
                                    for _, span in claims)
        reference.qualifiers = tuple(q for _, _, q in qualified)
        judgements = self.judge.judge([t for t, _ in claims], reference)
        if len(judgements) != len(claims):
            raise RuntimeError(f"judge {self.judge.name} returned {len(judgements)} verdicts for "
                               f"{len(claims)} triplets of {item.response_id}")
        counts: dict[str, float] = defaultdict(float)
        weights = [self.hallucination_weight(j.verdict, reference.scope.closed) for j in judgements]
        for j, weight in zip(judgements, weights):
            counts[j.verdict] += 1
            if weight and j.verdict not in HALLUCINATION_VERDICTS:
                # Unverifiable claims weigh as the judge's policy says: a thing the references may lack as an object
                # hallucination, an attribute, number or relation they do not give as a relation one.
                counts["object" if j.kind == "object" else "relation"] += weight
        stats = {"n_triplets": float(len(claims)), "hallucinated": float(sum(weights)),
                 "object": counts["object"], "relation": counts["relation"],
                 "prediction_error": counts["prediction_error"], "unparseable": counts["unparseable"],
                 "unverifiable": counts["unverifiable"], "inference": counts["inference"], "image": image}
        evidence["triplets"] = [{"triplet": list(j.triplet), "span": list(span) if span else None,
                                 "verdict": j.verdict, "kind": j.kind, "hallucinated": weight >= 1.0,
                                 **({"weight": weight} if 0 < weight < 1 else {}), "score": j.score,
                                 "reason": j.reason, **_judged_by(j)}
                                for j, weight, (_, span) in zip(judgements, weights, claims)]
        return ItemResult(stats, {k: v for k, v in stats.items() if k != "image"}, evidence)

    def update_many(self, items: Sequence[ScoringItem]) -> list[ItemResult]:
        """``update`` for each item, after letting the judge pre-encode all their phrases in one go."""
        items = self._with_own_claims(items)
        # The batch's dense reference captions read at once (each once, however many responses it has); then each
        # item's reference built once for the warm-up and the verdicts.
        self._read_captions([i.sample for i in items if i.mentioned is not None])
        references = [self._with_image(self.reference(i.sample), i) if i.mentioned is not None else None
                      for i in items]
        warm = getattr(self.judge, "warm", None)
        if warm is not None:
            warm([([t for t, _ in response_claims(i.mentioned, self.existence_claims)], ref)
                  for i, ref in zip(items, references) if ref is not None])
        return [self._judged(i, ref) for i, ref in zip(items, references)]

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        questions = [s for s in stats if s.get("n_triplets", 0) > 0]
        out: dict[str, float] = {"questions": float(len(questions)),
                                 "questions_skipped": float(len(stats) - len(questions))}
        if not questions:
            return out
        for suffix, key in (("", "hallucinated"), ("_object", "object"), ("_relation", "relation")):
            out[f"hallu_q{suffix}"] = _rates(questions, key)  # type: ignore[assignment]
        out["prediction_error_q"] = _rates(questions, "prediction_error")  # type: ignore[assignment]
        # With inferences: claims about what is not seen that no gold triplet supports, counted as hallucinated.
        strict = [dict(s, hallucinated=s["hallucinated"] + s.get("inference", 0.0)) for s in questions]
        out["hallu_q_with_inference"] = _rates(strict, "hallucinated")  # type: ignore[assignment]
        out["inference_share"] = 100.0 * sum(s.get("inference", 0.0) for s in questions) / sum(
            s["n_triplets"] for s in questions)
        out["unparseable_share"] = 100.0 * sum(s["unparseable"] for s in questions) / sum(
            s["n_triplets"] for s in questions)
        by_image: dict[float, list[dict[str, float]]] = defaultdict(list)
        for s in questions:
            by_image[s.get("image", 0.0)].append(s)
        out["images"] = float(len(by_image))
        for suffix, key in (("", "hallucinated"), ("_object", "object"), ("_relation", "relation")):
            per_image = [_rates(rows, key) for rows in by_image.values()]
            out[f"hallu_i{suffix}"] = sum(per_image) / len(per_image)  # type: ignore[arg-type]
        return out
