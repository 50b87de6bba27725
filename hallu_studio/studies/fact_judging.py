"""A metric the settings configure, on single atomic facts as people labelled them (FaithScore's stage 2).

A fact ("There is a ramp.", "The shirt is green.") is read exactly as a response is when it is scored: the
pipeline's concept extractor gives its claims, and the metric (its judge, its own claim extraction where set,
its reference rules) judges them against the fact's sample. How a fact's verdict (accurate, hallucinated, not
settled) follows from the metric's result is the metric's own (its spec's ``fact_reading``): Tri-HE reads its
claims' verdicts, CHAIR (the baseline beside the judge) the objects it finds. A fact a metric cannot settle, or
a sample it does not apply to, is reported as coverage, never as an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Hashable, Sequence

from ..metrics.base import ScoringItem, needs_image, not_applicable
from ..metrics.keys import metric_config_key
from ..metrics.registry import METRIC_NAMES, make_extractor, make_metrics, metric_spec
from ..model import Sample
from ..metrics.spec import NOT_SETTLED

if TYPE_CHECKING:
    from ..config import Settings
    from ..store import Store



@dataclass(frozen=True)
class FactJudgement:
    verdict: str  # accurate | hallucinated | not settled
    reason: str = ""
    triplets: list[dict[str, Any]] = field(default_factory=list)  # the claims as the Tri-HE evidence lists them


def fact_metrics() -> list[str]:
    """The metrics that judge single facts (spec ``fact_reading``), in the registry's order."""
    return [m for m in METRIC_NAMES if metric_spec(m).fact_reading is not None]


class FactJudge:
    """A metric the settings configure (Tri-HE's judge by default, or CHAIR) and the pipeline's concept
    extractor, applied to fact texts."""

    def __init__(self, settings: "Settings", store: "Store | None" = None, extractor: Any = None,
                 metric: str | None = None, images: Callable[[Sample], bytes | None] | None = None) -> None:
        metric = metric or fact_metrics()[0]
        if metric not in fact_metrics():
            raise ValueError(f"facts are judged by one of {', '.join(fact_metrics())}, not {metric!r}")
        self.settings = settings
        cache = store.cache if store is not None else None
        self.extractor = extractor if extractor is not None else make_extractor(settings, cache)
        self.metric = make_metrics([metric], settings, cache, self.extractor)[0]
        # A sample's image, for a metric whose judge looks at it (the image judge): ``images(sample)`` -> bytes.
        self.images = images

    @property
    def name(self) -> str:
        """The judge's name where the metric has one (Tri-HE's "graph" ...), else the metric's."""
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
            why = not_applicable(self.metric, sample)
            if why is not None:
                out[key] = FactJudgement(NOT_SETTLED, why)
            else:
                todo.append((key, text, sample))
        size = batch_size or self.settings.scoring.batch_size
        for start in range(0, len(todo), size):
            chunk = todo[start:start + size]
            concepts = self.extractor.extract([text for _, text, _ in chunk])
            see = needs_image(self.metric) and self.images is not None
            items = [ScoringItem(f"fact-{i}", text, sample, cs, image=self.images(sample) if see else None)  # type: ignore[misc]
                     for i, ((_, text, sample), cs) in enumerate(zip(chunk, concepts, strict=True))]
            results = self._results(items)
            read = self.metric.spec.fact_reading
            for (key, _, _), result in zip(chunk, results, strict=True):
                if isinstance(result, Exception):  # a judge that could not answer (a server down): not settled
                    out[key] = FactJudgement(NOT_SETTLED, f"the judge failed: {result}")
                    continue
                reading = read(result.values, result.evidence, result.undefined_reason)
                out[key] = FactJudgement(reading.verdict, reading.reason, [dict(c) for c in reading.claims])
        return out

    def _results(self, items: list[ScoringItem]) -> list[Any]:
        """Each item's result, through ``update_many`` where the metric has it; if that fails, one by one, so a
        judge's failure (an image judge's server) fails only its facts."""
        many = getattr(self.metric, "update_many", None)
        if many is not None:
            try:
                return list(many(items))
            except Exception:  # noqa: BLE001 - retried one by one below to find the failing facts
                pass
        out: list[Any] = []
        for item in items:
            try:
                out.append(self.metric.update(item))
            except Exception as exc:  # noqa: BLE001 - this fact's failure, reported as not settled
                out.append(exc)
        return out
