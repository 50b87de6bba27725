"""POPE per split: an answer counts once in each split it belongs to, overall and per split; the leaderboard lists
each split's numbers under its name; the bootstrap keeps an answer's copies together."""

from __future__ import annotations

import json

import pytest

from hallu_studio.cli import main
from hallu_studio.metrics.aggregate import bootstrap_intervals
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.pope import PopeMetric
from hallu_studio.metrics.spec import Breakdown
from hallu_studio.model import Benchmark, Response, Run, Sample
from hallu_studio.store import Store

# (image, gold, answer, splits): VLMEvalKit's POPE holds questions that belong to two or three splits at once.
ANSWERS = [("1", "yes", "Yes", ["random", "popular", "adversarial"]), ("1", "no", "Yes", ["adversarial", "popular"]),
           ("1", "no", "No", ["random"]), ("2", "yes", "No", ["random", "popular", "adversarial"]),
           ("2", "no", "No", ["popular"]), ("3", "no", "Yes", ["adversarial"]), ("3", "yes", "Yes", ["random"]),
           ("4", "yes", "yes", ["popular", "adversarial"]), ("4", "no", "no, there is none", ["random"])]


def sample(i: int, image: str, gold: str, splits: list[str]) -> Sample:
    return Sample(id=f"POPE/{i}", benchmark="POPE", image_key=image, task="yes_no", question="Is there a cat?",
                  answer=gold, meta={"splits": splits})


def scored(rows=ANSWERS) -> list[dict[str, float]]:
    metric = PopeMetric()
    return [metric.update(ScoringItem(f"r{i}", said, sample(i, image, gold, splits))).stats
            for i, (image, gold, said, splits) in enumerate(rows)]


def copies() -> list[tuple[str, str, str, list[str]]]:
    """The same answers, one copy per split, each its own single-split question."""
    return [(image, gold, said, [split]) for image, gold, said, splits in ANSWERS for split in splits]


def test_an_answer_counts_once_in_each_of_its_splits_overall_and_per_split():
    metric = PopeMetric()
    out = metric.compute(scored())
    expected = metric.compute(scored(copies()))
    assert out == pytest.approx(expected)
    assert out["questions"] == sum(len(s) for *_, s in ANSWERS) == 15
    # adversarial: yes/Yes TP, no/Yes FP, yes/No FN, no/Yes FP, yes/yes TP -> P 2/4, R 2/3, acc 2/5
    assert out["adversarial.precision"] == pytest.approx(0.5)
    assert out["adversarial.recall"] == pytest.approx(2 / 3)
    assert out["adversarial.accuracy"] == pytest.approx(0.4) and out["adversarial.questions"] == 5
    assert out["adversarial.yes_ratio"] == pytest.approx(0.8)
    assert set(metric.spec.breakdown.parts(out)) == {"random", "popular", "adversarial"}
    # Counted once per question instead, the overall numbers would differ: the test can tell.
    once = metric.compute(scored([(i, g, a, []) for i, g, a, _ in ANSWERS]))
    assert once["accuracy"] != pytest.approx(out["accuracy"])


def test_a_comma_separated_category_and_derived_strategies_are_splits():
    metric = PopeMetric()
    item = ScoringItem("r", "No", Sample(id="POPE/1", benchmark="POPE", image_key="1", task="yes_no", answer="no",
                                         meta={"splits": "adversarial,popular"}))
    stats = metric.update(item).stats
    assert stats == {"tn": 2.0, "adversarial.tn": 1.0, "popular.tn": 1.0}
    derived = ScoringItem("r", "No", Sample(id="d/1", benchmark="d", image_key="1", task="yes_no", answer="no",
                                            meta={"strategy": "popular", "kind": "object"}))
    assert metric.update(derived).stats == {"tn": 1.0, "popular.tn": 1.0, "object.tn": 1.0}


def test_the_bootstrap_keeps_an_answers_copies_in_its_image():
    """An answer in two splits is one item of its image: the intervals equal those of its per-split copies drawn
    together with their image, and differ from copies drawn on their own."""
    compute = PopeMetric().compute
    keys = ["f1", "accuracy", "adversarial.f1", "random.accuracy"]
    together = bootstrap_intervals(scored(), compute, [i for i, *_ in ANSWERS], n_boot=300, seed=3, keys=keys)
    in_image = bootstrap_intervals(scored(copies()), compute, [i for i, *_ in copies()], n_boot=300, seed=3,
                                   keys=keys)
    apart = bootstrap_intervals(scored(copies()), compute, [f"{i}/{n}" for n, (i, *_) in enumerate(copies())],
                                n_boot=300, seed=3, keys=keys)
    for key in keys:
        assert together[key].as_tuple() == pytest.approx(in_image[key].as_tuple())
    assert any(together[k].as_tuple() != pytest.approx(apart[k].as_tuple()) for k in keys)


def test_breakdown_orders_declared_parts_first_and_skips_other_prefixes():
    b = Breakdown(("f1",), order=("random", "popular", "adversarial"), not_parts=("object",))
    point = {"zeta.f1": 1.0, "adversarial.f1": 0.5, "object.f1": 0.2, "random.f1": 0.1, "random.questions": 3}
    assert b.entries(point) == [("random", "f1", "random.f1"), ("adversarial", "f1", "adversarial.f1"),
                                ("zeta", "f1", "zeta.f1")]


def test_the_leaderboard_lists_each_split_under_its_name(tmp_path, capsys):
    db = tmp_path / "pope.duckdb"
    with Store(db) as st:
        samples = [sample(i, image, gold, splits) for i, (image, gold, _, splits) in enumerate(ANSWERS)]
        st.add_samples(Benchmark("POPE"), samples)
        st.add_run(Run(id="run-m", benchmark="POPE", model="org/model", backend="recorded"))
        st.add_responses([Response("run-m", s.id, said) for s, (_, _, said, _) in zip(samples, ANSWERS)])
    assert main(["score", "--db", str(db), "--metrics", "pope"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--n-boot", "50", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    got = {(r["key"], r["split"]): r for r in rows if r["metric"] == "pope"}
    assert got[("f1", "adversarial")]["value"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert got[("accuracy", "adversarial")]["n"] == 5 and got[("accuracy", "adversarial")]["images"] == 4
    assert got[("accuracy", None)]["n"] == len(ANSWERS)
    assert {s for _, s in got} == {None, "random", "popular", "adversarial"}
    assert {k for k, _ in got} == {"f1", "accuracy", "precision", "recall", "yes_ratio"}
    # The headline comes first, then the summary, then the splits in the toolkits' order.
    order = [(r["key"], r["split"]) for r in rows if r["metric"] == "pope"]
    assert order[0] == ("f1", None) and order.index(("f1", "random")) < order.index(("f1", "adversarial"))
    assert main(["leaderboard", "--db", str(db), "--n-boot", "50"]) == 0
    table = capsys.readouterr().out
    assert any(line.split()[2:5] == ["pope", "f1", "adversarial"] for line in table.splitlines())
