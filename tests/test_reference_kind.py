"""A reference means one thing: its kind (short captions, or a dense description) is said on the sample and read
in one place (``reference_scope.Scope.of_sample``); the JSON type of ``reference_text`` (a string or a list) never
decides it. Issue 27 item 2 and issue 28 item 1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hallu_studio.config import Settings
from hallu_studio.reference_scope import Scope
from hallu_studio.model import Benchmark, Sample, ValidationError
from hallu_studio.pipelines.scoring_jsonl import score_jsonl
from hallu_studio.store import SCHEMA_VERSION, Store

PACKAGE = Path(__file__).resolve().parents[1] / "hallu_studio"
RESPONSE = "A hummingbird sits on the branch of a tree."
CAPTION = "A small white bard with a long beak on a branch."  # the example, typo and all


def sample(reference_text, **kw) -> Sample:
    return Sample(id="b/1", benchmark="b", image_key="1", reference_text=reference_text, **kw)


def test_a_string_is_read_as_short_captions_unless_marked_dense():
    for text in (CAPTION, [CAPTION]):
        short, dense = Scope.of_sample(sample(text)), Scope.of_sample(sample(text, reference_kind="dense"))
        assert (short.objects, short.details, short.dense, short.captions) == (False, False, False, 1)
        assert (dense.objects, dense.details, dense.dense, dense.captions) == (True, False, True, 1)
    assert Scope.of_sample(sample(CAPTION)) == Scope.of_sample(sample([CAPTION]))
    assert Scope.of_sample(sample(["a", "b", "c"])).summary() == "reference: 3 short captions (open-world)"
    assert "dense description" in Scope.of_sample(sample(["a", "b"], reference_kind="dense")).summary()


def test_a_scene_graph_stays_complete_whatever_the_captions_kind():
    from hallu_studio.model import SceneGraph

    graph = SceneGraph.from_dict({"objects": [{"id": "1", "name": "bird"}]})
    for kind in ("captions", "dense"):
        scope = Scope.of_sample(sample(CAPTION, scene_graph=graph, reference_kind=kind))
        assert scope.closed and scope.summary() == "reference: a scene graph (complete)"


def test_an_unknown_kind_is_a_clear_error():
    with pytest.raises(ValidationError, match=r"sample b/1: reference_kind must be one of .*got 'long'"):
        sample(CAPTION, reference_kind="long")
    assert Sample.from_dict({**sample(CAPTION).to_dict(), "reference_kind": None}).reference_kind == "captions"


def _score(tmp_path: Path, lines: list[dict]) -> dict[str, dict]:
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    settings = Settings()
    settings.scoring.chair_vocabulary = "coco-80"  # CHAIR checks the captions' COCO words
    report = score_jsonl(src, out, settings, ["trihe", "halfscore", "emd", "chair"])
    assert report.scored == len(lines), report.errors
    return {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}


def _without_id(record: dict) -> dict:
    """The line's scores and evidence, its id left out (undefined reasons name it)."""
    return json.loads(json.dumps({k: v for k, v in record.items() if k != "id"}).replace(record["id"], "ID"))


def test_a_string_and_a_one_element_list_score_the_same_in_each_kind(tmp_path):
    lines = [{"id": f"{kind}-{shape}", "response": RESPONSE, "reference_kind": kind,
              "reference_text": CAPTION if shape == "string" else [CAPTION]}
             for kind in ("captions", "dense") for shape in ("string", "list")]
    lines.append({"id": "unmarked-string", "response": RESPONSE, "reference_text": CAPTION})
    got = _score(tmp_path, lines)
    for kind in ("captions", "dense"):
        assert _without_id(got[f"{kind}-string"]) == _without_id(got[f"{kind}-list"])  # scores AND evidence
    assert _without_id(got["unmarked-string"]) == _without_id(got["captions-list"])
    # The hummingbird of issue 27: short captions leave what they do not mention unverifiable; a dense
    # description names what is there, so the hummingbird and the tree it never names are hallucinated.
    short, dense = got["captions-string"], got["dense-string"]
    assert "1 short caption, open-world" in short["evidence"]["trihe"]["scope"]
    assert dense["evidence"]["trihe"]["scope"].startswith("a dense description")
    for metric in ("halfscore", "emd"):
        assert short["evidence"][metric]["scope"] == short["evidence"]["trihe"]["scope"]
        assert dense["evidence"][metric]["scope"] == dense["evidence"]["trihe"]["scope"]
    verdicts = [[t["verdict"] for t in line["evidence"]["trihe"]["triplets"]] for line in (short, dense)]
    assert verdicts == [["unverifiable", "unverifiable"], ["object", "object"]]
    # The figures: share of claims hallucinated 0.1 and HalFscore precision 0.92 read as short captions;
    # 1.0 and 0.6 read as a dense description.
    assert short["trihe"]["hallucinated"] / short["trihe"]["n_triplets"] == pytest.approx(0.1)
    assert dense["trihe"]["hallucinated"] / dense["trihe"]["n_triplets"] == pytest.approx(1.0)
    assert (short["halfscore"]["precision"], dense["halfscore"]["precision"]) == (pytest.approx(0.92),
                                                                                  pytest.approx(0.6))
    assert "undefined_reason" not in short["chair"] and short["chair"]["mentioned_objects"] == 1  # the bird


def test_the_reference_kind_is_decided_in_one_function():
    """No module but the data model (which defines and validates it), the store (which keeps it) and
    ``reference_scope`` (``Scope.of_sample``) reads ``reference_kind``; none asks whether ``reference_text`` is a
    string."""
    reads_kind = re.compile(r"\.reference_kind\b|\[[\"']reference_kind[\"']\]")
    type_test = re.compile(r"isinstance\([^)]*reference_text[^)]*,\s*\(?str")
    kind_readers, type_testers = set(), set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        text = path.read_text(encoding="utf-8")
        if reads_kind.search(text):
            kind_readers.add(rel)
        if type_test.search(text):
            type_testers.add(rel)
    # The data model defines and validates it, the store keeps it; of everything above them, reference_scope alone.
    assert {m for m in kind_readers if not m.startswith(("model/", "store/"))} == {"reference_scope.py"}, kind_readers
    # The store picks a column by the type (one text or a JSON list), so that a sample reads back as it was given.
    assert type_testers <= {"model/records.py", "store/corpus.py"}, type_testers
    scope = (PACKAGE / "reference_scope.py").read_text(encoding="utf-8")
    assert len(re.findall(r"sample\.reference_kind", scope)) == 1  # in Scope.of_sample


def _v5_store_with_samples(path: Path) -> None:
    """A store as schema 5 wrote it: one caption in ``reference_text``, several in ``reference_texts``."""
    with Store(path, migrate_to=5) as old:
        assert old.schema_version() == 5
        rows = [("halfscore/a", "halfscore", "A dense DCI caption of a bird.", None),
                ("coco/b", "coco", None, json.dumps(["A bird.", "A bird on a branch."])),
                ("sample/c", "sample", "   ", None),
                ("sample/d", "sample", None, None)]

        def write(cur):
            for sid, bench, text, texts in rows:
                cur.execute("INSERT INTO samples (id, benchmark, image_key, task, reference_text, reference_texts, "
                            "options, gold_triplets, meta) VALUES (?, ?, ?, 'caption', ?, ?, '[]', '[]', '{}')",
                            [sid, bench, sid, text, texts])
            cur.execute("INSERT INTO scores VALUES ('r1', 'trihe', 'k', '{\"hallucinated\": 1}', '{}', NULL, "
                        "current_timestamp)")

        old._write(write)


def test_an_old_store_keeps_the_reading_its_scores_were_made_under(tmp_path):
    path = tmp_path / "v5.duckdb"
    _v5_store_with_samples(path)
    with Store(path) as st:
        assert st.schema_version() == SCHEMA_VERSION >= 6
        got = st.get_samples(["halfscore/a", "coco/b", "sample/c", "sample/d"])
        assert {k: s.reference_kind for k, s in got.items()} == {
            "halfscore/a": "dense", "coco/b": "captions", "sample/c": "captions", "sample/d": "captions"}
        assert Scope.of_sample(got["halfscore/a"]).objects and not Scope.of_sample(got["coco/b"]).objects
        assert st.get_scores("r1", "trihe")[0].values == {"hallucinated": 1}  # scores untouched
        # A new sample keeps its kind through the store and an export.
        st.add_samples(Benchmark("jsonl"), [Sample(id="jsonl/e", benchmark="jsonl", image_key="e",
                                                   reference_text="One dense text.", reference_kind="dense")])
        assert st.get_sample("jsonl/e").reference_kind == "dense"
        exported = {r["id"]: r["reference_kind"] for r in st.export_rows("samples")}
        assert exported["jsonl/e"] == "dense" and exported["coco/b"] == "captions"


def test_importers_say_the_kind(tmp_path):
    from hallu_studio.importers.halfscore import read_halfscore_annotations
    from hallu_studio.importers.jsonl import read_jsonl_samples

    (tmp_path / "annotation.json").write_text(json.dumps([{"image": "x.jpg", "caption": CAPTION}]))
    [dci] = read_halfscore_annotations(tmp_path / "annotation.json").samples
    assert dci.reference_kind == "dense" and Scope.of_sample(dci).objects
    lines = [{"id": "j/1", "benchmark": "j", "image_key": "1", "reference_text": CAPTION},
             {"id": "j/2", "benchmark": "j", "image_key": "2", "reference_text": CAPTION, "reference_kind": "dense"},
             {"id": "j/3", "benchmark": "j", "image_key": "3", "reference_text": CAPTION, "reference_kind": "long"}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    [parsed] = read_jsonl_samples(tmp_path / "s.jsonl")
    assert [s.reference_kind for s in parsed.samples] == ["captions", "dense"]
    assert len(parsed.problems) == 1 and "line 3" in parsed.problems[0].record
    assert "reference_kind" in parsed.problems[0].reason


def test_a_human_study_line_may_say_its_references_are_dense(tmp_path):
    from hallu_studio.importers.human.generic import read_generic_judgements

    lines = [{"source": "pilot", "sample_id": f"img-{i}", "reference_text": CAPTION, "model": "m",
              "response": RESPONSE, "label": "hallucinated", **kind} for i, kind in
             enumerate([{}, {"reference_kind": "dense"}])]
    (tmp_path / "study.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    study = read_generic_judgements(tmp_path / "study.jsonl")
    assert [s.reference_kind for s in study.benchmark.samples] == ["captions", "dense"]
