"""``import --format pope`` (POPE's split files, LLaVA's question file) and ``import --format llava`` (LLaVA's answer
files), on small files written here in the released files' shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hallu_studio.importers.llava import read_llava
from hallu_studio.importers.pope import read_pope
from hallu_studio.importers.reading import FatalImportError
from hallu_studio.importers.registry import ImportRequest
from hallu_studio.model import Benchmark, Sample
from hallu_studio.pipelines.importing import import_format
from hallu_studio.store import Store

SUFFIX = "\nAnswer the question using a single word or phrase."
IMAGE = "COCO_val2014_000000000042.jpg"
OTHER = "COCO_val2014_000000000073.jpg"
# (image, object, label) per split, question ids 1.. in each file as POPE numbers them.
SPLITS = {"adversarial": [(IMAGE, "dog", "yes"), (IMAGE, "cat", "no"), (OTHER, "car", "yes"), (OTHER, "bus", "no")],
          "random": [(IMAGE, "dog", "yes"), (IMAGE, "kite", "no"), (OTHER, "car", "yes")]}
OFFSET = {"adversarial": 0, "random": 10_000_000}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def question(obj: str) -> str:
    return f"Is there a {obj} in the image?"


def pope_folder(root: Path, llava: bool = True) -> Path:
    root.mkdir(exist_ok=True)
    for split, rows in SPLITS.items():
        write_jsonl(root / f"coco_pope_{split}.json", [
            {"question_id": i, "image": image, "text": question(obj), "label": label}
            for i, (image, obj, label) in enumerate(rows, start=1)])
    if llava:
        write_jsonl(root / "llava_pope_test.jsonl", [
            {"question_id": OFFSET[split] + i, "image": image, "text": question(obj) + SUFFIX, "category": split}
            for split in ("adversarial", "random") for i, (image, obj, _) in enumerate(SPLITS[split], start=1)])
    return root


def answers(path: Path, rows: list[tuple[int, str, str]], **extra) -> Path:
    """LLaVA answer rows (question_id, prompt, text), as model_vqa_loader writes them."""
    return write_jsonl(path, [{"question_id": q, "prompt": p, "text": t, "answer_id": f"a{q}",
                               "model_id": "llava-v1.5-7b", "metadata": {}, **extra} for q, p, t in rows])


def test_split_files_become_one_benchmark_with_a_sample_per_split_question(tmp_path):
    parsed = read_pope(pope_folder(tmp_path / "pope"))
    by_id = {s.id: s for s in parsed.samples}
    assert parsed.benchmark.name == "pope" and len(by_id) == 7
    s = by_id["pope/random/2"]
    assert (s.question, s.answer, s.image_key, s.task) == (question("kite"), "no", IMAGE, "yes_no")
    assert s.meta["splits"] == ["random"] and s.meta["llava_question_id"] == 10_000_002
    # The same question in two split files is two questions (ids restart per file): two samples, one image.
    assert by_id["pope/adversarial/1"].question == by_id["pope/random/1"].question
    assert by_id["pope/adversarial/1"].image_key == by_id["pope/random/1"].image_key
    assert parsed.benchmark.meta["toolkit"] == "AoiDragon/POPE"
    assert parsed.benchmark.meta["source_file"][-1] == "llava_pope_test.jsonl"
    assert [p for p in parsed.problems if p.fatal] == []


def test_llava_question_file_alone_takes_the_labels_from_the_split_files_beside_it(tmp_path):
    folder = pope_folder(tmp_path / "pope")
    assert len(read_pope(folder / "llava_pope_test.jsonl").samples) == 7
    (folder / "coco_pope_random.json").unlink()
    (folder / "coco_pope_adversarial.json").unlink()
    with pytest.raises(FatalImportError, match="carry no labels"):
        read_pope(folder / "llava_pope_test.jsonl")


def test_a_llava_question_that_differs_from_the_split_files_is_named(tmp_path):
    folder = pope_folder(tmp_path / "pope")
    lines = (folder / "llava_pope_test.jsonl").read_text().splitlines()
    changed = json.loads(lines[1])
    changed["text"] = question("horse") + SUFFIX
    lines[1] = json.dumps(changed)
    (folder / "llava_pope_test.jsonl").write_text("\n".join(lines) + "\n")
    parsed = read_pope(folder)
    [warning] = [p for p in parsed.problems if "differ" in p.reason]
    assert "line 2" in warning.reason and "horse" in warning.reason and not warning.fatal
    assert "llava_question_id" not in {s.id: s for s in parsed.samples}["pope/adversarial/2"].meta


def test_a_bad_row_is_refused_by_line_and_the_good_ones_go_in(tmp_path):
    path = write_jsonl(tmp_path / "coco_pope_popular.json", [
        {"question_id": 1, "image": IMAGE, "text": question("dog"), "label": "yes"},
        {"question_id": 2, "image": IMAGE, "text": question("cat"), "label": "maybe"},
        {"question_id": 3, "image": IMAGE, "label": "no"},
        {"question_id": 1, "image": OTHER, "text": question("car"), "label": "no"}])
    parsed = read_pope(path)
    assert [s.id for s in parsed.samples] == ["pope/popular/1"]
    reasons = {p.record: p.reason for p in parsed.problems if p.fatal}
    assert "yes or no" in reasons["coco_pope_popular.json line 2"]
    assert "'text'" in reasons["coco_pope_popular.json line 3"]
    assert "also on line 1" in reasons["coco_pope_popular.json line 4"]


def test_a_file_naming_no_split_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "questions.json", [{"question_id": 1, "image": IMAGE, "text": "q", "label": "yes"}])
    with pytest.raises(FatalImportError, match="no POPE question file"):
        read_pope(path)


def test_another_release_of_a_split_is_refused_question_by_question(tmp_path):
    folder = pope_folder(tmp_path / "pope", llava=False)
    other = write_jsonl(tmp_path / "coco_pope_random.json", [
        {"question_id": 1, "image": IMAGE, "text": question("dog"), "label": "yes"},
        {"question_id": 2, "image": IMAGE, "text": question("train"), "label": "no"}])
    with Store(tmp_path / "s.duckdb") as store:
        import_format(store, "pope", ImportRequest(path=folder))
        write_jsonl(other, [json.loads(line) for line in other.read_text().splitlines()]
                    + [{"question_id": 9, "image": OTHER, "text": question("bus"), "label": "no"}])
        [report] = import_format(store, "pope", ImportRequest(path=other))
        changed, held = [p for p in report.problems if p.fatal]
        assert changed.record == "coco_pope_random.json question_id 2" and "train" in changed.reason
        assert held.record == "coco_pope_random.json" and "other 2 questions are held back" in held.reason
        assert report.added == 0 and "pope/random/9" not in store.sample_ids("pope")
        assert store.get_samples(["pope/random/2"])["pope/random/2"].question == question("kite")


@pytest.fixture
def pope_store(tmp_path):
    with Store(tmp_path / "s.duckdb") as store:
        import_format(store, "pope", ImportRequest(path=pope_folder(tmp_path / "pope")))
        yield store


def test_llava_answers_with_llavas_numbers_resolve_across_splits(tmp_path, pope_store):
    path = answers(tmp_path / "pope_answers_llava-v1.5-7b.jsonl", [
        (1, question("dog") + SUFFIX, "Yes"), (2, question("cat") + SUFFIX, "No"),
        (10_000_002, question("kite") + SUFFIX, "No"), (10_000_003, question("car") + SUFFIX, "Yes")])
    parsed = read_llava(path, pope_store, benchmark="pope")
    assert [r.sample_id for r in parsed.responses] == ["pope/adversarial/1", "pope/adversarial/2", "pope/random/2",
                                                       "pope/random/3"]
    [run] = parsed.runs
    assert run.model == "liuhaotian/llava-v1.5-7b" and run.meta["toolkit"] == "LLaVA"
    assert run.meta["source_file"] == path.name and parsed.problems == []


def test_per_split_answer_files_take_the_split_from_the_name_or_the_benchmark(tmp_path, pope_store):
    rows = [(1, question("dog"), "Yes"), (2, question("kite"), "No")]
    named = answers(tmp_path / "coco_pope_random_answers_vcd_seed55.jsonl", rows, image=IMAGE)
    parsed = read_llava(named, pope_store, benchmark=None)
    assert [r.sample_id for r in parsed.responses] == ["pope/random/1", "pope/random/2"]
    plain = answers(tmp_path / "answers.jsonl", rows)
    assert [r.sample_id for r in read_llava(plain, pope_store, benchmark="pope/random").responses] == [
        "pope/random/1", "pope/random/2"]
    with pytest.raises(FatalImportError, match="popular split"):
        read_llava(plain, pope_store, benchmark="pope/popular")
    with pytest.raises(FatalImportError, match="--benchmark"):
        read_llava(plain, pope_store, benchmark=None)


def test_a_row_asking_another_question_or_of_another_image_is_refused_by_line(tmp_path, pope_store):
    path = answers(tmp_path / "coco_pope_adversarial_answers.jsonl", [
        (1, question("dog") + SUFFIX, "Yes"), (2, question("giraffe") + SUFFIX, "No"), (99, question("dog"), "No"),
        (1, question("dog"), "No")])
    parsed = read_llava(path, pope_store, benchmark="pope", model="mine")
    assert [r.sample_id for r in parsed.responses] == ["pope/adversarial/1"]
    reasons = {p.record: p.reason for p in parsed.problems}
    assert "answers pope/adversarial/1 again (line 1" in reasons[f"{path.name} line 4"]
    assert "giraffe" in reasons[f"{path.name} line 2"] and "pope/adversarial/2 asks" in reasons[f"{path.name} line 2"]
    assert "no stored sample" in reasons[f"{path.name} line 3"]
    assert parsed.runs[0].model == "mine"
    wrong_image = answers(tmp_path / "coco_pope_adversarial_answers2.jsonl", [(1, question("dog"), "Yes")], image=OTHER)
    [problem] = read_llava(wrong_image, pope_store, benchmark="pope").problems
    assert OTHER in problem.reason


def test_llava_answers_to_other_benchmarks_resolve_by_id_or_by_question_on_the_image(tmp_path):
    with Store(tmp_path / "s.duckdb") as store:
        store.add_samples(Benchmark("amber"), [Sample(id=f"amber/{i}", benchmark="amber", image_key=f"AMBER_{i}.jpg",
                                                      question="Describe this image.") for i in (1, 2)])
        store.add_samples(Benchmark("MME"), [
            Sample(id="MME/1", benchmark="MME", image_key="code_reasoning/0020.png", task="yes_no", answer="yes",
                   question="Is a python code shown in the picture? Please answer yes or no."),
            Sample(id="MME/2", benchmark="MME", image_key="code_reasoning/0020.png", task="yes_no", answer="no",
                   question="Is a c++ code shown in the picture? Please answer yes or no.")])
        amber = write_jsonl(tmp_path / "amber.jsonl", [
            {"question_id": 2, "prompt": "Describe this image.", "text": "A dog.", "model_id": "llava-v1.6-34b",
             "image": "AMBER_2.jpg", "metadata": {}}])
        parsed = read_llava(amber, store, benchmark="amber")
        assert [r.sample_id for r in parsed.responses] == ["amber/2"]
        assert parsed.runs[0].model == "liuhaotian/llava-v1.6-34b"
        mme = answers(tmp_path / "mme.jsonl", [
            ("code_reasoning/0020.png", "Is a c++ code shown in the picture?" + SUFFIX, "No"),
            ("code_reasoning/0020.png", "Is a python code shown in the picture?" + SUFFIX, "Yes")])
        assert [r.sample_id for r in read_llava(mme, store, benchmark="MME").responses] == ["MME/2", "MME/1"]


def test_the_cli_imports_scores_and_lists_each_split(tmp_path, capsys):
    from hallu_studio.cli import main

    db, folder = tmp_path / "s.duckdb", pope_folder(tmp_path / "pope")
    path = answers(tmp_path / "pope_answers.jsonl", [
        (1, question("dog") + SUFFIX, "Yes"), (2, question("cat") + SUFFIX, "Yes"), (3, question("car"), "No"),
        (4, question("bus"), "No"), (10_000_001, question("dog"), "Yes"), (10_000_002, question("kite"), "No")])
    assert main(["import", "--format", "pope", str(folder), "--db", str(db)]) == 0
    assert main(["import", "--format", "llava", str(path), "--benchmark", "pope", "--db", str(db)]) == 0
    assert main(["score", "--metrics", "pope", "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--format", "jsonl", "--n-boot", "20"]) == 0
    rows = {(r["key"], r["split"]): r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    # adversarial: TP 1, FP 1, FN 1, TN 1; random: TP 1, TN 1
    assert rows[("accuracy", "adversarial")]["value"] == pytest.approx(0.5)
    assert rows[("accuracy", "random")]["value"] == pytest.approx(1.0)
    assert rows[("accuracy", None)]["value"] == pytest.approx(4 / 6)
    assert rows[("f1", None)]["model"] == "liuhaotian/llava-v1.5-7b"
    # The report shows the same rows, per split.
    assert main(["report", "--output", str(tmp_path / "r.html"), "--db", str(db)]) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Per split" in html and "pope.accuracy adversarial" in html and "pope.f1 random" in html
