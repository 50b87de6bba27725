"""What a worker of a scoring engine (a local process, a Ray actor) builds once and runs per batch or chunk.

``WorkerSetup`` is what the driver sends (picklable); ``WorkerScorer`` builds the models from it, with the driver's
config keys (so its scores are stored under the same keys), CHAIR's whole-benchmark vocabulary observed on the same
samples as every other worker, torch's threads set to its share of the cores, and a ``RecordingCache`` whose new
entries go back with each output for the driver to write into its cache.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..caching import RecordingCache
from ..components import Components
from ..config import Settings
from ..model import Sample
from .scoring import BatchJob, BatchOutput, BatchScorer, KeptResults, StoreTask, compute_batch, observe_benchmarks, resolve
from .scoring_jsonl import LineScorer, LinesOutput, LinesTask, score_lines

if TYPE_CHECKING:
    from ..extraction.base import ConceptExtractor
    from ..metrics.base import Metric

LinesJob = tuple  # (chunk of (line number, text), the kept results of its lines by key)


def machine_cores() -> int:
    """The cores this process may use (``os.process_cpu_count`` where Python has it)."""
    count = getattr(os, "process_cpu_count", os.cpu_count)()
    return max(1, count or 1)


@dataclass
class WorkerSetup:
    """What a worker builds its scorer from (picklable): the pass's settings, metric names and extractor (None:
    built from the settings), the driver's config keys, the whole benchmarks some metric observes, its threads."""

    settings: Settings
    metrics: list[str]
    extractor: "ConceptExtractor | None"
    keys: dict[str, str]
    concepts_key: str
    benchmarks: dict[str, list[Sample]]
    threads: int
    lines: tuple[Path | None, bool] | None = None  # JSONL chunks: (image root, results kept); None: stored batches

    @classmethod
    def of(cls, task: StoreTask | LinesTask, workers: int) -> "WorkerSetup":
        from ..metrics.registry import METRIC_NAMES

        names = [m if isinstance(m, str) else m.name for m in task.metrics]
        custom = [n for n in names if n not in METRIC_NAMES]
        if custom:
            raise ValueError(f"scoring in workers builds metrics by name; {custom} are not registered metrics "
                             f"(score them with one worker)")
        threads = max(1, machine_cores() // workers)
        if isinstance(task, LinesTask):
            return cls(task.settings, names, task.extractor, {}, "", task.benchmarks, threads,
                       (task.scorer.image_root, task.keeps_results))
        return cls(task.settings, names, task.extractor, dict(task.scorer.keys), task.scorer.concepts_key,
                   task.benchmarks(), threads)


class WorkerScorer:
    """A worker's models, built once, and its scoring of one batch after another."""

    def __init__(self, setup: WorkerSetup) -> None:
        _limit_threads(setup.threads)
        self.cache = RecordingCache()
        parts = Components(setup.settings, self.cache, extractor=setup.extractor).scoring()
        metrics: list["Metric"] = resolve(setup.metrics, parts)
        self.scorer = BatchScorer(metrics, setup.keys, parts.extractor(), setup.concepts_key)
        if setup.lines is not None:
            root, keeps = setup.lines
            kept = KeptResults.for_metrics(self.cache, metrics, parts.extractor()) if keeps else None
            self.line_scorer = LineScorer(parts.extractor(), metrics, kept, root)
        observe_benchmarks(metrics, setup.benchmarks, setup.benchmarks.__getitem__, set())

    def score(self, job: BatchJob | LinesJob) -> BatchOutput | LinesOutput:
        """A stored batch's output, or a JSONL chunk's (given the results kept for its lines)."""
        if isinstance(job, BatchJob):
            self.cache.seed(job.cached)
            output: Any = compute_batch(job, self.scorer)
        else:
            chunk, kept = job
            self.cache.seed(kept)
            output = score_lines(chunk, self.line_scorer)
        output.cache_entries, output.vectors = self.cache.drain()
        return output


def _limit_threads(threads: int) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency; a stripped install still scores
        return
    torch.set_num_threads(threads)


