"""Answer accuracy of multiple-choice and short-answer questions, read the way the evaluation toolkits read them.

- **Multiple choice** (``mcq``): the option the answer chooses, as lmms-eval's and VLMEvalKit's MCQ readers find
  it, in this order: the whole answer is a letter ("B", "b", "(B)", "B."); the answer opens with one ("B. the
  watering method", "(B) …"); exactly one option letter stands alone in it ("The answer is B."; a capital "A"
  followed by a lower-case word is the article, not a choice); exactly one option's text is in it ("… a
  mushroom" when B is "mushroom"). The letters are those of the sample's options (A–E when it lists none).
  No option found counts as wrong, as in both toolkits, and is counted apart (``unread``).
- **Short answer** (``vqa``): lmms-eval's ``exact_match`` with ``ignore_case`` and ``ignore_punctuation`` (the
  settings its tasks give it): both sides lower-cased and stripped of ASCII punctuation (``string.punctuation``),
  then compared whole; white space around the answer is dropped. Unlike the VQA score, articles stay and
  "2" is not "two". The gold is the sample's answer, or any of ``meta["answers"]`` when it lists several.

Two readings of a multiple-choice answer (``scoring.accuracy_reading``): the one above (``studio``), and
VLMEvalKit's exact matching (``vlmevalkit``: its ``can_infer``, ``metrics.vlmevalkit_reading``), which reads fewer
answers (an article "A" beside the chosen letter, or a letter among other words, leaves it unread) and some of them
otherwise (option text found inside a word). By default (``toolkit``) a sample imported from VLMEvalKit's tables
is read VLMEvalKit's way, so that its recorded accuracies come out, and any other sample the studio's way. Where
VLMEvalKit's rule finds no option but the imported row carries VLMEvalKit's own verdict (the ``hit`` of an
``_openai_result`` table, from its judge model), that recorded verdict is taken, and the evidence says so: it is
the toolkit's judge's verdict, not HalluStudio's reading.

Per part (``breakdown``), as VLMEvalKit's ``report_acc`` lists them: the accuracy of each ``category`` and each
``l2-category`` of the samples (``meta``), e.g. MMStar's "coarse perception", ScienceQA's "Adaptations".

lmms-eval's ScienceQA-IMG ``exact_match`` (the answer equals the letter, or opens with "B.") gives the same
verdicts as the multiple-choice reading on answers that are a letter, or a letter and its option.

Reefknot's relation questions keep Reefknot's metric, Tri-HE's open questions (gold triplets) Tri-HE's, and yes/no
questions POPE's: none of them is scored here.

>>> from hallu_studio.model import Sample
>>> q = Sample(id="b/1", benchmark="b", image_key="1", task="mcq", question="Which?",
...            options=["bilberry", "mushroom"], answer="B")
>>> m = AnswerAccuracyMetric()
>>> [m.update(ScoringItem(str(i), text, q)).values["correct"] for i, text in enumerate(
...     ["B", "(B)", "B. mushroom", "The answer is B.", "A mushroom.", "A", "I cannot tell."])]
[True, True, True, True, True, False, False]
>>> v = Sample(id="b/2", benchmark="b", image_key="2", task="vqa", question="What color?", answer="Red")
>>> results = [m.update(ScoringItem("v", text, v)) for text in ("red.", " RED ", "dark red")]
>>> [r.values["correct"] for r in results]
[True, True, False]
>>> m.compute([r.stats for r in results])
{'accuracy': 0.6666666666666666, 'unread': 0.0, 'questions': 3.0}
>>> k = AnswerAccuracyMetric("vlmevalkit")
>>> [k.update(ScoringItem(str(i), text, q)).values["correct"] for i, text in enumerate(
...     ["B", "B. mushroom", "A mushroom, B.", "A mushroom."])]  # the last: the article "A" is its letter
[True, True, True, False]
"""

from __future__ import annotations

import re
import string
from typing import TYPE_CHECKING, Any, Sequence

from ..config import ACCURACY_READINGS
from ..model import Sample
from .base import ItemResult, ScoringItem
from .spec import ANSWER_METRIC, Breakdown, MetricSpec, Number
from .vlmevalkit_reading import CHOICE_READING, NO_OPTION, vlmevalkit_choice

if TYPE_CHECKING:
    from ..config import Settings

TASKS: tuple[str, ...] = ("mcq", "vqa")
DEFAULT_LETTERS = "ABCDE"
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_WHOLE = re.compile(r"[(\[]?\s*([A-Z])\s*[)\].:]?")
_OPENING = re.compile(r"[(\[]?([A-Z])\s*[)\].:](?:\s|$)")


def option_letters(sample: Sample) -> str:
    """The letters of ``sample``'s options ("AB" for two options), A–E when it lists none."""
    return string.ascii_uppercase[:len(sample.options)] if sample.options else DEFAULT_LETTERS


def choice(response: str, letters: str = DEFAULT_LETTERS, options: Sequence[str] = ()) -> tuple[str | None, str]:
    """The option letter ``response`` chooses and how it was found; ``(None, why)`` when it chooses none.

    >>> choice("(C)", "ABCD"), choice("A cat, I think B", "ABCD")
    (('C', 'the whole answer'), ('B', 'the one option letter standing alone'))
    >>> choice("Maybe B or C", "ABCD"), choice("a mushroom", "AB", ["bilberry", "mushroom"])
    ((None, 'no option letter or option text found'), ('B', "the option's text"))
    """
    text = response.strip()
    m = _WHOLE.fullmatch(text.upper()) or _OPENING.match(text)
    if m and m.group(1) in letters:
        return m.group(1), "the whole answer" if m.re is _WHOLE else "the answer's opening letter"
    words = text.translate(str.maketrans(string.punctuation, " " * len(string.punctuation))).split()
    standing = set()
    for i, word in enumerate(words):
        article = word == "A" and i + 1 < len(words) and words[i + 1][:1].islower()
        if len(word) == 1 and word in letters and not article:
            standing.add(word)
    if len(standing) == 1:
        return standing.pop(), "the one option letter standing alone"
    lowered = f" {_normalised(text)} "
    named = {letter for letter, option in zip(letters, options)
             if _normalised(option) and f" {_normalised(option)} " in lowered}
    if len(named) == 1:
        return named.pop(), "the option's text"
    return None, "no option letter or option text found"


def _normalised(text: str) -> str:
    """lmms-eval's exact_match with ignore_case and ignore_punctuation, white space around dropped."""
    return " ".join(text.lower().translate(_PUNCTUATION).split())


def _gold_letter(sample: Sample, letters: str) -> str | None:
    gold = (sample.answer or "").strip()
    if len(gold) == 1 and gold.upper() in letters:
        return gold.upper()
    for letter, option in zip(letters, sample.options):  # a gold written as the option's text
        if _normalised(option) == _normalised(gold):
            return letter
    return None


def _needs(sample: Sample) -> str | None:
    if sample.relation_category is not None:
        return "a Reefknot relation question: the reefknot metric scores it"
    if sample.gold_triplets:
        return "a Tri-HE open question (gold triplets): the trihe metric scores it"
    if not (sample.answer or "").strip():
        return "the question has no gold answer"
    return None


class AnswerAccuracyMetric:
    spec = MetricSpec(
        "accuracy", "Answer accuracy", tasks=TASKS, needs=_needs,
        headline=Number("accuracy", "Acc", "0–1", lower_is_better=False,
                        plain="0 to 1: the share of answers that are right",
                        meaning="share of multiple-choice answers choosing the gold option (letter match) and of "
                                "short answers equal to the gold (lmms-eval's exact match).",
                        misleads="an answer naming no option counts as wrong; exact match refuses right answers "
                                 "worded differently (\"two\" for \"2\")."),
        summary=("unread",),
        breakdown=Breakdown(("accuracy",)),
        **ANSWER_METRIC,
        settings=("scoring.accuracy_reading",))
    name = spec.name

    def __init__(self, reading: str = "toolkit") -> None:
        if reading not in ACCURACY_READINGS:
            raise ValueError(f"unknown answer-accuracy reading {reading!r}; choose {' | '.join(ACCURACY_READINGS)}")
        self.reading = reading

    @classmethod
    def from_settings(cls, settings: "Settings") -> "AnswerAccuracyMetric":
        return cls(settings.scoring.accuracy_reading)

    def config(self) -> dict[str, Any]:
        return {"metric": self.name, "mcq": "letter match (lmms-eval / VLMEvalKit readings)",
                "vqa": "exact match, ignore_case and ignore_punctuation", "reading": self.reading,
                "parts": "category and l2-category, as VLMEvalKit's report_acc"}

    def _vlmevalkit_reads(self, sample: Sample) -> bool:
        return self.reading == "vlmevalkit" or (self.reading == "toolkit" and "vlmevalkit_dataset" in sample.meta)

    def update(self, item: ScoringItem) -> ItemResult:
        sample, response = item.sample, item.response or ""
        reason = self.spec.not_applicable(sample)
        if reason:
            return ItemResult({}, {"correct": None}, {}, reason)
        if sample.task == "mcq":
            letters = option_letters(sample)
            gold = _gold_letter(sample, letters)
            if gold is None:
                return ItemResult({}, {"correct": None}, {}, f"the gold answer {sample.answer!r} is no option letter "
                                                             f"of {', '.join(letters)}")
            if self._vlmevalkit_reads(sample):
                said, correct, method = _vlmevalkit_verdict(item, letters, gold)
            else:
                said, how = choice(response, letters, sample.options)
                correct, method = said == gold, f"letter match: {how}"
            evidence = {"parsed_answer": said, "label": gold, "method": method}
        else:
            golds = [sample.answer or ""] + [str(a) for a in sample.meta.get("answers") or []]
            said = _normalised(response)
            correct = said in {_normalised(g) for g in golds}
            evidence = {"parsed_answer": said, "label": sample.answer, "method": "exact match, case and punctuation "
                                                                                 "ignored"}
        # VLMEvalKit's "Z" (a refusal it lists, or a lone "Z") is its "no option": unread too.
        stats = {"correct": float(correct), "unread": float(said is None or said == NO_OPTION)}
        for part in _parts(sample):
            stats.update({f"{part}.correct": float(correct), f"{part}.questions": 1.0})
        return ItemResult(stats, {"correct": correct}, evidence)

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        """Overall, and per part (``"<category>.accuracy"``, with ``"<category>.questions"``).

        >>> m = AnswerAccuracyMetric()
        >>> rows = [("B", "math", "B"), ("A", "math", "B"), ("A", "science", "A")]
        >>> out = m.compute([m.update(ScoringItem(str(i), said, Sample(
        ...     id=f"b/{i}", benchmark="b", image_key=str(i), task="mcq", question="?", options=["x", "y"],
        ...     answer=gold, meta={"category": part}))).stats for i, (said, part, gold) in enumerate(rows)])
        >>> out["accuracy"], out["math.accuracy"], out["math.questions"], out["science.accuracy"]
        (0.6666666666666666, 0.5, 2.0, 1.0)
        """
        n = float(len(stats))
        if not n:
            return {"questions": 0.0}
        out = {"accuracy": sum(s.get("correct", 0.0) for s in stats) / n,
               "unread": sum(s.get("unread", 0.0) for s in stats) / n, "questions": n}
        parts = sorted({k[:-len(".questions")] for s in stats for k in s if k.endswith(".questions")})
        for part in parts:
            asked = sum(s.get(f"{part}.questions", 0.0) for s in stats)
            out[f"{part}.accuracy"] = sum(s.get(f"{part}.correct", 0.0) for s in stats) / asked
            out[f"{part}.questions"] = asked
        return out


def _parts(sample: Sample) -> list[str]:
    """The sample's ``category`` and ``l2-category`` (VLMEvalKit's ``report_acc`` groups), each once, as written."""
    found = (sample.meta.get(key) for key in ("l2-category", "category"))
    return list(dict.fromkeys(str(v) for v in found if isinstance(v, (str, int)) and str(v).strip()))


def _vlmevalkit_verdict(item: ScoringItem, letters: str, gold: str) -> tuple[str | None, bool, str]:
    """The option VLMEvalKit's exact matching reads, whether it is the gold, and how it was settled; where the rule
    reads none and the imported row carries VLMEvalKit's own verdict from its judge model, that verdict."""
    options = dict(zip(letters, item.sample.options)) if item.sample.options else dict.fromkeys(letters, "")
    said = vlmevalkit_choice(item.response or "", options)
    if said is not None:
        return said, said == gold, CHOICE_READING
    recorded = (item.signals.get("vlmevalkit") or {}) if isinstance(item.signals, dict) else {}
    hit, log = str(recorded.get("hit", "")).strip(), str(recorded.get("log", ""))
    if hit in ("0", "1") and "Failed in Prefetch" not in log:
        return None, hit == "1", (f"{CHOICE_READING} found no option; VLMEvalKit's recorded verdict (hit={hit} in "
                                  "its _openai_result table, its judge model's reading, not HalluStudio's)")
    return None, False, f"{CHOICE_READING}: no option found (counts wrong, as in VLMEvalKit)"
