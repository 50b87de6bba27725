"""The shape every metric shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from ..model import ConceptSet, Sample


@dataclass
class ScoringItem:
    """Everything a metric may look at for one response."""

    response_id: str
    response: str
    sample: Sample
    mentioned: ConceptSet | None = None  # concepts extracted from the response (with spans)
    signals: dict[str, Any] = field(default_factory=dict)  # log-probabilities, entropy ... from the run
    image: bytes | None = None  # the sample's image, handed only to metrics whose judge looks at it (``needs_image``)


@dataclass
class ItemResult:
    """One item's sufficient statistics, displayable values and evidence.

    ``stats`` are what ``compute`` sums or averages (counts, per-item values);
    ``values`` are the per-item numbers shown in tables; ``undefined_reason`` says
    why the metric has no value for this item (empty response, empty reference ...).
    """

    stats: dict[str, float]
    values: dict[str, Any]
    evidence: dict[str, Any] = field(default_factory=dict)
    undefined_reason: str | None = None


def reads_concepts(metric: Any) -> bool:
    """Whether ``metric`` reads ``ScoringItem.mentioned`` (``MetricSpec.reads_concepts``; without a spec it does):
    scoring extracts a response's concepts only for such metrics, and hands the others ``mentioned`` None."""
    return bool(getattr(getattr(metric, "spec", None), "reads_concepts", True))


def needs_image(metric: Any) -> bool:
    """Whether ``metric`` (as configured: an image judge) looks at the image: scoring then loads it into
    ``ScoringItem.image``; no other metric pays for reading images."""
    return bool(getattr(metric, "needs_image", False))


def not_applicable(metric: Any, sample: Sample) -> str | None:
    """Why ``metric`` does not apply to ``sample``: the metric's own answer where it has one (a configured image
    judge applies where a reference is missing), else its spec's; a metric with neither applies."""
    own = getattr(metric, "not_applicable", None)
    if callable(own):
        return own(sample)  # type: ignore[no-any-return]
    spec = getattr(metric, "spec", None)
    return spec.not_applicable(sample) if spec is not None else None


class Metric(Protocol):
    name: str

    def config(self) -> dict[str, Any]:
        """The settings that shape this metric's numbers (part of the score's config key)."""

    def update(self, item: ScoringItem) -> ItemResult:
        """Score one item."""

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        """Aggregate per-item statistics into the metric's corpus-level numbers."""
