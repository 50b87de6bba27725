"""What one imported human study said, read off its events in force: each response's call, the spans people
marked, the rating targets, the labelled facts and which responses it judged.

Pure functions of ``HumanEvent`` lists: ``human_sources`` sets them beside the stored scores, and a notebook can
read a study's labels without a store.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

from ..annotation import (active_events, current_comparisons, current_fact_labels, current_labels,
                          current_ratings, current_span_labels)
from ..model import HumanEvent


def response_calls(events: Iterable[HumanEvent]) -> tuple[dict[str, bool], dict[str, str]]:
    """``({response_id: hallucinated?}, {response_id: how the call was made})`` from one source's events.

    >>> e = [HumanEvent("a", "label", "r1", {"label": "hallucinated"}, source="s"),
    ...      HumanEvent("a", "fact_label", "r2", {"fact": "There is a dog.", "label": "accurate"}, "fact:0", source="s")]
    >>> response_calls(e)
    ({'r1': True, 'r2': False}, {'r1': 'labels', 'r2': 'fact labels'})
    """
    events = list(events)
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for (rid, _), label in current_labels(events).items():
        if label in ("accurate", "hallucinated"):
            votes[rid][label] += 1
    calls: dict[str, bool] = {}
    how: dict[str, str] = {}
    for rid, counter in votes.items():
        (top, n), *rest = counter.most_common()
        if rest and rest[0][1] == n:
            continue
        calls[rid], how[rid] = top == "hallucinated", "labels"
    facts: dict[str, list[str]] = defaultdict(list)
    for (rid, _, _), value in current_fact_labels(events).items():
        facts[rid].append(value["label"])
    for rid, labels in facts.items():
        known = [x for x in labels if x in ("accurate", "hallucinated")]
        if rid not in calls and known:
            calls[rid], how[rid] = "hallucinated" in known, "fact labels"
    return calls, how


def marked_spans(events: Iterable[HumanEvent]) -> dict[str, list[tuple[int, int]]]:
    """``{response_id: spans marked hallucinated}`` over every response the source judged, when it marked spans
    at all (a judged response with none marked: an empty list); ``{}`` for a source without span labels."""
    events = list(events)
    spans = current_span_labels(events)
    if not spans:
        return {}
    out: dict[str, list[tuple[int, int]]] = {e.response_id: [] for e in active_events(events) if e.response_id}
    for (rid, _, start, end), label in spans.items():
        if label == "hallucinated" and (start, end) not in out[rid]:
            out[rid].append((start, end))
    return out


def rating_targets(events: Iterable[HumanEvent]) -> dict[str, dict[str, float]]:
    """``{target name: {response_id: mean value}}``: "rating 1-5" and one "comparison <aspect> vs <other>" each."""
    events = list(events)
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (rid, _), value in current_ratings(events).items():
        out["rating 1-5"][rid].append(float(value))
    for (rid, _, other, aspect), score in current_comparisons(events).items():
        out[f"comparison {aspect} vs {other}"][rid].append(float(score))
    return {name: {rid: sum(v) / len(v) for rid, v in by.items()} for name, by in out.items()}


def labelled_facts(events: Iterable[HumanEvent]) -> dict[tuple[str, int], tuple[str, str]]:
    """``{(response_id, fact index): (fact text, majority label)}`` ("unsure" and ties left out)."""
    votes: dict[tuple[str, int], Counter[str]] = defaultdict(Counter)
    texts: dict[tuple[str, int], str] = {}
    for (rid, _, index), value in current_fact_labels(events).items():
        texts[(rid, index)] = value["fact"]
        if value["label"] in ("accurate", "hallucinated"):
            votes[(rid, index)][value["label"]] += 1
    out = {}
    for key, counter in votes.items():
        (top, n), *rest = counter.most_common()
        if not (rest and rest[0][1] == n):
            out[key] = (texts[key], top)
    return out


# --------------------------------------------------------------------------- the scores' side


def judged_responses(events: Iterable[HumanEvent]) -> set[str]:
    """The responses a source's events (in force) judge."""
    return {e.response_id for e in active_events(events) if e.response_id}
