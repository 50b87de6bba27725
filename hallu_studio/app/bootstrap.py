"""First start: import the embedded sample benchmark, run the probe models, score them.

Each step is injectable (tests pass small or fake steps) and each only runs when its
output is missing, so later starts skip straight to the app. The probe runs are
synthetic and labelled so everywhere.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..config import Settings
from ..store import Store

log = logging.getLogger(__name__)

DEMO_METRICS: tuple[str, ...] = ("emd", "edit", "trihe", "halfscore", "reefknot", "chair")


def import_sample_benchmark(store: Store) -> str:
    """Import the embedded sample benchmark; returns its name."""
    from ..pipelines.importing import import_benchmark
    from ..sample import build_sample_benchmark

    parsed = build_sample_benchmark()
    report = import_benchmark(store, parsed)
    log.info("sample benchmark: %s", report.summary())
    return parsed.benchmark.name


def run_probe_models(store: Store, benchmark: str) -> None:
    from ..pipelines.running import run_probe_suite

    for summary in run_probe_suite(store, benchmark):
        log.info("probe run [synthetic]: %s", summary.line())


def score_everything(store: Store, settings: Settings, metrics: Sequence[str] = DEMO_METRICS) -> None:
    from ..pipelines.scoring import score_store

    report = score_store(store, settings, list(metrics), progress=True)
    log.info("scoring: %s", report.summary())


@dataclass
class BootstrapSteps:
    import_sample: Callable[[Store], str] = import_sample_benchmark
    run_probes: Callable[[Store, str], None] = run_probe_models
    score: Callable[[Store, Settings], None] = field(default=score_everything)


# The store remembers a first start in progress, so that one interrupted halfway (the
# window closed during scoring, say) resumes on the next start instead of leaving a half demo.
DEMO_STATE_KEY = "demo_bootstrap"


def needs_bootstrap(store: Store) -> bool:
    """True for an empty store, or one whose demo bootstrap was interrupted.

    A store holding anyone's own data is never filled with the demo.
    """
    state = store.get_meta(DEMO_STATE_KEY)
    if state == "done":
        return False
    if state == "started":
        return True
    return store.counts()["samples"] == 0


def prepare_demo(store: Store, steps: BootstrapSteps | None = None) -> list[str]:
    """The quick part of a first start: import the sample benchmark and run the probe models.

    Marks the demo as started; ``finish_demo`` (scoring, the slow part) marks it done.
    """
    resuming = store.get_meta(DEMO_STATE_KEY) == "started"
    store.set_meta(DEMO_STATE_KEY, "started")
    steps = steps or BootstrapSteps()
    name = steps.import_sample(store)
    done = [f"{'resumed' if resuming else 'imported'} the sample benchmark {name!r}"]
    steps.run_probes(store, name)
    done.append("ran the probe models [synthetic]")
    return done


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
