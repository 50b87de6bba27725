"""First start: the demo bootstrap runs its steps once, and later starts skip it."""

from __future__ import annotations

import time

import pytest

from hallu_studio.app.bootstrap import BootstrapSteps, bootstrap, needs_bootstrap
from hallu_studio.app.main import parse_args
from synthetic_store import fill_synthetic_store
from hallu_studio.app.users import load_users_file, parse_users_env, resolve_users
from hallu_studio.config import Settings
from hallu_studio.model import Benchmark, Response, Run, Sample, Score


def _import_tiny(st):
    """A one-sample stand-in for the sample benchmark's import step."""
    st.add_samples(Benchmark("tiny"), [Sample(id="tiny/1", benchmark="tiny", image_key="1")])
    return "tiny"


def test_bootstrap_runs_each_missing_step_once(store):
    calls: list[str] = []

    def import_sample(st):
        calls.append("import")
        return _import_tiny(st)

    def run_probes(st, name):
        calls.append(f"run {name}")
        run = Run(id="run-x", benchmark=name, model="probe", backend="probe", synthetic=True)
        st.add_run(run)
        st.add_responses([Response("run-x", "tiny/1", "a cat")])

    def score(st, settings):
        calls.append("score")
        rid = st.response_ids()[0]
        st.put_scores([Score(rid, "emd", "k", {"total": 1.0})])

    steps = BootstrapSteps(import_sample, run_probes, score)
    assert needs_bootstrap(store)
    done = bootstrap(store, Settings(), steps)
    assert calls == ["import", "run tiny", "score"] and len(done) == 3
    assert not needs_bootstrap(store)
    assert bootstrap(store, Settings(), steps) == [] and calls == ["import", "run tiny", "score"]


def _boom(*_a):
    raise AssertionError("must not run")


def test_bootstrap_leaves_a_store_with_runs_alone(store):
    fill_synthetic_store(store, n_samples=2)
    assert bootstrap(store, Settings(), BootstrapSteps(_boom, _boom, _boom)) == []


def test_bootstrap_adds_no_synthetic_runs_to_a_users_benchmark(store):
    store.add_samples(Benchmark("mine"), [Sample(id="mine/1", benchmark="mine", image_key="1")])
    assert bootstrap(store, Settings(), BootstrapSteps(_boom, _boom, _boom)) == []
    assert store.counts()["runs"] == 0


def test_real_bootstrap_on_the_sample_benchmark(store):
    pytest.importorskip("hallu_studio.sample")
    from hallu_studio.app import bootstrap as bs
    from hallu_studio.pipelines.running import run_probe_suite

    # The real import and probe steps at one probe rate; the scoring step is stubbed here to keep
    # the suite fast (the real metrics on probe runs are tested in test_app_real_metrics.py).
    def score_one(st, settings):
        st.put_scores([Score(st.response_ids()[0], "emd", "k", {"total": 1.0})])

    steps = BootstrapSteps(bs.import_sample_benchmark,
                           lambda st, name: [None for _ in run_probe_suite(st, name, rates=(0.5,))], score_one)
    done = bootstrap(store, Settings(), steps)
    assert len(done) == 3
    runs = store.list_runs()
    assert runs and all(r["synthetic"] for r in runs)
    assert store.counts()["scores"] > 0


def test_users_from_file_and_env(tmp_path):
    f = tmp_path / "users.json"
    f.write_text('{"ann": "pw1", "bob": "pw2"}')
    assert load_users_file(f) == [("ann", "pw1"), ("bob", "pw2")]
    f.write_text('[{"username": "ann", "password": "x"}]')
    assert resolve_users(str(f), env={}) == [("ann", "x")]
    assert resolve_users(None, env={"HALLU_STUDIO_USERS": "c:d"}) == [("c", "d")]
    assert resolve_users(None, env={}) is None
    with pytest.raises(ValueError, match="entry 2 must be name:password"):
        parse_users_env("a:b,nopassword")
    f.write_text("[{}]")
    with pytest.raises(ValueError, match="entry 0 needs"):
        load_users_file(f)
    args = parse_args(["--db", "x.duckdb", "--host", "0.0.0.0", "--port", "9000", "--auth", "u.json"])
    assert (args.db, args.host, args.port, args.auth) == ("x.duckdb", "0.0.0.0", 9000, "u.json")


def test_an_interrupted_first_start_resumes_on_the_next(store):
    calls: list[str] = []

    def import_sample(st):
        calls.append("import")
        return _import_tiny(st)

    def run_probes(st, name):
        calls.append("run")

    def crash(st, settings):
        calls.append("score")
        raise KeyboardInterrupt  # the user closed the app during scoring

    with pytest.raises(KeyboardInterrupt):
        bootstrap(store, Settings(), BootstrapSteps(import_sample, run_probes, crash))
    assert needs_bootstrap(store), "samples exist, but the demo is unfinished"
    done = bootstrap(store, Settings(), BootstrapSteps(import_sample, run_probes, lambda st, s: calls.append("score")))
    assert done[0].startswith("resumed") and calls == ["import", "run", "score", "import", "run", "score"]
    assert not needs_bootstrap(store)
    assert store.count_samples() == 1


def test_the_app_opens_before_the_demo_is_scored(store):
    import threading

    from hallu_studio.app.context import AppContext
    from hallu_studio.app.main import start_demo

    release = threading.Event()

    def run_probes(st, name):
        st.add_run(Run(id="run-x", benchmark=name, model="probe", backend="probe", synthetic=True))
        st.add_responses([Response("run-x", "tiny/1", "a cat")])

    def slow_score(st, settings):
        assert release.wait(10)
        st.put_scores([Score(st.response_ids()[0], "emd", "k", {"total": 1.0})])

    ctx = AppContext(store=store)
    start_demo(ctx, BootstrapSteps(_import_tiny, run_probes, slow_score))
    # start_demo returned with the benchmark imported; probes and scoring go on behind the open app,
    # and the banner says so.
    assert store.count_samples() == 1
    assert "building the offline demo" in ctx.background.status()
    for _ in range(100):
        if store.count_responses():
            break
        time.sleep(0.05)
    assert store.count_responses() == 1 and store.counts()["scores"] == 0
    assert needs_bootstrap(store), "an app stopped now resumes the scoring on its next start"
    release.set()
    ctx.background.wait(10)
    assert ctx.background.status() is None and store.counts()["scores"] == 1
    assert not needs_bootstrap(store)


def _human_study(st, name="haelm"):
    """What ``import --format human-judgements`` leaves: the study's benchmark, its judged responses as a recorded
    run, and people's judgements under the study's source."""
    from hallu_studio.model import JUDGEMENT_LABELS, HumanEvent

    st.add_samples(Benchmark(name), [Sample(id=f"{name}/{i}", benchmark=name, image_key=str(i)) for i in range(2)])
    st.add_run(Run(id=f"{name}-run", benchmark=name, model="mplug-owl", backend="recorded"))
    st.add_responses([Response(f"{name}-run", f"{name}/{i}", "a cat on a mat") for i in range(2)])
    rid = st.response_ids(benchmark=name)[0]
    st.append_events_once([HumanEvent("crowd", "label", rid, {"label": JUDGEMENT_LABELS[0]}, source=name)])


def test_a_store_holding_only_an_imported_human_study_still_gets_the_demo(store):
    from hallu_studio.app.bootstrap import DEMO_BENCHMARK_KEY

    _human_study(store)
    assert store.imported_study_benchmarks() == {"haelm"}
    calls: list[str] = []

    def run_probes(st, name):
        calls.append(f"run {name}")
        st.add_run(Run(id="run-x", benchmark=name, model="probe", backend="probe", synthetic=True))
        st.add_responses([Response("run-x", "tiny/1", "a cat")])

    def score(st, settings):
        calls.append("score")

    assert needs_bootstrap(store), "a human study imported first must not stop the demo"
    done = bootstrap(store, Settings(), BootstrapSteps(_import_tiny, run_probes, score))
    assert calls == ["run tiny", "score"] and len(done) == 3
    assert store.get_meta(DEMO_BENCHMARK_KEY) == "tiny"
    assert {r["benchmark"] for r in store.list_runs()} == {"haelm", "tiny"}, "the study is kept as it was"
    assert not needs_bootstrap(store)


def test_a_users_own_benchmark_beside_a_human_study_keeps_the_store_as_it_is(store):
    _human_study(store)
    store.add_samples(Benchmark("mine"), [Sample(id="mine/1", benchmark="mine", image_key="1")])
    assert not needs_bootstrap(store)
    assert bootstrap(store, Settings(), BootstrapSteps(_boom, _boom, _boom)) == []


def test_the_demo_slices_and_counts_its_own_benchmark_not_the_study(store):
    from hallu_studio.app.bootstrap import DEMO_BENCHMARK_KEY, DemoProgress, demo_metrics, stratified_slice

    _human_study(store)
    _import_tiny(store)
    store.add_run(Run(id="run-x", benchmark="tiny", model="probe", backend="probe", synthetic=True))
    store.add_responses([Response("run-x", "tiny/1", "a cat")])
    store.set_meta(DEMO_BENCHMARK_KEY, "tiny")
    first = stratified_slice(store, benchmark="tiny")
    assert [store.get_response(r).sample_id for r in first] == ["tiny/1"]
    assert len(stratified_slice(store)) == 3, "without a benchmark: every benchmark's"
    assert DemoProgress(store).done_line() == "the offline demo is ready: all 1 responses scored"
    # the metrics the sample benchmark was built for, as their specs say (the registry's order)
    assert demo_metrics() == ("trihe", "emd", "edit", "halfscore", "reefknot", "chair")
