import os
import sys
from pathlib import Path

import pytest

# Code the tests share with the benchmarks lives in benchmarks/ (reference_degradation, extraction_evaluation);
# the benchmarks borrow tests/' own helpers (synthetic_store, tiny_models) the same way.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

for _k, _v in {"GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
               "TOKENIZERS_PARALLELISM": "false",
               # The CLI and the app score on one worker process per core by default (scoring.workers = 0); the
               # suite's small stores score in-process, as they did, so that each `score` and each app a test
               # starts does not spawn workers that load the models again. test_scoring_engines and test_cli_stop
               # ask for workers themselves.
               "HALLU_STUDIO_WORKERS": "1"}.items():
    os.environ.setdefault(_k, _v)

# ../shared beside the checkout; $HALLU_STUDIO_SHARED points elsewhere (a git worktree one level deeper).
SHARED = Path(os.environ.get("HALLU_STUDIO_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")
DATASETS = SHARED / "datasets"


def shared_dataset(*parts: str) -> Path:
    """A path under ../shared/datasets, or skip the test when it is absent."""
    path = DATASETS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not available")
    return path


@pytest.fixture
def store(tmp_path):
    from hallu_studio.store import Store

    st = Store(tmp_path / "test.duckdb")
    yield st
    st.close()


def pytest_sessionfinish(session, exitstatus):
    """Close every store a test left open, so DuckDB's bindings shut down cleanly
    (otherwise nanobind prints leak reports after pytest's summary line)."""
    import gc

    from hallu_studio.store import Store

    gc.collect()
    for obj in gc.get_objects():
        if type(obj) is Store:  # not isinstance: that pokes deprecated torch shims
            try:
                obj.close()
            except Exception:  # noqa: BLE001 - already closed or mid-shutdown
                pass
    gc.collect()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test reports every thread of this process: its app serves from here, so a page that never
    updated shows where the server side stood (a bare Playwright timeout says nothing of it)."""
    report = yield
    if report.failed and call.when == "call" and item.get_closest_marker("browser") is not None:
        from reliability_helpers import thread_stacks

        report.sections.append(("threads of the test process at the failure", thread_stacks()))
    return report
