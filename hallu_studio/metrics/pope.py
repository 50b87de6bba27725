"""VISCON-QA / POPE: existence questions from scene graphs, and their scoring.

Question generation (VISCON D.4, extending POPE from objects to attributes and
relations) is a pure function of scene graphs. Every object, attribute and relation
of an image gives a *positive* question (answer "yes"); each positive gets one
*negative* (answer "no") by replacing one element with something the image does not
have: the object name for objects; the object or the attribute for attributes; the
subject, the object or the predicate for relations. Replacements are drawn (POPE):

- ``random``: uniformly among the corpus's names absent from the image;
- ``popular``: the most frequent absent names of the corpus first;
- ``adversarial``: the absent names that co-occur most with the image's objects first.

A name is absent only when it is no synonym, plural, kind or sub-kind of a present object
(``lexicon.nouns.relation``, the relation grounding uses): "animal" or "puppy" is never a
negative for an image with a dog.

Scoring reads a yes/no answer with POPE's rule (the first sentence; "no" or "not" among its words → no,
else yes) and reports accuracy, precision, recall, F1 (positive class = yes) and the yes-ratio, as
fractions, overall and per concept kind. Two readings of the rule (``scoring.pope_reading``):

- ``studio`` (default): the words of the first sentence in any case, split on any white space, a comma
  read as a space: "NO", "Not really.", "No,there isn't.", "No\\nThere is only a dog." all read no;
- ``released``: POPE's ``evaluate.py`` byte for byte: commas deleted ("No,there" becomes "Nothere"), the text
  split on single spaces only ("No\\nThere" is one word), and no only from the words ``No``, ``no``, ``not``
  ("NO" and "Not really." read yes). Each of the examples above, and "Yes\\tno", reads yes there.

Splits. A question carries the splits it belongs to in ``Sample.meta["splits"]`` (lower-case, as the toolkits
name them: ``random``, ``popular``, ``adversarial``; VLMEvalKit's POPE has questions in two or three splits at once);
questions derived here carry their ``strategy``. An answer counts once in each split it belongs to, in that split's
numbers (``adversarial.f1``, ...) and overall: the overall numbers pool the splits as VLMEvalKit's do. It stays one
answer, one item of its image's cluster, so a bootstrap replicate draws all of its copies together.

Worked example. Four positives answered yes, yes, yes, no (TP 3, FN 1) and four
negatives answered yes, yes, no, no (FP 2, TN 2): accuracy 5/8 = 0.625, precision 3/5
= 0.6, recall 3/4 = 0.75, F1 = 2·0.6·0.75/1.35 = 0.667, yes-ratio 5/8 = 0.625.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..config import READINGS
from ..lexicon.nouns import relation as noun_relation
from ..model import Sample, SceneGraph
from .base import ItemResult, ScoringItem
from .spec import ANSWER_METRIC, Breakdown, MetricSpec, Number
from .chair import canonical_forms

if TYPE_CHECKING:
    from ..config import Settings

STRATEGIES: tuple[str, ...] = ("random", "popular", "adversarial")
CONCEPT_KINDS: tuple[str, ...] = ("object", "attribute", "relation")


def object_question(o: str) -> str:
    return f"Is there a {o} in the image?"


def attribute_question(o: str, a: str) -> str:
    return f"Is the {o} {a}?"


def relation_question(s: str, p: str, o: str) -> str:
    return f"Is the {s} {p} the {o}?"


@dataclass
class CorpusStatistics:
    """Frequencies and co-occurrences over the images a question set is drawn from."""

    objects: Counter = field(default_factory=Counter)  # images containing each object name
    attributes: Counter = field(default_factory=Counter)
    predicates: Counter = field(default_factory=Counter)
    cooccurring_objects: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    object_attributes: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    object_predicates: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))

    @classmethod
    def from_graphs(cls, graphs: Iterable[SceneGraph]) -> "CorpusStatistics":
        st = cls()
        for g in graphs:
            names = sorted({_clean(n) for n in g.object_names()} - {""})
            st.objects.update(names)
            for a in names:
                st.cooccurring_objects[a].update(n for n in names if n != a)
            for o, a in {(_clean(o), _clean(a)) for o, a in g.attribute_pairs()}:
                st.attributes[a] += 1
                st.object_attributes[o][a] += 1
            for s, p, o in {(_clean(s), _clean(p), _clean(o)) for s, p, o in g.triplets()}:
                st.predicates[p] += 1
                st.object_predicates[s][p] += 1
                st.object_predicates[o][p] += 1
        return st


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


@dataclass(frozen=True)
class ExistenceQuestion:
    kind: str  # object | attribute | relation
    answer: str  # yes | no
    concept: tuple[str, ...]
    question: str
    replaced: str | None = None  # for negatives: which element was replaced


class _Picker:
    """Draws absent names in the order a strategy prescribes, without repeating itself."""

    def __init__(self, strategy: str, rng: random.Random) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown negative sampling strategy {strategy!r}; choose from {STRATEGIES}")
        self.strategy = strategy
        self.rng = rng
        self.used: set[tuple[str, str]] = set()

    def pick(self, pool: str, candidates: Counter, closeness: Counter, exclude: set[str]) -> str | None:
        names = [n for n in candidates if n not in exclude and (pool, n) not in self.used]
        if not names:
            return None
        if self.strategy == "random":
            choice = self.rng.choice(sorted(names))
        elif self.strategy == "popular":
            choice = min(names, key=lambda n: (-candidates[n], n))
        else:
            choice = min(names, key=lambda n: (-closeness[n], -candidates[n], n))
        self.used.add((pool, choice))
        return choice


def existence_questions(graph: SceneGraph, corpus: CorpusStatistics, *, strategy: str = "random",
                        kinds: Sequence[str] = CONCEPT_KINDS, seed: int = 0) -> list[ExistenceQuestion]:
    """Positive and negative existence questions for one image (pure, deterministic given ``seed``)."""
    unknown = set(kinds) - set(CONCEPT_KINDS)
    if unknown:
        raise ValueError(f"unknown concept kinds {sorted(unknown)}; choose from {CONCEPT_KINDS}")
    rng = random.Random(seed)
    picker = _Picker(strategy, rng)
    present = sorted({_clean(n) for n in graph.object_names()} - {""})
    # Synonyms and plurals of present objects are not absent ("puppy" when a dog is there), nor is
    # what names a present object more or less specifically (lexicon: "animal" or "puppy" for a dog).
    present_forms = {f for n in present for f in canonical_forms(n)}
    absent_objects = {n for n in corpus.objects if not present_forms.intersection(canonical_forms(n))
                      and not any(noun_relation(n, p) for p in present)}
    objects_closeness: Counter = Counter()
    for p in present:
        objects_closeness.update(corpus.cooccurring_objects.get(p, Counter()))
    object_pool = Counter({n: c for n, c in corpus.objects.items() if n in absent_objects})
    attrs = sorted({(_clean(o), _clean(a)) for o, a in graph.attribute_pairs()})
    triplets = sorted({(_clean(s), _clean(p), _clean(o)) for s, p, o in graph.triplets()})
    attrs_of: dict[str, set[str]] = defaultdict(set)
    for o, a in attrs:
        attrs_of[o].add(a)
    preds_of: dict[tuple[str, str], set[str]] = defaultdict(set)
    for s, p, o in triplets:
        preds_of[(s, o)].add(p)

    def absent_object() -> str | None:
        return picker.pick("object", object_pool, objects_closeness, set())

    out: list[ExistenceQuestion] = []
    if "object" in kinds:
        for o in present:
            out.append(ExistenceQuestion("object", "yes", (o,), object_question(o)))
            neg = absent_object()
            if neg:
                out.append(ExistenceQuestion("object", "no", (neg,), object_question(neg), "object"))
    if "attribute" in kinds:
        for o, a in attrs:
            out.append(ExistenceQuestion("attribute", "yes", (o, a), attribute_question(o, a)))
            if rng.random() < 0.5:
                neg_a = picker.pick("attribute", corpus.attributes, corpus.object_attributes.get(o, Counter()),
                                    attrs_of[o])
                negative = (o, neg_a) if neg_a else None
                replaced = "attribute"
            else:
                neg_o = absent_object()
                negative = (neg_o, a) if neg_o else None
                replaced = "object"
            if negative:
                out.append(ExistenceQuestion("attribute", "no", negative, attribute_question(*negative), replaced))
    if "relation" in kinds:
        for s, p, o in triplets:
            out.append(ExistenceQuestion("relation", "yes", (s, p, o), relation_question(s, p, o)))
            replaced = rng.choice(("subject", "predicate", "object"))
            if replaced == "predicate":
                closeness = corpus.object_predicates.get(s, Counter()) + corpus.object_predicates.get(o, Counter())
                neg_p = picker.pick("predicate", corpus.predicates, closeness, preds_of[(s, o)])
                negative = (s, neg_p, o) if neg_p else None
            else:
                other = absent_object()
                negative = None if other is None else ((other, p, o) if replaced == "subject" else (s, p, other))
            if negative:
                out.append(ExistenceQuestion("relation", "no", negative, relation_question(*negative), replaced))
    return out


def existence_samples(samples: Sequence[Sample], *, benchmark: str, strategy: str = "random",
                      kinds: Sequence[str] = CONCEPT_KINDS, seed: int = 0) -> list[Sample]:
    """VISCON-QA / POPE ``yes_no`` samples for every distinct image among ``samples``.

    Ids are ``"<benchmark>/<image_key>/<strategy>/<n>"``, stable for the same inputs.
    """
    images: dict[str, Sample] = {}
    for s in samples:
        if not s.scene_graph.is_empty():
            images.setdefault(s.image_key, s)
    corpus = CorpusStatistics.from_graphs(s.scene_graph for s in images.values())
    out = []
    for n_image, (image_key, source) in enumerate(sorted(images.items())):
        questions = existence_questions(source.scene_graph, corpus, strategy=strategy, kinds=kinds,
                                        seed=seed * 1_000_003 + n_image)
        for n, q in enumerate(questions):
            out.append(Sample(
                id=f"{benchmark}/{image_key}/{strategy}/{n}", benchmark=benchmark, image_key=image_key,
                task="yes_no", image_sha256=source.image_sha256, domain=source.domain,
                source_kind=source.source_kind, scene_graph=source.scene_graph, question=q.question,
                answer=q.answer,
                meta={"kind": q.kind, "polarity": "positive" if q.answer == "yes" else "negative",
                      "strategy": strategy, "splits": [strategy], "concept": list(q.concept),
                      "replaced": q.replaced,
                      "source_sample": source.id}))
    return out


# --------------------------------------------------------------------------- scoring

# The words POPE's released evaluate.py reads "no" from, exactly as written there.
RELEASED_NO_WORDS = frozenset({"No", "no", "not"})


def pope_answer(response: str, reading: str = "studio") -> str:
    """"yes" or "no" as POPE's rule reads ``response`` (see the module docstring for the two readings).

    >>> [pope_answer(a) for a in ("NO", "Not really.", "No,there isn't.", "No\\nThere is only a dog.", "Yes\\tno")]
    ['no', 'no', 'no', 'no', 'no']
    >>> [pope_answer(a, "released") for a in ("NO", "Not really.", "No,there isn't.", "No\\nThere is only a dog.",
    ...                                       "Yes\\tno", "No, there is not.")]
    ['yes', 'yes', 'yes', 'yes', 'yes', 'no']
    """
    if reading == "released":
        words = response.split(".")[0].replace(",", "").split(" ")
        return "no" if RELEASED_NO_WORDS.intersection(words) else "yes"
    first = response.strip().split(".")[0].replace(",", " ")
    return "no" if {w.lower() for w in first.split()} & {"no", "not"} else "yes"


CELLS: tuple[str, ...] = ("tp", "fp", "tn", "fn")


def question_splits(sample: Sample) -> list[str]:
    """The POPE splits ``sample`` belongs to: ``meta["splits"]`` (a list, or one comma-separated string as
    VLMEvalKit's ``category`` writes it), else the ``strategy`` it was derived with; none when neither.

    >>> s = Sample(id="b/1", benchmark="b", image_key="1", task="yes_no", meta={"splits": ["popular", "adversarial"]})
    >>> question_splits(s), question_splits(Sample(id="b/2", benchmark="b", image_key="1", task="yes_no",
    ...                                            meta={"splits": "adversarial,popular"}))
    (['popular', 'adversarial'], ['adversarial', 'popular'])
    """
    splits = sample.meta.get("splits")
    if splits is None:
        splits = [sample.meta["strategy"]] if sample.meta.get("strategy") in STRATEGIES else []
    elif isinstance(splits, str):
        splits = splits.split(",")
    names = (str(x).strip().lower() for x in splits)
    return list(dict.fromkeys(n for n in names if n and n not in CONCEPT_KINDS))


def _rates(tp: float, fp: float, tn: float, fn: float) -> dict[str, float]:
    n = tp + fp + tn + fn
    out: dict[str, float] = {}
    if not n:
        return out
    out["accuracy"] = (tp + tn) / n
    out["yes_ratio"] = (tp + fp) / n
    if tp + fp:
        out["precision"] = tp / (tp + fp)
    if tp + fn:
        out["recall"] = tp / (tp + fn)
    if "precision" in out and "recall" in out:
        p, r = out["precision"], out["recall"]
        out["f1"] = 2 * p * r / (p + r) if p + r else 0.0
    return out


class PopeMetric:
    spec = MetricSpec(
        "pope", "POPE", tasks=("yes_no",),
        headline=Number("f1", "F1", "0–1", lower_is_better=False,
                        plain="0 to 1: how reliably it says an object is there only when it is (1 = always)",
                        meaning="F1 of yes/no answers to object-existence questions.",
                        misleads="existence only; the negatives' sampling (random, popular, adversarial) changes it "
                                 "a lot."),
        summary=("accuracy", "precision", "recall", "yes_ratio"),
        breakdown=Breakdown(("f1", "accuracy", "precision", "recall", "yes_ratio"), order=STRATEGIES,
                            not_parts=CONCEPT_KINDS),
        **ANSWER_METRIC,
        settings=("scoring.pope_reading",))
    name = spec.name

    def __init__(self, reading: str = "studio") -> None:
        if reading not in READINGS:
            raise ValueError(f"unknown POPE reading {reading!r}; choose {' | '.join(READINGS)}")
        self.reading = reading

    @classmethod
    def from_settings(cls, settings: "Settings") -> "PopeMetric":
        return cls(settings.scoring.pope_reading)

    def config(self) -> dict[str, Any]:
        return {"metric": self.name, "answer": "POPE first-sentence no/not rule", "reading": self.reading,
                "splits": "an answer counts once in each of its splits, overall and per split"}

    def update(self, item: ScoringItem) -> ItemResult:
        label = (item.sample.answer or "").strip().lower()
        values: dict[str, Any] = {"correct": None, "answered_yes": None, "kind": item.sample.meta.get("kind")}
        if item.sample.task != "yes_no" or label not in ("yes", "no"):
            return ItemResult({}, values, {}, f"sample {item.sample.id} is not a yes/no question with a yes/no label")
        said = pope_answer(item.response or "", self.reading)
        cell = ("t" if said == label else "f") + ("p" if said == "yes" else "n")
        splits = question_splits(item.sample)
        # Once per split, overall too (VLMEvalKit's overall pools its splits so); one answer, one item.
        weight = float(max(len(splits), 1))
        stats = {cell: weight, **{f"{split}.{cell}": 1.0 for split in splits}}
        kind = item.sample.meta.get("kind")
        if kind in CONCEPT_KINDS:
            stats[f"{kind}.{cell}"] = weight
        values.update(correct=said == label, answered_yes=said == "yes")
        method = "POPE no/not rule" + (" (POPE's evaluate.py, byte for byte)" if self.reading == "released" else "")
        if not (item.response or "").strip():
            method += " (an empty answer reads as yes, as in POPE's code)"
        return ItemResult(stats, values, {"parsed_answer": said, "label": label, "method": method})

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        """Overall, per concept kind (``object.f1``) and per split (``adversarial.f1``, with ``adversarial.questions``).

        >>> m = PopeMetric()
        >>> items = [m.update(ScoringItem(f"r{i}", said, Sample(id=f"b/{i}", benchmark="b", image_key="1",
        ...                                                    task="yes_no", answer=gold, meta={"splits": splits})))
        ...          for i, (gold, said, splits) in enumerate([("yes", "Yes", ["random", "popular"]),
        ...                                                    ("no", "Yes", ["popular"]), ("no", "No", ["random"])])]
        >>> out = m.compute([i.stats for i in items])
        >>> out["questions"], out["accuracy"], out["popular.accuracy"], out["random.yes_ratio"]
        (4.0, 0.75, 0.5, 0.5)
        """
        def cells(prefix: str) -> tuple[float, float, float, float]:
            return tuple(sum(s.get(prefix + c, 0.0) for s in stats) for c in CELLS)  # type: ignore[return-value]

        out = _rates(*cells(""))
        for kind in CONCEPT_KINDS:
            out.update({f"{kind}.{k}": v for k, v in _rates(*cells(f"{kind}.")).items()})
        splits = sorted({k.rsplit(".", 1)[0] for s in stats for k in s
                         if "." in k and k.rsplit(".", 1)[1] in CELLS} - set(CONCEPT_KINDS))
        for split in splits:
            counts = cells(f"{split}.")
            if sum(counts):
                out.update({f"{split}.{k}": v for k, v in _rates(*counts).items()})
                out[f"{split}.questions"] = float(sum(counts))
        out["questions"] = float(sum(cells("")))
        return out
