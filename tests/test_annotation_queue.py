"""The queue without a study, on a store shaped like the demo: four models answer the same samples, and each
photo comes as style variants with a caption each and several questions of three kinds, so that the store's own
(run, sample) order runs through one model's one image for eight items and more."""

from __future__ import annotations

from collections import Counter

import pytest

from hallu_studio import annotation
from hallu_studio.annotation.design import Item, mixed_order
from test_study_design import max_excess
from hallu_studio.model import Benchmark, Response, Run, Sample

MODELS = ("probe-0", "probe-0.1", "probe-0.3", "probe-0.5")
STYLES = ("cartoon", "line", "oil", "original")


def _demo_shaped(store) -> dict[str, tuple[str, str, str]]:
    """``{response_id: (model, image, task)}``: 4 models x 12 photos x (4 styled captions + 4 open questions,
    4 multiple-choice, 2 yes/no on the original)."""
    samples = []
    for photo in range(12):
        for style in STYLES:
            samples.append(Sample(id=f"demo/p{photo:02d}/{style}/caption", benchmark="demo",
                                  image_key=f"p{photo:02d}/{style}", task="caption"))
        for task, n in (("vqa", 4), ("mcq", 4), ("yes_no", 2)):
            samples += [Sample(id=f"demo/p{photo:02d}/original/{task}/{i}", benchmark="demo",
                               image_key=f"p{photo:02d}/original", task=task, question=f"q{i}") for i in range(n)]
    store.add_samples(Benchmark("demo"), samples, [])
    out = {}
    for model in MODELS:
        run = Run(id=f"run-{model}", benchmark="demo", model=model, backend="probe")
        store.add_run(run)
        responses = [Response(run.id, s.id, f"{model} on {s.id}") for s in samples]
        store.add_responses(responses)
        out.update({r.id: (model, s.image_key, s.task) for r, s in zip(responses, samples)})
    return out


def _shares(values) -> dict[str, float]:
    counts = Counter(values)
    return {k: n / sum(counts.values()) for k, n in counts.items()}


@pytest.mark.parametrize("annotator", ["ann", "bob"])
def test_the_first_items_cover_models_images_and_tasks_in_proportion(store, annotator):
    where = _demo_shaped(store)
    queue = annotation.annotation_queue(store, annotator, limit=1000)
    assert sorted(queue) == sorted(where)  # every response once
    models = [where[r][0] for r in queue]
    assert max_excess(models, _shares(where[r][0] for r in where)) <= 1  # at every point, each model its share ±1
    first = queue[:40]
    assert Counter(where[r][0] for r in first) == {m: 10 for m in MODELS}
    task_share = _shares(t for _, _, t in where.values())
    for task, n in Counter(where[r][2] for r in first).items():
        assert abs(n - 40 * task_share[task]) <= 4, (task, n)
    assert len({where[r][2] for r in queue[:10]}) >= 3
    image_share = _shares(i for _, i, _ in where.values())  # an original photo carries 11 of a model's 56 items
    for image, n in Counter(where[r][1] for r in first).items():
        assert n <= 40 * image_share[image] + 2, (image, n)
    assert len({where[r][1] for r in first}) >= 15 and len({where[r][1].split("/")[0] for r in first}) >= 10
    # no two items in a row from one model, no three from one image
    assert all(a != b for a, b in zip(models, models[1:]))
    images = [where[r][1] for r in queue]
    assert all(len({a, b, c}) > 1 for a, b, c in zip(images, images[1:], images[2:]))


def test_a_second_annotator_gets_another_order_and_each_keeps_theirs(store):
    where = _demo_shaped(store)
    ann = annotation.annotation_queue(store, "ann", limit=1000)
    bob = annotation.annotation_queue(store, "bob", limit=1000)
    assert ann[:20] != bob[:20] and len(set(ann[:20]) & set(bob[:20])) <= 5
    assert annotation.annotation_queue(store, "ann", limit=1000) == ann  # seeded: the same on every call
    annotation.rate(store, "ann", ann[0], 4)
    annotation.rate(store, "ann", ann[1], 2)
    assert annotation.annotation_queue(store, "ann", limit=1000) == ann[2:]  # rating walks down the order
    # one rating per item: what ann rated leaves bob's queue; two: it comes after everything nobody has rated
    assert annotation.annotation_queue(store, "bob", limit=1000) == [r for r in bob if r not in ann[:2]]
    two = annotation.annotation_queue(store, "bob", ratings_per_item=2, limit=1000)
    assert two == [r for r in bob if r not in ann[:2]] + [r for r in bob if r in ann[:2]]
    assert len(where) == len(ann)


def test_todays_store_order_would_fail_the_proportion_test(store):
    """The check above can fail: the store's (run, sample) order is one model's one image for eight items."""
    where = _demo_shaped(store)
    plain = store.response_ids()
    assert len({where[r][0] for r in plain[:40]}) == 1 and len({where[r][1] for r in plain[4:14]}) == 1


def test_mixed_order_keeps_each_group_within_one_of_its_share_at_every_prefix():
    items = [Item(f"{m}{i}{t}{k}", m, f"img{i}", t) for m in "ABC" for i in range(5) for t in ("x", "y")
             for k in range(1 + (m == "A"))]  # A has twice the items of B and C
    order = mixed_order(items, seed=7)
    assert sorted(order) == list(range(len(items)))
    models = [items[k].model for k in order]
    assert max_excess(models, _shares(i.model for i in items)) <= 1
    within_a = [items[k].task for k in order if items[k].model == "A"]
    assert max_excess(within_a, {"x": 0.5, "y": 0.5}) <= 1
    assert mixed_order(items, seed=7) == order and mixed_order(items, seed=8) != order
