"""Stored scores against the judgements of one imported human study (one ``HumanEvent.source``).

What the CLI (``hallu-studio study``), the benchmark script and the app call:

- ``human_sources(store)``: the imported sources (every event source but "app"), with their counts;
- ``human_agreement(store, source, ...)``: every table for one source, as a ``HumanAgreementReport``
  (``rows()`` gives them as one list of dicts, each naming its ``table``).

The tables (a table is empty when the source has no judgement of its kind):

- ``binary``: per hallucination score (``human_agreement.hallucination_scores()``, the naive baseline) and
  config, AUROC and AP for the people's accurate / hallucinated call on whole responses. A response's
  call is the majority of its ``label`` events ("unsure" and ties left out); a response with no label but
  labelled facts is hallucinated when any fact is (the table says how many calls come from each);
- ``rank``: Spearman and Kendall against each rating target: the mean 1-5 ``rating`` (5 = no
  hallucination) and the mean ``comparison`` score per (other text, aspect) (positive: the response is
  the better one). A score that agrees with people correlates **negatively** with both;
- ``spans``: per metric that can point at parts of a response (``probe_detection.flagged_spans``: Tri-HE's
  triplet spans, HalFscore's hallucinated spans, CHAIR's mentions, EMD's costly concepts), precision and
  recall of its flagged spans against the spans people marked hallucinated, over every response the
  source judged (when it marked spans at all: a response judged with none marked counts as clean);
- ``facts``: the configured Tri-HE judge on each labelled fact (``fact_judging``): balanced accuracy on the
  facts it settles, coverage;
- ``groups``: each score's mean over accurate vs hallucinated responses, and human-written vs machine
  ones (a run whose ``meta["written_by"]`` is "human") where the source has both.

Human calls are per source: an imported study's judgements are never pooled with the app's annotators.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Mapping, Sequence

from ..annotation import (active_events, current_comparisons, current_fact_labels, current_labels,
                          current_ratings, current_span_labels)
from ..model import APP_SOURCE, HumanEvent
from .baselines import naive_dissimilarity, reference_texts
from .collect import CONCEPTS, image_cluster
from .correlation import correlate
from .human_agreement import (NAIVE_SCORE, hallucination_scores, HallucinationScore, binary_agreement,
                              fact_agreement, group_means, span_agreement)
from .probe_detection import flagged_spans

if TYPE_CHECKING:
    from ..config import Settings
    from ..store import Store

HUMAN_KINDS: tuple[str, ...] = ("label", "span_label", "fact_label", "comparison", "rating", "undo")


def span_metrics() -> list[str]:
    """The metrics that point at words of a response (spec ``flagged_spans`` with ``flags_words``), in the
    registry's order."""
    from ..metrics.registry import METRIC_NAMES, metric_spec

    return [m for m in METRIC_NAMES if metric_spec(m).flagged_spans is not None and metric_spec(m).flags_words]
TABLES: tuple[str, ...] = ("binary", "rank", "spans", "facts", "groups")


def human_sources(store: "Store") -> list[dict[str, Any]]:
    """Imported human studies in the store: ``{source, events, responses, annotators, kinds}`` each."""
    return [s for s in store.event_sources() if s["source"] != APP_SOURCE]


# --------------------------------------------------------------------------- the people's side


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


@dataclass
class ScoredResponses:
    """Per (score name, config key): ``{response_id: value}``; and each response's image cluster."""

    values: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    scores: dict[str, HallucinationScore] = field(default_factory=dict)
    clusters: dict[str, str] = field(default_factory=dict)
    written_by_human: dict[str, bool] = field(default_factory=dict)
    # score name -> how many scored responses it is undefined for, and one reason given
    undefined: dict[str, tuple[int, str]] = field(default_factory=dict)


def human_written_peers(store: "Store", response_ids: set[str]) -> set[str]:
    """Responses of runs written by people (``Run.meta["written_by"] == "human"``) to the samples of
    ``response_ids``, those themselves left out."""
    human_runs = {r["id"] for r in store.list_runs() if (r.get("meta") or {}).get("written_by") == "human"}
    if not human_runs or not response_ids:
        return set()
    samples = {r.sample_id for r in store.get_responses(sorted(response_ids)).values()}
    return {row["id"] for sid in sorted(samples) for row in store.responses_to_sample(sid)
            if row["run_id"] in human_runs and row["id"] not in response_ids}


def stored_scores(store: "Store", response_ids: set[str], metrics: Sequence[str] | None = None,
                  scores: Sequence[HallucinationScore] | None = None) -> ScoredResponses:
    """The hallucination scores stored for these responses (None values left out); by default every
    registered metric's (``human_agreement.hallucination_scores``)."""
    out = ScoredResponses()
    scores = hallucination_scores() if scores is None else scores
    wanted = [s for s in scores if not metrics or s.metric in metrics]
    human_runs = {r["id"] for r in store.list_runs() if (r.get("meta") or {}).get("written_by") == "human"}
    for metric in dict.fromkeys(s.metric for s in wanted):
        for row in store.score_stat_rows(metric):
            rid = row["response_id"]
            if rid not in response_ids:
                continue
            out.clusters[rid] = image_cluster(row)
            out.written_by_human[rid] = row["run_id"] in human_runs
            for score in wanted:
                if score.metric != metric:
                    continue
                value = score.read(row["values"])
                if value is not None:
                    out.scores[score.name] = score
                    out.values.setdefault((score.name, row["config_key"]), {})[rid] = value
                else:
                    n, reason = out.undefined.get(score.name, (0, ""))
                    out.undefined[score.name] = (n + 1, reason or str(row.get("undefined_reason") or "no value"))
    return out


def add_naive_baseline(store: "Store", scored: ScoredResponses, response_ids: set[str], encoder: Any) -> None:
    """Add ``NAIVE_SCORE`` (``baselines.naive_dissimilarity``) for these responses, under config key "baseline"."""
    responses = store.get_responses(sorted(response_ids))
    samples = store.get_samples(sorted({r.sample_id for r in responses.values()}))
    ids = [rid for rid, r in responses.items() if r.sample_id in samples]
    pairs = [(responses[rid].text, reference_texts(samples[responses[rid].sample_id])) for rid in ids]
    values = naive_dissimilarity(pairs, encoder)
    got = {rid: v for rid, v in zip(ids, values) if v is not None}
    if got:
        scored.scores[NAIVE_SCORE.name] = NAIVE_SCORE
        scored.values[(NAIVE_SCORE.name, "baseline")] = got
    for rid in ids:
        sample = samples[responses[rid].sample_id]
        scored.clusters.setdefault(rid, image_cluster({"benchmark": sample.benchmark, "image_key": sample.image_key,
                                                       "sample_id": sample.id}))


# --------------------------------------------------------------------------- the report


@dataclass
class HumanAgreementReport:
    source: str
    judged: int  # responses the source judged
    binary: list[dict[str, Any]] = field(default_factory=list)
    rank: list[dict[str, Any]] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    groups: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def rows(self) -> list[dict[str, Any]]:
        """Every table's rows, each with ``table`` ("human_<name>") and ``source``."""
        return [{"table": f"human_{name}", "source": self.source, **row}
                for name in TABLES for row in getattr(self, name)]


def _interval(prefix: str, iv: Any) -> dict[str, float]:
    return {prefix: iv.value, f"{prefix}_low": iv.low, f"{prefix}_high": iv.high}


def _score_columns(scored: ScoredResponses, name: str, key: str) -> dict[str, Any]:
    return {"score": name, "metric": scored.scores[name].metric, "config_key": key,
            "higher_means": scored.scores[name].higher_means}


def human_agreement(store: "Store", source: str, *, settings: "Settings | None" = None,
                    metrics: Sequence[str] | None = None, n_boot: int = 1000, seed: int = 0,
                    baseline: bool = True, judge_facts: bool = True, encoder: Any = None,
                    fact_judges: Sequence[Any] | None = None) -> HumanAgreementReport:
    """Every table for imported ``source`` (see the module docstring).

    ``baseline`` adds the naive MiniLM dissimilarity beside the metrics (``encoder``: the sentence encoder,
    default the settings' embedding model, caching its vectors in the store unless it is read-only); ``judge_facts`` runs the configured Tri-HE judge, and CHAIR
    beside it, on the source's labelled facts (``fact_judges``: ``fact_judging.FactJudge`` objects to use
    instead, e.g. to reuse their loaded models). ``metrics`` limits the metrics.
    """
    from ..config import Settings

    if source == APP_SOURCE:
        raise ValueError("the app's own annotators are studied by studies.collect (correlation_table ...); "
                         "human_agreement reads an imported source")
    known = [s["source"] for s in human_sources(store)]
    if source not in known:
        from ..names import unknown_name

        raise ValueError(unknown_name("human judgement source", source, known, listing="imported sources"))
    settings = settings or Settings()
    events = store.list_events_of_kinds(HUMAN_KINDS, source=source)
    judged = {e.response_id for e in active_events(events) if e.response_id}
    report = HumanAgreementReport(source, len(judged))
    # People's own outputs on the same samples (a held-out reference caption, say): compared with the machines'
    # in the groups table even when the study judged only the machines'.
    peers = human_written_peers(store, judged)
    scored = stored_scores(store, judged | peers, metrics)
    if baseline and judged:
        if encoder is None:
            from ..components import Components

            # Backed by the store when it can be written: a second study of the same texts encodes nothing.
            encoder = Components(settings, None if store.read_only else store.cache).encoder()
        add_naive_baseline(store, scored, judged | peers, encoder)
    if not scored.values:
        report.notes.append(f"no stored score of the {len(judged)} responses {source} judged: run "
                            "`hallu-studio score` first")
    for name, (n, reason) in scored.undefined.items():
        report.notes.append(f"{name}: undefined for {n} scored responses (e.g. {reason})")
    calls, how = response_calls(events)
    _binary_rows(report, scored, calls, how, n_boot, seed)
    _rank_rows(report, scored, rating_targets(events), n_boot, seed)
    _group_rows(report, scored, calls, n_boot, seed)
    _span_rows(report, store, marked_spans(events), metrics, n_boot, seed)
    facts = labelled_facts(events)
    if facts and judge_facts:
        if fact_judges is None:
            from .fact_judging import FactJudge, fact_metrics

            fact_judges = []
            for m in fact_metrics():  # one extractor for all of them
                if not metrics or m in metrics:
                    fact_judges.append(FactJudge(settings, extractor=fact_judges[0].extractor if fact_judges
                                                 else None, metric=m))
        for judge in fact_judges:
            _fact_rows(report, store, facts, judge, n_boot, seed)
    elif facts:
        report.notes.append(f"{len(facts)} labelled facts not judged (judge_facts is off)")
    return report


def _binary_rows(report: HumanAgreementReport, scored: ScoredResponses, calls: Mapping[str, bool],
                 how: Mapping[str, str], n_boot: int, seed: int) -> None:
    if not calls:
        return
    if sum(calls.values()) in (0, len(calls)):
        report.notes.append(f"every response {report.source} labelled is "
                            f"{'hallucinated' if sum(calls.values()) else 'accurate'}: no AUROC")
        return
    human = ", ".join(f"{n} from {w}" for w, n in Counter(how.values()).most_common())
    for (name, key), values in scored.values.items():
        ids = [rid for rid in calls if rid in values]
        if not ids:
            continue
        result = binary_agreement([values[r] for r in ids], [calls[r] for r in ids],
                                  [scored.clusters.get(r, r) for r in ids], n_boot=n_boot, seed=seed)
        report.binary.append({**_score_columns(scored, name, key), "human": human,
                              "n": result.n, "of": len(calls), "hallucinated": result.positives,
                              "images": result.clusters, **_interval("auroc", result.auroc),
                              **_interval("ap", result.ap), "prevalence": result.prevalence})


def _rank_rows(report: HumanAgreementReport, scored: ScoredResponses, targets: Mapping[str, Mapping[str, float]],
               n_boot: int, seed: int) -> None:
    for target, human in targets.items():
        for (name, key), values in scored.values.items():
            ids = [rid for rid in human if rid in values]
            if len(ids) < 3:
                continue
            result = correlate([values[r] for r in ids], [human[r] for r in ids],
                               [scored.clusters.get(r, r) for r in ids], n_boot=n_boot, seed=seed)
            report.rank.append({**_score_columns(scored, name, key), "human": target,
                                "human_higher_means": "less hallucination", "agreeing_sign": "negative",
                                "n": result.n, "of": len(human), "images": result.clusters,
                                **_interval("spearman", result.spearman), **_interval("kendall", result.kendall)})


def _group_rows(report: HumanAgreementReport, scored: ScoredResponses, calls: Mapping[str, bool],
                n_boot: int, seed: int) -> None:
    for (name, key), values in scored.values.items():
        splits = {"accurate vs hallucinated": {r: "hallucinated" if h else "accurate" for r, h in calls.items()},
                  "human vs machine": {r: "human-written" if scored.written_by_human.get(r) else "machine"
                                       for r in values}}
        for split, group_of in splits.items():
            ids = [r for r in group_of if r in values]
            if len({group_of[r] for r in ids}) < 2:
                continue
            means = group_means([values[r] for r in ids], [group_of[r] for r in ids],
                                [scored.clusters.get(r, r) for r in ids], n_boot=n_boot, seed=seed)
            for group, iv in sorted(means.items()):
                report.groups.append({**_score_columns(scored, name, key), "split": split, "group": group,
                                      "n": iv.n, **_interval("mean", iv)})


def _span_rows(report: HumanAgreementReport, store: "Store", marked: Mapping[str, list[tuple[int, int]]],
               metrics: Sequence[str] | None, n_boot: int, seed: int) -> None:
    if not marked:
        return
    wanted = set(marked)
    concepts: dict[str, Mapping[str, Any]] = {}
    for response, score in store.iter_scores(CONCEPTS, with_evidence=True):
        if response.id in wanted:
            concepts[response.id] = score.evidence.get("concepts") or {}
    sample_of: dict[str, str] = {}
    for metric in span_metrics():
        if metrics and metric not in metrics:
            continue
        # An undefined score (no claim, say) flags nothing: its response's marked spans count as missed.
        by_key: dict[str, list[tuple[str, list[tuple[int, int]]]]] = defaultdict(list)
        for response, score in store.iter_scores(metric, with_evidence=True):
            if response.id not in wanted:
                continue
            spans = flagged_spans(metric, score.values, score.evidence, response.text, concepts.get(response.id))
            if spans is None:
                continue
            sample_of[response.id] = response.sample_id
            by_key[score.config_key].append((response.id, spans))
        samples = store.get_samples(sorted(set(sample_of.values())))
        image_of = {rid: f"{samples[sid].benchmark}/{samples[sid].image_key}" if sid in samples else sid
                    for rid, sid in sample_of.items()}
        for key, rows in sorted(by_key.items()):
            ids = [rid for rid, _ in rows]
            result = span_agreement([spans for _, spans in rows], [marked[rid] for rid in ids],
                                    [image_of[rid] for rid in ids], n_boot=n_boot, seed=seed)
            report.spans.append({"metric": metric, "config_key": key, "responses": result.responses,
                                 "of": len(marked), "flagged": result.flagged, "flagged_right": result.flagged_right,
                                 **_interval("precision", result.precision), "marked": result.marked,
                                 "marked_found": result.marked_found, **_interval("recall", result.recall)})


def _fact_rows(report: HumanAgreementReport, store: "Store", facts: Mapping[tuple[str, int], tuple[str, str]],
               judge: Any, n_boot: int, seed: int) -> None:
    responses = store.get_responses(sorted({rid for rid, _ in facts}))
    samples = store.get_samples(sorted({r.sample_id for r in responses.values()}))
    todo: list[tuple[Hashable, str, Any]] = []
    clusters: dict[Hashable, Hashable] = {}
    for (rid, index), (text, _) in facts.items():
        response = responses.get(rid)
        sample = samples.get(response.sample_id) if response else None
        if sample is None:
            continue
        todo.append(((rid, index), text, sample))
        clusters[(rid, index)] = f"{sample.benchmark}/{sample.image_key}"
    verdicts = judge.judge(todo)
    result = fact_agreement({k: j.verdict for k, j in verdicts.items()}, {k: v[1] for k, v in facts.items()},
                            clusters, n_boot=n_boot, seed=seed)
    reasons = Counter(j.reason for j in verdicts.values() if j.verdict == "not settled" and not j.triplets)
    report.facts.append({"metric": judge.metric.name, "judge": judge.name, "config_key": judge.config_key,
                         "facts": result.facts,
                         "settled": result.settled, **_interval("coverage", result.coverage),
                         **_interval("balanced_accuracy", result.balanced_accuracy), "accuracy": result.accuracy,
                         "hallucinated_recall": result.hallucinated_recall,
                         "accurate_recall": result.accurate_recall, "confusion": result.confusion})
    for reason, n in reasons.most_common(3):
        report.notes.append(f"{judge.metric.name}: {n} facts not settled: {reason}")

