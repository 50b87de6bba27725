"""People's labels of one response beside the judges' verdicts on it, and where they agree: pure functions.

What people said (``people_labels``): the spans an outside study marked (M-HalDetect), its labelled atomic facts
(FaithScore), its whole-response labels (HaELM) and side-by-side comparisons (IIW-400), and this studio's ratings
and claim corrections: every event in force on the response, each source apart.

What each judge said (``judge_readings``): for every registered metric with a score in force, the words its spec's
``flagged_spans`` mark and its ``hallucination_scores``; nothing here names a metric.

Where they meet:

- **the call on the response** (``call_checks``): each source's call (a label, else a labelled fact, else a span
  marked hallucinated, else the ratings, else a claim corrected as hallucinated) against each metric's call;
  ``DISAGREE_RULE`` says it in one line, and Browse's "people and judges disagree" filter is that test;
- **spans** (``span_checks``): per span a person labelled, the metrics that flag words there and those that flag
  none; per span a metric flags that no person marked hallucinated, where people labelled spans of this response
  (``judge_only``).

>>> events = [HumanEvent("m", "span_label", "r", {"start": 2, "end": 5, "label": "hallucinated"}, "span:2-5",
...                      id=1, source="study"),
...           HumanEvent("ann", "rating", "r", 5, id=2)]
>>> toy = JudgeReading("toy", "Toy", "k", ((2, 5),), True, HALLUCINATED)
>>> [(c.source, c.people, c.agree) for c in call_checks(people_labels(events, "A dog."), [toy])]
[('app', 'accurate', False), ('study', 'hallucinated', True)]
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..annotation import (active_events, current_comparisons, current_corrections, current_fact_labels,
                          current_labels, current_ratings, current_span_labels)
from ..model import HumanEvent
from .probe_detection import overlaps

if TYPE_CHECKING:
    from ..metrics.spec import MetricSpec
    from ..model import Score
    from ..store import Store
    from .in_force import InForce

Span = tuple[int, int]
HALLUCINATED, ACCURATE, UNSURE = "hallucinated", "accurate", "unsure"
# The one definition Browse's filter and Inspect's panel read (and show, as written here).
DISAGREE_RULE = ("people and judges disagree: a person's call on the response (a label; else any labelled fact or "
                 "marked span hallucinated; else ratings, 5 = none, 1–4 = some; else a claim corrected as "
                 "hallucinated) differs from a metric's (hallucinated when it flags any words, else when its "
                 "hallucination score is above 0)")
# The kinds of event a person's label on a response can come from (undos: to know which are in force).
PEOPLE_KINDS: tuple[str, ...] = ("label", "span_label", "fact_label", "comparison", "rating", "correction", "undo")
# What a correction's verdict says of its claim (``annotation.CORRECTION_VERDICTS``): only "supported" is accurate.
_CORRECTED_ACCURATE = "supported"


@dataclass(frozen=True)
class PersonLabel:
    """One thing a person said about a response: ``kind`` is span / fact / label / rating / comparison /
    correction; ``says`` hallucinated, accurate, unsure, or "" (a comparison makes no call)."""

    source: str
    annotator: str
    kind: str
    says: str
    text: str = ""  # the span's words, the fact, the corrected claim; "" for the whole response
    span: Span | None = None
    detail: str = ""  # "rating 2 of 5", "score -1 vs the human description (hallucination)" ...


@dataclass(frozen=True)
class JudgeReading:
    """One metric's verdict on the response, read from its spec: the spans it flags (None: it cannot point at
    words, or its score is undefined), whether they are words or the whole answer, and its call."""

    metric: str
    name: str  # the display name
    config_key: str
    flagged: tuple[Span, ...] | None
    flags_words: bool
    says: str | None  # HALLUCINATED / ACCURATE; None: undefined, or the spec gives no way to tell
    scores: tuple[tuple[str, float | None], ...] = ()  # its hallucination scores (higher: more hallucination)
    why_none: str = ""  # why ``says`` is None


@dataclass(frozen=True)
class CallCheck:
    """One source's call on the whole response against one metric's."""

    source: str
    people: str
    how: str  # what the call comes from: "labels", "fact labels", "marked spans", "ratings", "corrections"
    metric: str  # display name
    judge: str
    agree: bool


@dataclass(frozen=True)
class SpanCheck:
    """A span a person labelled, with the metrics that agree with the label there and those that do not."""

    label: PersonLabel
    agree: tuple[str, ...]
    disagree: tuple[str, ...]


@dataclass(frozen=True)
class JudgeOnly:
    """Words a metric flags that no person marked hallucinated; ``against``: "labelled accurate" where a person
    called them accurate, "not marked" where people marked spans elsewhere, "response called accurate" where a
    source called the whole response accurate and marked no span."""

    metric: str
    span: Span
    text: str
    against: str


@dataclass
class PeopleBeside:
    """Everything people and judges said of one response, and where they meet."""

    labels: list[PersonLabel] = field(default_factory=list)
    judges: list[JudgeReading] = field(default_factory=list)
    calls: list[CallCheck] = field(default_factory=list)
    spans: list[SpanCheck] = field(default_factory=list)
    judge_only: list[JudgeOnly] = field(default_factory=list)

    @property
    def disagreeing(self) -> list[str]:
        """The metrics whose call on the response some source's call contradicts, in the registry's order."""
        return list(dict.fromkeys(c.metric for c in self.calls if not c.agree))


# --------------------------------------------------------------------------- people


def _claim_span(index: int, value: Mapping[str, Any], evidences: Sequence[Mapping[str, Any]]
                ) -> tuple[Span | None, str]:
    """Where a corrected claim sits in the response and what the judge said of it: the claim at ``index`` of a
    judge's evidence that lists claims (``"triplets"``) and, when the correction names its claim, the same one."""
    named = [str(x) for x in value.get("triplet") or []]
    for evidence in evidences:
        claims = evidence.get("triplets")
        if not isinstance(claims, list) or not 0 <= index < len(claims) or not isinstance(claims[index], dict):
            continue
        claim = claims[index]
        if named and [str(x) for x in claim.get("triplet") or []] != named:
            continue
        span = claim.get("span")
        ok = isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(v, int) for v in span)
        return ((int(span[0]), int(span[1])) if ok else None), str(claim.get("verdict") or "")
    return None, ""


def people_labels(events: Iterable[HumanEvent], text: str,
                  evidences: Sequence[Mapping[str, Any]] = ()) -> list[PersonLabel]:
    """What people said about one response (its events; those in force only), source by source.

    ``evidences``: the judges' evidence of the response, to place a corrected claim in the text.

    >>> e = [HumanEvent("ann", "rating", "r", 2, id=1), HumanEvent("s", "fact_label", "r",
    ...      {"fact": "There is a dog.", "label": "accurate"}, "fact:0", id=2, source="s")]
    >>> [(p.kind, p.says, p.text or p.detail) for p in people_labels(e, "A dog.")]
    [('rating', 'hallucinated', 'rating 2 of 5'), ('fact', 'accurate', 'There is a dog.')]
    """
    live = active_events(events)
    by_source: dict[str, list[HumanEvent]] = defaultdict(list)
    for event in live:
        by_source[event.source].append(event)
    out: list[PersonLabel] = []
    for source, mine in sorted(by_source.items()):
        for (_, who, start, end), label in sorted(current_span_labels(mine).items()):
            out.append(PersonLabel(source, who, "span", label, text[start:end], (start, end)))
        for (_, who, index), value in sorted(current_fact_labels(mine).items()):
            out.append(PersonLabel(source, who, "fact", value["label"], value["fact"], detail=f"fact {index + 1}"))
        for (_, who), label in sorted(current_labels(mine).items()):
            out.append(PersonLabel(source, who, "label", label, detail="the whole response"))
        for (_, who), rating in sorted(current_ratings(mine).items()):
            out.append(PersonLabel(source, who, "rating", ACCURATE if rating == 5 else HALLUCINATED,
                                   detail=f"rating {rating} of 5"))
        for (_, who, other, aspect), score in sorted(current_comparisons(mine).items()):
            out.append(PersonLabel(source, who, "comparison", "",
                                   detail=f"score {score:+d} against {other} ({aspect}); positive: this one better"))
        for (_, who, index), value in sorted(current_corrections(mine).items()):
            span, judged = _claim_span(index, value, evidences)
            claim = " ".join(str(x) for x in value.get("triplet") or []) or f"claim {index}"
            verdict = str(value.get("verdict"))
            said = f"; the judge said {judged}" if judged else ""
            out.append(PersonLabel(source, who, "correction",
                                   ACCURATE if verdict == _CORRECTED_ACCURATE else HALLUCINATED, claim, span,
                                   f"corrected to {verdict}{said}" + (f": {value['reason']}" if value.get("reason")
                                                                      else "")))
    return out


def _majority(labels: Iterable[str]) -> str | None:
    counts = Counter(x for x in labels if x in (HALLUCINATED, ACCURATE))
    if not counts:
        return None
    (top, n), *rest = counts.most_common()
    return None if rest and rest[0][1] == n else top


def source_calls(labels: Sequence[PersonLabel]) -> dict[str, tuple[str, str]]:
    """``{source: (call, what it comes from)}``: each source's call on the whole response, from the first of its
    labels (majority, ties no call), labelled facts (any hallucinated), marked spans (any hallucinated), ratings
    (majority of 5 = accurate vs 1–4 = hallucinated), corrections (any claim hallucinated) it has.

    >>> source_calls([PersonLabel("s", "a", "span", "hallucinated", "dog", (2, 5)),
    ...               PersonLabel("app", "b", "correction", "accurate", "dog on mat")])
    {'s': ('hallucinated', 'marked spans')}
    """
    out: dict[str, tuple[str, str]] = {}
    for source in dict.fromkeys(p.source for p in labels):
        mine = [p for p in labels if p.source == source]
        for kind, how in (("label", "labels"), ("fact", "fact labels"), ("span", "marked spans"),
                          ("rating", "ratings"), ("correction", "corrections")):
            said = [p.says for p in mine if p.kind == kind and p.says in (HALLUCINATED, ACCURATE)]
            if not said:
                continue
            if kind in ("label", "rating"):
                call = _majority(said)
            elif kind == "correction":  # a claim judged supported says nothing of the rest of the response
                call = HALLUCINATED if HALLUCINATED in said else None
            else:
                call = HALLUCINATED if HALLUCINATED in said else ACCURATE
            if call is not None:
                out[source] = (call, how)
                break
    return out


# --------------------------------------------------------------------------- judges


def judge_reading(spec: "MetricSpec", score: "Score", text: str,
                  concepts: Mapping[str, Any] | None = None) -> JudgeReading:
    """One metric's verdict on a response from its score, as its spec reads it: hallucinated when it flags any
    words (``flagged_spans``); without a span reader, when its first hallucination score is above 0.

    >>> from hallu_studio.metrics.spec import MetricSpec, Number
    >>> from hallu_studio.model import Score
    >>> spec = MetricSpec("toy", "Toy", ("caption",), Number("n", "n", "", True), (),
    ...                   flagged_spans=lambda v, e, t, c: [tuple(s) for s in e["bad"]])
    >>> judge_reading(spec, Score("r", "toy", "k", {}, {"bad": [[2, 5]]}), "A dog.").says
    'hallucinated'
    >>> judge_reading(spec, Score("r", "toy", "k", {}, {"bad": []}), "A dog.").says
    'accurate'
    """
    scores = tuple((n.name, n.of(score.values)) for n in spec.hallucination_scores)
    base = dict(metric=spec.name, name=spec.display_name, config_key=score.config_key, flags_words=spec.flags_words,
                scores=scores)
    if score.undefined_reason:
        return JudgeReading(flagged=None, says=None, why_none=f"undefined: {score.undefined_reason}", **base)
    if spec.flagged_spans is not None:
        flagged = tuple(sorted({(int(a), int(b)) for a, b in spec.flagged_spans(score.values, score.evidence, text,
                                                                               concepts)}))
        return JudgeReading(flagged=flagged, says=HALLUCINATED if flagged else ACCURATE, **base)
    first = scores[0][1] if scores else None
    if first is None:
        why = "its spec reads no flagged words and no hallucination score" if not scores else "no value here"
        return JudgeReading(flagged=None, says=None, why_none=why, **base)
    return JudgeReading(flagged=None, says=HALLUCINATED if first > 0 else ACCURATE, **base)


def judge_readings(specs: Iterable["MetricSpec"], scores: Mapping[str, "Score"], text: str,
                   concepts: Mapping[str, Any] | None = None) -> list[JudgeReading]:
    """Every metric's reading of the response, in the order of ``specs`` (the registry's), for those with a score
    (``scores``: ``{metric: its score in force}``)."""
    return [judge_reading(spec, scores[spec.name], text, concepts) for spec in specs if spec.name in scores]


# --------------------------------------------------------------------------- where they meet


def call_checks(labels: Sequence[PersonLabel], judges: Sequence[JudgeReading]) -> list[CallCheck]:
    """Each source's call on the response (``source_calls``) against each metric's that makes one."""
    return [CallCheck(source, people, how, j.name, j.says, people == j.says)
            for source, (people, how) in sorted(source_calls(labels).items()) for j in judges if j.says is not None]


def _word_judges(judges: Sequence[JudgeReading]) -> list[JudgeReading]:
    return [j for j in judges if j.flags_words and j.flagged is not None]


def span_checks(labels: Sequence[PersonLabel], judges: Sequence[JudgeReading]) -> list[SpanCheck]:
    """Per span a person labelled hallucinated or accurate (marked words, a corrected claim): the metrics that
    agree there (flag words overlapping a hallucinated span, none overlapping an accurate one) and those that do
    not, among the metrics that point at words.

    >>> j = [JudgeReading("a", "A", "k", ((2, 5),), True, HALLUCINATED), JudgeReading("b", "B", "k", (), True,
    ...                                                                               ACCURATE)]
    >>> [(c.agree, c.disagree) for c in span_checks([PersonLabel("s", "x", "span", "hallucinated", "dog", (3, 6))],
    ...                                              j)]
    [(('A',), ('B',))]
    """
    words = _word_judges(judges)
    out = []
    for label in labels:
        if label.span is None or label.says not in (HALLUCINATED, ACCURATE):
            continue
        hit = {j.name: any(overlaps(label.span, f) for f in j.flagged or ()) for j in words}
        agree = tuple(n for n, h in hit.items() if h == (label.says == HALLUCINATED))
        out.append(SpanCheck(label, agree, tuple(n for n in hit if n not in agree)))
    return out


def judge_only(labels: Sequence[PersonLabel], judges: Sequence[JudgeReading], text: str) -> list[JudgeOnly]:
    """The words a metric flags that overlap no span a person marked hallucinated, on a response people labelled
    span by span (marked spans; or a source that called it accurate as a whole, so that every flag contradicts it).

    >>> j = [JudgeReading("a", "A", "k", ((0, 1), (2, 5)), True, HALLUCINATED)]
    >>> [(o.metric, o.text, o.against) for o in judge_only([PersonLabel("s", "x", "span", "hallucinated", "dog",
    ...                                                                 (2, 5))], j, "A dog.")]
    [('A', 'A', 'not marked')]
    """
    spanned = [p for p in labels if p.kind == "span" or (p.span is not None and p.says == HALLUCINATED)]
    whole_clean = any(call == ACCURATE for call, _ in source_calls(labels).values())
    if not spanned and not whole_clean:
        return []
    marked = [p.span for p in spanned if p.says == HALLUCINATED and p.span]
    accurate = [p.span for p in labels if p.says == ACCURATE and p.span]
    out = []
    for j in _word_judges(judges):
        for span in j.flagged or ():
            if any(overlaps(span, m) for m in marked):
                continue
            if any(overlaps(span, a) for a in accurate):
                against = "labelled accurate"
            else:
                against = "not marked" if spanned else "response called accurate"
            out.append(JudgeOnly(j.name, span, text[span[0]:span[1]], against))
    return out


def people_beside(events: Iterable[HumanEvent], text: str, specs: Iterable["MetricSpec"],
                  scores: Mapping[str, "Score"], concepts: Mapping[str, Any] | None = None) -> PeopleBeside:
    """Everything for one response: its events, its text, the registry's specs, ``{metric: score in force}`` and
    its stored concept set (what some specs' span readers need)."""
    judges = judge_readings(specs, scores, text, concepts)
    labels = people_labels(events, text, [s.evidence for s in scores.values()])
    return PeopleBeside(labels, judges, call_checks(labels, judges), span_checks(labels, judges),
                        judge_only(labels, judges, text))


# --------------------------------------------------------------------------- read from a store

# The stored concept set of a response (``studies.collect.CONCEPTS``): some specs' span readers place words by it.
_CONCEPTS = "concepts"


def _concepts_of(score: "Score | None") -> Mapping[str, Any]:
    return (score.evidence.get("concepts") if score is not None else None) or {}


def in_force_beside(events: Iterable[HumanEvent], text: str, scores: Iterable["Score"],
                    in_force: "InForce") -> PeopleBeside:
    """``people_beside`` of one response from all its events and stored scores: each metric's score under its
    configuration in force (``in_force``), the registry's specs."""
    from ..metrics.registry import metric_specs

    chosen = {s.metric: s for s in scores if s.config_key == in_force.key(s.metric)}
    return people_beside([e for e in events if e.kind in PEOPLE_KINDS], text, metric_specs(), chosen,
                         _concepts_of(chosen.get(_CONCEPTS)))


def response_beside(store: "Store", response_id: str, in_force: "InForce") -> PeopleBeside:
    """``in_force_beside`` of one stored response."""
    response = store.get_response(response_id)
    if response is None:
        raise KeyError(f"response {response_id!r} is not in the store")
    return in_force_beside(store.list_events(response_id=response_id), response.text, store.get_scores(response_id),
                           in_force)


_CACHE: dict[Any, dict[str, PeopleBeside]] = {}


def responses_beside(store: "Store", in_force: "InForce") -> dict[str, PeopleBeside]:
    """``people_beside`` of every response people judged (any source; events in force), scores in force.

    Kept for the store's events and the configurations in force and their counts as they are: a new event or
    score reads everything again (a few seconds for 10,000 events)."""
    from ..metrics.registry import metric_specs

    events = store.list_events_of_kinds(PEOPLE_KINDS)
    key = (id(store), store.path, len(events), events[-1].id if events else None,
           tuple(sorted((m, s.key, s.scores) for m, s in in_force.shown.items())))
    if key in _CACHE:
        return _CACHE[key]
    by_response: dict[str, list[HumanEvent]] = defaultdict(list)
    for event in events:
        if event.response_id:
            by_response[event.response_id].append(event)
    ids = sorted(rid for rid, mine in by_response.items() if active_events(mine))
    responses = store.get_responses(ids)
    specs = metric_specs()
    scores: dict[str, dict[str, "Score"]] = defaultdict(dict)
    for metric in [_CONCEPTS, *(s.name for s in specs)]:
        config = in_force.key(metric)
        if config is not None:
            for rid, score in store.get_scores_for(ids, metric, config).items():
                scores[rid][metric] = score
    out = {rid: people_beside(by_response[rid], responses[rid].text, specs, scores[rid],
                              _concepts_of(scores[rid].get(_CONCEPTS))) for rid in ids if rid in responses}
    _CACHE.clear()  # one store state at a time
    _CACHE[key] = out
    return out


def disagreeing_responses(store: "Store", in_force: "InForce") -> dict[str, list[str]]:
    """``{response_id: the metrics people's call contradicts}`` (``DISAGREE_RULE``), for the responses where
    some do."""
    return {rid: b.disagreeing for rid, b in responses_beside(store, in_force).items() if b.disagreeing}
