import json

import pytest

from hallu_studio.cli import main
from hallu_studio.model import Benchmark, Response, Run, Sample, Score
from hallu_studio.store import Store


def test_leaderboard_prints_each_models_numbers_with_an_interval(tmp_path, capsys):
    db = tmp_path / "lb.duckdb"
    with Store(db) as st:
        st.add_samples(Benchmark("b"), [Sample(id=f"b/{i}", benchmark="b", image_key=str(i)) for i in range(4)])
        for model, values in (("good", [0.1, 0.2, 0.1, 0.2]), ("bad", [0.9, 0.8, 0.9, 0.8])):
            st.add_run(Run(id=f"run-{model}", benchmark="b", model=model, backend="recorded"))
            responses = [Response(f"run-{model}", f"b/{i}", "text") for i in range(4)]
            st.add_responses(responses)
            st.put_scores([Score(r.id, "chair", "k", {"chair_i_item": v}) for r, v in zip(responses, values)])
    assert main(["leaderboard", "--db", str(db), "--n-boot", "50", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_model = {r["model"]: r for r in rows if r["key"] == "chair_i_item"}
    assert by_model["good"]["value"] == pytest.approx(0.15) and by_model["bad"]["value"] == pytest.approx(0.85)
    assert by_model["good"]["low"] <= 0.15 <= by_model["good"]["high"]
    assert {r["images"] for r in rows} == {4}


def test_leaderboard_of_an_empty_store_says_what_to_do(tmp_path, capsys):
    Store(tmp_path / "e.duckdb").close()
    assert main(["leaderboard", "--db", str(tmp_path / "e.duckdb")]) == 1
    assert "hallu-studio score" in capsys.readouterr().err
