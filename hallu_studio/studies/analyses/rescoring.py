"""Re-scoring responses in memory, for the analyses that change the text or the extractor.

Nothing here writes to the store: the changed texts are hypothetical, and storing
them would put them on every leaderboard. ``encoder`` / ``extractor`` may be passed
in (tests pass small fakes); by default they are the configured ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ...config import Settings
from ...metrics.base import ScoringItem
from ...metrics.registry import metric_spec
from ...model import ConceptSet, Response, Sample

EMD_KEYS: tuple[str, ...] = ("total", "object", "attribute", "relation")

if TYPE_CHECKING:
    from ...store import Store


@dataclass(frozen=True)
class Answer:
    """A response with its sample and the run's display label."""

    response: Response
    sample: Sample
    model: str


def free_text_answers(store: "Store", runs: Sequence[dict[str, Any]], labels: dict[str, str],
                      limit: int | None = None) -> list[Answer]:
    """Responses of these runs to caption / VQA samples (the ones EMD scores), ``limit`` per run."""
    out = []
    for run in runs:
        responses = list(store.iter_responses(run["id"]))
        samples = store.get_samples(sorted({r.sample_id for r in responses}))
        kept = [r for r in responses if r.sample_id in samples and samples[r.sample_id].task in metric_spec("emd").tasks]
        for r in kept[:limit] if limit else kept:
            out.append(Answer(r, samples[r.sample_id], labels[run["id"]]))
    return out


def default_encoder(settings: Settings, store: "Store | None") -> Any:
    from ...components import Components

    return Components(settings, store.cache if store is not None else None).encoder()


def emd_totals(answers: Sequence[Answer], texts: Sequence[str], encoder: Any, extractor: Any,
               mentioned: Sequence[ConceptSet | None] | None = None, key: str = "total") -> list[float | None]:
    """EMD (``key``: total, object, attribute or relation) of ``texts`` (one per answer, in place of its
    response) against each sample's reference; None where EMD is undefined (one side lacks a type)."""
    if key not in EMD_KEYS:
        raise ValueError(f"EMD value must be one of {EMD_KEYS}, got {key!r}")
    from ...metrics.emd import EMDMetric

    metric = EMDMetric(encoder, extractor)
    items = [ScoringItem(a.response.id, text, a.sample, mentioned[i] if mentioned else None, dict(a.response.signals))
             for i, (a, text) in enumerate(zip(answers, texts))]
    return [r.values.get(key) for r in metric.update_many(items)] if items else []
