"""Gather the studies' plain data from a store and run them (what the CLI and the app call).

Each function reads the judgements of one ``source``: the app's own annotators by default; an imported
study's are read by name (and its other kinds by ``studies.human_sources``), never pooled with the app's.

Human ratings follow Tri-HE's scale (5 = no hallucination), while most metrics grow
with hallucination, so a metric that agrees with people correlates *negatively*
with their ratings; the tables report the raw coefficients.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any, Collection, Mapping, Sequence

from ..annotation import current_corrections, current_ratings, preferences, study_rating_events
from ..metrics.spec import Number, as_number
from ..model import APP_SOURCE
from .agreement import krippendorff_alpha
from .bradley_terry import Strength, bradley_terry
from .correlation import correlate
from .judges import JudgeAccuracy, judge_accuracy
from .probe_detection import HALLUCINATION_TYPES, DetectionRow, ProbeItem, detection_records, detection_row

if TYPE_CHECKING:
    from ..store import Store

CONCEPTS = "concepts"


_num = as_number


# Below this many images, a bootstrap interval resampled by image says little: the tables warn.
MIN_IMAGES_FOR_INTERVAL = 10


def _agreement(metric: str) -> Number | None:
    """The per-response number of ``metric`` set beside people's ratings (its spec's ``agreement``)."""
    from ..metrics.registry import METRIC_NAMES, metric_spec

    return metric_spec(metric).agreement if metric in METRIC_NAMES else None


def item_meaning(metric: str) -> str:
    """What a correlation of ``metric`` reads per response ("share of claims hallucinated")."""
    number = _agreement(metric)
    return number.name if number is not None else "its number"


def higher_is_worse(metric: str, key: str | None = None) -> bool | None:
    """Whether a higher per-response number of ``metric`` (its ``key`` where given) means more hallucination;
    None when unknown. Human ratings run the other way (5 = none), so a metric that agrees with people
    correlates negatively when higher is worse.

    >>> higher_is_worse("trihe"), higher_is_worse("halfscore"), higher_is_worse("emd", "object"), higher_is_worse("x")
    (True, False, True, None)
    """
    from ..metrics.registry import metric_spec

    number = _agreement(metric)
    if number is None:
        return None
    if key is not None and key != "default":
        return key not in metric_spec(metric).higher_is_better_values
    return number.lower_is_better


def direction_note(metric: str, key: str | None = None) -> str:
    """"↑ = more hallucination" or "↑ = less hallucination" for a metric's per-response number ("" when unknown)."""
    worse = higher_is_worse(metric, key)
    return "" if worse is None else ("↑ = more hallucination" if worse else "↑ = less hallucination")


def item_value(metric: str, values: Mapping[str, Any]) -> float | None:
    """A response's number for ``metric`` (for unknown metrics: their single numeric value, if any)."""
    number = _agreement(metric)
    if number is not None:
        return number.of(values)
    numbers = [x for x in (_num(v) for v in values.values()) if x is not None]
    return numbers[0] if len(numbers) == 1 else None


def image_cluster(row: Mapping[str, Any]) -> str:
    """The image a scored response is about (its sample where the image is unknown): the bootstrap's cluster."""
    return f"{row.get('benchmark')}/{row.get('image_key') or row.get('sample_id')}"


def _rating_events(store: "Store", source: str, study: str | None) -> dict[tuple[str, str], int]:
    """``{(response_id, annotator): rating in force}`` of one source (and one study of this studio's)."""
    events = store.list_events_of_kinds(["rating", "undo"], source=source)
    if study:
        return {key: int(e.value) for key, e in study_rating_events(events, study).items()}
    return current_ratings(events)


def mean_human_ratings(store: "Store", source: str = APP_SOURCE, study: str | None = None) -> dict[str, float]:
    """Each rated response's mean current rating over annotators (of one ``source``; of one ``study``)."""
    by_response: dict[str, list[int]] = defaultdict(list)
    for (rid, _), value in _rating_events(store, source, study).items():
        by_response[rid].append(value)
    return {rid: sum(v) / len(v) for rid, v in by_response.items()}


def correlation_table(store: "Store", metrics: list[str] | None = None, n_boot: int = 1000, seed: int = 0,
                      value_keys: Mapping[str, str] | None = None, source: str = APP_SOURCE,
                      study: str | None = None) -> list[dict[str, Any]]:
    """Per metric and config: Pearson, Spearman and Kendall against mean human ratings, CIs by image.

    ``value_keys`` picks another per-response value of a metric (``{"emd": "object"}``)
    than its default (its spec's ``agreement``). Only the ratings of ``source`` count (this studio's
    annotators by default; of one ``study`` where named). Each row says how many responses were
    rated (``rated``), and which of them it leaves out and why (``left_out``: reason -> count:
    not scored for their task, undefined for the metric with its reason, not scored yet), and
    whether a higher number means more hallucination (``higher_is_worse``).
    """
    from ..metrics.registry import METRIC_NAMES, not_applicable_reason

    value_keys = dict(value_keys or {})
    human = mean_human_ratings(store, source, study)
    if not human:
        return []
    groups: dict[tuple[str, str], list[tuple[float, float, str]]] = defaultdict(list)
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    left_out: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for row in store.score_stat_rows():
        metric = row["metric"]
        if metric == CONCEPTS or (metrics and metric not in metrics) or row["response_id"] not in human:
            continue
        key = (metric, row["config_key"])
        seen[key].add(row["response_id"])
        if metric in value_keys:
            value = _num(row["values"].get(value_keys[metric]))
        else:
            value = item_value(metric, row["values"])
        if value is not None:
            groups[key].append((value, human[row["response_id"]], image_cluster(row)))
        elif row.get("undefined_reason"):
            left_out[key][f"undefined: {row['undefined_reason']}"] += 1
        else:
            left_out[key]["no per-response number"] += 1
    missing = {rid for rid in human if any(rid not in ids for ids in seen.values())}
    samples = _samples_of(store, missing)
    out = []
    for (metric, key), triples in sorted(groups.items()):
        for rid in human:
            if rid not in seen[(metric, key)]:
                sample = samples.get(rid)
                why = not_applicable_reason(metric, sample) if sample is not None and metric in METRIC_NAMES else None
                left_out[(metric, key)][why or "not scored under this configuration"] += 1
        x, y, clusters = zip(*triples)
        result = correlate(list(x), list(y), list(clusters), n_boot=n_boot, seed=seed)
        out.append({"metric": metric, "value": value_keys.get(metric, "default"), "config_key": key,
                    **result.as_row(), "rated": len(human), "left_out": dict(left_out[(metric, key)].most_common()),
                    "higher_is_worse": higher_is_worse(metric, value_keys.get(metric))})
    return out


def _samples_of(store: "Store", response_ids: set[str]) -> dict[str, Any]:
    """Each response's sample (what a metric's applicability is decided on)."""
    if not response_ids:
        return {}
    responses = store.get_responses(sorted(response_ids))
    samples = store.get_samples(sorted({r.sample_id for r in responses.values()}))
    return {rid: samples[r.sample_id] for rid, r in responses.items() if r.sample_id in samples}


def annotator_agreement(store: "Store", level: str = "ordinal", source: str = APP_SOURCE,
                        study: str | None = None) -> dict[str, Any]:
    """Krippendorff's alpha of the current ratings (of one ``source``; of one ``study``), with how much data
    it rests on."""
    ratings = _rating_events(store, source, study)
    per_item = Counter(rid for rid, _ in ratings)
    return {"alpha": krippendorff_alpha(ratings, level=level), "level": level,
            "annotators": len({a for _, a in ratings}), "items": len(per_item),
            "items_rated_twice": sum(1 for n in per_item.values() if n >= 2)}


def human_triplet_verdicts(store: "Store", source: str = APP_SOURCE) -> tuple[dict[tuple[str, int], str], int]:
    """Majority human verdict per ``(response_id, triplet_index)``, and how many ties were left out."""
    votes: dict[tuple[str, int], Counter[str]] = defaultdict(Counter)
    for (rid, _, index), value in current_corrections(
            store.list_events_of_kinds(["correction", "undo"], source=source)).items():
        votes[(rid, index)][value["verdict"]] += 1
    out, ties = {}, 0
    for key, counter in votes.items():
        (top, n), *rest = counter.most_common()
        if rest and rest[0][1] == n:
            ties += 1
            continue
        out[key] = top
    return out, ties


def corrected_metrics() -> list[str]:
    """The metrics whose claims people correct (a spec with ``corrected_claims``), in the registry's order.

    >>> corrected_metrics()
    ['trihe']
    """
    from ..metrics.registry import metric_specs

    return [spec.name for spec in metric_specs() if spec.corrected_claims is not None]


def judge_accuracy_table(store: "Store", source: str = APP_SOURCE) -> dict[str, JudgeAccuracy]:
    """Each judge of the metrics whose claims people correct (judge name @ config key) against the people's
    majority verdicts.

    Every judge that scored a corrected response is listed, with every verdict it gives
    (the scene-graph judge's ``unverifiable`` and ``inference`` included)."""
    from ..metrics.registry import metric_spec

    human, _ = human_triplet_verdicts(store, source)
    if not human:
        return {}
    wanted = {rid for rid, _ in human}
    judges: dict[str, dict[tuple[str, int], str]] = defaultdict(dict)
    for metric in corrected_metrics():
        read = metric_spec(metric).corrected_claims
        for response, score in store.iter_scores(metric, with_evidence=True):
            if response.id not in wanted:
                continue
            # The judge that gave the verdicts is named in the evidence; each claim in the order corrections index it.
            name = f"{(score.evidence or {}).get('judge', '?')}@{score.config_key}"
            for i, (_claim, verdict) in enumerate(read(score.evidence)):  # type: ignore[misc]
                judges[name][(response.id, i)] = verdict
    return judge_accuracy(judges, human)


def preference_strengths(store: "Store", aspect: str = "overall", source: str = APP_SOURCE) -> dict[Any, Strength]:
    """Bradley-Terry strength of each model from people's pairwise preferences on ``aspect``."""
    prefs = [p for p in preferences(store.list_events_of_kinds(["preference", "undo"], source=source))
             if p.aspect == aspect]
    if not prefs:
        return {}
    model_of = {}
    for rid in {r for p in prefs for r in (p.a, p.b)}:
        response = store.get_response(rid)
        run = store.get_run(response.run_id) if response else None
        model_of[rid] = run.model if run else rid
    wins, ties = [], []
    for p in prefs:
        a, b = model_of[p.a], model_of[p.b]
        if a == b:
            continue  # two responses of one model say nothing about models
        if p.winner == "tie":
            ties.append((a, b))
        else:
            wins.append((model_of[p.winner], b if model_of[p.winner] == a else a))
    if not wins and not ties:
        return {}
    return bradley_terry(wins, ties)


def probe_items(store: "Store", run_ids: Sequence[str] | None = None, metrics: Sequence[str] | None = None,
                sample_ids: Collection[str] | None = None) -> dict[tuple[str, str], list[ProbeItem]]:
    """(metric, config key) -> the scored probe responses (those with ``signals["injected"]``) of these runs.

    ``run_ids`` None: every probe run in the store; ``sample_ids`` None: responses to every sample, else to
    these only.
    """
    if run_ids is None:
        run_ids = [r["id"] for r in store.list_runs() if r["backend"] == "probe"]
    items: dict[tuple[str, str], list[ProbeItem]] = defaultdict(list)
    for run_id in run_ids:
        concepts = {resp.id: score.evidence.get("concepts")
                    for resp, score in store.iter_scores(CONCEPTS, run_id=run_id, with_evidence=True)}
        scored = [(response, score) for response, score in store.iter_scores(None, run_id=run_id, with_evidence=True)
                  if score.metric != CONCEPTS and (not metrics or score.metric in metrics)
                  and "injected" in (response.signals or {})
                  and (sample_ids is None or response.sample_id in sample_ids)]
        samples = store.get_samples(sorted({response.sample_id for response, _ in scored}))
        for response, score in scored:
            signals = response.signals or {}
            sample = samples.get(response.sample_id)
            image = image_cluster({"benchmark": sample.benchmark, "image_key": sample.image_key,
                                   "sample_id": sample.id}) if sample is not None else None
            items[(score.metric, score.config_key)].append(ProbeItem(
                response.text, list(signals.get("injected") or []), list(signals.get("stated") or []),
                score.values, score.evidence, item_value(score.metric, score.values), concepts.get(response.id),
                image))
    return items


def probe_detection_table(store: "Store", metrics: list[str] | None = None, run_ids: Sequence[str] | None = None,
                          sample_ids: Collection[str] | None = None) -> list[DetectionRow]:
    """Per metric, detection and false-alarm rates over the probe runs' responses (default: every probe run;
    ``sample_ids``: the responses to these samples only)."""
    return [detection_row(metric, rows, key)
            for (metric, key), rows in sorted(probe_items(store, run_ids, metrics, sample_ids).items())]


def probe_detection_records(store: "Store", metrics: Sequence[str] | None = None,
                            run_ids: Sequence[str] | None = None, n_boot: int = 1000,
                            seed: int = 0) -> list[dict[str, Any]]:
    """Per metric and config, one row for all types and one per hallucination type, rates with 95 % CIs by image.

    The types are the probe's (``HALLUCINATION_TYPES``) that were injected in at least one
    of these responses, so every metric gets the same rows.
    """
    items = probe_items(store, run_ids, metrics)
    injected = {str(c.get("type")) for rows in items.values() for item in rows for c in item.injected}
    types = [t for t in HALLUCINATION_TYPES if t in injected] + sorted(injected - set(HALLUCINATION_TYPES))
    out: list[dict[str, Any]] = []
    for (metric, key), rows in sorted(items.items()):
        out += detection_records(metric, rows, key, types, n_boot=n_boot, seed=seed)
    return out
