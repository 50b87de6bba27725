"""lmms-eval --log_samples files in with nothing else: the task's benchmark built from the rows (v0.3 rows with
``doc``, v0.6 rows without), checked against a stored one, the results JSON of the same date, the model's hub id
and the run's provenance. Fixtures under tests/data/lmms_eval are hand-written in the toolkit's shapes."""

import json
import shutil
from pathlib import Path

import pytest

from hallu_studio.cli import main
from hallu_studio.importers.lmms_eval import samples_file
from hallu_studio.importers.reading import FatalImportError
from hallu_studio.importers.registry import ImportRequest
from hallu_studio.pipelines.importing import import_format

DATA = Path(__file__).parent / "data" / "lmms_eval"
V03 = DATA / "v0.3" / "llava-hf__llava-1.5-7b-hf"
V06 = DATA / "v0.6" / "snapshots__0123456789abcdef0123456789abcdef01234567"


def _import(store, path, **options):
    return import_format(store, "lmms-eval", ImportRequest(path=Path(path), **options))


def _runs(store):
    runs = [store.get_run(r["id"]) for r in store.list_runs()]
    return {r.benchmark: r for r in runs}


def test_a_v03_pope_file_creates_its_benchmark_with_splits_and_names_the_model(store):
    reports = _import(store, V03 / "20240905_101010_samples_pope.jsonl")
    assert [r.summary() for r in reports] == [
        "pope (from 20240905_101010_samples_pope.jsonl): 6 images (0 found), 6 questions; 6 added, 0 already present; "
        "0 problems",
        "20240905_101010_samples_pope.jsonl: 1 runs added, 6 responses; 6 added, 0 already present; 0 problems"]
    samples = store.get_samples(sorted(store.sample_ids("pope")))
    first = samples["pope/0"]
    assert (first.task, first.question, first.answer, first.meta["splits"]) == (
        "yes_no", "Is there a dog in the image?", "yes", ["adversarial"])
    assert first.meta["question_id"] == "1" and first.meta["prompt"].endswith("single word or phrase.")
    assert sorted(s.meta["splits"][0] for s in samples.values()) == ["adversarial"] * 2 + ["popular"] * 2 + ["random"] * 2
    run = _runs(store)["pope"]
    assert run.model == "llava-hf/llava-1.5-7b-hf" and run.backend == "recorded"
    assert run.meta["toolkit"] == "lmms-eval" and run.meta["toolkit_version"] == "a1b2c3d"
    assert run.meta["results_file"].endswith("20240905_101010_results.json")
    assert run.meta["source_file"].endswith("20240905_101010_samples_pope.jsonl")
    assert run.meta["recorded"]["pope_accuracy,none"] == pytest.approx(4 / 6)
    benchmark = {b.name: b for b in store.benchmark_infos()}
    assert "pope" in benchmark


def test_a_v06_folder_imports_each_task_with_image_names_options_and_the_hub_id(store):
    reports = _import(store, V06)
    assert [r.added for r in reports] == [4, 4, 3, 3]
    mme = store.get_samples(sorted(store.sample_ids("mme")))
    assert [(mme[i].image_key, mme[i].task, mme[i].answer, mme[i].meta["category"]) for i in ("mme/0", "mme/1")] == [
        ("existence/1.jpg", "yes_no", "yes", "existence"), ("existence/1.jpg", "yes_no", "no", "existence")]
    assert mme["mme/0"].question == "Is there a red bus in this image?"
    sqa = store.get_samples(sorted(store.sample_ids("scienceqa_img")))
    assert (sqa["scienceqa_img/1"].question, sqa["scienceqa_img/1"].options, sqa["scienceqa_img/1"].answer) == (
        "Which animal has fur?", ["snake", "rabbit", "frog"], "B")
    assert sqa["scienceqa_img/0"].question == "Context: A shelf holds two jars.\nWhich jar is heavier?"
    assert sqa["scienceqa_img/0"].meta["image_identity"].startswith("the file names no image")
    runs = _runs(store)
    assert {r.model for r in runs.values()} == {"Qwen/Qwen2.5-VL-7B-Instruct"}  # the snapshot path, never its hash
    assert runs["mme"].meta["toolkit_version"] == "main@v0.6-12"
    texts = {r.sample_id: r.text for r in store.iter_responses(runs["mme"].id)}
    assert texts["mme/1"] == "Yes"  # a bare-string filtered_resps


def test_reimporting_the_same_file_checks_every_row_and_adds_nothing(store):
    _import(store, V03)
    again = _import(store, V03)
    assert [(r.records, r.added, r.failed) for r in again] == [(6, 0, 0)]


def test_a_row_whose_prompt_or_image_differs_from_the_stored_question_is_refused_by_name(store, tmp_path):
    _import(store, V06 / "20260101_120000_samples_mme.jsonl")
    folder = tmp_path / "other__model"
    folder.mkdir()
    rows = [json.loads(line) for line in (V06 / "20260101_120000_samples_mme.jsonl").read_text().splitlines()]
    rows[1]["input"] = rows[1]["input"].replace("blue bus", "green bus")
    rows[2]["input_media"] = ["count/8.jpg"]
    rows[3]["doc_id"] = 99
    (folder / "20260102_090000_samples_mme.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (report,) = _import(store, folder, model="other/model")
    assert report.added == 1 and report.failed == 3
    reasons = [str(p) for p in report.problems]
    assert reasons[0].startswith("20260102_090000_samples_mme.jsonl line 2 (doc_id 1): its prompt 'Is there a green bus")
    assert "stored sample mme/1" in reasons[0]
    assert reasons[1] == ("20260102_090000_samples_mme.jsonl line 3 (doc_id 2): its image 'count/8.jpg' is not stored "
                          "sample mme/2's 'count/7.jpg'")
    assert reasons[2].endswith("benchmark mme holds no question of doc_id 99")


def _copy(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst / src.name)


def test_the_results_file_of_the_same_date_names_the_model_not_the_first_in_the_folder(tmp_path):
    _copy(V03 / "20240905_101010_samples_pope.jsonl", tmp_path)
    results = json.loads((V03 / "20240905_101010_results.json").read_text())
    other = dict(results, config={"model": "x", "model_args": "pretrained=someone/else"})
    (tmp_path / "20240101_000000_results.json").write_text(json.dumps(other))
    (tmp_path / "20240905_101010_results.json").write_text(json.dumps(results))
    found = samples_file(tmp_path / "20240905_101010_samples_pope.jsonl")
    assert found.results_path.name == "20240905_101010_results.json"
    assert found.model(None)[0] == "llava-hf/llava-1.5-7b-hf"


def test_two_results_files_and_none_of_the_samples_date_is_an_error_naming_both(tmp_path):
    _copy(V03 / "20240905_101010_samples_pope.jsonl", tmp_path)
    results = (V03 / "20240905_101010_results.json").read_text()
    for stamp in ("20240101_000000", "20240202_000000"):
        (tmp_path / f"{stamp}_results.json").write_text(results)
    with pytest.raises(FatalImportError, match="20240101_000000_results.json, 20240202_000000_results.json"):
        samples_file(tmp_path / "20240905_101010_samples_pope.jsonl")
    assert samples_file(tmp_path / "20240905_101010_samples_pope.jsonl", model_given=True).results_path is None


def test_without_a_results_file_the_model_is_the_folders_hub_id(tmp_path):
    _copy(V03 / "20240905_101010_samples_pope.jsonl", tmp_path / "liuhaotian__llava-v1.5-13b")
    found = samples_file(tmp_path / "liuhaotian__llava-v1.5-13b" / "20240905_101010_samples_pope.jsonl")
    assert found.results_path is None and found.model(None)[0] == "liuhaotian/llava-v1.5-13b"


def test_caption_rows_keep_their_reference_captions(store, tmp_path):
    rows = [{"doc_id": 0, "doc": {"question_id": "000000000139.jpg", "question": "Provide a one-sentence caption."},
             "target": str(["A woman stands in a kitchen.", "A room with a stove."]),
             "resps": [["A kitchen with a woman."]], "filtered_resps": ["A kitchen with a woman."],
             "input": "Provide a one-sentence caption."}]
    path = tmp_path / "20240905_101010_samples_coco2017_cap_val.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n")
    reports = _import(store, path, model="m")
    assert [str(p) for p in reports[-1].problems] == [
        "20240905_101010_samples_coco2017_cap_val.jsonl: no results JSON of this run beside it: the model is named "
        "'m' and lmms-eval's version is unknown"] and reports[-1].failed == 0
    (sample,) = store.get_samples(["coco2017_cap_val/0"]).values()
    assert sample.image_key == "000000000139.jpg"
    assert sample.task == "caption" and sample.reference_captions == ["A woman stands in a kitchen.",
                                                                      "A room with a stove."]


def test_cli_imports_scores_and_ranks_an_lmms_eval_folder_in_three_commands(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "lmms-eval", str(V06), "--db", db]) == 0
    assert main(["score", "--db", db, "--metrics", "accuracy,pope"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--n-boot", "20", "--format", "jsonl"]) == 0
    rows = {(r["benchmark"], r["metric"], r["key"]): r for r in map(json.loads, capsys.readouterr().out.splitlines())
            if r.get("split") is None}
    assert rows[("scienceqa_img", "accuracy", "accuracy")]["value"] == pytest.approx(2 / 3)  # lmms-eval's 0.667
    assert rows[("scienceqa_img", "accuracy", "accuracy")]["model"] == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert rows[("mme", "pope", "accuracy")]["value"] == pytest.approx(3 / 4)


def test_rows_answering_a_benchmark_of_another_importer_match_by_the_docs_own_id(store, tmp_path):
    from hallu_studio.model import Benchmark, Sample

    store.add_samples(Benchmark("reefknot"), [
        Sample(id=i, benchmark="reefknot", image_key="1", task="vqa", question="q", answer="a")
        for i in ("reefknot/vqa/0", "reefknot/mcq/0", "reefknot/vqa/7")], [])
    path = tmp_path / "samples_reefknot.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"doc_id": 0, "doc": {"id": "vqa/7"}, "resps": [["raw"]], "filtered_resps": ["on"]},
        {"doc_id": 1, "doc": {"id": "vqa/9"}, "resps": [["?"]]},
        {"doc_id": 2, "resps": [["x"]]},
        {"doc_id": 3, "doc": {"id": "0"}, "resps": [["y"]]}]))
    (report,) = _import(store, path, benchmark="reefknot", model="m")
    assert report.added == 1 and [str(p) for p in report.problems if p.fatal] == [
        "samples_reefknot.jsonl line 2 (doc_id 1): no stored sample of benchmark reefknot matches 'vqa/9' / '1'",
        "samples_reefknot.jsonl line 3 (doc_id 2): no stored sample of benchmark reefknot matches '2'",
        "samples_reefknot.jsonl line 4 (doc_id 3): key '0' matches 2 samples of reefknot (reefknot/mcq/0, "
        "reefknot/vqa/0); give a unique id"]
    (prefixed,) = _import(store, path, benchmark="reefknot/vqa", model="m2")
    # Under reefknot/vqa the first row's doc_id 0 names reefknot/vqa/0 before its doc.id is tried, as does the
    # last row's doc.id: the second answer to one sample is refused, not dropped without a word.
    assert prefixed.added == 1 and str([p for p in prefixed.problems if p.fatal][-1]) == (
        "samples_reefknot.jsonl line 4 (doc_id 3): it answers stored sample reefknot/vqa/0, which "
        "samples_reefknot.jsonl line 1 (doc_id 0) answers already")


def test_the_pope_fixtures_recorded_numbers_are_the_pope_metrics(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "lmms-eval", str(V03), "--db", db]) == 0
    assert main(["score", "--db", db, "--metrics", "pope"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--n-boot", "20", "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    mine = {r["key"]: r["value"] for r in rows if r["split"] is None}
    recorded = json.loads((V03 / "20240905_101010_results.json").read_text())["results"]["pope"]
    # lmms-eval's pope_yes_ratio is the share of gold "yes", not of answers: not compared.
    for key, theirs in (("accuracy", "pope_accuracy,none"), ("precision", "pope_precision,none"),
                        ("recall", "pope_recall,none"), ("f1", "pope_f1_score,none")):
        assert mine[key] == pytest.approx(recorded[theirs])
    # doc.category became each question's split: the leaderboard breaks POPE out by it.
    assert {r["split"] for r in rows} == {None, "adversarial", "popular", "random"}


def test_files_that_are_not_samples_files_are_refused_with_the_reason(store, tmp_path):
    with pytest.raises(FatalImportError, match="a results JSON holds no answers"):
        _import(store, V03 / "20240905_101010_results.json")
    (tmp_path / "pope.json").write_text(json.dumps({"args": {}, "logs": [], "time": "x"}))
    with pytest.raises(FatalImportError, match="v0.2.0's <task>.json logs are not supported yet"):
        _import(store, tmp_path / "pope.json")
    with pytest.raises(FatalImportError, match="no lmms-eval samples file"):
        _import(store, tmp_path)
    with pytest.raises(ValueError, match="--benchmark names one benchmark and the folder holds several tasks"):
        _import(store, V06, benchmark="mine")
    assert store.benchmark_names() == []


def test_an_empty_samples_file_in_a_folder_is_a_problem_and_the_others_go_in(store, tmp_path):
    shutil.copytree(V06, tmp_path / "run")
    (tmp_path / "run" / "20260101_120000_samples_textvqa_val.jsonl").write_text("")
    reports = _import(store, tmp_path / "run")
    assert [str(p) for r in reports for p in r.problems] == [
        "20260101_120000_samples_textvqa_val.jsonl: no readable lmms-eval row in the file"]
    assert sorted(store.benchmark_names()) == ["mme", "scienceqa_img"]


def test_a_folder_that_is_not_lmms_evals_model_folder_never_names_the_model(tmp_path):
    _copy(V03 / "20240905_101010_samples_pope.jsonl", tmp_path / "logs")
    found = samples_file(tmp_path / "logs" / "20240905_101010_samples_pope.jsonl")
    assert found.model(None)[0] == "20240905_101010_samples_pope"  # the file's name, as a last resort


def test_a_log_likelihood_row_is_refused_as_not_supported_yet(store, tmp_path):
    path = tmp_path / "20240905_101010_samples_seedbench_ppl.jsonl"
    path.write_text(json.dumps({"doc_id": 0, "target": "A", "input": "Which?\nA. x\nB. y",
                                "filtered_resps": [["-1.5", "False"], ["-3.2", "False"]]}) + "\n"
                    + json.dumps({"doc_id": 1, "target": "B", "input": "Which?\nA. x\nB. y",
                                  "filtered_resps": ["B"]}) + "\n")
    reports = _import(store, path, model="m")
    assert "2 requests for one question (a log-likelihood task)" in str(reports[-1].problems[0])
    assert reports[-1].added == 1
