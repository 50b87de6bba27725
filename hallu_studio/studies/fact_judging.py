"""The configured Tri-HE judge on single atomic facts, as people labelled them (FaithScore's stage 2).

A fact ("There is a ramp.", "The shirt is green.") is read exactly as a response is when it is scored: the
pipeline's concept extractor gives its claims, and the Tri-HE metric the settings configure (its judge, its
own claim extraction where set, its reference rules) judges them against the fact's sample. The fact's
verdict follows from its claims' verdicts:

- ``hallucinated`` when any claim is an object or relation hallucination, or a prediction error (a claim
  stated in no form by the reference: false as stated);
- ``accurate`` when every claim is supported;
- ``not settled`` otherwise: a claim the judge calls unverifiable or inference (what the reference cannot
  settle), an unparseable answer, a fact with no claim, or a sample Tri-HE cannot judge. Such a fact is
  reported as coverage, never as an error.

The same reading with CHAIR (``metric="chair"``), the baseline beside the judge: a fact is hallucinated when
CHAIR calls an object it mentions hallucinated, accurate when it mentions objects and CHAIR finds them all,
not settled when it mentions none (or CHAIR has no vocabulary for the sample).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Hashable, Sequence

from ..judges.base import HALLUCINATION_VERDICTS
from ..metrics.base import ScoringItem
from ..metrics.keys import metric_config_key
from ..metrics.registry import make_extractor, make_metrics, not_applicable_reason
from ..model import Sample
from .human_agreement import NOT_SETTLED

if TYPE_CHECKING:
    from ..config import Settings
    from ..store import Store

FALSE_AS_STATED: tuple[str, ...] = (*HALLUCINATION_VERDICTS, "prediction_error")
SUPPORTED = "supported"


@dataclass(frozen=True)
class FactJudgement:
    verdict: str  # accurate | hallucinated | not settled
    reason: str = ""
    triplets: list[dict[str, Any]] = field(default_factory=list)  # the claims as the Tri-HE evidence lists them


def fact_verdict(claim_verdicts: Sequence[str]) -> str:
    """A fact's verdict from its claims' Tri-HE verdicts (see the module docstring).

    >>> fact_verdict(["supported", "object"]), fact_verdict(["supported"]), fact_verdict(["supported", "unverifiable"])
    ('hallucinated', 'accurate', 'not settled')
    >>> fact_verdict([])
    'not settled'
    """
    if any(v in FALSE_AS_STATED for v in claim_verdicts):
        return "hallucinated"
    if claim_verdicts and all(v == SUPPORTED for v in claim_verdicts):
        return "accurate"
    return NOT_SETTLED


def chair_fact_verdict(values: dict[str, Any]) -> str:
    """A fact's verdict from CHAIR's values on it.

    >>> chair_fact_verdict({"hallucinated_objects": 1, "mentioned_objects": 2}), chair_fact_verdict(
    ...     {"hallucinated_objects": 0, "mentioned_objects": 1}), chair_fact_verdict({"mentioned_objects": 0})
    ('hallucinated', 'accurate', 'not settled')
    """
    if values.get("hallucinated_objects"):
        return "hallucinated"
    return "accurate" if values.get("mentioned_objects") else NOT_SETTLED


FACT_METRICS: tuple[str, ...] = ("trihe", "chair")


class FactJudge:
    """A metric the settings configure (Tri-HE's judge by default, or CHAIR) and the pipeline's concept
    extractor, applied to fact texts."""

    def __init__(self, settings: "Settings", store: "Store | None" = None, extractor: Any = None,
                 metric: str = "trihe") -> None:
        if metric not in FACT_METRICS:
            raise ValueError(f"facts are judged by one of {FACT_METRICS}, not {metric!r}")
        self.settings = settings
        cache = store.cache if store is not None else None
        self.extractor = extractor if extractor is not None else make_extractor(settings, cache)
        self.metric = make_metrics([metric], settings, cache, self.extractor)[0]

    @property
    def name(self) -> str:
        """The Tri-HE judge's name ("graph" ...) or "chair"."""
        judge = getattr(self.metric, "judge", None)
        return str(getattr(judge, "name", self.metric.name))

    @property
    def config_key(self) -> str:
        """The config key the same metric's scores carry (``metrics.keys.metric_config_key``)."""
        return metric_config_key(self.metric, self.extractor)

    def judge(self, facts: Sequence[tuple[Hashable, str, Sample]], batch_size: int | None = None
              ) -> dict[Hashable, FactJudgement]:
        """``{key: FactJudgement}`` for each ``(key, fact text, sample)``; samples the metric does not apply to
        leave their facts not settled, with the reason."""
        out: dict[Hashable, FactJudgement] = {}
        todo = []
        for key, text, sample in facts:
            why = not_applicable_reason(self.metric.name, sample)
            if why is not None:
                out[key] = FactJudgement(NOT_SETTLED, why)
            else:
                todo.append((key, text, sample))
        size = batch_size or self.settings.scoring.batch_size
        for start in range(0, len(todo), size):
            chunk = todo[start:start + size]
            concepts = self.extractor.extract([text for _, text, _ in chunk])
            items = [ScoringItem(f"fact-{i}", text, sample, cs) for i, ((_, text, sample), cs)
                     in enumerate(zip(chunk, concepts, strict=True))]
            many = getattr(self.metric, "update_many", None)
            results = many(items) if many is not None else [self.metric.update(i) for i in items]
            for (key, _, _), result in zip(chunk, results, strict=True):
                if self.metric.name == "chair":
                    verdict = chair_fact_verdict(result.values)
                    hallucinated = result.evidence.get("hallucinated") or []
                    out[key] = FactJudgement(verdict, result.undefined_reason or (
                        f"not found: {', '.join(hallucinated)}" if hallucinated else ""))
                    continue
                triplets = list(result.evidence.get("triplets") or [])
                verdict = fact_verdict([str(t.get("verdict")) for t in triplets])
                reason = result.undefined_reason or "; ".join(
                    f"{' '.join(map(str, t.get('triplet') or []))}: {t.get('verdict')}" for t in triplets)
                out[key] = FactJudgement(verdict, reason, triplets)
        return out
