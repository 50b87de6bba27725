"""Score responses with metrics: what is missing in the store (a JSONL file statelessly: ``scoring_jsonl``).

In the store, scoring is resumable: a response is scored by a metric only when no score exists for that metric
under its current ``config_key`` (``metrics.keys``). Work goes in batches, each written in ONE transaction
(concept sets, scores, statistics, failures), so an interrupted run keeps every finished batch and nothing
half-written. Concepts are extracted once per response and stored as ``concepts`` scores (with spans); every
metric receives them as ``ScoringItem.mentioned``.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from tqdm import tqdm

from ..caching import RESULTS_NAMESPACE, keep_drained
from ..components import Components
from ..config import Settings
from ..extraction.cached import CachedExtractor
from ..lexicon.wordnet import lexicon_note
from ..llm.dispatch import all_stats, live_progress, stats_since
from ..llm.errors import llm_failure
from ..metrics.base import ItemResult, Metric, ScoringItem, needs_image, not_applicable, reads_concepts
from ..metrics.keys import CONCEPTS, concepts_config_key, key_config, metric_config_key
from ..metrics.registry import check_llm_configured, make_metrics
from ..reference_scope import Scope
from ..model import ConceptSet, Response, Sample, Score, content_key, iter_chunks
from .reports import ScoreReport

if TYPE_CHECKING:
    from ..caching import ScoringCache
    from ..extraction.base import ConceptExtractor
    from ..store import Store


def error_text(exc: BaseException) -> str:
    return llm_failure(exc) or f"{type(exc).__name__}: {exc}"


def _reason(metric: Metric, sample: Sample) -> str | None:
    return not_applicable(metric, sample)  # a metric object made elsewhere (a test's) may have no spec: it applies


def resolve(metrics: Sequence[str | Metric], parts: Components) -> list[Metric]:
    """The metrics named (built from ``parts``, sharing its encoder and extractor) or given."""
    names = [m for m in metrics if isinstance(m, str)]
    built = iter(make_metrics(names, parts.settings, components=parts) if names else [])
    resolved = [next(built) if isinstance(m, str) else m for m in metrics]
    names = [m.name for m in resolved]
    if len(set(names)) != len(names):
        raise ValueError(f"a metric is named twice: {names}")
    if CONCEPTS in names:
        raise ValueError(f"{CONCEPTS!r} is the extractor's score, not a metric")
    return resolved


def lexicon_warnings() -> list[str]:
    """What a scoring pass says of the lexicon it runs with: a warning where it is not the WordNet 3.0 that ships
    with the package (none, or other files from ``$WORDNET_DIR``)."""
    note = lexicon_note()
    return [note] if note else []


def concept_score(response_id: str, key: str, extractor_name: str, concepts: ConceptSet) -> Score:
    values = {"objects": len(concepts.objects), "attributes": len(concepts.attributes),
              "relations": len(concepts.relations)}
    return Score(response_id, CONCEPTS, key, values,
                 {"extractor": extractor_name, "concepts": concepts.to_dict(with_spans=True)})


def scoring_parts(settings: Settings, cache: "ScoringCache | None", extractor: "ConceptExtractor | None",
           components: Components | None) -> Components:
    """What a pass builds its metrics from: ``components`` (given ``settings`` and ``cache``), else new ones over
    ``extractor`` (if given); its ``extractor()`` the pipeline's, each distinct text extracted once and kept in
    the cache (``CachedExtractor``)."""
    if components is None:
        return Components(settings, cache, extractor=extractor).scoring()
    if components.settings is not settings or components.cache is not cache or extractor is not None:
        raise ValueError("scoring: the components given were built from other settings or another cache, "
                         "or an extractor was given beside them")
    return components.scoring()


def _extract(extractor: "ConceptExtractor", texts: list[str], **options: Any) -> list[ConceptSet | BaseException]:
    """Extract a batch at once; if the batch fails, item by item so one bad text fails alone."""
    try:
        got = extractor.extract(texts, **options)
        if len(got) != len(texts):
            raise RuntimeError(f"extractor {extractor.name} returned {len(got)} concept sets for {len(texts)} texts")
        return list(got)
    except Exception:  # noqa: BLE001 - retried one by one below to find the culprit
        out: list[ConceptSet | BaseException] = []
        for text in texts:
            try:
                out.append(extractor.extract([text], **options)[0])
            except Exception as exc:  # noqa: BLE001 - recorded as this item's failure
                out.append(exc)
        return out


def observe_benchmarks(metrics: Sequence[Metric], benchmarks: Iterable[str],
                        samples_of: Callable[[str], Iterable[Sample]], seen: set[str]) -> None:
    """Show each metric that needs a whole benchmark (CHAIR's ``benchmark`` vocabulary) the samples of every
    benchmark in ``benchmarks`` it has not seen yet (``seen``, updated)."""
    needing = [m for m in metrics if getattr(m, "needs_benchmark", False)]
    for name in sorted(set(benchmarks) - seen):
        seen.add(name)
        if needing:
            samples = list(samples_of(name))
            for metric in needing:
                metric.observe_benchmark(name, samples)  # type: ignore[attr-defined]


def _checked(metric: Metric, result: Any) -> ItemResult:
    if not isinstance(result, ItemResult):
        raise TypeError(f"metric {metric.name} returned {type(result).__name__}, not an ItemResult")
    return result


def _score_many(metric: Metric, items: list[ScoringItem]) -> list[ItemResult | BaseException]:
    """Each item's result or exception; through ``update_many`` (batched) when the metric has one.

    If the batched call fails, the items are scored one by one so that only the bad
    ones fail.
    """
    if not items:
        return []
    many = getattr(metric, "update_many", None)
    if many is not None and len(items) > 1:
        try:
            results = list(many(items))
            if len(results) != len(items):
                raise RuntimeError(f"{metric.name}.update_many returned {len(results)} results for {len(items)}")
            return [_checked(metric, r) for r in results]
        except Exception:  # noqa: BLE001 - fall back to one by one to isolate the failing items
            pass
    out: list[ItemResult | BaseException] = []
    for item in items:
        try:
            out.append(_checked(metric, metric.update(item)))
        except Exception as exc:  # noqa: BLE001 - one item's failure is data, not the end of the run
            out.append(exc)
    return out


# --------------------------------------------------------------------------- the scoring loop (store and JSONL)


@dataclass
class Unit:
    """One response to score: its text, its sample, its concepts where they are known (given on a JSONL line;
    None: stored ones are looked up, the others extracted), the metrics still to score it, and its signals."""

    key: str
    text: str
    sample: Sample
    concepts: ConceptSet | None
    metrics: list[Metric]
    signals: dict[str, Any] = field(default_factory=dict)
    record: dict[str, Any] | None = None  # a JSONL line's record: what its results are kept under (``KeptResults``)


@dataclass
class KeptResults:
    """Metric results kept by content between stateless runs (``score --input --cache``), as a store keeps scores,
    under the metric's config key, the line's whole record and what its references were read as (``reference_scope``:
    none kept while a string reference read as dense is read back). Failures are never kept (the next run tries
    them again), nor the results of a metric that reads the whole input (CHAIR's ``benchmark`` vocabulary)."""

    cache: "ScoringCache"
    keys: dict[str, str] = field(default_factory=dict)  # metric name -> config key

    @classmethod
    def for_metrics(cls, cache: "ScoringCache", metrics: Sequence[Metric], extractor: CachedExtractor) -> "KeptResults":
        return cls(cache, {m.name: metric_config_key(m, extractor) for m in metrics
                           if not getattr(m, "needs_benchmark", False)})

    def key(self, metric: Metric, unit: Unit) -> str | None:
        known = unit.record is not None and metric.name in self.keys
        read = Scope.of_sample(unit.sample).describe() if known else ""
        # The image's content where the line names one (an image judge's answer depends on the file, not its path).
        image = [unit.sample.image_sha256] if unit.sample.image_sha256 else []
        return content_key(RESULTS_NAMESPACE, self.keys[metric.name], unit.record, read, *image) if known else None

    def get(self, keys: Sequence[str]) -> dict[str, ItemResult]:
        return {k: ItemResult(**v) for k, v in self.cache.get_many(list(keys)).items()} if keys else {}

    def put(self, results: dict[str, ItemResult]) -> None:
        if results and not self.cache.read_only:
            self.cache.put_many([(k, RESULTS_NAMESPACE, asdict(r)) for k, r in results.items()])


@dataclass
class Outcome:
    """What the loop did with a unit: its concepts (or why they could not be extracted; None when no metric
    needed them), whether they were extracted now, each applicable metric's result or exception, and why each
    other metric does not apply."""

    concepts: ConceptSet | BaseException | None = None
    extracted: bool = False
    results: dict[str, ItemResult | BaseException] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)


def reference_captions(samples: Iterable[Sample]) -> list[str]:
    """The distinct reference captions the metrics read concepts from, of the samples whose reference is text."""
    return list(dict.fromkeys(c for s in samples if Scope.of_sample(s).basis == "reference_text"
                              for c in s.reference_captions))


def _read_references(extractor: CachedExtractor, samples: Iterable[Sample]) -> None:
    """Extract the distinct dense reference captions of ``samples`` in one call before any metric reads them:
    EMD, HalFscore and Tri-HE then find each in the extractor's memory (each caption read once per run; an LLM
    asked once per caption, all in one batch). A failure is left to the metrics: their own read fails the items
    it concerns."""
    captions = reference_captions(samples)
    if captions:
        try:
            extractor.extract(captions)
        except Exception:  # noqa: BLE001 - read again by the metrics, which fail per item
            pass


def score_units(units: Sequence[Unit], extractor: CachedExtractor, *, extract_all: bool = False,
                stored: Callable[[list[str]], dict[str, ConceptSet]] | None = None,
                persist_concepts: bool = True, kept: KeptResults | None = None,
                images: Callable[[Sample], bytes | None] | None = None) -> list[Outcome]:
    """The scoring loop for one batch, for the store and JSONL alike: which metrics apply; the concepts to
    extract (one call); the dense references (one call); then each metric over all its items (``update_many``).

    A unit's concepts are needed when a metric that reads them applies (``extract_all``: always, as a JSONL line
    reports them); ``stored(keys)`` gives those already known, the rest are extracted (``persist_concepts``:
    kept in the extractor's cache too; the store keeps them as ``concepts`` scores instead). ``kept``: results
    kept by an earlier run are read rather than computed, and the new ones (never a failure) kept. ``images(sample)``
    gives a sample's image bytes (or None), read only for metrics that look at it (``metrics.base.needs_image``).
    """
    outcomes = [Outcome(concepts=u.concepts) for u in units]
    applicable: list[list[Metric]] = []
    for unit, outcome in zip(units, outcomes):
        applicable.append([])
        for metric in unit.metrics:
            reason = _reason(metric, unit.sample)
            if reason is None:
                applicable[-1].append(metric)
            else:
                outcome.not_applicable[metric.name] = reason
    need = [i for i, u in enumerate(units) if u.concepts is None and (extract_all or any(map(reads_concepts, applicable[i])))]
    known = stored([units[i].key for i in need]) if stored is not None and need else {}
    for i in need:
        outcomes[i].concepts = known.get(units[i].key)
    need = [i for i in need if outcomes[i].concepts is None]
    if need:
        for i, got in zip(need, _extract(extractor, [units[i].text for i in need], persist=persist_concepts)):
            outcomes[i].concepts, outcomes[i].extracted = got, True
    ready = [i for i in range(len(units)) if applicable[i] and not isinstance(outcomes[i].concepts, BaseException)]
    keys = {(i, m.name): k for i in ready for m in applicable[i] if kept and (k := kept.key(m, units[i]))}
    found = kept.get(list(dict.fromkeys(keys.values()))) if kept else {}
    for (i, name), k in keys.items():
        if k in found:
            outcomes[i].results[name] = found[k]
    _read_references(extractor, [units[i].sample for i in ready  # only where a result is left to compute
                                 if any(m.name not in outcomes[i].results for m in applicable[i])])
    pictures: dict[str, bytes | None] = {}
    for metric in dict.fromkeys(m for i in ready for m in applicable[i]):
        todo = [i for i in ready if metric in applicable[i] and metric.name not in outcomes[i].results]
        if needs_image(metric) and images is not None:
            for i in todo:
                if units[i].sample.id not in pictures:
                    pictures[units[i].sample.id] = images(units[i].sample)
        items = [ScoringItem(units[i].key, units[i].text, units[i].sample, outcomes[i].concepts,  # type: ignore[arg-type]
                             dict(units[i].signals), pictures.get(units[i].sample.id)) for i in todo]
        for i, result in zip(todo, _score_many(metric, items)):
            outcomes[i].results[metric.name] = result
        if kept:  # never a failure
            kept.put({keys[(i, metric.name)]: outcomes[i].results[metric.name] for i in todo if (i, metric.name) in keys
                      and isinstance(outcomes[i].results[metric.name], ItemResult)})
    return outcomes


# --------------------------------------------------------------------------- the store


def score_store(store: "Store", settings: Settings, metrics: Sequence[str | Metric], run_id: str | None = None,
                progress: bool = True, *, extractor: "ConceptExtractor | None" = None,
                batch_size: int | None = None, only: Sequence[str] | None = None,
                on_progress: Callable[[int, int], None] | None = None,
                cancel: threading.Event | None = None, components: Components | None = None,
                engine: Any = None) -> ScoreReport:
    """Score every response (of ``run_id``, or all; or of ``only``) that some metric has not scored yet.

    ``metrics`` are names from ``metrics.registry`` or metric objects. Per-item
    failures are recorded in the store (stage ``score:<metric>``) and reported; they
    never stop the run. ``on_progress(done, total)`` follows each stored batch with the
    responses gone through so far and how many this call has to go through; a set ``cancel``
    stops between batches (what was scored stays, and a later call scores the rest).
    Phrase vectors, LLM answers and the concepts of reference captions are cached in the store
    (``Store.cache``), so a later pass reads them instead of computing them again. ``components`` (the app's,
    built from ``settings`` over ``store.cache``) share their encoder, parser and clients between passes.
    ``engine`` computes the batches (a ``pipelines.engines.Engine``: local worker processes or Ray actors; None:
    this process);
    whichever computes them, this process alone reads and writes the store, one transaction per batch.
    """
    check_llm_configured(settings, [m if isinstance(m, str) else m.name for m in metrics],  # before slow work
                         extraction=extractor is None, reachable=True)
    parts = scoring_parts(settings, store.cache, extractor, components)
    cached = parts.extractor()
    resolved = resolve(metrics, parts)
    keys = {m.name: metric_config_key(m, cached) for m in resolved}
    store.describe_configs({(m.name, keys[m.name]): key_config(m, cached) for m in resolved})
    scorer = BatchScorer(resolved, keys, cached, concepts_config_key(cached))
    done = {m.name: store.scored_response_ids(m.name, keys[m.name]) for m in resolved}
    candidates = store.response_ids(run_id=run_id) if only is None else list(only)
    todo = [rid for rid in candidates if any(rid not in done[m.name] for m in resolved)]
    report = ScoreReport(warnings=lexicon_warnings())
    batches = list(iter_chunks(todo, batch_size or settings.scoring.batch_size))
    llm_before = all_stats()
    by_engine = engine is not None and len(batches) > 1  # one batch: no workers to start
    # A worker has no store: its batches carry the cache entries it would read there; this process reads its own.
    elsewhere = by_engine and not getattr(engine, "in_this_process", False)
    jobs = (read_batch(store, batch, scorer, done, with_cached=elsewhere) for batch in batches)
    with tqdm(total=len(todo), desc="scoring", unit="response", disable=not progress) as bar, \
            live_progress(bar) if progress else nullcontext():
        finished = 0
        task = StoreTask(store, settings, metrics, extractor, scorer, todo)
        outputs = engine.score_batches(jobs, task) if by_engine else score_in_process(jobs, task)
        try:
            if cancel is not None and cancel.is_set() and todo:  # cancelled before the first batch
                report.stopped_early = True
                outputs = iter(())  # type: ignore[assignment]
            for output in outputs:
                write_batch(store, output, report)
                report.llm = stats_since(llm_before, all_stats())
                bar.update(len(output.ids))
                finished += len(output.ids)
                if on_progress is not None:
                    on_progress(finished, len(todo))
                if cancel is not None and cancel.is_set() and finished < len(todo):
                    report.stopped_early = True
                    break
        finally:
            getattr(outputs, "close", lambda: None)()  # an engine's workers stopped (also on an interrupt)
    return report


@dataclass
class BatchScorer:
    """What computing a batch of stored responses needs: the metrics, their config keys and the extractor."""

    metrics: list[Metric]
    keys: dict[str, str]
    extractor: CachedExtractor
    concepts_key: str


@dataclass
class BatchJob:
    """One batch of stored responses with everything the store knows that scoring them reads (plain, picklable
    data: a worker process or a Ray actor computes it without the store)."""

    ids: list[str]
    responses: dict[str, Response]
    samples: dict[str, Sample]
    wanted: dict[str, list[str]]  # response id -> the metrics still to score it
    concepts: dict[str, ConceptSet]  # response id -> its concepts stored under the current extractor
    images: dict[str, bytes | None]  # image sha256 -> its bytes (only where a metric looks at the image)
    # The store's cache entries the batch reads (key -> value): its reference captions' concepts, so a worker,
    # which has no store, parses a caption an earlier run (another model's, say) already read no more than this
    # process would.
    cached: dict[str, Any] = field(default_factory=dict)


@dataclass
class BatchOutput:
    """What computing a ``BatchJob`` gave: the rows to store in one transaction, this batch's report, and the new
    cache entries it computed (a worker's; this process's go straight into ``Store.cache``)."""

    ids: list[str]
    scores: list[Score] = field(default_factory=list)
    stats: list[dict[str, float] | None] = field(default_factory=list)
    failures: list[tuple[str | None, str | None, str, str]] = field(default_factory=list)
    report: ScoreReport = field(default_factory=ScoreReport)
    cache_entries: list[tuple[str, str, Any]] = field(default_factory=list)
    vectors: dict[str, dict[str, Any]] = field(default_factory=dict)  # model -> text -> vector


@dataclass
class StoreTask:
    """What an engine that scores elsewhere needs to build its scorers: the pass's settings, metrics (names) and
    extractor, the scorer built here, the responses to score (for CHAIR's whole-benchmark vocabulary)."""

    store: "Store"
    settings: Settings
    metrics: Sequence[str | Metric]
    extractor: "ConceptExtractor | None"
    scorer: BatchScorer
    todo: list[str]

    def benchmarks(self) -> dict[str, list[Sample]]:
        """Every sample of each benchmark the responses to score belong to, when a metric needs a whole benchmark
        (each worker observes the same ones); else nothing."""
        if not any(getattr(m, "needs_benchmark", False) for m in self.scorer.metrics):
            return {}
        names: set[str] = set()
        for batch in iter_chunks(self.todo, 1000):
            responses = self.store.get_responses(batch)
            names |= {s.benchmark for s in self.store.get_samples(sorted({r.sample_id for r in responses.values()})
                                                                  ).values()}
        return {name: list(self.store.iter_samples(name)) for name in sorted(names)}


def score_in_process(jobs: Iterable[BatchJob], task: StoreTask) -> Iterator[BatchOutput]:
    """Each batch computed in this process, with the pass's own metrics and the store's cache."""
    observed: set[str] = set()
    for job in jobs:
        observe_benchmarks(task.scorer.metrics, {s.benchmark for s in job.samples.values()},
                           task.store.iter_samples, observed)
        yield compute_batch(job, task.scorer)


def read_batch(store: "Store", batch: list[str], scorer: BatchScorer, done: dict[str, set[str]],
               with_cached: bool = False) -> BatchJob:
    """The driver's read of one batch: its responses, samples, stored concepts and (where a metric looks) images;
    ``with_cached``: the store's cache entries its reference captions' concepts are under (for a worker)."""
    responses = store.get_responses(batch)
    samples = store.get_samples(sorted({r.sample_id for r in responses.values()}))
    wanted = {rid: [m.name for m in scorer.metrics if rid not in done[m.name]] for rid in batch}
    concepts = {rid: ConceptSet.from_dict(s.evidence.get("concepts"))
                for rid, s in store.get_scores_for(batch, CONCEPTS, scorer.concepts_key).items()}
    images: dict[str, bytes | None] = {}
    if any(needs_image(m) for m in scorer.metrics):
        for sample in samples.values():
            if sample.image_sha256 and sample.image_sha256 not in images:
                found = store.get_image(sample.image_sha256)
                images[sample.image_sha256] = found[0] if found else None
    cache = scorer.extractor.cache
    captions = reference_captions(samples.values()) if with_cached and cache is not None else []
    cached = cache.get_many([scorer.extractor.key(c) for c in captions]) if captions else {}
    return BatchJob(list(batch), responses, samples, wanted, concepts, images, cached)


def compute_batch(job: BatchJob, scorer: BatchScorer) -> BatchOutput:
    """Score one batch without the store: concept sets, scores, statistics and failures to write, and the report."""
    out = BatchOutput(job.ids)
    report = out.report

    def fail(response: Response, stage: str, error: str) -> None:
        out.failures.append((response.run_id, response.sample_id, stage, error))
        report.note_failure(stage, response.id, error)

    units: list[Unit] = []
    by_name = {m.name: m for m in scorer.metrics}
    for rid in job.ids:
        response = job.responses[rid]
        report.responses_seen += 1
        sample = job.samples.get(response.sample_id)
        if sample is None:
            fail(response, "score", f"sample {response.sample_id!r} is not in the store")
            continue
        units.append(Unit(rid, response.text, sample, None, [by_name[n] for n in job.wanted[rid]],
                          dict(response.signals)))
    outcomes = score_units(units, scorer.extractor, stored=lambda ids: {i: job.concepts[i] for i in ids
                                                                        if i in job.concepts},
                           persist_concepts=False,
                           images=lambda s: job.images.get(s.image_sha256) if s.image_sha256 else None)
    for unit, outcome in zip(units, outcomes):
        report.not_applicable.update(outcome.not_applicable.keys())
        if isinstance(outcome.concepts, BaseException):
            fail(job.responses[unit.key], f"score:{CONCEPTS}",
                 error_text(outcome.concepts) + " (metrics skipped for this response)")
        elif outcome.extracted and outcome.concepts is not None:
            out.scores.append(concept_score(unit.key, scorer.concepts_key, scorer.extractor.name, outcome.concepts))
            out.stats.append(None)
            report.concepts_extracted += 1
    for metric in scorer.metrics:
        for unit, outcome in zip(units, outcomes):
            result = outcome.results.get(metric.name)
            if result is None:
                continue
            if isinstance(result, BaseException):
                fail(job.responses[unit.key], f"score:{metric.name}", error_text(result))
                continue
            out.scores.append(Score(unit.key, metric.name, scorer.keys[metric.name], dict(result.values),
                                    dict(result.evidence), result.undefined_reason))
            out.stats.append(dict(result.stats))
            report.scored[metric.name] += 1
            if result.undefined_reason is not None:
                report.undefined[metric.name] += 1
    return out


def write_batch(store: "Store", output: BatchOutput, report: ScoreReport) -> None:
    """The driver's write of one computed batch: the worker's new cache entries, then its rows in one transaction;
    its counts added to the pass's ``report``."""
    keep_drained(store.cache, output.cache_entries, output.vectors)
    store.put_score_batch(output.scores, output.stats, output.failures)
    report.add(output.report)
