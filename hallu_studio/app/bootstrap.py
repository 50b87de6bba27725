"""First start: import the embedded sample benchmark, run the probe models, score them.

Each step is injectable (tests pass small or fake steps) and each only runs when its
output is missing, so later starts skip straight to the app. The probe runs are
synthetic and labelled so everywhere.

Scoring goes slice first: every run's responses to a few samples of each benchmark, task
and relation category (the same samples for every model, so that reference phrases are
encoded once) are scored before the rest, so the Overview can rank the models within
seconds of the models loading; the rest fills in behind a banner that counts responses.

Which metrics score the demo is theirs to say (``MetricSpec.demo``). A store that holds only what outside human
studies brought (``hallu-studio import --format human-judgements`` before the first start) still gets the demo
beside them, and the demo scores its own benchmark alone: the studies' responses are the user's to score.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..config import Settings
from ..store import Store

log = logging.getLogger(__name__)


def demo_metrics() -> tuple[str, ...]:
    """The metrics the first start scores the sample benchmark with: those whose spec says ``demo``, in the
    registry's order."""
    from ..metrics.registry import metric_specs

    return tuple(spec.name for spec in metric_specs() if spec.demo)


class Stopped(Exception):
    """A first-start step ended early because the app is stopping (between batches: what is done is stored);
    the demo stays marked as started, so the next start resumes it."""


def import_sample_benchmark(store: Store) -> str:
    """Import the embedded sample benchmark; returns its name."""
    from ..pipelines.importing import import_benchmark
    from ..sample import build_sample_benchmark

    parsed = build_sample_benchmark()
    report = import_benchmark(store, parsed)
    log.info("sample benchmark: %s", report.summary())
    return parsed.benchmark.name


def run_probe_models(store: Store, benchmark: str, cancel: threading.Event | None = None) -> None:
    """The probe runs; a set ``cancel`` ends them at the next chunk (``Stopped``)."""
    from ..pipelines.running import run_probe_suite

    for summary in run_probe_suite(store, benchmark, cancel=cancel):
        log.info("probe run [synthetic]: %s", summary.line())
        if summary.status == "cancelled":
            raise Stopped("probe runs stopped")


SLICE_PER_STRATUM = 2  # samples per benchmark x task x relation category in the first slice


def stratified_slice(store: Store, per_stratum: int = SLICE_PER_STRATUM, benchmark: str | None = None) -> list[str]:
    """Every run's responses to ``per_stratum`` samples of each benchmark (or of ``benchmark``) x task x relation
    category.

    The samples are spread evenly over each stratum's ids (so domains mix), and are the same
    for every run, so that the models are compared on one set.
    """
    strata: dict[tuple[str, str, str | None], list[str]] = defaultdict(list)
    for name in [benchmark] if benchmark else [info.name for info in store.benchmark_infos()]:
        for sample in store.iter_samples(name):
            strata[(name, sample.task, sample.relation_category)].append(sample.id)
    chosen: set[str] = set()
    for ids in strata.values():
        ids.sort()
        step = max(1, len(ids) // per_stratum)
        chosen.update(ids[::step][:per_stratum])
    return [r.id for r in store.iter_responses(benchmark=benchmark) if r.sample_id in chosen]


class DemoProgress:
    """What the first start's banner says: responses gone through (scored, or found not applicable), not scores."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._phase: str | None = None
        self._done = self._todo = 0

    def step(self, phase: str, todo: int = 0) -> Callable[[int, int], None]:
        """Enter ``phase`` ("slice" or "rest", ``todo`` responses when known); returns ``score_store``'s ``on_progress``."""
        def on_batch(done: int, todo: int) -> None:
            with self._lock:
                self._phase, self._done, self._todo = phase, done, todo
        with self._lock:
            self._phase, self._done, self._todo = phase, 0, todo
        return on_batch

    def total(self) -> int:
        """The responses the first start scores: the demo benchmark's (all the store's before it is named)."""
        benchmark = self.store.get_meta(DEMO_BENCHMARK_KEY)
        return len(self.store.response_ids(benchmark=benchmark)) if benchmark else self.store.count_responses()

    def line(self) -> str:
        total = self.total()
        with self._lock:
            phase, done, todo = self._phase, self._done, self._todo
        if phase == "slice":
            return (f"scoring a first slice of every model x task: {done:,} of {todo:,} responses; "
                    f"then the rest of the {total:,}")
        if phase == "rest" and todo:
            return f"scored {total - (todo - done):,} of {total:,} responses"
        if phase == "rest":
            return f"first slice scored; now the rest of the {total:,} responses"
        if phase == "probes":
            return f"running the probe models [synthetic]: {total:,} responses so far"
        return f"loading the scoring models; {total:,} responses to score"

    def done_line(self) -> str:
        """What the banner says once the first start is over."""
        return f"the offline demo is ready: all {self.total():,} responses scored"

    def score(self, store: Store, settings: Settings, metrics: Sequence[str] | None = None,
              cancel: threading.Event | None = None) -> None:
        score_everything(store, settings, metrics, progress=self, cancel=cancel)


def score_everything(store: Store, settings: Settings, metrics: Sequence[str] | None = None,
                     progress: DemoProgress | None = None, cancel: threading.Event | None = None) -> None:
    """A stratified slice first (so the Overview ranks early), then everything still unscored: of the demo's
    benchmark where the store names one (``DEMO_BENCHMARK_KEY``), else of the whole store; with ``metrics``, or the
    demo's (``demo_metrics``).

    A set ``cancel`` ends either pass at its next batch (``Stopped``); the scored batches stay.

    The slice is scored in this process whatever ``scoring.workers`` says: it is small, the app has already loaded
    the scoring models here, and a spawned worker needs 15-20 s to load its own (the ranked numbers waited for that,
    31 s on CI's machine). The rest goes through the engine of ``score --workers`` (Settings: scoring.workers)."""
    from ..metrics.registry import make_extractor, make_metrics
    from ..pipelines.engines import InProcess, make_engine
    from ..pipelines.scoring import score_store

    names = list(metrics or demo_metrics())
    extractor = make_extractor(settings, store.cache)
    built: list[Any] = make_metrics(names, settings, store.cache, extractor)
    benchmark = store.get_meta(DEMO_BENCHMARK_KEY)
    first = stratified_slice(store, benchmark=benchmark)
    report = score_store(store, settings, built, progress=False, extractor=extractor, only=first, cancel=cancel,
                         on_progress=progress.step("slice", len(first)) if progress else None, engine=InProcess())
    log.info("scoring, first slice of %d responses: %s", len(first), report.summary())
    if report.stopped_early:
        raise Stopped("scoring stopped after the first slice's stored batches")
    rest = store.response_ids(benchmark=benchmark) if benchmark else None
    engine = make_engine("processes", settings.scoring.workers)
    if not isinstance(engine, InProcess):  # each worker builds its own from the settings and the names
        extractor, built = None, names
    report = score_store(store, settings, built, progress=True, extractor=extractor, cancel=cancel, only=rest,
                         on_progress=progress.step("rest") if progress else None, engine=engine)
    log.info("scoring: %s", report.summary())
    if report.stopped_early:
        raise Stopped("scoring stopped; the scored batches are stored")


@dataclass
class BootstrapSteps:
    import_sample: Callable[[Store], str] = import_sample_benchmark
    run_probes: Callable[[Store, str], None] = run_probe_models
    score: Callable[[Store, Settings], None] = field(default=score_everything)


# The store remembers a first start in progress, so that one interrupted halfway (the
# window closed during scoring, say) resumes on the next start instead of leaving a half demo.
DEMO_STATE_KEY = "demo_bootstrap"
DEMO_BENCHMARK_KEY = "demo_benchmark"  # the sample benchmark's name, once imported: what the demo scores


def needs_bootstrap(store: Store) -> bool:
    """True for an empty store, one that holds only what outside human studies brought, or one whose demo
    bootstrap was interrupted.

    A store holding a benchmark of anyone's own is never filled with the demo; an imported human study (its
    benchmark, its judged responses and people's judgements) is kept as it is, with the demo beside it.
    """
    state = store.get_meta(DEMO_STATE_KEY)
    if state == "done":
        return False
    if state == "started":
        return True
    if store.counts()["samples"] == 0:
        return True
    return {info.name for info in store.benchmark_infos()} <= store.imported_study_benchmarks()


def _import_scoring_libraries() -> None:
    """Import what scoring needs (sentence-transformers, spaCy): tens of seconds on a busy machine,
    done while the sample benchmark is built (its image filters run outside the GIL)."""
    try:
        import sentence_transformers  # noqa: F401
        import spacy  # noqa: F401
    except ImportError:
        pass  # scoring reports what is missing, with the metric that needs it


def start_demo_import(store: Store, steps: BootstrapSteps | None = None) -> tuple[str, str]:
    """The first step of a first start: import the sample benchmark; returns its name and what was done.

    Marks the demo as started; ``finish_demo`` (scoring, the slow part) marks it done.
    """
    resuming = store.get_meta(DEMO_STATE_KEY) == "started"
    store.set_meta(DEMO_STATE_KEY, "started")
    steps = steps or BootstrapSteps()
    if steps.import_sample is import_sample_benchmark:
        # The real demo: scoring's libraries load while the sample's images render (outside the GIL).
        threading.Thread(target=_import_scoring_libraries, daemon=True, name="hallu-studio-preload").start()
    name = steps.import_sample(store)
    store.set_meta(DEMO_BENCHMARK_KEY, name)
    return name, f"{'resumed' if resuming else 'imported'} the sample benchmark {name!r}"


def prepare_demo(store: Store, steps: BootstrapSteps | None = None) -> list[str]:
    """The quick part of a first start: import the sample benchmark and run the probe models."""
    steps = steps or BootstrapSteps()
    name, line = start_demo_import(store, steps)
    steps.run_probes(store, name)
    return [line, "ran the probe models [synthetic]"]


def finish_demo(store: Store, settings: Settings, steps: BootstrapSteps | None = None) -> list[str]:
    """Score the demo's responses (resumable: only what is missing) and mark the demo done."""
    (steps or BootstrapSteps()).score(store, settings)
    store.set_meta(DEMO_STATE_KEY, "done")
    return ["scored the responses"]


def bootstrap(store: Store, settings: Settings, steps: BootstrapSteps | None = None) -> list[str]:
    """Bring an empty store to a populated demo; returns what was done (nothing on later starts).

    Only an empty store is bootstrapped: a store with a benchmark but no runs is the user's
    own, and the app shows it as it is rather than adding synthetic runs to it. Every step
    resumes: re-importing adds nothing twice, probe runs skip finished items, and scoring
    scores only what is missing. (The app itself calls ``prepare_demo`` and runs
    ``finish_demo`` in the background, so that it opens at once.)
    """
    if not needs_bootstrap(store):
        return []
    return prepare_demo(store, steps) + finish_demo(store, settings, steps)
