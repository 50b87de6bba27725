"""Real lmms-eval --log_samples outputs from public repositories: import into an empty store, score, and find the
numbers lmms-eval recorded in the leaderboard (docs/toolkit-numbers.md, ## lmms-eval).

The files live outside the repo: $HALLU_STUDIO_LMMS_FILES, else ../shared/datasets/toolkits/lmms-eval/ (its
README.md names each file's repository, commit and path); the tests skip without them."""

import json
import os
from pathlib import Path

import pytest

from hallu_studio.cli import main

from conftest import shared_dataset


def _files(*parts: str) -> Path:
    root = os.environ.get("HALLU_STUDIO_LMMS_FILES")
    path = Path(root).joinpath(*parts) if root else shared_dataset("toolkits", "lmms-eval", *parts)
    if not path.exists():
        pytest.skip(f"{path} is not available")
    return path


def _board(db: str, capsys) -> dict:
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--n-boot", "20", "--format", "jsonl"]) == 0
    rows = map(json.loads, capsys.readouterr().out.splitlines())
    return {(r["benchmark"], r["metric"], r["key"]): r for r in rows if r.get("split") is None}


@pytest.mark.slow
def test_scienceqa_img_v06_llava_exact_match_is_lmms_evals(tmp_path, capsys):
    folder = _files("shruum-llava-v1.5-7b", "liuhaotian__llava-v1.5-7b")
    results = json.loads((folder / "20260218_234435_results.json").read_text())
    recorded = results["results"]["scienceqa_img"]["exact_match,none"]
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "lmms-eval", str(folder), "--db", db]) == 0
    assert main(["score", "--db", db, "--metrics", "accuracy"]) == 0
    row = _board(db, capsys)[("scienceqa_img", "accuracy", "accuracy")]
    assert row["model"] == "liuhaotian/llava-v1.5-7b" and row["n"] == 2017
    assert abs(100 * row["value"] - 100 * recorded) < 0.01  # 69.51 both

    from hallu_studio.store import Store

    with Store(db) as store:  # and answer by answer: lmms-eval's per-row exact_match is the metric's verdict
        (run,) = [store.get_run(r["id"]) for r in store.list_runs()]
        assert run.meta["toolkit_version"] == "v0.6-9-g28c75891" and run.meta["recorded"]["exact_match,none"] == recorded
        verdicts = {s["response_id"]: s for s in store.score_stat_rows("accuracy")}
        rows = [json.loads(line) for line in (folder / "20260218_234435_samples_scienceqa_img.jsonl").open()]
        by_doc = {r["doc_id"]: r["exact_match"] for r in rows}
    mine = {int(row["sample_id"].split("/")[1]): row["stats"]["correct"] for row in verdicts.values()}
    assert mine == by_doc


def test_mme_v06_snapshot_path_names_the_hub_model_and_answers_read_as_lmms_eval_scored_them(tmp_path, capsys):
    folder = _files("jetson-qwen2.5-vl-3b-mme-limit8", "lmms_eval")
    results = json.loads((folder / "20260923_172512_results.json").read_text())
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "lmms-eval", str(folder / "20260923_172512_samples_mme.jsonl"), "--db", db]) == 0
    assert main(["score", "--db", db, "--metrics", "pope"]) == 0
    row = _board(db, capsys)[("mme", "pope", "accuracy")]
    assert row["model"] == "Qwen/Qwen2.5-VL-3B-Instruct"  # not the snapshot's hash 66285546…
    efficiency = results["efficiency"]["by_task"]["mme"]  # lmms-eval's count of right answers: 7 of 8
    assert row["value"] == pytest.approx(efficiency["total_correct_score"] / efficiency["docs"])
    assert row["images"] == 4  # input_media: two questions per image
    # MME's own score: the one cognition subtask answered, code_reasoning, is lmms-eval's mme_cognition_score.
    assert main(["score", "--db", db, "--metrics", "mme"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--n-boot", "20", "--format", "jsonl"]) == 0
    parts = {(r["key"], r.get("split")): r["value"] for r in map(json.loads, capsys.readouterr().out.splitlines())
             if r["metric"] == "mme"}
    assert parts[("score", "code_reasoning")] == pytest.approx(results["results"]["mme"]["mme_cognition_score,none"])

    from hallu_studio.store import Store

    with Store(db) as store:
        (run,) = [store.get_run(r["id"]) for r in store.list_runs()]
        samples = store.get_samples(sorted(store.sample_ids("mme")))
    assert run.meta["toolkit_version"] == "main@v0.6-239"
    assert run.meta["results_file"].endswith("20260923_172512_results.json")
    assert samples["mme/0"].image_key == "code_reasoning/0020.png" and samples["mme/0"].meta["category"] == "code_reasoning"
