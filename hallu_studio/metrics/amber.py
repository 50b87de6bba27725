"""AMBER (Wang et al., 2023, "An LLM-free Multi-dimensional Benchmark for MLLMs Hallucination Evaluation"): its
generative metrics CHAIR, Cover, Hal and Cog, and its discriminative yes/no metrics, as its released evaluator
(``inference.py``) computes them.

Generative (task ``caption``; the sample's ``meta["amber"]`` holds AMBER's annotation: ``truth`` and ``hallu``
objects, ``association``: AMBER's related words of each (``relation.json``), ``words``: every word the evaluator
counts (``relation.json``'s keys and related words), ``safe_words``: the words it never calls hallucinated). The
response's nouns (``metrics.amber_nouns``: NLTK's tagger with the model shipped in the package, as AMBER reads them) that are among
``words`` are taken in order, every occurrence; each one:

1. a safe word: counted, never hallucinated;
2. a truth object or a word related to one: not hallucinated; the first such entry in AMBER's order (every truth
   object's related words, then the truth objects themselves) marks its truth object covered;
3. otherwise hallucinated; when it is a hallu object or related to one (same order), that object is marked.
   AMBER then asks spaCy's ``en_core_web_lg`` word vectors whether the noun is similar (> 0.8) to a hallu word,
   in the same order (marks the first), and to a truth word (then it is not hallucinated after all, and covers
   the first). ``scoring.amber_similarity``: ``same-word`` (default) calls two words similar only when they are
   the same word, which is what that check answers for a word and itself, so the word lists decide alone;
   ``en_core_web_lg`` asks that model as AMBER does (it is not on PyPI: install it to use it).

    CHAIR = 100 × Σ hallucinated nouns / Σ counted nouns       Cover = 100 × Σ truth objects covered / Σ truth
    Hal   = 100 × responses with ≥ 1 hallucinated noun / responses
    Cog   = 100 × Σ hallu objects marked / Σ hallu objects

Discriminative (task ``yes_no``, ``meta["amber"]["dimension"]`` existence / attribute / relation, attributes also
``meta["amber"]["attribute"]`` state / number / action): a response counts as the answer only when it is exactly
``Yes`` or ``No`` (AMBER's comparison); anything else is wrong and answers neither. The positive class is
*no* (a hallucination rejected): precision = correct no's / answered no's, recall = correct no's / gold no's.
As AMBER prints it, F1 is taken from precision and recall rounded to one decimal (percent), with 0.0001 added to
their sum (0.001 for existence); ``f1`` here does the same, so its rounding to one decimal is AMBER's number.

Numbers are percentages, not rounded (AMBER prints one decimal; its counters start at 0.001, which moves no
number by more than 1e-5 points). Keys: ``chair``, ``cover``, ``hal``, ``cog``; ``accuracy``, ``precision``,
``recall``, ``f1`` over all yes/no questions, and the same per dimension (``existence.f1``, ``attribute.f1``,
``state.f1``, ``number.f1``, ``action.f1``, ``relation.f1``).

Worked example (truth [dog, grass], hallu [cat], dog's related words [puppy]; words {dog, puppy, grass, cat,
car}): "A puppy and a cat on the grass near a car." → nouns puppy, cat, grass, car; puppy covers dog, grass
covers grass, cat is hallucinated and marks cat, car is hallucinated: CHAIR 2/4 = 50, Cover 2/2 = 100,
Hal 100, Cog 1/1 = 100.

>>> sample = Sample(id="amber/1", benchmark="amber", image_key="AMBER_1.jpg", meta={"amber": {
...     "type": "generative", "truth": ["dog", "grass"], "hallu": ["cat"],
...     "association": {"dog": ["puppy"], "grass": [], "cat": []},
...     "words": ["dog", "puppy", "grass", "cat", "car"], "safe_words": ["line"]}})
>>> m = AmberMetric(nouns=lambda texts: [["puppy", "cat", "grass", "car"] for _ in texts])
>>> r = m.update(ScoringItem("r1", "A puppy and a cat on the grass near a car.", sample))
>>> r.values["hallucinated"], r.values["covered"]
(['cat', 'car'], ['dog', 'grass'])
>>> {k: round(v, 1) for k, v in m.compute([r.stats]).items()}
{'chair': 50.0, 'cover': 100.0, 'hal': 100.0, 'cog': 100.0, 'responses': 1.0}
>>> yn = Sample(id="amber/1005", benchmark="amber", image_key="AMBER_1.jpg", task="yes_no", answer="no",
...             meta={"amber": {"type": "discriminative-attribute-state", "dimension": "attribute",
...                             "attribute": "state"}})
>>> out = m.compute([m.update(ScoringItem("r2", "No", yn)).stats, m.update(ScoringItem("r3", "no", yn)).stats])
>>> out["accuracy"], out["precision"], out["recall"], out["state.accuracy"]
(50.0, 100.0, 50.0, 50.0)
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..model import Sample
from ..importers.amber import ATTRIBUTES, DIMENSIONS, TOOLKIT, dimension_of
from .amber_nouns import noun_reader, response_nouns, word_similarity
from .base import ItemResult, ScoringItem
from .evidence import HALLUCINATED, SUPPORTED, EvidenceRow, answer_rows, concept_key
from .flagging import find_phrase
from .spec import Breakdown, MetricSpec, Number

if TYPE_CHECKING:
    from ..config import Settings

# The sum F1's denominator gets in AMBER's evaluator (existence has its own).
_F1_EPSILON = {"existence": 0.001}
Nouns = Callable[[Sequence[str]], list[list[str]]]


def _in_order(objects: Sequence[str], association: dict[str, list[str]]) -> list[tuple[str, int]]:
    """(word, the object it marks) in AMBER's order: every object's related words first, then the objects."""
    return [(w, i) for i, obj in enumerate(objects) for w in association.get(obj, ())] + \
        [(obj, i) for i, obj in enumerate(objects)]


def _first(noun: str, ordered: list[tuple[str, int]], same: Callable[[str, str], bool]) -> int | None:
    return next((owner for word, owner in ordered if same(noun, word)), None)


def _equal(a: str, b: str) -> bool:
    return a == b


def read_caption(nouns: Sequence[str], annotation: dict[str, Any],
                 similar: Callable[[str, str], bool] | None = None) -> dict[str, Any]:
    """What AMBER's evaluator counts in one description, given its nouns (lemmatized) and the image's annotation.

    ``similar``: AMBER's word-vector check for a noun that is no truth word (see the module docstring); None: a
    word is similar to itself only, which leaves the exact matches deciding."""
    truth, hallu = list(annotation["truth"]), list(annotation["hallu"])
    association: dict[str, list[str]] = annotation.get("association") or {}
    safe_order, hallu_order = _in_order(truth, association), _in_order(hallu, association)
    words, safe = set(annotation["words"]), set(annotation.get("safe_words") or ())
    covered, marked = [False] * len(truth), [False] * len(hallu)
    counted: list[str] = []
    hallucinated: list[str] = []
    for noun in nouns:
        if noun not in words:
            continue
        counted.append(noun)
        if noun in safe:
            continue
        owner = _first(noun, safe_order, _equal)
        if owner is not None:
            covered[owner] = True
            continue
        for same in (_equal, similar) if similar is not None else (_equal,):
            owner = _first(noun, hallu_order, same)
            if owner is not None:
                marked[owner] = True
        owner = _first(noun, safe_order, similar) if similar is not None else None
        if owner is not None:  # near a truth word after all: covers it, and is no hallucination
            covered[owner] = True
            continue
        hallucinated.append(noun)
    return {"counted": counted, "hallucinated": hallucinated,
            "covered": [t for t, c in zip(truth, covered) if c], "marked": [h for h, m in zip(hallu, marked) if m],
            "truth": len(truth), "hallu": len(hallu)}


def _needs_annotation(sample: Sample) -> str | None:
    amber = sample.meta.get("amber")
    if not isinstance(amber, dict):
        return "amber scores AMBER's samples (import --format amber): this sample has no AMBER annotation"
    if sample.task == "caption" and not {"truth", "hallu", "words"} <= set(amber):
        return "amber needs the image's truth and hallu objects and AMBER's word list (meta.amber)"
    if sample.task == "yes_no" and (sample.answer or "").strip().lower() not in ("yes", "no"):
        return "amber needs a yes/no gold answer"
    return None


def _rates(cells: dict[str, float], epsilon: float) -> dict[str, float]:
    """Accuracy, precision, recall and F1 (positive class: no) as AMBER's evaluator prints them, in percent."""
    out: dict[str, float] = {}
    if cells["n"]:
        out["accuracy"] = 100 * cells["correct"] / cells["n"]
    if cells["said_no"]:
        out["precision"] = 100 * cells["correct_no"] / cells["said_no"]
    if cells["gold_no"]:
        out["recall"] = 100 * cells["correct_no"] / cells["gold_no"]
    if "precision" in out and "recall" in out:
        p, r = round(out["precision"], 1) / 100, round(out["recall"], 1) / 100
        out["f1"] = 100 * 2 * p * r / (p + r + epsilon)
    return out


def evidence_rows(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str) -> list[EvidenceRow]:
    """A description's counted nouns, each hallucinated or found among the image's objects; a yes/no answer read
    against its label.

    >>> [(r.text, r.verdict) for r in evidence_rows({"hallucinated": ["cat"]}, {"counted_nouns": ["dog", "cat"]}, "")]
    [('dog', 'supported'), ('cat', 'hallucinated')]
    """
    if "counted_nouns" not in evidence:
        return answer_rows(values, evidence, text)
    bad = {str(n) for n in values.get("hallucinated") or []}
    rows = []
    for noun in dict.fromkeys(map(str, evidence.get("counted_nouns") or [])):
        found = find_phrase(text, noun)
        rows.append(EvidenceRow(noun, HALLUCINATED if noun in bad else SUPPORTED, kind="object",
                                reason="names no object of AMBER's annotation of the image" if noun in bad else
                                "an object of AMBER's annotation of the image", span=found[0] if found else None,
                                concept=concept_key("object", noun)))
    return rows


class AmberMetric:
    spec = MetricSpec(
        "amber", TOOLKIT, tasks=("caption", "yes_no"), needs=_needs_annotation, reads_concepts=False,
        headline=Number("chair", "CHAIR", "% of counted nouns", lower_is_better=True,
                        plain="% of the object words in descriptions that name nothing in the image",
                        meaning="AMBER's CHAIR: the share of the object nouns of descriptions (AMBER's vocabulary) "
                                "that name no object of the image, over all nouns of all descriptions.",
                        misleads="a noun outside AMBER's 418 words is not read at all; near-synonyms are matched "
                                 "by AMBER's own lists (by word vectors too only with scoring.amber_similarity)."),
        summary=("cover", "hal", "cog", "accuracy", "precision", "recall", "f1"),
        breakdown=Breakdown(("accuracy", "precision", "recall", "f1"), order=(*DIMENSIONS, *ATTRIBUTES)),
        item=Number("hallucinated_share", "hallucinated nouns", "0–1", lower_is_better=True,
                    meaning="the share of this description's counted nouns that are hallucinated"),
        agreement=Number("any_hallucinated", "any hallucinated noun / wrong answer", "1 = yes",
                         lower_is_better=True),
        evidence_rows=evidence_rows, settings=("scoring.amber_similarity", "scoring.amber_tagger"))
    name = spec.name

    def __init__(self, nouns: Nouns | None = None, similarity: str = "same-word",
                 similar: Callable[[str, str], bool] | None = None, tagger: str = "nltk") -> None:
        """``nouns``: reads the nouns of texts (default: ``amber_nouns.response_nouns`` with noun reader ``tagger``,
        ``scoring.amber_tagger``); ``similarity``: how two words may be judged alike (``scoring.amber_similarity``),
        or ``similar`` given as a function."""
        reader = noun_reader(tagger)
        self._nouns = nouns or functools.partial(response_nouns, tagger=reader)
        self._reader = reader if nouns is None else getattr(nouns, "__name__", "custom")
        self._similar = similar or word_similarity(similarity)
        self._similarity = similarity if similar is None else getattr(similar, "__name__", "custom")

    @classmethod
    def from_settings(cls, settings: "Settings") -> "AmberMetric":
        return cls(similarity=settings.scoring.amber_similarity, tagger=settings.scoring.amber_tagger)

    def config(self) -> dict[str, Any]:
        return {"metric": self.name, "reading": "AMBER inference.py", "nouns": self._reader,
                "similarity": self._similarity}

    def update(self, item: ScoringItem) -> ItemResult:
        return self.update_many([item])[0]

    def update_many(self, items: Sequence[ScoringItem]) -> list[ItemResult]:
        """``update`` on each item, the descriptions' nouns read in one pass."""
        captions = [i for i, it in enumerate(items) if it.sample.task == "caption" and not _needs_annotation(it.sample)]
        nouns = dict(zip(captions, self._nouns([items[i].response or "" for i in captions]))) if captions else {}
        return [self._caption(it, nouns[i]) if i in nouns else self._yes_no(it) for i, it in enumerate(items)]

    def _caption(self, item: ScoringItem, nouns: list[str]) -> ItemResult:
        read = read_caption(nouns, item.sample.meta["amber"], self._similar)
        n, bad = len(read["counted"]), len(read["hallucinated"])
        stats = {"nouns": float(n), "hallucinated": float(bad), "covered": float(len(read["covered"])),
                 "truth": float(read["truth"]), "marked": float(len(read["marked"])), "hallu": float(read["hallu"]),
                 "responses": 1.0, "any_hallucinated": float(bad > 0)}
        values = {"hallucinated_share": bad / n if n else None, "any_hallucinated": bad > 0,
                  "hallucinated": read["hallucinated"], "covered": read["covered"], "cognition": read["marked"]}
        evidence = {"counted_nouns": read["counted"],
                    "method": f"AMBER's evaluator; nouns tagged by {self._reader}; similar words: {self._similarity}"}
        return ItemResult(stats, values, evidence)

    def _yes_no(self, item: ScoringItem) -> ItemResult:
        why = _needs_annotation(item.sample)
        if why or item.sample.task != "yes_no":
            return ItemResult({}, {"correct": None}, {}, why or f"amber does not score {item.sample.task} samples")
        amber = item.sample.meta["amber"]
        dimension, attribute = dimension_of(str(amber.get("type") or ""))
        gold = (item.sample.answer or "").strip().lower()
        said = {"Yes": "yes", "No": "no"}.get(item.response or "")
        cells = {"n": 1.0, "correct": float(said == gold), "said_no": float(said == "no"),
                 "gold_no": float(gold == "no"), "correct_no": float(said == gold == "no")}
        stats = {f"{scope}.{k}": v for scope in ("all", dimension, attribute) if scope for k, v in cells.items()}
        values = {"correct": said == gold, "any_hallucinated": said != gold, "dimension": dimension}
        how = "exactly 'Yes' or 'No' (AMBER's comparison)" if said else "neither exactly 'Yes' nor 'No': wrong"
        return ItemResult(stats, values, {"parsed_answer": said, "label": gold, "method": how})

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        def total(key: str) -> float:
            return sum(s.get(key, 0.0) for s in stats)

        out: dict[str, float] = {}
        for key, num, den in (("chair", "hallucinated", "nouns"), ("cover", "covered", "truth"),
                              ("hal", "any_hallucinated", "responses"), ("cog", "marked", "hallu")):
            if total(den):
                out[key] = 100 * total(num) / total(den)
        if total("responses"):
            out["responses"] = total("responses")
        for scope in ("all", *DIMENSIONS, *ATTRIBUTES):
            cells = {k: total(f"{scope}.{k}") for k in ("n", "correct", "said_no", "gold_no", "correct_no")}
            rates = _rates(cells, _F1_EPSILON.get(scope, 0.0001))
            out.update({(k if scope == "all" else f"{scope}.{k}"): v for k, v in rates.items()})
            if scope == "all" and cells["n"]:
                out["questions"] = cells["n"]
        return out
