"""The numbers paper repositories recorded beside their POPE answer files, reproduced through the product path:
import POPE's question files, import each LLaVA answer file, ``score --metrics pope``, ``leaderboard``. The files
are read from ../shared (skipped without it); the recorded values are those the repositories' result files print."""

from __future__ import annotations

import json

import pytest

from conftest import shared_dataset
from hallu_studio.cli import main

# 0.01 points on the toolkits' percent scale.
TOLERANCE = 1e-4


def config_key(reading: str) -> str:
    """The config key of POPE's scores under ``reading``: the numbers are that reading's."""
    from hallu_studio.config import load_settings
    from hallu_studio.metrics.keys import current_config_keys

    return current_config_keys(load_settings(env={"HALLU_STUDIO_POPE_READING": reading})).get("pope")


def leaderboard_rows(db, capsys) -> dict[tuple[str, str | None], float]:
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--metrics", "pope", "--format", "jsonl", "--n-boot", "10"]) == 0
    return {(r["key"], r["split"]): r for r in map(json.loads, capsys.readouterr().out.splitlines())}


def imported_and_scored(db, questions, answer_files, *extra: str) -> None:
    assert main(["import", "--format", "pope", str(questions), "--db", str(db)]) == 0
    for path in answer_files:
        assert main(["import", "--format", "llava", str(path), "--db", str(db), *extra]) == 0
    assert main(["score", "--metrics", "pope", "--db", str(db)]) == 0


@pytest.mark.slow
@pytest.mark.parametrize("reading", ["studio", "released"])
def test_haoming_llava_v15_7b_answers_give_the_recorded_numbers(tmp_path, capsys, monkeypatch, reading):
    """Haoming2000/VLM-Benchmarks: LLaVA-1.5-7B on LLaVA's question file (adversarial 3,000 + random 2,712),
    POPE_results.txt from LLaVA's eval_pope.py."""
    answers = shared_dataset("toolkits", "haoming-vlm-benchmarks", "pope", "pope_answers_llava-v1.5-7b.partial5712.jsonl")
    questions = shared_dataset("toolkits", "pope-labels")
    db = tmp_path / "s.duckdb"
    monkeypatch.setenv("HALLU_STUDIO_POPE_READING", reading)
    imported_and_scored(db, questions, [answers], "--benchmark", "pope")
    rows = leaderboard_rows(db, capsys)
    recorded = {("f1", "adversarial"): 0.8418439716312057, ("accuracy", "adversarial"): 0.8513333333333334,
                ("precision", "adversarial"): 0.8992424242424243, ("recall", "adversarial"): 0.7913333333333333,
                ("yes_ratio", "adversarial"): 0.44,
                ("f1", "random"): 0.8723824575266693, ("accuracy", "random"): 0.8808997050147492,
                ("precision", "random"): 0.9744042365401588, ("recall", "random"): 0.7896995708154506,
                ("yes_ratio", "random"): 0.41777286135693215}
    for key, value in recorded.items():
        assert rows[key]["value"] == pytest.approx(value, abs=TOLERANCE), key
    assert rows[key]["config_key"] == config_key(reading)
    assert rows[("f1", "adversarial")]["n"] == 3000 and rows[("f1", "random")]["n"] == 2712
    assert ("f1", "popular") not in rows
    assert rows[("f1", None)]["model"] == "liuhaotian/llava-v1.5-7b"


@pytest.mark.slow
@pytest.mark.parametrize("reading", ["studio", "released"])
def test_tracyzhao_vcd_llava_next_answers_give_the_recorded_numbers(tmp_path, capsys, monkeypatch, reading):
    """TracyZhao24/VCD: LLaVA-NeXT-Mistral-7B, one answer file per split (question ids restart per split), scored
    against the split files kept beside them (an earlier release than POPE's output/coco/: random holds 3,000)."""
    folder = shared_dataset("toolkits", "tracyzhao-vcd", "pope")
    db = tmp_path / "s.duckdb"
    monkeypatch.setenv("HALLU_STUDIO_POPE_READING", reading)
    imported_and_scored(db, folder, sorted(folder.glob("coco_pope_*_answers_*.jsonl")))
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--metrics", "pope", "--format", "jsonl", "--n-boot", "10"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    by_split = {(r["key"], r["split"]): r["value"] for r in rows if r["split"]}
    recorded = {("precision", "adversarial"): 0.8811641067097817, ("recall", "adversarial"): 0.7266666666666667,
                ("f1", "adversarial"): 0.7964925100474972, ("accuracy", "adversarial"): 0.8143333333333334,
                ("yes_ratio", "adversarial"): 0.41233333333333333,
                ("precision", "popular"): 0.9269328802039083, ("recall", "popular"): 0.7273333333333334,
                ("f1", "popular"): 0.8150915203586104, ("accuracy", "popular"): 0.835,
                ("yes_ratio", "popular"): 0.3923333333333333,
                ("precision", "random"): 0.9576036866359448, ("recall", "random"): 0.6926666666666667,
                ("f1", "random"): 0.8038684719535784, ("accuracy", "random"): 0.831,
                ("yes_ratio", "random"): 0.3616666666666667}
    for key, value in recorded.items():
        assert by_split[key] == pytest.approx(value, abs=TOLERANCE), key
    assert {r["config_key"] for r in rows} == {config_key(reading)}
    assert {r["model"] for r in rows} == {"liuhaotian/llava-v1.6-mistral-7b"}
    assert len({r["run_id"] for r in rows}) == 3  # three files, three decodings: three runs
