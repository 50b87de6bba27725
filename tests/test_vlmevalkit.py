"""VLMEvalKit's files in with nothing else (``--format vlmevalkit``), and its MME / HallusionBench numbers reproduced.

Small tables written here in VLMEvalKit's shapes pin the reading; the real files in
``../shared/datasets/toolkits/vlmevalkit-vila_8b`` (and, where present, more of VLMEvalKit's ``assets/benchmarks``
files in ``$HALLU_STUDIO_VLMEVALKIT_ASSETS``, default /tmp/vlmevalkit-assets) are imported into an empty store,
scored, and the leaderboard's numbers compared with the score files VLMEvalKit wrote beside them.
"""

from __future__ import annotations

import base64
import csv
import io
import os
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from conftest import shared_dataset
from hallu_studio.cli import main
from hallu_studio.importers.reading import FatalImportError
from hallu_studio.importers.registry import ImportRequest
from hallu_studio.importers.vlmevalkit import parse_file_name, read_vlmevalkit
from hallu_studio.metrics.vlmevalkit_reading import vlmevalkit_yes_no
from hallu_studio.model import Response
from hallu_studio.pipelines.importing import import_format

VILA_8B = "Efficient-Large-Model/Llama-3-VILA1.5-8b"  # VLMEvalKit's model key vila_8b
# More of VLMEvalKit's files, not in ../shared: `git show c03bc048:assets/benchmarks/<model>/<file>` of
# open-compass/VLMEvalKit for vila_13b_{MME,HallusionBench,POPE}.xlsx (+ _score.csv), vila_8b_ScienceQA_VAL.xlsx and
# vila_8b_MMStar.xlsx, put in this folder.
ASSETS = Path(os.environ.get("HALLU_STUDIO_VLMEVALKIT_ASSETS", "/tmp/vlmevalkit-assets"))


def _asset(name: str) -> Path:
    path = ASSETS / name
    if not path.is_file():
        pytest.skip(f"{path} is not available (VLMEvalKit @ c03bc048, assets/benchmarks/)")
    return path


def _table(path: Path, rows: list[dict]) -> Path:
    frame = pd.DataFrame(rows)
    if path.suffix == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        frame.to_csv(path, sep="\t" if path.suffix == ".tsv" else ",", index=False)
    return path


def _png(colour: str) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (4, 3), colour).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


POPE_ROWS = [
    {"question": "Is there a dog in the image? Please answer yes or no.", "answer": "Yes", "category": "random",
     "index": 0, "image_path": "/home/u/LMUData/images/POPE/0.jpg", "prediction": "Yes, there is a dog."},
    {"question": "Is there a car in the image? Please answer yes or no.", "answer": "No",
     "category": "adversarial,popular", "index": 1, "image_path": "/home/u/LMUData/images/POPE/1.jpg",
     "prediction": "No, there is no car."},
]


def _import(store, path: Path, **options):
    return import_format(store, "vlmevalkit", ImportRequest(path, **options))


def test_file_names_give_dataset_and_model():
    assert parse_file_name(Path("vila_8b_MMBench_DEV_EN.xlsx")).model == "vila_8b"
    assert parse_file_name(Path("vila_8b_MMBench_DEV_EN.xlsx")).dataset == "MMBench_DEV_EN"
    assert parse_file_name(Path("Qwen2-VL-7B_POPE_auxmatch.xlsx")).stem == "Qwen2-VL-7B_POPE"
    with pytest.raises(FatalImportError, match="give --benchmark"):
        parse_file_name(Path("predictions.xlsx"))


@pytest.mark.parametrize("suffix", [".xlsx", ".tsv", ".csv"])
def test_pope_table_creates_the_benchmark_with_splits_and_the_run(store, tmp_path, suffix):
    reports = _import(store, _table(tmp_path / f"qwen_POPE{suffix}", POPE_ROWS))
    assert [r.added for r in reports] == [2, 2] and all(r.ok for r in reports)
    samples = store.get_samples(["POPE/0", "POPE/1"])
    assert samples["POPE/1"].meta["splits"] == ["adversarial", "popular"] and samples["POPE/0"].answer == "yes"
    assert samples["POPE/1"].task == "yes_no" and samples["POPE/1"].image_key == "1.jpg"
    [run] = store.list_runs()
    assert run["model"] == "qwen" and run["benchmark"] == "POPE" and run["responses"] == 2
    assert run["meta"]["toolkit"] == "vlmevalkit" and run["meta"]["source_file"] == f"qwen_POPE{suffix}"
    again = _import(store, tmp_path / f"qwen_POPE{suffix}")
    assert [r.added for r in again] == [0] and again[0].already_present == 2  # nothing twice


def test_auxmatch_columns_become_signals_of_the_same_run(store, tmp_path):
    rows = [dict(r, extracted=e, score=s) for r, e, s in zip(POPE_ROWS, ("Yes", "No"), ("True", "True"))]
    _import(store, _table(tmp_path / "qwen_POPE_auxmatch.xlsx", rows))
    _import(store, _table(tmp_path / "qwen_POPE.xlsx", POPE_ROWS))
    [run] = store.list_runs()  # the plain table and its _auxmatch copy are one run
    response = store.get_responses([Response.make_id(run["id"], "POPE/1")])[Response.make_id(run["id"], "POPE/1")]
    assert response.signals == {"vlmevalkit": {"extracted": "No", "score": "True"}}


def test_a_row_that_differs_from_the_stored_sample_is_refused_by_name(store, tmp_path):
    _import(store, _table(tmp_path / "qwen_POPE.xlsx", POPE_ROWS))
    changed = [POPE_ROWS[0], dict(POPE_ROWS[1], question="Is there a  bus in the image?")]
    reports = _import(store, _table(tmp_path / "other_POPE.xlsx", changed))
    [problem] = [p for r in reports for p in r.problems]
    assert problem.record == "other_POPE.xlsx row 3"
    assert "question 'Is there a bus in the image?' differs from stored sample POPE/1's" in problem.reason
    assert reports[-1].added == 1  # the good row still goes in
    spaced = [dict(POPE_ROWS[0], question="Is there a dog in the image?\n Please answer yes or no.")]
    assert all(r.ok for r in _import(store, _table(tmp_path / "third_POPE.xlsx", spaced)))


def test_index_is_never_paired_with_another_benchmarks_sample(store, tmp_path):
    """The issue's case: COCO_VAL's row index 139 against a COCO benchmark holding image 139."""
    from hallu_studio.model import Benchmark, Sample

    store.add_samples(Benchmark("coco"), [Sample(id="coco/139", benchmark="coco", image_key="000000000139.jpg",
                                                 reference_text=["A living room with a television."])])
    rows = [{"index": 139, "answer": str(["Motorcycles parked in a row.", "A row of motorbikes."]),
             "question": "Please describe this image in general.", "prediction": "Motorcycles."},
            {"index": 140, "answer": "['A cat.']", "question": "Please describe this image in general.",
             "prediction": "A cat."}]
    reports = _import(store, _table(tmp_path / "vila_COCO_VAL.xlsx", rows), benchmark="coco")
    reasons = [str(p) for r in reports for p in r.problems]
    assert reasons[0].startswith("vila_COCO_VAL.xlsx row 2: refused: its question 'Please describe this image in "
                                 "general.' differs from stored sample coco/139's ''")
    assert reasons[1].startswith("vila_COCO_VAL.xlsx row 3: refused: index '140' names no sample of the stored "
                                 "benchmark 'coco'")
    assert store.sample_ids("coco") == {"coco/139"} and not any(r.added for r in reports)
    # Under its own name the same file makes its own benchmark, reference captions parsed.
    _import(store, tmp_path / "vila_COCO_VAL.xlsx")
    sample = store.get_samples(["COCO_VAL/139"])["COCO_VAL/139"]
    assert sample.task == "caption" and sample.reference_text == ["Motorcycles parked in a row.", "A row of motorbikes."]
    assert sample.image_key == "COCO_VAL#139" and sample.meta["image_source"] == "coco"  # CHAIR over COCO-80


def test_dataset_tsv_stores_its_base64_images_and_a_prediction_table_then_answers_it(store, tmp_path):
    red, blue = _png("red"), _png("blue")
    rows = [{"index": 7, "question": "What colour?", "hint": "", "A": "red", "B": "blue", "C": "", "D": "",
             "answer": "A", "category": "color", "l2-category": "attribute", "image": red},
            {"index": 8, "question": "Which colour is it not?", "hint": "Look.", "A": "red", "B": "blue", "C": "green",
             "D": "", "answer": "B", "category": "color", "l2-category": "attribute", "image": "7"},
            {"index": 9, "question": "And this?", "hint": "", "A": "red", "B": "blue", "C": "", "D": "",
             "answer": "B", "category": "color", "l2-category": "attribute", "image": blue},
            {"index": 10, "question": "Broken", "A": "x", "B": "y", "answer": "A",
             "image": base64.b64encode(b"not an image " * 8).decode()}]
    reports = _import(store, _table(tmp_path / "MMBench_DEV_EN.tsv", rows))
    assert reports[0].added == 3 and reports[0].images_found == 2  # rows 7 and 8 share one
    assert [str(p) for p in reports[0].problems] == ["MMBench_DEV_EN.tsv row 5: image: not a readable image"]
    s = store.get_samples(["MMBench_DEV_EN/7", "MMBench_DEV_EN/8", "MMBench_DEV_EN/9"])
    assert s["MMBench_DEV_EN/8"].image_sha256 == s["MMBench_DEV_EN/7"].image_sha256 != s["MMBench_DEV_EN/9"].image_sha256
    assert s["MMBench_DEV_EN/8"].options == ["red", "blue", "green"] and s["MMBench_DEV_EN/8"].answer == "B"
    assert s["MMBench_DEV_EN/8"].task == "mcq" and s["MMBench_DEV_EN/8"].meta["hint"] == "Look."
    assert store.list_runs() == []  # a dataset TSV has no predictions
    preds = [{k: v for k, v in r.items() if k != "image"} | {"prediction": "A"} for r in rows[:3]]
    preds[2]["question"] = "Something else?"
    reports = _import(store, _table(tmp_path / "m_MMBench_DEV_EN.xlsx", preds))
    assert [r.added for r in reports] == [2] and "differs from stored sample MMBench_DEV_EN/9's" in str(
        reports[0].problems[0])


def test_files_that_cannot_be_read_say_why(store, tmp_path):
    with pytest.raises(FatalImportError, match="no model name"):
        list(read_vlmevalkit(_table(tmp_path / "POPE.xlsx", POPE_ROWS), store))
    with pytest.raises(FatalImportError, match="no index column"):
        list(read_vlmevalkit(_table(tmp_path / "m_POPE.xlsx", [{"question": "q", "prediction": "p"}]), store))
    bad = [dict(POPE_ROWS[0], answer="Maybe")]
    [report] = _import(store, _table(tmp_path / "m_POPE.csv", bad))[:1]
    assert str(report.problems[0]) == "m_POPE.csv row 2: answer 'Maybe' is not Yes or No"


# ------------------------------------------------------------------ real files: the toolkit's own numbers


def _leaderboard(db: Path, capsys) -> dict[tuple[str, str, str], float]:
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--format", "csv", "--n-boot", "20"]) == 0
    rows = csv.DictReader(io.StringIO(capsys.readouterr().out))
    # A per-split number (POPE's) is keyed "<key>.<split>", the way the other metrics name theirs.
    return {(r["model"], r["metric"], r["key"] + (f".{r['split']}" if r.get("split") else "")): float(r["value"])
            for r in rows}


def _import_and_score(tmp_path, files: list[Path], metric: str, capsys) -> dict[tuple[str, str, str], float]:
    db = tmp_path / "s.duckdb"
    for f in files:
        assert main(["import", "--format", "vlmevalkit", str(f), "--db", str(db)]) == 0
    assert main(["score", "--metrics", metric, "--db", str(db)]) == 0
    return _leaderboard(db, capsys)


def _recorded(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def _check_mme(board, model: str, score_csv: Path) -> None:
    [recorded] = _recorded(score_csv)
    for key, value in recorded.items():
        ours = board[(model, "mme", key if key == "perception" else "cognition" if key == "reasoning" else
                      f"score.{key}")]
        assert ours == pytest.approx(float(value), abs=0.005), key


def _check_hallusionbench(board, model: str, score_csv: Path) -> None:
    for row in _recorded(score_csv):
        for number in ("aAcc", "fAcc", "qAcc"):
            key = number if row["split"] == "Overall" else f"{number}.{row['split']}"
            assert board[(model, "hallusionbench", key)] == pytest.approx(float(row[number]), abs=0.005), key


@pytest.mark.slow
def test_vila_8b_mme_reproduces_vlmevalkits_perception_and_reasoning(tmp_path, capsys):
    folder = shared_dataset("toolkits", "vlmevalkit-vila_8b")
    board = _import_and_score(tmp_path, [folder / "vila_8b_MME.xlsx"], "mme", capsys)
    assert round(board[(VILA_8B, "mme", "perception")], 2) == 1558.52
    assert board[(VILA_8B, "mme", "cognition")] == 282.5
    _check_mme(board, VILA_8B, folder / "vila_8b_MME_score.csv")


@pytest.mark.slow
def test_vila_8b_hallusionbench_reproduces_vlmevalkits_three_accuracies_per_split(tmp_path, capsys):
    folder = shared_dataset("toolkits", "vlmevalkit-vila_8b")
    board = _import_and_score(tmp_path, [folder / "vila_8b_HallusionBench.xlsx"], "hallusionbench", capsys)
    assert [round(board[(VILA_8B, "hallusionbench", k)], 2) for k in ("aAcc", "fAcc", "qAcc")] == [
        52.26, 22.25, 20.66]
    _check_hallusionbench(board, VILA_8B, folder / "vila_8b_HallusionBench_score.csv")


@pytest.mark.slow
def test_vila_8b_pope_reproduces_vlmevalkits_numbers_overall_and_per_split(tmp_path, capsys):
    """A question in several splits counts in each, overall too (VLMEvalKit's 9,000 answers from 5,127 rows)."""
    folder = shared_dataset("toolkits", "vlmevalkit-vila_8b")
    board = _import_and_score(tmp_path, [folder / "vila_8b_POPE.xlsx"], "pope", capsys)
    assert round(100 * board[(VILA_8B, "pope", "f1")], 2) == 83.34
    assert round(100 * board[(VILA_8B, "pope", "accuracy")], 2) == 85.03
    _check_pope(board, VILA_8B, folder / "vila_8b_POPE_score.csv")


def _check_pope(board, model: str, score_csv: Path) -> None:
    for row in _recorded(score_csv):
        suffix = "" if row["split"] == "Overall" else f".{row['split']}"
        for ours, theirs in (("f1", "Overall"), ("accuracy", "acc"), ("precision", "precision"), ("recall", "recall")):
            assert 100 * board[(model, "pope", ours + suffix)] == pytest.approx(float(row[theirs]), abs=0.005)


@pytest.mark.slow
def test_vila_13b_mme_hallusionbench_and_pope_from_vlmevalkit_assets(tmp_path, capsys):
    files = [_asset("vila_13b_MME.xlsx"), _asset("vila_13b_HallusionBench.xlsx"), _asset("vila_13b_POPE.xlsx")]
    board = _import_and_score(tmp_path, files, "mme,hallusionbench,pope", capsys)
    # The POPE: 84.96 / 86.56 in VLMEvalKit's table (0.832 / 0.910 when a question counted once).
    _check_pope(board, "Efficient-Large-Model/VILA1.5-13b", _asset("vila_13b_POPE_score.csv"))
    _check_mme(board, "Efficient-Large-Model/VILA1.5-13b", _asset("vila_13b_MME_score.csv"))
    _check_hallusionbench(board, "Efficient-Large-Model/VILA1.5-13b", _asset("vila_13b_HallusionBench_score.csv"))


@pytest.mark.parametrize("dataset", ["MME", "HallusionBench", "POPE"])
def test_the_yes_no_reading_is_vlmevalkits_row_for_row(dataset):
    table = shared_dataset("toolkits", "vlmevalkit-vila_8b", f"vila_8b_{dataset}_auxmatch.xlsx")
    frame = pd.read_excel(table, dtype=str, keep_default_na=False)
    ours = [vlmevalkit_yes_no(p).capitalize() for p in frame["prediction"]]
    assert ours == list(frame["extracted"])


def test_real_pope_and_coco_val_import_with_splits_and_reference_captions(store):
    folder = shared_dataset("toolkits", "vlmevalkit-vila_8b")
    reports = _import(store, folder / "vila_8b_POPE.xlsx")
    assert [r.added for r in reports] == [5127, 5127] and all(r.ok for r in reports)
    [run] = store.list_runs()
    assert run["model"] == VILA_8B and run["meta"]["vlmevalkit_model"] == "vila_8b"
    assert run["meta"]["results_file"] == "vila_8b_POPE_score.csv"
    splits = [s.meta["splits"] for s in store.get_samples(sorted(store.sample_ids("POPE"))).values()]
    assert sum(len(s) for s in splits) == 9000  # 3,000 questions per split, as VLMEvalKit counts them
    reports = _import(store, folder / "vila_8b_COCO_VAL.xlsx")
    assert [r.added for r in reports] == [5000, 5000] and all(r.ok for r in reports)
    sample = store.get_samples(["COCO_VAL/1"])["COCO_VAL/1"]
    assert len(sample.reference_text) == 5 and sample.reference_text[0].startswith("A child holding a flowered")


def test_real_scienceqa_imports_as_multiple_choice(store):
    reports = _import(store, _asset("vila_8b_ScienceQA_VAL.xlsx"))
    assert [r.added for r in reports] == [2097, 2097] and all(r.ok for r in reports)
    sample = store.get_samples(["ScienceQA_VAL/1"])["ScienceQA_VAL/1"]
    assert sample.task == "mcq" and sample.options == ["discus", "armored catfish"] and sample.answer == "B"


def test_real_mmstar_keeps_option_letters_in_place_where_an_option_was_lost(store):
    reports = _import(store, _asset("vila_8b_MMStar.xlsx"))
    assert [r.added for r in reports] == [1500, 1500] and all(r.ok for r in reports)
    sample = store.get_samples(["MMStar/268"])["MMStar/268"]
    assert sample.options == ["", "Two", "One", "Cannot be determined"] and sample.answer == "A"


def test_images_option_reads_the_pictures_image_path_names(store, tmp_path):
    folder = tmp_path / "POPE"
    folder.mkdir()
    Image.new("RGB", (5, 4), "green").save(folder / "0.jpg")
    reports = _import(store, _table(tmp_path / "m_POPE.xlsx", POPE_ROWS), images=folder)
    assert reports[0].images_found == 1
    assert [str(p) for p in reports[0].problems] == ["m_POPE.xlsx row 3: 1.jpg: no such image file"]
    assert store.get_samples(["POPE/0"])["POPE/0"].image_sha256 is not None
