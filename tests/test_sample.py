"""The embedded sample benchmark: determinism, exact synthetic graphs, valid photo graphs, Reefknot wording."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict

import pytest

from hallu_studio.model import Sample
from hallu_studio.sample import (
    DOMAINS,
    build_sample_benchmark,
    load_photos,
    reefknot_questions,
    relation_category,
    render_scene,
    stylize,
)
from hallu_studio.sample.reefknot import true_label_triplets
from hallu_studio.sample.synthetic import MIN_DX, MIN_DY, render
from tests.conftest import shared_dataset

YES_NO_RE = re.compile(r"^(Is|Are) the (.+) in this photo\? Please answer yes or no\.$")
MCQ_RE = re.compile(r"^What is the relation with (.+) and (.+) in this photo\? "
                    r"A\. (.+) B\. (.+) C\. (.+) D\. (.+), please choose\.$")
OPEN_RE = re.compile(r"^What is the relation with (.+) and (.+) in this photo\? "
                     r"Please answer in the following format:(.+) (is|are) <relation> (.+)\.$")


@pytest.fixture(scope="module")
def bench():
    return build_sample_benchmark()


def _by_image(samples: list[Sample]) -> dict[str, list[Sample]]:
    out: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        out[s.id.split("/")[1]].append(s)
    return out


def test_build_is_deterministic(bench):
    again = build_sample_benchmark(synthetic_scenes=3)
    first = {s.id: s.image_sha256 for s in bench.samples}
    second = {s.id: s.image_sha256 for s in again.samples}
    assert second and set(second) <= set(first)
    assert all(first[i] == h for i, h in second.items())
    assert [s.to_dict() for s in again.samples] == [s.to_dict() for s in bench.samples if s.id in second]


def test_ids_unique_and_images_stored(bench):
    ids = [s.id for s in bench.samples]
    assert len(ids) == len(set(ids))
    assert all(s.id.startswith("sample/") and s.benchmark == "sample" for s in bench.samples)
    for s in bench.samples:
        img = bench.images[s.image_sha256]
        assert img.mime == "image/jpeg" and max(img.width, img.height) <= 640
        assert img.data[:2] == b"\xff\xd8"


def test_counts_and_domains(bench):
    images = _by_image(bench.samples)
    synthetic = [n for n in images if n.startswith("synthetic_")]
    real = [n for n in images if not n.startswith("synthetic_")]
    assert len(synthetic) >= 50 and len(real) >= 9
    for name, samples in images.items():
        captions = {s.domain for s in samples if s.task == "caption"}
        assert captions == set(DOMAINS), name
        assert len({s.image_sha256 for s in samples}) == 5, name  # each variant is a different picture
        vqa = [s for s in samples if s.id.split("/")[3] == "vqa"]
        assert len(vqa) >= 3, name
        assert all(s.answer and s.gold_triplets for s in vqa), name
        assert all(s.source_kind == ("synthetic" if name.startswith("synthetic_") else "real") for s in samples)
    kinds = {s.id.split("/")[3] for s in bench.samples if s.domain == "original"}
    assert kinds == {"caption", "vqa", "yes_no", "mcq", "open"}


def test_photo_graphs_are_valid_and_dense():
    photos = load_photos()
    assert len(photos) >= 9
    for p in photos:
        assert len(p.graph.objects) >= 10, p.name
        assert len(p.graph.relations) >= 10, p.name
        ids = {o.id for o in p.graph.objects}
        assert all(r.subject in ids and r.object in ids for r in p.graph.relations), p.name
        assert all(o.box and o.box[2] > 0 and o.box[3] > 0 for o in p.graph.objects), p.name
        assert len(p.vqa) >= 3 and p.caption


@pytest.mark.parametrize("seed", range(60))
def test_synthetic_graph_is_exact(seed):
    scene = render(seed)
    by_id = {p.id: p for p in scene.objects}
    assert 2 <= len(scene.objects) <= 6
    assert len({p.label for p in scene.objects}) == len(scene.objects)  # "red cube" names one object
    for r in scene.graph.relations:
        a, b = by_id[r.subject], by_id[r.object]
        if r.predicate == "left of":
            assert a.cx + MIN_DX <= b.cx
        elif r.predicate == "in front of":
            assert a.base >= b.base + MIN_DY
        elif r.predicate == "on top of":
            assert a.on == b.id and a.base < b.base and abs(a.cx - b.cx) < b.w / 2
        elif r.predicate == "next to":
            assert abs(a.base - b.base) < MIN_DY
        else:
            pytest.fail(f"unexpected predicate {r.predicate}")
    for o, p in zip(scene.graph.objects, scene.objects):
        assert o.attributes == [p.colour, p.size, p.material]
        x, y, w, h = o.box
        assert 0 <= x and x + w <= scene.image.width and 0 <= y and y + h <= scene.image.height


def test_synthetic_pixels_show_the_objects():
    img, graph = render_scene(3)
    for o in graph.objects:
        x, y, w, h = o.box
        centre = img.getpixel((int(x + w / 2), int(y + h * 0.6)))
        assert max(centre) - min(centre) > 30 or o.attributes[0] == "gray", o  # coloured, not floor


def test_reefknot_wording_and_labels(bench):
    for s in bench.samples:
        kind = s.id.split("/")[3]
        if kind == "yes_no":
            assert YES_NO_RE.match(s.question) and s.answer in ("yes", "no"), s.id
        elif kind == "mcq":
            m = MCQ_RE.match(s.question)
            assert m and s.answer in "ABCD" and len(s.options) == 4, s.id
            assert s.options["ABCD".index(s.answer)] == s.gold_triplets[0][1]
        elif kind == "open":
            m = OPEN_RE.match(s.question)
            assert m and s.task == "vqa", s.id
            subj, pred, obj = s.gold_triplets[0]
            assert s.answer.startswith(subj) and s.answer.endswith(f"{pred} {obj}.")
        if kind in ("yes_no", "mcq", "open"):
            assert s.relation_category in ("perception", "cognition")


def test_templates_match_real_reefknot_prompts():
    root = shared_dataset("reefknot")
    for fname, rx in (("YESNO.jsonl", YES_NO_RE), ("Multichoice.jsonl", MCQ_RE), ("VQA.jsonl", OPEN_RE)):
        with open(root / fname, encoding="utf-8") as fh:
            prompts = [json.loads(line)["query_prompt"] for _, line in zip(range(2000), fh)]
        matched = sum(1 for p in prompts if rx.match(p))
        assert matched / len(prompts) > 0.95, fname


def test_adversarial_negatives_and_distractors_are_false():
    graphs = [p.graph for p in load_photos()] + [render(k).graph for k in range(20)]
    negatives = 0
    for g in graphs:
        truths = true_label_triplets(g)
        for q in reefknot_questions(g, random.Random(1)):
            s, p, o = q.triplet
            assert (s, p, o) in truths
            if q.kind == "yes_no" and q.answer == "no":
                negatives += 1
                assert q.asked_predicate != p and (s, q.asked_predicate, o) not in truths
            if q.kind == "mcq":
                assert [opt for opt in q.options if (s, opt, o) in truths] == [p]
    assert negatives >= 20


def test_relation_category_rule():
    assert relation_category("holding") == "cognition"
    assert relation_category("looking through") == "cognition"
    assert relation_category("on top of") == "perception"
    assert relation_category("standing on") == "perception"


def test_stylize_rejects_unknown_style():
    img, _ = render_scene(0)
    with pytest.raises(ValueError, match="unknown style"):
        stylize(img, "watercolour")


def test_boxes_fit_the_stored_images(bench):
    for s in bench.samples:
        if s.domain != "original" or s.task != "caption":
            continue
        img = bench.images[s.image_sha256]
        for o in s.scene_graph.objects:
            x, y, w, h = o.box
            assert x >= 0 and y >= 0 and x + w <= img.width + 1 and y + h <= img.height + 1, (s.id, o.id)
