"""Every analysis end to end: probe runs on a small benchmark, scored by the real metrics.

One store for the module (model loading dominates): a hand-written mini benchmark
(captions in three image domains and yes/no questions), a subset of the real Tri-HE
when ../shared holds it, and a subset of the embedded sample benchmark when it exists.
"""

from __future__ import annotations

import importlib.util

import pytest
from conftest import shared_dataset

from hallu_studio.config import Settings
from hallu_studio.model import Benchmark, HumanEvent, Sample, SceneGraph
from hallu_studio.pipelines.running import RunOptions, execute_run
from hallu_studio.pipelines.scoring import score_store
from hallu_studio.studies.analyses import ANALYSES, run_analysis

pytestmark = [pytest.mark.slow]

SCORED = ["emd", "trihe", "edit", "reefknot"]
OBJECTS = [[("cat", ["grey"]), ("sofa", ["red"]), ("lamp", ["tall"])],
           [("dog", ["brown"]), ("ball", ["small"]), ("grass", ["green"])],
           [("man", ["young"]), ("bicycle", ["blue"]), ("street", ["wet"])],
           [("woman", ["happy"]), ("cup", ["white"]), ("table", ["wooden"])],
           [("car", ["red"]), ("road", ["dark"]), ("tree", ["tall"])],
           [("boy", ["small"]), ("kite", ["yellow"]), ("sky", ["blue"])]]
DOMAINS = ["original", "original", "cartoon", "cartoon", "sketch", "sketch"]


def mini_samples() -> list[Sample]:
    out = []
    for i, objs in enumerate(OBJECTS):
        graph = SceneGraph.from_dict({
            "objects": [{"id": str(j), "name": n, "attributes": a} for j, (n, a) in enumerate(objs)],
            "relations": [{"subject": "0", "predicate": "on", "object": "1"},
                          {"subject": "2", "predicate": "near", "object": "1"}]})
        kind = "real" if DOMAINS[i] == "original" else "synthetic"
        out.append(Sample(id=f"mini/c{i}", benchmark="mini", image_key=f"img{i}", task="caption",
                          domain=DOMAINS[i], source_kind=kind, scene_graph=graph))
        out.append(Sample(id=f"mini/y{i}", benchmark="mini", image_key=f"img{i}", task="yes_no", domain=DOMAINS[i],
                          source_kind=kind, scene_graph=graph, relation_category="perception",
                          question=f"Is the {objs[0][0]} on the {objs[1][0]}? Please answer yes or no.",
                          answer="yes", gold_triplets=[(objs[0][0], "on", objs[1][0])]))
    return out


def probe_runs(store, benchmark: str, rates, limit: int | None = None, tasks=None) -> None:
    from hallu_studio.backends.probe import ProbeBackend, ProbeOptions

    for rate in rates:
        execute_run(store, ProbeBackend(ProbeOptions(rate=rate)),
                    RunOptions(benchmark=benchmark, limit=limit, tasks=tasks), progress=False)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    from hallu_studio.store import Store

    store = Store(tmp_path_factory.mktemp("analyses") / "store.duckdb")
    store.add_samples(Benchmark("mini"), mini_samples())
    probe_runs(store, "mini", (0.0, 0.3, 0.6))
    benchmarks = ["mini"]
    if shared_dataset_available("tri-he"):
        from hallu_studio.importers.tri_he import read_tri_he
        from hallu_studio.pipelines.importing import import_benchmark

        parsed = read_tri_he(shared_dataset("tri-he"))
        parsed.samples = parsed.samples[:10]
        keep = {s.image_sha256 for s in parsed.samples}
        parsed.images = {k: v for k, v in parsed.images.items() if k in keep}
        import_benchmark(store, parsed)
        probe_runs(store, parsed.benchmark.name, (0.0, 0.5))
        benchmarks.append(parsed.benchmark.name)
    if importlib.util.find_spec("hallu_studio.sample") is not None:
        from hallu_studio.sample import build_sample_benchmark

        from hallu_studio.pipelines.importing import import_benchmark

        parsed = build_sample_benchmark()
        import_benchmark(store, parsed)
        probe_runs(store, parsed.benchmark.name, (0.0, 0.5), limit=8, tasks=("caption", "vqa"))
        benchmarks.append(parsed.benchmark.name)
    settings = Settings()
    report = score_store(store, settings, SCORED, progress=False)
    assert not report.failed, report.failures
    for i, rid in enumerate(store.response_ids(benchmark="mini")[::3][:8]):
        store.append_event(HumanEvent("ann", "rating", rid, 1 + i % 5))
    yield store, settings, benchmarks
    store.close()


def shared_dataset_available(name: str) -> bool:
    try:
        shared_dataset(name)
    except pytest.skip.Exception:
        return False
    return True


FAST_OPTIONS = {"n_boot": 30, "limit": 6, "ks": (10, 30)}


@pytest.mark.parametrize("name", list(ANALYSES))
def test_every_analysis_runs_on_the_mini_benchmark(scored, name):
    store, settings, _ = scored
    result = run_analysis(store, name, settings, benchmark="mini", **FAST_OPTIONS)
    assert result.rows, result.notes
    assert all(set(result.columns) <= set(r) for r in result.rows)
    assert result.figure.axes


def test_probe_injection_shows_in_the_analyses(scored):
    store, settings, _ = scored
    comparison = run_analysis(store, "run-comparison", settings, benchmark="mini", n_boot=30)
    emd = [r for r in comparison.rows if r["metric"] == "emd"]
    assert len(emd) == 2 and all(r["difference"] > 0 for r in emd)  # rate 0.3 and 0.6 against the clean probe
    validity = {r["metric"]: r for r in run_analysis(store, "probe-validity", settings, benchmark="mini",
                                                     n_boot=50).rows if r["type"] == "all"}
    assert validity["emd"]["spearman_vs_run_rate"] > 0 and validity["emd"]["false_alarm_rate"] == 0.0
    assert validity["reefknot"]["detection_rate"] == 1.0


@pytest.mark.parametrize("name", ["frequent-pairs", "length", "domain-shift", "vocabulary-shift", "run-comparison",
                                  "probe-validity"])
def test_analyses_on_other_benchmarks(scored, name):
    store, settings, benchmarks = scored
    if len(benchmarks) == 1:
        pytest.skip("neither the shared Tri-HE nor the embedded sample benchmark is available")
    for benchmark in benchmarks[1:]:
        result = run_analysis(store, name, settings, benchmark=benchmark, **FAST_OPTIONS)
        assert result.rows, (benchmark, result.notes)
