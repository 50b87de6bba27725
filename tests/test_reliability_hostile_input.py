"""Hostile input, property-based (hypothesis, bounded examples and deadlines).

Importers (tri-he, reefknot, jsonl, halfscore, vg, gqa) get valid records with fields replaced by
arbitrary JSON, unicode, absurd sizes, path-traversal image paths, a symlink out of the folder and a
decompression-bomb PNG; the scorers (``score_records`` behind ``score_jsonl``, and each registry
metric's ``update``) get malformed lines and hostile samples. Every case ends in a result or a
documented error (``FatalImportError`` / ``ValidationError`` / ``ImageRejected``, all ``ValueError``; or
``FileNotFoundError`` for a folder with no records),
never another exception, a hang, or a write outside the temporary folder.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from hallu_studio.config import Settings
from hallu_studio.importers.halfscore import (
    read_halfscore_annotations,
    read_halfscore_captions,
)
from hallu_studio.importers.jsonl import read_jsonl_responses, read_jsonl_samples
from hallu_studio.importers.reading import FatalImportError
from hallu_studio.importers.reefknot import read_reefknot
from hallu_studio.importers.scene_graphs import read_gqa, read_visual_genome
from hallu_studio.importers.tri_he import read_tri_he
from hallu_studio.model import ValidationError

REPO = Path(__file__).resolve().parents[1]
DOCUMENTED = (FatalImportError, ValidationError, ValueError, FileNotFoundError)
# Shrinking a failure can take minutes; the failing example is reported as found instead.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
BOUNDED = settings(max_examples=25, deadline=5000, derandomize=True, phases=NO_SHRINK,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\x00", "\ud7ff\U0010ffff", "\u202eevil", "../../../etc/passwd", "/etc/passwd",
                     "..\\..\\x.png", "a/../../b.png", "bomb.png", "link.png", "huge.png", "huge", "x" * 20_000, "<script>x</script>",
                     "(a, b, c)", "(only, two)", "((,,))", "NaN", "1e999"]))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2 ** 70), max_value=2 ** 70),
                    st.floats(allow_nan=True, allow_infinity=True), HOSTILE_TEXT)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(HOSTILE_TEXT, inner, max_size=4)),
                    max_leaves=12)


def mutated(template: Any) -> st.SearchStrategy[Any]:
    """``template`` with some values (at any depth) swapped for arbitrary JSON."""
    if isinstance(template, dict):
        return st.fixed_dictionaries({k: st.one_of(mutated(v), JSON)
                                      for k, v in template.items()},
                                     optional={"extra": JSON})
    if isinstance(template, list):
        return st.one_of(st.lists(st.one_of(*[mutated(v) for v in template]), max_size=4) if template else JSON,
                         JSON)
    return st.one_of(st.just(template), JSON)


def bomb_png(width: int = 40_000, height: int = 40_000) -> bytes:
    """A PNG header claiming ``width`` x ``height`` pixels with almost no data: a decompression bomb."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b"")


def _folder(root: Path) -> Path:
    images = root / "images"
    images.mkdir()
    (images / "bomb.png").write_bytes(bomb_png())
    (images / "bomb.jpg").write_bytes(bomb_png())
    (images / "junk.png").write_bytes(b"\x89PNG not really")
    with open(images / "huge.png", "wb") as fh:  # sparse: 60 MB on paper, nothing on disk
        fh.write(bomb_png(10, 10))
        fh.truncate(60 * 1024 * 1024)
    try:
        (images / "link.png").symlink_to("/etc/passwd")
    except OSError:
        pass
    return images


def _write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, allow_nan=True), encoding="utf-8", errors="surrogatepass")
    return path


def _write_jsonl(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r, allow_nan=True) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return path


def _check_images(parsed: Any) -> None:
    for img in parsed.images.values():
        assert img.mime in ("image/png", "image/jpeg", "image/webp", "image/gif", "image/bmp"), img.mime
        assert img.width * img.height <= 100_000_000
        assert not img.data.startswith(b"root:")


def _run(read: Any, *args: Any, **kwargs: Any) -> Any:
    """The reader's result, or None for a documented error; anything else fails the test."""
    before = set(os.listdir(REPO))
    try:
        out = read(*args, **kwargs)
    except DOCUMENTED as exc:
        assert str(exc), "an error must say what is wrong"
        out = None
    assert set(os.listdir(REPO)) == before, "the reader wrote outside its temporary folder"
    for parsed in out if isinstance(out, (list, tuple)) else [out]:
        if parsed is not None and hasattr(parsed, "images"):
            _check_images(parsed)
    return out


TRI_HE = {"1": {"instance": [{"question": "What is on the desk?", "answer": "A laptop.",
                              "triplet": ["(laptop, on, desk)"]}],
                "triplets": ["(laptop, on, desk)", "(laptop, is, grey)"], "all_object": ["laptop", "desk"],
                "object": ["laptop"]}}


@BOUNDED
@given(data=st.one_of(mutated(TRI_HE), JSON))
def test_tri_he_importer_survives_hostile_files(data):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images = _folder(root)
        _run(read_tri_he, _write_json(root / "tri-he.json", data), images)


REEFKNOT_ROW = {"image_id": "5", "query_prompt": "Is the cat on sofa in this photo? Please answer yes or no.",
                "label": "yes", "type": "Yes/No", "mllm_name": "llava", "response": "Yes.",
                "relation_type": "perception"}
MCQ_ROW = {"image_id": "link", "query_prompt": "What is the relation with cat and sofa in this photo? A. on B. under "
           "C. beside D. behind, please choose.", "label": "A", "relation_type": "perception"}


@BOUNDED
@given(yes_no=st.lists(st.one_of(mutated(REEFKNOT_ROW), JSON, HOSTILE_TEXT), max_size=4),
       mcq=st.lists(st.one_of(mutated(MCQ_ROW), JSON), max_size=3),
       vqa=st.lists(st.one_of(mutated({**MCQ_ROW, "query_prompt": "What is the cat doing to the sofa?",
                                       "label": "on"}), JSON), max_size=3))
def test_reefknot_importer_survives_hostile_files(yes_no, mcq, vqa):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images = _folder(root)
        _write_jsonl(root / "YESNO.jsonl", yes_no)
        _write_jsonl(root / "Multichoice.jsonl", mcq)
        _write_jsonl(root / "VQA.jsonl", vqa)
        _run(read_reefknot, root, images)


JSONL_SAMPLE = {"benchmark": "mine", "id": "mine/1", "image": "bomb.png", "task": "caption",
                "scene_graph": {"objects": [{"id": "0", "name": "cat", "attributes": ["grey"]}],
                                "relations": [{"subject": "0", "predicate": "on", "object": "0"}]},
                "question": "Describe.", "options": ["a"], "answer": "a", "gold_triplets": [["cat", "on", "mat"]]}


@BOUNDED
@given(rows=st.lists(st.one_of(mutated(JSONL_SAMPLE), JSON, HOSTILE_TEXT), min_size=1, max_size=4),
       responses=st.lists(st.one_of(mutated({"sample_id": "mine/1", "model": "m", "response": "A cat."}), JSON),
                          max_size=3))
def test_jsonl_importer_survives_hostile_files(rows, responses):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images = _folder(root)
        _run(read_jsonl_samples, _write_jsonl(root / "samples.jsonl", rows), images)
        _run(read_jsonl_samples, _write_jsonl(images / "samples.jsonl", rows))  # paths relative to the file
        _run(read_jsonl_responses, _write_jsonl(root / "responses.jsonl", responses), {"mine/1"}, model="m")


@BOUNDED
@given(annotations=st.one_of(st.lists(st.one_of(mutated({"image": "bomb.png", "caption": "A cat."}), JSON),
                                      max_size=4), JSON),
       captions=st.lists(st.one_of(mutated({"image": "bomb.png", "caption": "[INST] <image> [/INST] A cat."}),
                                   JSON), max_size=3))
def test_halfscore_importer_survives_hostile_files(annotations, captions):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images = _folder(root)
        _run(read_halfscore_annotations, _write_json(root / "annotation.json", annotations), images)
        _run(read_halfscore_captions, _write_jsonl(root / "llava_captions.jsonl", captions), {"halfscore/bomb"})


VG = [{"image_id": 1, "objects": [{"object_id": 10, "names": ["man"], "attributes": ["tall"], "x": 1, "y": 2,
                                   "w": 30, "h": 60}],
       "relationships": [{"relationship_id": 5, "predicate": "RIDING", "subject_id": 10, "object_id": 10},
                         {"predicate": "wears", "subject": {"object_id": 10, "names": ["man"]},
                          "object": {"object_id": 12, "name": "hat"}}]}]
GQA = {"bomb": {"width": 500, "height": 333, "objects": {
    "1": {"name": "cat", "x": 1, "y": 2, "w": 3, "h": 4, "attributes": ["gray"],
          "relations": [{"name": "on", "object": "2"}]}}}}


@BOUNDED
@given(vg=st.one_of(mutated(VG), JSON), gqa=st.one_of(mutated(GQA), JSON),
       regions=st.one_of(mutated([{"id": 1, "regions": [{"phrase": "a man"}]}]), JSON))
def test_scene_graph_importers_survive_hostile_files(vg, gqa, regions):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        images = _folder(root)
        _run(read_visual_genome, _write_json(root / "scene_graphs.json", vg),
             _write_json(root / "region_descriptions.json", regions), images)
        _run(read_gqa, _write_json(root / "val_sceneGraphs.json", gqa), images)


# --------------------------------------------------------------------------- scorers

@pytest.fixture(scope="module")
def scorer():
    from hallu_studio.metrics.registry import METRIC_NAMES, make_extractor, make_metrics

    settings_ = Settings()
    extractor = make_extractor(settings_)
    return settings_, extractor, make_metrics(list(METRIC_NAMES), settings_, None, extractor)


SCORE_LINE = {"id": "a", "response": "A grey cat sits on a mat.", "task": "caption", "question": "Describe.",
              "scene_graph": JSONL_SAMPLE["scene_graph"], "reference_text": "A cat on a mat.",
              "mentioned": {"objects": ["cat"], "attributes": [["cat", "grey"]], "relations": [["cat", "on", "mat"]]}}


@settings(max_examples=15, deadline=10_000, derandomize=True, phases=NO_SHRINK,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(mutated(SCORE_LINE), JSON, HOSTILE_TEXT), min_size=1, max_size=3))
def test_score_jsonl_gives_each_line_a_result_or_an_error(scorer, lines):
    from hallu_studio.pipelines.scoring_jsonl import score_jsonl

    settings_, extractor, metrics = scorer
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.jsonl"
        text = "\n".join(x if isinstance(x, str) else json.dumps(x, allow_nan=True) for x in lines)
        src.write_text(text + "\n", encoding="utf-8", errors="surrogatepass")
        report = score_jsonl(src, Path(tmp) / "out.jsonl", settings_, metrics, extractor=extractor)
        out = [json.loads(x) for x in (Path(tmp) / "out.jsonl").read_text(encoding="utf-8").split("\n") if x]
        assert len(out) == report.lines
        for record in out:
            assert "error" in record or "mentioned" in record


NAME = st.one_of(st.text(min_size=1, max_size=30).filter(str.strip), st.sampled_from(
    ["<script>x</script>", "x" * 5_000, "\u202eevil", "\ud7ff\U0010ffff", "a\x00b", "cat", "mat"]))
GRAPH = st.integers(min_value=0, max_value=3).flatmap(lambda n: st.fixed_dictionaries({
    "objects": st.tuples(*[st.fixed_dictionaries({"id": st.just(str(i)), "name": NAME,
                                                  "attributes": st.lists(NAME, max_size=2)}) for i in range(n)]
                         ).map(list),
    "relations": st.lists(st.fixed_dictionaries({
        "subject": st.sampled_from([str(i) for i in range(n)] or ["0"]), "predicate": NAME,
        "object": st.sampled_from([str(i) for i in range(n)] or ["0"])}), max_size=2 if n else 0)}))


REACHED_METRICS: list[int] = []


@settings(max_examples=8, deadline=10_000, derandomize=True, phases=NO_SHRINK,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(graph=GRAPH, response=HOSTILE_TEXT, task=st.sampled_from(["caption", "vqa", "yes_no", "mcq"]),
       answer=st.one_of(st.none(), HOSTILE_TEXT), options=st.lists(HOSTILE_TEXT, max_size=3),
       mentioned=st.fixed_dictionaries({"objects": st.lists(NAME, max_size=3),
                                        "attributes": st.lists(st.lists(NAME, min_size=2, max_size=2), max_size=2),
                                        "relations": st.lists(st.lists(NAME, min_size=3, max_size=3), max_size=2)}),
       signals=st.dictionaries(st.sampled_from(["entropy", "token_logprobs", "answer_probs", "logit_lens"]), JSON,
                               max_size=2))
def test_each_metric_update_gives_a_result_or_a_documented_error(scorer, graph, response, task, answer, options,
                                                                 mentioned, signals):
    from hallu_studio.metrics.base import ItemResult, ScoringItem
    from hallu_studio.metrics.registry import not_applicable_reason
    from hallu_studio.model import ConceptSet, Sample, SceneGraph

    _, _, metrics = scorer
    try:
        sample = Sample(id="h/1", benchmark="h", image_key="1", task=task, scene_graph=SceneGraph.from_dict(graph),
                        question="Is the cat on the mat?", answer=answer, options=options)
        concepts = ConceptSet.from_dict(mentioned)
    except DOCUMENTED:
        return  # the data model refuses it with a clear error: nothing reaches a metric
    REACHED_METRICS.append(1)
    item = ScoringItem("r", response, sample, concepts, signals)
    for metric in metrics:
        if not_applicable_reason(metric.name, sample) is not None:
            continue
        try:
            result = metric.update(item)
        except DOCUMENTED:
            continue
        assert isinstance(result, ItemResult), metric.name


def test_the_metric_property_reached_the_metrics():
    # Guards the property above: most generated samples must get past the data model.
    assert len(REACHED_METRICS) >= 4
