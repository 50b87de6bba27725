"""HalFscore (PerturboLLaVA §3, eq. 1–3): concept-level precision, recall and F of a dense caption.

The response's and the reference's concepts form two concept graphs (nodes:
objects, with their attributes; edges: relations). A response concept that matches
no reference concept of its kind is *hallucinated*; a reference concept no response
concept matches is *omitted*. As the paper's matching prompt (A.8) asks, an
attribute or relation that involves a hallucinated object is not counted again
(it stays in the denominator). Then

    precision = 1 − |hallucinated| / |generated|      (eq. 1; the released code calls it
    recall    = 1 − |omitted| / |reference|            "hallucination_score")
    F         = 2 P R / (P + R)                        (eq. 3)

per response, and over a corpus micro-averaged over summed counts as the released
code does (``precision``, ``recall``, ``f``), with the per-response means beside
(``*_macro``), and per-type hallucination ratios (object / attribute / relation).

Worked example. Response A: 4 concepts, 1 hallucinated; reference 5 concepts, 2
omitted → P = 0.75, R = 0.6, F = 0.667. Response B: 1 concept, 1 hallucinated;
reference 5, 5 omitted → P = 0, R = 0, F = 0. Micro: P = 1 − 2/5 = 0.6,
R = 1 − 7/10 = 0.3, F = 0.4. Macro: P = 0.375, R = 0.3, F = 0.333.

Counts are concepts of their own ("two dogs" is the count concept (dog, 2)); a reference
object the scene graph has two or more of gives one.

Matchers (``scoring.halfscore_matcher``): ``GraphConceptMatcher`` (the offline default,
``concept_matching.py``: concepts grounded on the reference's scene graph with the
lexicon, as the graph judge does), ``EmbeddingConceptMatcher`` (cosine ≥
``halfscore_match_threshold`` between same-kind concept phrases) and ``LLMConceptMatcher``
(the A.8 prompt).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from ..concepts import KINDS, Concept, ConceptMatcher, MatchOutcome, absorb, concept_list, concept_spans, pointer
from ..reference_scope import Scope
from ..judges.base import PhraseEncoder, unit_rows
from ..llm.dispatch import list_answer_tokens
from ..model import ConceptSet, Sample
from .base import ItemResult, ScoringItem
from . import halfscore_image as by_image
from .reference_concepts import open_world_concepts
from .halfscore_evidence import evidence_rows, flagged_spans
from .spec import MetricSpec, Number, as_number

if TYPE_CHECKING:
    from ..components import Components
    from ..config import Settings
    from ..llm import LLMClient, LLMRequest

MATCHERS: tuple[str, ...] = ("graph", "embedding", "llm")


class EmbeddingConceptMatcher:
    """Offline matching: a concept matches when its phrase has cosine ≥ ``threshold`` to a same-kind phrase."""

    name = "embedding"

    def __init__(self, encoder: PhraseEncoder, *, threshold: float = 0.7, model_name: str = "") -> None:
        self.encoder = encoder
        self.threshold = threshold
        self.model_name = model_name or getattr(encoder, "model_name", type(encoder).__name__)

    def config(self) -> dict[str, Any]:
        return {"matcher": self.name, "model": self.model_name, "threshold": self.threshold}

    def warm(self, pairs: Sequence[tuple[Sequence[Concept], Sequence[Concept]]]) -> None:
        """Encode many items' concept phrases in one call (a caching encoder then answers from memory)."""
        texts = list(dict.fromkeys(c.text() for response, reference in pairs for c in (*response, *reference)))
        if texts:
            self.encoder.encode(texts)

    def _best(self, a: list[Concept], b: list[Concept]) -> list[tuple[Concept | None, float]]:
        if not a:
            return []
        if not b:
            return [(None, 0.0)] * len(a)
        sims = unit_rows(self.encoder.encode([c.text() for c in a])) @ unit_rows(
            self.encoder.encode([c.text() for c in b])).T
        return [(b[int(np.argmax(r))], float(np.max(r))) for r in sims]

    def match(self, response: list[Concept], reference: list[Concept]) -> MatchOutcome:
        out = MatchOutcome()
        hallucinated: list[Concept] = []
        omitted: list[Concept] = []
        for kind in KINDS:
            resp = [c for c in response if c.kind == kind]
            ref = [c for c in reference if c.kind == kind]
            for c, (partner, sim) in zip(resp, self._best(resp, ref)):
                if partner is not None and sim >= self.threshold:
                    out.matched.append((c, partner, sim))
                else:
                    hallucinated.append(c)
            omitted += [c for c, (p, sim) in zip(ref, self._best(ref, resp)) if p is None or sim < self.threshold]
        out.hallucinated, out.omitted = absorb(hallucinated), absorb(omitted)
        return out


PROMPT_VERSION = "halfscore-a8-1"

_ANALYZE = """-Goal-
Given two lists of objects, attributes, and relationships extracted from a ground truth (GT) caption and a \
Vision-Language Model (VLM) caption - both numbered - compare the VLM list to the GT list to identify any \
incorrect objects, attributes, or relationships in the VLM caption. An incorrect object, attribute, or \
relationship (hallucination) is one that does not correspond to any in the GT list. Use your language \
understanding to assess whether objects, attributes, and relationships convey the same meaning, even if \
expressed differently.

For objects: an object in the VLM list that does not exist in the GT list (considering synonyms) is incorrect; \
it counts once however often it appears.
For attributes: each attribute of a matching object that is not present in the GT list is incorrect.
For relationships: a relationship between correct objects that is new or significantly different is \
incorrect; a relationship involving an incorrect object does not count separately.

Answer with one line: "Incorrect Serial Numbers: " followed by the serial numbers from the VLM list, in \
numerical order, separated by commas (or "none").

GT List:
{gt}

VLM List:
{vlm}"""

_SERIALS = re.compile(r"incorrect serial numbers\s*:?\s*([0-9,\s]*|none)", re.IGNORECASE)


def a8_entry(c: Concept) -> str:
    """A concept in the A.8 list format."""
    if c.kind == "object":
        return f'("NODE":{c.parts[0].upper()})'
    if c.kind == "attribute":
        return f'("NODE":{c.parts[0].upper()}||"EDGE":is||"NODE":{c.parts[1]})'
    if c.kind == "count":
        return f'("NODE":{c.parts[0].upper()}||"EDGE":is||"NODE":{c.number_word()})'
    return f'("NODE":{c.parts[0].upper()}||"NODE":{c.parts[2].upper()}||"EDGE":{c.parts[1]})'


def parse_serials(answer: str, n: int) -> list[int]:
    """The 1-based serial numbers of "Incorrect Serial Numbers: 2, 5"; ``ValueError`` if absent or out of range."""
    m = _SERIALS.search(answer)
    if m is None:
        raise ValueError(f"no 'Incorrect Serial Numbers' line in: {answer[:200]!r}")
    if m.group(1).strip().lower() in ("", "none"):
        return []
    nums = sorted({int(x) for x in re.findall(r"\d+", m.group(1))})
    if any(not 1 <= k <= n for k in nums):
        raise ValueError(f"serial numbers {nums} outside 1..{n}")
    return nums


SERIALS_SCHEMA: dict[str, Any] = {
    "type": "object", "properties": {"incorrect_serial_numbers": {"type": "array", "items": {"type": "integer"}}},
    "required": ["incorrect_serial_numbers"], "additionalProperties": False}


def read_serials(value: Any, n: int) -> list[int]:
    """The structured twin of ``parse_serials``: ``{"incorrect_serial_numbers": [2, 5]}``."""
    nums = value.get("incorrect_serial_numbers") if isinstance(value, dict) else None
    if not isinstance(nums, list) or not all(isinstance(k, int) and not isinstance(k, bool) for k in nums):
        raise ValueError(f"expected {{'incorrect_serial_numbers': [integers]}}, got {str(value)[:160]!r}")
    if any(not 1 <= k <= n for k in nums):
        raise ValueError(f"serial numbers {sorted(set(nums))} outside 1..{n}")
    return sorted(set(nums))


class LLMConceptMatcher:
    """The A.8 hallucination-analysis prompt; omissions by the same prompt with the lists swapped."""

    name = "llm"

    def __init__(self, client: "LLMClient", *, prompt_version: str = PROMPT_VERSION) -> None:
        self.client = client
        self.prompt_version = prompt_version

    def config(self) -> dict[str, Any]:
        return {"matcher": self.name, "llm": self.client.name, "prompt_version": self.prompt_version}

    def _request(self, candidate: list[Concept], truth: list[Concept], namespace: str) -> "LLMRequest":
        from ..llm import LLMRequest

        listing = lambda cs: "\n".join(f"{i}. {a8_entry(c)}" for i, c in enumerate(cs, 1))  # noqa: E731
        prompt = _ANALYZE.format(gt=listing(truth) or "(empty)", vlm=listing(candidate))
        # An answer without readable serial numbers, or cut at its cap (finish_reason "length"), is an
        # LLMAnswerError and is not cached. The cap grows with the list: one serial number per entry at most.
        return LLMRequest([{"role": "user", "content": prompt}], namespace, self.prompt_version,
                          json_schema=SERIALS_SCHEMA, params={"max_tokens": list_answer_tokens(len(candidate))},
                          check=lambda value: read_serials(value, len(candidate)),
                          lenient=lambda answer: parse_serials(answer, len(candidate)))

    def match(self, response: list[Concept], reference: list[Concept]) -> MatchOutcome:
        """Both questions asked side by side; an unusable answer to either fails the item (``LLMError``) after
        both were asked, so the next pass asks only the one that failed (the other is cached)."""
        asks = [(candidate, self._request(candidate, truth, namespace))
                for candidate, truth, namespace in ((response, reference, "halfscore.hallucinated"),
                                                    (reference, response, "halfscore.omitted")) if candidate]
        answers = self.client.complete_many([request for _, request in asks])
        failed = [a for a in answers if isinstance(a, BaseException)]
        if failed:
            raise failed[0]
        found = {request.namespace: [candidate[k - 1] for k in serials] for (candidate, request), serials
                 in zip(asks, answers)}
        hallucinated, omitted = found.get("halfscore.hallucinated", []), found.get("halfscore.omitted", [])
        wrong = set(hallucinated)
        return MatchOutcome(hallucinated, omitted, [(c, None, None) for c in response if c not in wrong])


# --------------------------------------------------------------------------- reference concepts

def reference_concepts(sample: Sample, extract: Callable[[str], ConceptSet] | None = None) -> ConceptSet | None:
    """The reference side: the scene graph's concepts where the sample has one, else the dense caption's
    (through ``extract``), as every other reference in HalluStudio (``metrics.reference_concepts``).

    A sample with both (the sample benchmark's photos) was compared with its caption, which is silent on
    much its graph holds ("the mission patch is on the spacesuit", the cat's forehead): what a describer
    truthfully said of the graph was then counted as hallucinated. The graph is the annotation of record.
    Returns None when the sample has neither (the metric then says why it is undefined).
    """
    if not sample.scene_graph.is_empty():
        return ConceptSet.from_scene_graph(sample.scene_graph)
    captions = sample.reference_captions
    if (captions and extract is not None) or (not captions and sample.reference_objects):
        return open_world_concepts(sample, extract)
    if captions:
        raise ValueError(f"sample {sample.id} has only a reference caption: HalFscore needs an extractor "
                         "to turn it into concepts (reference_concepts(sample, extractor.extract))")
    return None


def _prf(hallucinated: float, generated: float, omitted: float, reference: float
         ) -> tuple[float | None, float | None, float | None]:
    p = 1.0 - hallucinated / generated if generated else None
    r = 1.0 - omitted / reference if reference else None
    if p is None or r is None:
        return p, r, None
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def build_matcher(settings: "Settings", matcher: str | None = None, *,
                  components: "Components | None" = None) -> ConceptMatcher:
    """The configured concept matcher: ``matcher`` or ``scoring.halfscore_matcher`` (graph by default), its encoder
    or LLM client asked of ``components`` (built from ``settings`` when not given)."""
    from ..components import Components

    sc = settings.scoring
    name = matcher or sc.halfscore_matcher
    parts = components if components is not None else Components(settings)
    if name == "graph":
        from ..concept_matching import GraphConceptMatcher

        return GraphConceptMatcher(parts.encoder(), grounding_threshold=sc.graph_grounding_threshold,
                                   model_name=sc.embedding_identity)
    if name == "embedding":
        return EmbeddingConceptMatcher(parts.encoder(), threshold=sc.halfscore_match_threshold,
                                       model_name=sc.embedding_identity)
    if name == "llm":
        return LLMConceptMatcher(parts.llm_client())
    raise ValueError(f"unknown HalFscore matcher {name!r}; choose one of {', '.join(MATCHERS)}")


def _one_minus_precision(values: Mapping[str, Any]) -> float | None:
    precision = as_number(values.get("precision"))
    return None if precision is None else 1.0 - precision


class HalFscoreMetric:
    spec = MetricSpec(
        "halfscore", "HalFscore", tasks=("caption", "vqa"),
        headline=Number("f", "F", "0–1", lower_is_better=False,
                        plain="0 to 1: how well a description's things match the image's (1 = all true, none "
                              "missed)",
                        meaning="balance of concept precision (1 − hallucinated share) and recall (1 − omitted "
                                "share), over the summed counts of a model's answers.",
                        misleads="recall follows answer length; against a scene graph, omissions the graph lacks "
                                 "are invisible."),
        summary=("precision", "recall"),
        item=Number("f", "F", "0–1", lower_is_better=False, meaning="this answer's F."),
        higher_is_better_values=frozenset({"precision", "recall", "f", "matched"}), flagged_spans=flagged_spans,
        evidence_rows=evidence_rows, panel="concept_match",
        hallucination_scores=(Number("precision", "halfscore 1-precision", "share", lower_is_better=True,
                                     meaning="HalFscore: 1 - concept precision", derive=_one_minus_precision),),
        demo=True,
        settings=("scoring.halfscore_matcher", "scoring.halfscore_match_threshold",
                  "scoring.graph_grounding_threshold", "scoring.unverifiable", "scoring.unverifiable_weight",
                  "scoring.embedding_model", "llm.model", "scoring.vlm_judge_model", "scoring.vlm_judge_template",
                  "scoring.vlm_judge_unsettled"))
    name = spec.name

    def __init__(self, matcher: ConceptMatcher,
                 reference: Callable[[Sample], ConceptSet | None] = reference_concepts, *,
                 unverifiable: str = "scene-graph", unverifiable_weight: float = 0.1, image_judge: Any = None) -> None:
        self.matcher = matcher
        # The image judge for what the reference leaves unverifiable, and for precision with no reference at all
        # (``metrics.halfscore_image``); None: the reference alone.
        self.image_judge = image_judge
        self.reference = reference
        # How what the reference neither confirms nor contradicts counts (``scoring.unverifiable``): against a
        # complete scene graph A.8 counts its silence as hallucinated; against open-world references it is left out.
        self.unverifiable = unverifiable
        self.unverifiable_weight = unverifiable_weight
        self._reference_cache: dict[str, list[Concept]] = {}

    @classmethod
    def from_settings(cls, settings: "Settings", *, matcher: str | None = None, components: "Components | None" = None,
                      extract: Callable[[str], ConceptSet] | None = None) -> "HalFscoreMetric":
        """``matcher``: graph, embedding or llm; by default ``scoring.halfscore_matcher`` (graph), built from
        ``components``.

        ``extract`` turns a sample's dense reference caption into concepts (the pipeline's extractor).
        """
        from ..components import Components

        parts = components if components is not None else Components(settings)
        built = build_matcher(settings, matcher, components=parts)
        return cls(built, lambda sample: reference_concepts(sample, extract), unverifiable=settings.scoring.unverifiable,
                   unverifiable_weight=settings.scoring.unverifiable_weight,
                   image_judge=parts.unsettled_image_judge())

    def config(self) -> dict[str, Any]:
        image = {"image_judge": self.image_judge.config()} if self.image_judge is not None else {}
        return {"metric": self.name, **self.matcher.config(), "unverifiable": self.unverifiable,
                "unverifiable_weight": self.unverifiable_weight, **image}

    @property
    def needs_image(self) -> bool:
        return self.image_judge is not None

    def _image(self, item: ScoringItem) -> bytes | None:
        return item.image if self.image_judge is not None else None

    def _counted_as_hallucinated(self, outcome: MatchOutcome) -> list[Concept]:
        """The hallucinated concepts as the ``unverifiable`` policy counts them: silence against a complete graph
        (A.8's count) unless "ignore"; what open-world references cannot settle only with "hallucination"."""
        out = list(outcome.hallucinated)
        if self.unverifiable == "ignore":
            silent = set(outcome.silent)
            out = [c for c in out if c not in silent]
        if self.unverifiable == "hallucination":
            out += [c for c in outcome.unverifiable if c not in out]
        return out

    def _unverifiable_weight(self, outcome: MatchOutcome) -> float:
        """What each of ``outcome.unverifiable`` adds to the hallucinated count: ``unverifiable_weight`` under the
        default policy (they are what open-world references cannot settle), else nothing (counted whole or not)."""
        return self.unverifiable_weight if self.unverifiable == "scene-graph" else 0.0

    def _reference(self, sample: Sample) -> list[Concept]:
        if sample.id not in self._reference_cache:
            cs = self.reference(sample)
            self._reference_cache[sample.id] = concept_list(cs, sample.scene_graph) if cs is not None else []
        return self._reference_cache[sample.id]

    def update(self, item: ScoringItem) -> ItemResult:
        reference = self._reference(item.sample)
        response = concept_list(item.mentioned) if item.mentioned is not None else []
        stats: dict[str, float] = {}
        for kind in KINDS:
            stats[f"generated_{kind}"] = float(sum(c.kind == kind for c in response))
            stats[f"reference_{kind}"] = float(sum(c.kind == kind for c in reference))
            stats[f"hallucinated_{kind}"] = stats[f"omitted_{kind}"] = 0.0
        evidence: dict[str, Any] = {"matcher": self.matcher.name, "hallucinated": [], "omitted": [], "matched": []}
        scope = Scope.of_sample(item.sample)
        if not scope.closed:  # what the reference was read as (short captions, a dense description, an object list)
            evidence["scope"] = scope.describe()
        empty_values = {"precision": None, "recall": None, "f": None, "matched": 0, "hallucinated": 0, "omitted": 0}
        image_only = not reference and item.sample.reference_objects is None
        if image_only and (self._image(item) is None or item.mentioned is None):
            zero = {k: 0.0 for k in stats}
            return ItemResult(zero, empty_values, evidence,
                              f"sample {item.sample.id} has no reference concepts (no scene graph, no caption)")
        if item.mentioned is None:
            zero = {k: 0.0 for k in stats}
            return ItemResult(zero, empty_values, evidence,
                              "no concepts were extracted for this response; run concept extraction first")
        image_rows: list[dict[str, Any]] = []
        if not response:
            outcome = MatchOutcome(omitted=list(reference))
        elif image_only:
            outcome, image_rows = by_image.image_only(self.image_judge, response, item.image,  # type: ignore[arg-type]
                                                      item.sample.image_sha256)
        elif getattr(self.matcher, "uses_scene_graph", False):
            # Which objects each edge joins (several cubes): only the scene graph itself says; what the reference can
            # settle (a complete graph; open-world captions and object lists): its scope.
            outcome = self.matcher.match(response, reference, scene_graph=item.sample.scene_graph, scope=scope)
        else:
            outcome = self.matcher.match(response, reference)
        if outcome.unverifiable and self._image(item) is not None:
            image_rows = by_image.settle_unverifiable(self.image_judge, outcome, item.image,  # type: ignore[arg-type]
                                                      item.sample.image_sha256)
        for c in outcome.ignored:
            stats[f"generated_{c.kind}"] -= 1.0
        hallucinated = self._counted_as_hallucinated(outcome)
        for c, n in Counter(c.kind for c in hallucinated).items():
            stats[f"hallucinated_{c}"] = float(n)
        for c, n in Counter(c.kind for c in outcome.omitted).items():
            stats[f"omitted_{c}"] = float(n)
        weight = self._unverifiable_weight(outcome)
        for c, n in Counter(c.kind for c in outcome.unverifiable).items():
            stats[f"unverifiable_{c}"] = float(n)
            stats[f"hallucinated_{c}"] += weight * n
        stats["matched"] = float(len(outcome.matched))
        total = {k: sum(stats[f"{k}_{kind}"] for kind in KINDS)
                 for k in ("generated", "reference", "hallucinated", "omitted")}
        p, r, f = _prf(total["hallucinated"], total["generated"], total["omitted"], total["reference"])
        values = {"precision": p, "recall": r, "f": f, "matched": len(outcome.matched),
                  "hallucinated": len(hallucinated), "omitted": int(total["omitted"])}
        spans = concept_spans(item.mentioned)
        evidence.update(
            hallucinated=[c.to_list() for c in hallucinated],
            hallucinated_spans=[pointer(c, spans.get(c), item.response) for c in hallucinated],
            omitted=[c.to_list() for c in outcome.omitted],
            matched=[[c.to_list(), ref.to_list() if ref else None, sim] for c, ref, sim in outcome.matched])
        if outcome.reasons:
            evidence["reasons"] = {"hallucinated": [outcome.reasons.get(c) for c in hallucinated],
                                   "omitted": [outcome.reasons.get(c) for c in outcome.omitted]}
        if outcome.ignored:
            evidence["ignored"] = [c.to_list() for c in outcome.ignored]
        if outcome.unverifiable:
            evidence["unverifiable"] = [c.to_list() for c in outcome.unverifiable]
            evidence["unverifiable_spans"] = [pointer(c, spans.get(c), item.response) for c in outcome.unverifiable]
            evidence.setdefault("reasons", {})["unverifiable"] = [outcome.reasons.get(c) for c in outcome.unverifiable]
            values["unverifiable"] = len(outcome.unverifiable)
        if image_rows:
            evidence.update(judge=self.image_judge.name, image_verdicts=image_rows)  # type: ignore[union-attr]
        reason = None if response else "the response has no concepts: precision is undefined, recall counts all as omitted"
        return ItemResult(stats, values, evidence, by_image.NO_REFERENCE_RECALL if image_only and response else reason)

    def update_many(self, items: Sequence[ScoringItem]) -> list[ItemResult]:
        """``update`` for each item, after the matcher pre-encodes what it will compare, at once.

        A matcher's ``warm`` takes the (response, reference) concept lists of every item.
        """
        warm = getattr(self.matcher, "warm", None)
        if warm is not None:
            pairs: list[tuple[list[Concept], list[Concept]]] = []
            for item in items:
                try:
                    reference = self._reference(item.sample)
                except ValueError:
                    continue  # update() reports it for that item
                pairs.append((concept_list(item.mentioned) if item.mentioned is not None else [], reference))
            warm(pairs)
        return [self.update(item) for item in items]

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        def total(prefix: str, kinds: Sequence[str] = KINDS) -> float:
            return sum(s.get(f"{prefix}_{k}", 0.0) for s in stats for k in kinds)

        out: dict[str, float] = {}
        p, r, f = _prf(total("hallucinated"), total("generated"), total("omitted"), total("reference"))
        for key, value in (("precision", p), ("recall", r), ("f", f)):
            if value is not None:
                out[key] = value
        per_item = []
        for s in stats:
            g = {k: sum(s.get(f"{k}_{kind}", 0.0) for kind in KINDS)
                 for k in ("generated", "reference", "hallucinated", "omitted")}
            if g["reference"]:
                per_item.append(_prf(g["hallucinated"], g["generated"], g["omitted"], g["reference"]))
        for i, key in enumerate(("precision_macro", "recall_macro", "f_macro")):
            defined = [t[i] for t in per_item if t[i] is not None]
            if defined:
                out[key] = sum(defined) / len(defined)
        for kind in KINDS:
            generated = total("generated", [kind])
            if generated:
                out[f"hallucination_ratio_{kind}"] = total("hallucinated", [kind]) / generated
        out["responses"] = float(len(stats))
        return out
