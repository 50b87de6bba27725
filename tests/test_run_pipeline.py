"""The run pipeline with probe models: manifests, resume, failures, cancel, mitigations, truncation, CLI."""

import threading

import pytest

from hallu_studio import __version__
from hallu_studio.backends import make_backend
from hallu_studio.backends.base import GenerationResult
from tiny_models import tiny_benchmark
from hallu_studio.model import Run
from hallu_studio.pipelines.running import (
    RunOptions, derive_truncated_runs, execute_run, make_run, run_probe_suite, truncate_words, truncated_responses,
)


@pytest.fixture
def bench(store):
    b, samples, images = tiny_benchmark(n_images=3)
    store.add_samples(b, samples, images)
    return store, b.name, samples


def test_run_writes_manifest_and_every_response(bench):
    store, name, samples = bench
    backend = make_backend("probe:rate=0.3,seed=1")
    summary = execute_run(store, backend, RunOptions(benchmark=name, chunk_size=5), progress=False)
    assert (summary.done, summary.failed, summary.skipped, summary.status) == (len(samples), 0, 0, "completed")
    run = store.get_run(summary.run_id)
    assert run.synthetic and run.backend == "probe" and "[synthetic]" in run.model
    assert run.tool_version == __version__ and run.checkpoint == "probe-v1"
    assert run.generation["strategy"] == "greedy"
    assert store.done_sample_ids(run.id) == {s.id for s in samples}
    assert [r["status"] for r in store.list_runs() if r["id"] == run.id] == ["completed"]


def test_rerun_resumes_and_duplicates_nothing(bench):
    store, name, samples = bench
    backend = make_backend("probe:rate=0.3,seed=1")
    first = execute_run(store, backend, RunOptions(benchmark=name, limit=5), progress=False)
    assert first.done == 5
    again = execute_run(store, backend, RunOptions(benchmark=name), progress=False)
    assert first.run_id == again.run_id
    assert (again.done, again.skipped) == (len(samples) - 5, 5)
    assert store.count_responses(first.run_id) == len(samples)


def test_settings_change_the_run_id_but_execution_options_do_not(bench):
    store, name, _ = bench
    backend = make_backend("probe:rate=0.3")
    base = make_run(backend, RunOptions(benchmark=name)).id
    assert make_run(backend, RunOptions(benchmark=name, limit=2, tasks=["caption"], chunk_size=1)).id == base
    assert make_run(backend, RunOptions(benchmark=name, generation="beam")).id != base
    assert make_run(backend, RunOptions(benchmark=name, prompt="viscon-concise")).id != base
    assert make_run(make_backend("probe:rate=0.3,delay_ms=9"), RunOptions(benchmark=name)).id == base


def test_failures_are_recorded_per_item_and_the_run_goes_on(bench):
    store, name, samples = bench
    summary = execute_run(store, make_backend("probe:rate=0.1,fail=0.4,seed=2"), RunOptions(benchmark=name),
                          progress=False)
    failures = store.list_failures(summary.run_id)
    assert summary.failed == len(failures) > 0 and summary.done == len(samples) - len(failures)
    assert all(f["stage"] == "generate" and "simulated failure" in f["error"] for f in failures)
    assert summary.status == "completed_with_failures"


class _Raising:
    kind, model, synthetic = "probe", "raising [synthetic]", True

    def checkpoint(self):
        return "x"

    def generate(self, requests):
        if any(r.sample.task == "mcq" for r in requests):
            raise RuntimeError("backend exploded")
        return [GenerationResult(r.sample_id, text="ok") for r in requests]

    def close(self):
        pass


def test_a_backend_that_raises_fails_its_chunk_only(bench):
    store, name, samples = bench
    summary = execute_run(store, _Raising(), RunOptions(benchmark=name, chunk_size=1), progress=False)
    assert summary.failed == sum(s.task == "mcq" for s in samples)
    assert summary.done + summary.failed == len(samples)
    assert "backend exploded" in store.list_failures(summary.run_id)[0]["error"]


def test_cancel_stops_between_chunks(bench):
    store, name, samples = bench
    cancel = threading.Event()
    seen = []

    def on_progress(done, total):
        seen.append(done)
        if done >= 2:
            cancel.set()

    summary = execute_run(store, make_backend("probe:"), RunOptions(benchmark=name, chunk_size=1), cancel=cancel,
                          progress=False, on_progress=on_progress)
    assert summary.status == "cancelled" and summary.done == 2
    assert store.get_run(summary.run_id) and store.list_runs()[0]["status"] == "cancelled"


def test_task_filter_and_missing_images(bench):
    store, name, samples = bench
    summary = execute_run(store, make_backend("probe:"), RunOptions(benchmark=name, tasks=["yes_no"]),
                          progress=False)
    assert summary.total == sum(s.task == "yes_no" for s in samples)
    with pytest.raises(ValueError, match="unknown task"):
        execute_run(store, make_backend("probe:"), RunOptions(benchmark=name, tasks=["essay"]), progress=False)
    with pytest.raises(ValueError, match="no benchmark"):
        execute_run(store, make_backend("probe:"), RunOptions(benchmark="nope"), progress=False)


def test_two_step_mitigation_answers_from_the_description(bench):
    store, name, samples = bench
    summary = execute_run(store, make_backend("probe:"), RunOptions(benchmark=name, mitigation="trihe-triplet"),
                          progress=False)
    questions = [s for s in samples if s.question]
    assert summary.done == len(questions)
    # captions have no question: a clear per-item failure, not a silent skip
    failures = store.list_failures(summary.run_id)
    assert len(failures) == len(samples) - len(questions)
    assert all(f["stage"] == "prepare" and "has none" in f["error"] for f in failures)
    resp = next(store.iter_responses(summary.run_id))
    assert resp.signals["mitigation"]["name"] == "trihe-triplet" and resp.signals["mitigation"]["description"]


def test_dtc_is_refused_where_hidden_states_are_unavailable(bench):
    store, name, _ = bench
    with pytest.raises(ValueError, match="hidden states"):
        execute_run(store, make_backend("probe:"), RunOptions(benchmark=name, mitigation="dtc"), progress=False)


def test_perturbation_prompts_are_recorded(bench):
    store, name, samples = bench
    summary = execute_run(store, make_backend("probe:"), RunOptions(benchmark=name, mitigation="perturbo-v1"),
                          progress=False)
    assert summary.done == len(samples)
    resp = next(store.iter_responses(summary.run_id))
    pert = resp.signals["perturbation"]
    assert pert["variant"] == "perturbo-v1" and pert["text"]


def test_truncation_study_derives_runs_with_the_same_samples(bench):
    store, name, samples = bench
    summary = execute_run(store, make_backend("probe:"), RunOptions(benchmark=name, tasks=["caption"]),
                          progress=False)
    assert truncate_words("one two\tthree\n four", 2) == "one two"
    made = derive_truncated_runs(store, summary.run_id, [3, 10])
    assert made == [f"{summary.run_id}-trunc3", f"{summary.run_id}-trunc10"]
    for resp in store.iter_responses(made[0]):
        assert len(resp.text.split()) <= 3
    assert store.done_sample_ids(made[0]) == store.done_sample_ids(summary.run_id)
    assert store.get_run(made[1]).meta["truncated_to"] == 10
    again = derive_truncated_runs(store, summary.run_id, [3])  # idempotent
    assert store.count_responses(again[0]) == summary.done
    pure = truncated_responses(store.iter_responses(summary.run_id), 1, "x")
    assert all(len(r.text.split()) == 1 and r.run_id == "x" for r in pure)
    with pytest.raises(ValueError):
        truncate_words("a", 0)


def test_probe_suite_populates_runs_at_each_rate(bench):
    store, name, samples = bench
    summaries = run_probe_suite(store, name, rates=(0.0, 0.5))
    assert [s.done for s in summaries] == [len(samples)] * 2
    runs = {r["id"]: r for r in store.list_runs(name)}
    assert all(runs[s.run_id]["synthetic"] for s in summaries)
    clean = list(store.iter_responses(summaries[0].run_id))
    assert all(r.signals["injected"] == [] for r in clean)
    assert run_probe_suite(store, name, rates=(0.0,))[0].done == 0  # second call adds nothing


def test_cli_run_prints_one_line_summary(bench, tmp_path, capsys):
    store, name, samples = bench
    path = store.path
    store.close()
    from hallu_studio.cli import main

    assert main(["run", "--db", path, "--benchmark", name, "--model", "probe:rate=0.2", "--task", "caption,vqa",
                 "--quiet"]) == 0
    out = capsys.readouterr().out.strip().splitlines()[-1]
    n = sum(s.task in ("caption", "vqa") for s in samples)
    assert out.endswith("completed") and f"{n} done, 0 failed, 0 skipped" in out
    assert main(["run", "--db", path, "--benchmark", name, "--model", "probe:rate=0.2", "--quiet"]) == 0
    assert f"{n} skipped" in capsys.readouterr().out
    assert main(["run", "--db", path, "--benchmark", name, "--model", "nonsense", "--quiet"]) == 2
    assert "unknown model spec" in capsys.readouterr().err


def test_run_make_id_is_the_manifests_content_key(bench):
    store, name, _ = bench
    backend = make_backend("probe:")
    run = make_run(backend, RunOptions(benchmark=name))
    assert run.id == Run.make_id(name, backend.model, "probe", "auto", run.generation, "none", 0)
