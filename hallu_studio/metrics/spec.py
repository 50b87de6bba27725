"""What a metric is, declared once on its class (``Metric.spec``) and read by everything else.

The registry (names, applicability), the Overview, Browse, Inspect, the report, the command-line
leaderboard, the Settings view and the docs' tables take a metric's display name, the tasks it scores,
its headline number (direction, unit), its per-response value and the settings its scores depend on
from its ``MetricSpec``; none of them writes these down again.

>>> spec = MetricSpec("toy", "Toy", tasks=("caption",), settings=("scoring.toy_reading",),
...                   headline=Number("rate", "rate", "%", lower_is_better=True))
>>> spec.headline.title, spec.headline.better, spec.title(spec.headline)
('rate ↓', 'lower is better', 'Toy rate')
>>> spec.not_applicable(Sample(id="b/1", benchmark="b", image_key="1", task="yes_no"))
'toy does not score yes_no samples'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..model import Sample
from .evidence import EvidenceRow, answer_rows
from .flagging import wrong_answer_spans


@dataclass(frozen=True)
class Number:
    """One number a metric reports: a key of its ``compute`` (the headline) or of a score's per-response
    ``values`` (the Browse column), with what a reader needs to read it."""

    key: str
    name: str  # as the papers write it: "Hallu_Q", "CHAIRi"
    unit: str  # "% of claims", "×100", "0–1"
    lower_is_better: bool
    meaning: str = ""  # one sentence: what it is, and what it is averaged over
    misleads: str = ""  # where it misleads (the long version: docs/guide/metrics-and-weaknesses.md)
    # A per-response number derived from several values (a share): how to read it off a score's ``values``.
    derive: Callable[[Mapping[str, Any]], float | None] | None = field(default=None, compare=False, repr=False)

    @property
    def arrow(self) -> str:
        return "↓" if self.lower_is_better else "↑"

    @property
    def better(self) -> str:
        return "lower is better" if self.lower_is_better else "higher is better"

    @property
    def title(self) -> str:
        """The name with its direction: "Hallu_Q ↓"."""
        return f"{self.name} {self.arrow}"

    def of(self, values: Mapping[str, Any]) -> float | None:
        """This number of one score's per-response ``values``; None where undefined (a boolean counts 0 / 1).

        >>> Number("f", "F", "0–1", False).of({"f": 0.5}), Number("ok", "ok", "", False).of({"ok": True})
        (0.5, 1.0)
        """
        if self.derive is not None:
            return self.derive(values)
        return as_number(values.get(self.key))


@dataclass(frozen=True)
class Breakdown:
    """Numbers a metric's ``compute`` also reports per part of a benchmark (a split, a subtask), as keys
    ``"<part>.<key>"``; the leaderboard lists them after the headline and summary, one row per part and key, with
    the part's name in the row's ``split``. The parts are found in ``compute``'s output, so one spec serves any
    benchmark (POPE's random / popular / adversarial, MME's subtasks).

    ``keys``: the per-part keys listed, in this order; ``order``: parts listed first, in this order (the others
    follow by name); ``not_parts``: prefixes of ``compute``'s other dotted keys, which are no parts (POPE's per-kind
    ``object.f1``).

    >>> b = Breakdown(("f1", "accuracy"), order=("random", "popular"), not_parts=("object",))
    >>> b.parts({"f1": 0.8, "popular.f1": 0.7, "object.f1": 0.5, "adversarial.accuracy": 0.6, "random.f1": 0.9})
    ['random', 'popular', 'adversarial']
    >>> b.entries({"popular.f1": 0.7, "popular.accuracy": 0.75, "popular.questions": 4})
    [('popular', 'f1', 'popular.f1'), ('popular', 'accuracy', 'popular.accuracy')]
    """

    keys: tuple[str, ...]
    order: tuple[str, ...] = ()
    not_parts: tuple[str, ...] = ()

    def parts(self, point: Mapping[str, Any]) -> list[str]:
        """The parts ``point`` (one ``compute`` output) reports any of ``keys`` for, in listing order."""
        found = {k.rsplit(".", 1)[0] for k in point
                 if "." in k and k.rsplit(".", 1)[1] in self.keys and k.rsplit(".", 1)[0] not in self.not_parts}
        rank = {part: i for i, part in enumerate(self.order)}
        return sorted(found, key=lambda part: (rank.get(part, len(rank)), part))

    def entries(self, point: Mapping[str, Any]) -> list[tuple[str, str, str]]:
        """``(part, key, compute key)`` of every per-part number in ``point``, parts in order, then keys."""
        return [(part, key, f"{part}.{key}") for part in self.parts(point) for key in self.keys
                if f"{part}.{key}" in point]


@dataclass(frozen=True)
class MetricSpec:
    """A metric's identity: its name in the store and on the command line, how people call it, where it applies,
    which of its numbers the views show, and the settings its scores depend on.

    ``family`` groups metrics of one paper under one heading (EMD and Evaluate-by-Edit are VISCON's);
    ``needs`` says why a sample of a task the metric scores still cannot be scored (None: it can);
    ``settings`` are the dotted settings (``config.py`` holds each one's help text and choices) that enter the
    metric's own configuration, hence its scores' config key; the extractor's settings
    (``registry.EXTRACTOR_SETTINGS``) enter every metric's key besides.
    """

    name: str
    display_name: str
    tasks: tuple[str, ...]
    headline: Number
    settings: tuple[str, ...]
    family: str = ""
    summary: tuple[str, ...] = ()  # the keys of ``compute`` the leaderboard lists after the headline
    breakdown: Breakdown | None = None  # per-part numbers (splits, subtasks) listed after the summary
    item: Number | None = None  # the per-response value Browse shows (None: no column)
    # The per-response number set beside people's ratings (studies' correlations); by default ``item``.
    agreement: Number | None = None
    needs: Callable[[Sample], str | None] | None = None
    # Whether ``update`` reads ``ScoringItem.mentioned``: scoring extracts a response's concepts only for metrics
    # that do (AMBER reads the response text with its own tagger, and 1,004 descriptions parse for a minute).
    reads_concepts: bool = True
    # Per-response values where a higher number means *less* hallucination (how ``study --value metric=key``
    # orients a value other than ``agreement``).
    higher_is_better_values: frozenset[str] = frozenset()
    # The response's character spans this metric's evidence marks as hallucinated:
    # ``(values, evidence, text, concepts) -> spans`` (``metrics.flagging`` has the readers); None: it cannot point.
    # Probe detection reads it, and span agreement with people where ``flags_words`` (not a whole short answer).
    flagged_spans: Callable[[Mapping[str, Any], Mapping[str, Any], str, Mapping[str, Any] | None],
                            list[tuple[int, int]]] | None = None
    flags_words: bool = True
    # The per-response scores set beside people's labels (AUROC, group means), each oriented so that higher means
    # more hallucination; ``name`` is what the tables call it. Empty: the metric is not in those tables.
    hallucination_scores: tuple[Number, ...] = ()
    # How one atomic fact is judged with this metric (FaithScore-style fact tables):
    # ``(values, evidence, undefined_reason) -> FactReading``; None: the metric does not judge facts.
    fact_reading: Callable[[Mapping[str, Any], Mapping[str, Any], str | None], "FactReading"] | None = None
    # The claims of a response's evidence that people correct in Annotate, in evidence order: ``evidence -> [(the
    # claim's triplet or None, the judge's verdict)]``, verdicts as ``annotation.CORRECTION_VERDICTS``; None: none.
    corrected_claims: Callable[[Mapping[str, Any]], list[tuple[tuple[str, str, str] | None, str]]] | None = None
    # How many edits of a response's revision people accept or reject in Annotate: ``evidence -> n``; None: none.
    reviewed_edits: Callable[[Mapping[str, Any]], int] | None = None
    # What its evidence says of each thing it judged in one response (``metrics.evidence``):
    # ``(values, evidence, text) -> [EvidenceRow]``; Inspect draws every metric's rows alike. None: nothing to list.
    evidence_rows: Callable[[Mapping[str, Any], Mapping[str, Any], str], list[EvidenceRow]] | None = None
    # A drawing of its own that Inspect adds beside the rows, by kind ("transport_plan", "edit_diff", "concept_match",
    # "claims", "object_mentions", "answer"): the app's render layer maps a kind to its drawing. None: rows only.
    panel: str | None = None

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", self.display_name)
        if self.agreement is None:
            object.__setattr__(self, "agreement", self.item)

    @property
    def leaderboard_keys(self) -> tuple[str, ...]:
        """The headline key, then the other ``compute`` keys the leaderboard lists."""
        return (self.headline.key, *(k for k in self.summary if k != self.headline.key))

    def title(self, number: Number) -> str:
        """A number named with its family, as a heading or a sentence says it: "Tri-HE Hallu_Q", "VISCON EMD"."""
        return f"{self.family} {number.name}"

    def column(self, number: Number) -> str:
        """``"metric.key"``: how the store's browse query and the leaderboard name a number."""
        return f"{self.name}.{number.key}"

    def not_applicable(self, sample: Sample) -> str | None:
        """Why this metric does not score ``sample``, or None when it does."""
        if sample.task not in self.tasks:
            return f"{self.name} does not score {sample.task} samples"
        return self.needs(sample) if self.needs is not None else None


# What every metric that reads one right answer (yes/no, multiple choice, short answers; its values say ``correct``)
# tells the studies: its per-response number is 1 when the answer is wrong, ``correct`` grows better, and a wrong
# answer is flagged whole. Such a spec is ``MetricSpec(..., **ANSWER_METRIC)``.
ANSWER_WRONG = Number("correct", "answer wrong", "1 = yes", lower_is_better=True,
                      derive=lambda v: None if v.get("correct") is None else float(not v["correct"]))
ANSWER_METRIC: Mapping[str, Any] = {"agreement": ANSWER_WRONG, "higher_is_better_values": frozenset({"correct"}),
                                    "flags_words": False, "flagged_spans": wrong_answer_spans,
                                    "evidence_rows": answer_rows}


# A fact's verdicts, whichever metric judges it: what the reference says is false, what it states, and what it
# cannot settle (reported as coverage, never as an error).
FACT_HALLUCINATED, FACT_ACCURATE, NOT_SETTLED = "hallucinated", "accurate", "not settled"
FACT_VERDICTS: tuple[str, ...] = (FACT_ACCURATE, FACT_HALLUCINATED, NOT_SETTLED)


@dataclass(frozen=True)
class FactReading:
    """One fact's verdict as a metric reads it off its result, the reason, and the claims it judged (if any)."""

    verdict: str
    reason: str = ""
    claims: tuple[Mapping[str, Any], ...] = ()


def as_number(value: Any) -> float | None:
    """A stored per-response value as a number: None for a missing, non-numeric or NaN one; a boolean as 0 / 1.

    >>> as_number(3), as_number(False), as_number("x"), as_number(float("nan")), as_number(None)
    (3.0, 0.0, None, None, None)
    """
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number
