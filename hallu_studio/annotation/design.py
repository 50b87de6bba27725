"""An annotation study's design: which responses it rates, and in what order each annotator sees them.

A study compares models on the same images. Its sample is drawn once, with a seed: images are
taken in turn from each stratum (benchmark x task), each image once, and only samples that every
chosen model answered, so each image brings one response per model. The items are then put in an
order in which the models alternate and the images spread out, and each annotator's queue is
drawn greedily from the items still needing ratings so that, at every point of *their own*
sequence, no model has more than its share of the items plus one, and no image more than its
share plus one where the study has enough images for that (``queue_order``).

Worked example: 2 models (A, B) x 2 images (i, j), one rating each; the annotator has rated
nothing yet, so the model furthest below its share comes first, alternating:

>>> items = [Item("a-i", "A", "i"), Item("b-i", "B", "i"), Item("a-j", "A", "j"), Item("b-j", "B", "j")]
>>> [items[k].response_id for k in queue_order(items, {}, [], ratings_per_item=1)]
['a-i', 'b-j', 'a-j', 'b-i']
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Sequence

from ..model import ValidationError

# A study's name is its id: shown in the app and written on every event made in it.
_NAME = re.compile(r"^[\w][\w .,()\-]{0,63}$")
MODES: tuple[str, ...] = ("blind", "unblinded")


@dataclass(frozen=True)
class StudyDesign:
    """What a study rates and how.

    ``runs``: the runs (models) compared; ``images``: how many images to draw (each brings one
    response per run); ``ratings_per_item``: how many annotators rate each response;
    ``annotators``: who may rate in it (empty: anyone); ``seed``: the draw; ``benchmarks`` /
    ``tasks``: restrict the draw (empty: all the runs answered); ``show_judgements``: False (the
    default) is blind: while rating, the annotator sees no verdict, score or model name.
    """

    name: str
    runs: tuple[str, ...]
    images: int
    ratings_per_item: int = 2
    annotators: tuple[str, ...] = ()
    seed: int = 0
    benchmarks: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    show_judgements: bool = False

    def __post_init__(self) -> None:
        if not _NAME.match(self.name or ""):
            raise ValidationError(f"a study name is 1-64 letters, digits, spaces and - _ . , ( ), got {self.name!r}")
        if len(set(self.runs)) < 1:
            raise ValidationError("a study compares at least one model: choose its runs")
        if len(set(self.runs)) != len(self.runs):
            raise ValidationError(f"a run is named twice in the study's runs: {list(self.runs)}")
        for name, value, least in (("images", self.images, 1), ("ratings per item", self.ratings_per_item, 1)):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValidationError(f"{name} must be a whole number of at least {least}, got {value!r}")
        if any(not str(a).strip() for a in self.annotators):
            raise ValidationError("an annotator name is empty")

    @property
    def mode(self) -> str:
        """How ratings are made in it: "blind" (no verdicts, scores or model names shown) or "unblinded"."""
        return MODES[1] if self.show_judgements else MODES[0]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "StudyDesign":
        return cls(name=str(d["name"]), runs=tuple(d.get("runs") or ()), images=int(d["images"]),
                   ratings_per_item=int(d.get("ratings_per_item", 2)), annotators=tuple(d.get("annotators") or ()),
                   seed=int(d.get("seed", 0)), benchmarks=tuple(d.get("benchmarks") or ()),
                   tasks=tuple(d.get("tasks") or ()), show_judgements=bool(d.get("show_judgements", False)))


@dataclass(frozen=True)
class Item:
    """One response of a study: what balancing looks at."""

    response_id: str
    model: str  # the run it belongs to
    image: str
    task: str = ""  # its benchmark / task stratum (the default queue spreads these too)


@dataclass
class DrawnSample:
    """The items of a study in draw order, with what was left out of the draw and why."""

    items: list[Item]
    strata: dict[str, int]  # "benchmark / task" -> images drawn from it
    left_out: dict[str, int] = field(default_factory=dict)  # reason -> how many samples

    def summary(self) -> str:
        models = Counter(i.model for i in self.items)
        images = len({i.image for i in self.items})
        out = (f"{len(self.items)} responses: {images} images x {len(models)} models; drawn from "
               + ", ".join(f"{k} ({v})" for k, v in sorted(self.strata.items())))
        if self.left_out:
            out += "; left out: " + "; ".join(f"{n} {why}" for why, n in self.left_out.items())
        return out


def draw_sample(design: StudyDesign, candidates: Sequence[Mapping[str, Any]]) -> DrawnSample:
    """The study's items from ``candidates`` (``Store.study_candidates`` rows: response_id, run_id,
    sample_id, benchmark, task, image), drawn with the design's seed.

    Only samples every run answered are drawn (each image is then rated once per model); images are
    taken in turn from each benchmark x task stratum, one sample per image, until ``design.images``.

    >>> rows = [{"response_id": f"{r}-{s}", "run_id": r, "sample_id": s, "benchmark": "b", "task": "t",
    ...          "image": f"img{s}"} for r in ("A", "B") for s in range(5)]
    >>> d = draw_sample(StudyDesign("s", ("A", "B"), images=3, seed=1), rows)
    >>> len(d.items), sorted(Counter(i.model for i in d.items).values()), len({i.image for i in d.items})
    (6, [3, 3], 3)
    """
    runs = list(design.runs)
    by_sample: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    left_out: Counter[str] = Counter()
    for row in candidates:
        if row["run_id"] not in runs:
            continue
        if design.benchmarks and row["benchmark"] not in design.benchmarks:
            continue
        if design.tasks and row["task"] not in design.tasks:
            continue
        by_sample[row["sample_id"]][row["run_id"]] = row
    complete = {}
    for sample_id, answers in by_sample.items():
        if len(answers) == len(runs):
            complete[sample_id] = answers
        else:
            left_out["samples not answered by every chosen model"] += 1
    if not complete:
        raise ValidationError("no sample is answered by every chosen run (within the chosen benchmarks and tasks): "
                              "nothing to compare the models on")
    # stratum -> image -> its samples; an image is drawn once, whichever stratum draws it first
    strata: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for sample_id, answers in complete.items():
        first = next(iter(answers.values()))
        strata[(str(first["benchmark"]), str(first["task"]))][str(first["image"])].append(sample_id)
    rng = random.Random(design.seed)
    order = sorted(strata)
    rng.shuffle(order)
    queues = {}
    for key in order:
        images = sorted(strata[key])
        rng.shuffle(images)
        queues[key] = images
    chosen: list[tuple[tuple[str, str], str, str]] = []  # (stratum, image, sample)
    used: set[str] = set()
    while len(chosen) < design.images and any(queues.values()):
        for key in order:
            if len(chosen) >= design.images:
                break
            while queues[key]:
                image = queues[key].pop()
                if image in used:
                    continue
                used.add(image)
                chosen.append((key, image, rng.choice(sorted(strata[key][image]))))
                break
    if len(chosen) < design.images:
        left_out[f"images short of the {design.images} asked for (only {len(chosen)} have an answer from "
                 f"every chosen model)"] = design.images - len(chosen)
    items = [Item(str(complete[sample][run]["response_id"]), run, image)
             for _, image, sample in chosen for run in runs]
    spread = Counter(f"{b} / {t}" for (b, t), _, _ in chosen)
    ordered = interleave(items, rng)
    return DrawnSample(ordered, dict(spread), dict(left_out))


def interleave(items: Sequence[Item], rng: random.Random | None = None) -> list[Item]:
    """The items in an order where models alternate and an image's responses lie apart: the queue
    order of an annotator who starts first (``queue_order`` with nothing rated)."""
    picked = queue_order(list(items), {}, [], ratings_per_item=1, limit=len(items), rng=rng)
    return [items[k] for k in picked]


def open_items(items: Sequence[Item], ratings: Mapping[str, int], history: Sequence[str],
               ratings_per_item: int) -> list[int]:
    """Indices into ``items`` still open to the annotator whose ratings are ``history``: not rated by them, with
    fewer than ``ratings_per_item`` ratings (``queue_order``'s arguments)."""
    mine = set(history)
    return [k for k, i in enumerate(items)
            if i.response_id not in mine and ratings.get(i.response_id, 0) < ratings_per_item]


def queue_order(items: Sequence[Item], ratings: Mapping[str, int], history: Sequence[str],
                ratings_per_item: int, limit: int | None = None, rng: random.Random | None = None) -> list[int]:
    """Indices into ``items``: the annotator's next responses, best first.

    ``ratings``: how many annotators currently rate each response in this study; ``history``: the
    responses this annotator has already rated in it, in order. Responses the annotator rated, and
    those with ``ratings_per_item`` ratings, are left out. Each next pick is, in this order of
    priority: of the model furthest below its share of the annotator's sequence (models level with
    each other take turns); then of the image furthest below its share; then already rated by others
    (so items get their ratings completed and agreement can be measured early); then first in the
    study's order.
    """
    model_share = _shares([i.model for i in items])
    image_share = _shares([i.image for i in items])
    by_id = {i.response_id: i for i in items}
    done = [by_id[r] for r in history if r in by_id]
    models = Counter(i.model for i in done)
    images = Counter(i.image for i in done)
    eligible = open_items(items, ratings, history, ratings_per_item)
    tiebreak = list(range(len(items)))
    if rng is not None:
        rng.shuffle(tiebreak)
    # per model, its eligible items in priority order within the model (re-sorted as images fill)
    last = {i.model: t for t, i in enumerate(done)}  # a model's latest place: models with equal deficits alternate
    out: list[int] = []
    t = len(done)
    remaining = set(eligible)
    want = len(eligible) if limit is None else min(limit, len(eligible))
    while len(out) < want:
        def priority(k: int) -> tuple[float, int, int, float, int]:
            i = items[k]
            return (round(models[i.model] - model_share[i.model] * (t + 1), 9), last.get(i.model, -1),
                    round(images[i.image] - image_share[i.image] * (t + 1), 9), -ratings.get(i.response_id, 0),
                    tiebreak[k])
        best = min(remaining, key=priority)
        remaining.discard(best)
        out.append(best)
        models[items[best].model] += 1
        images[items[best].image] += 1
        last[items[best].model] = t
        t += 1
    return out


def annotator_seed(annotator: str, salt: str = "") -> int:
    """A seed of the annotator's own, the same in every process (``hash()`` of a string is not).

    >>> annotator_seed("ann") == annotator_seed("ann") != annotator_seed("bob")
    True
    """
    return int.from_bytes(hashlib.sha256(f"{salt}\x00{annotator}".encode()).digest()[:8], "big")


def mixed_order(items: Sequence[Item], seed: int) -> list[int]:
    """Indices into ``items``: every item once, in a seeded order where the models take turns, each model's
    tasks take turns within it, and each task's images within that, so that in every prefix of the order each
    model (and within a model, each task; within a model's task, each image) has its share of the prefix, give
    or take one item. The models walk each task's images in one shuffled ring, each from its own starting
    point, so that at any time they look at different images (a Latin square, as a study balances raters).

    The queue of an annotator who rates without a study (``annotation_queue``): unlike ``queue_order``,
    which looks at what each annotator has rated at every step (a study of some hundred responses), this
    is one sort of the whole store, so that a queue of thousands of responses costs milliseconds. Another
    seed (another annotator) gives another order, mixed alike.

    >>> items = [Item(f"{m}-{i}-{t}", m, i, t) for m in "AB" for i in ("x", "y") for t in ("cap", "mcq")]
    >>> [items[k].model for k in mixed_order(items, seed=1)]
    ['B', 'A', 'B', 'A', 'B', 'A', 'B', 'A']
    >>> sorted(mixed_order(items, seed=1)) == list(range(8)) and mixed_order(items, 1) != mixed_order(items, 2)
    True
    """
    rng = random.Random(seed)
    tree: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for k, item in enumerate(items):
        tree[item.model][item.task][item.image].append(k)
    rings = {}
    for task in sorted({i.task for i in items}):
        ring = sorted({i.image for i in items if i.task == task})
        rng.shuffle(ring)
        rings[task] = {image: r for r, image in enumerate(ring)}
    models = []
    for m, model in enumerate(sorted(tree)):
        tasks = []
        for task in sorted(tree[model]):
            ring, shift = rings[task], m * len(rings[task]) / len(tree)
            images = []
            for image, ks in tree[model][task].items():
                rng.shuffle(ks)
                images.append((((ring[image] - shift) % len(ring) + 0.5) / len(ring), ks))
            tasks.append((rng.random(), _merge(images, rng)))
        models.append((rng.random(), _merge(tasks, rng)))
    return _merge(models, rng)


def annotator_order(candidates: Sequence[Mapping[str, Any]], annotator: str) -> list[str]:
    """The response ids of ``candidates`` (``Store.study_candidates`` rows) in ``annotator``'s own mixed order
    (``mixed_order`` seeded by ``annotator_seed``): the queue of someone rating without a study, where no stretch
    comes from one model or one image, and a second annotator's is another order, mixed alike."""
    items = tuple(Item(str(r["response_id"]), str(r["run_id"]), f"{r['benchmark']}/{r['image']}",
                       f"{r['benchmark']}/{r['task']}") for r in candidates)
    return list(_annotator_order(items, annotator))


@functools.lru_cache(maxsize=16)
def _annotator_order(items: tuple[Item, ...], annotator: str) -> tuple[str, ...]:
    # Asked again at every rating (the queue's next item): the same responses give the same order, so keep it.
    return tuple(items[k].response_id for k in mixed_order(items, annotator_seed(annotator)))


def _merge(groups: Sequence[tuple[float, list[int]]], rng: random.Random) -> list[int]:
    """The groups' items merged so that each group keeps its share of every prefix: a group of n items with
    offset u in [0, 1) puts its j-th item at (j + u) / n (systematic sampling), and the merge sorts by place."""
    placed = sorted(((j + offset) / len(ks), rng.random(), k) for offset, ks in groups for j, k in enumerate(ks))
    return [k for _, _, k in placed]


def _shares(keys: Sequence[str]) -> dict[str, float]:
    counts = Counter(keys)
    total = sum(counts.values()) or 1
    return {k: n / total for k, n in counts.items()}


