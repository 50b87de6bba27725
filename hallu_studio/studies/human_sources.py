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
from typing import TYPE_CHECKING, Any, Hashable, Mapping, Sequence

from ..model import APP_SOURCE
from .baselines import naive_dissimilarity, reference_texts
from .collect import CONCEPTS, image_cluster
from .correlation import correlate
from .human_agreement import (NAIVE_SCORE, hallucination_scores, HallucinationScore, binary_agreement,
                              fact_agreement, group_means, span_agreement)
from .human_labels import judged_responses, labelled_facts, marked_spans, rating_targets, response_calls
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


def metrics_read() -> list[str]:
    """The metrics whose stored scores these tables read (a spec with ``hallucination_scores``, or one that points
    at words), in the registry's order: what scoring an imported study's responses should compute."""
    from ..metrics.registry import METRIC_NAMES, metric_spec

    spans = set(span_metrics())
    return [m for m in METRIC_NAMES if metric_spec(m).hallucination_scores or m in spans]


TABLES: tuple[str, ...] = ("binary", "rank", "spans", "facts", "groups")


def human_sources(store: "Store") -> list[dict[str, Any]]:
    """Imported human studies in the store: ``{source, events, responses, annotators, kinds}`` each."""
    return [s for s in store.event_sources() if s["source"] != APP_SOURCE]


# --------------------------------------------------------------------------- the people's side


@dataclass
class ScoredResponses:
    """Per (score name, config key): ``{response_id: value}``; and each response's image cluster."""

    values: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    scores: dict[str, HallucinationScore] = field(default_factory=dict)
    clusters: dict[str, str] = field(default_factory=dict)
    written_by_human: dict[str, bool] = field(default_factory=dict)
    # score name -> how many scored responses it is undefined for, and one reason given
    undefined: dict[str, tuple[int, str]] = field(default_factory=dict)


def responses_read(store: "Store", source: str) -> set[str]:
    """The responses the tables of imported ``source`` read scores of: those it judged, and people's own outputs on
    the same samples (a held-out reference caption, say; compared with the machines' in the groups table even when
    the study judged only the machines')."""
    judged = judged_responses(store.list_events_of_kinds(HUMAN_KINDS, source=source))
    return judged | human_written_peers(store, judged)


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
    span_notes: list[str] = field(default_factory=list)  # what the spans table's rows share (``same_flags_notes``)

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
    judged = judged_responses(events)
    report = HumanAgreementReport(source, len(judged))
    peers = human_written_peers(store, judged)
    scored = stored_scores(store, judged | peers, metrics)
    if baseline and judged:
        if encoder is None:
            from ..components import Components

            # Backed by the store when it can be written: a second study of the same texts encodes nothing.
            encoder = Components(settings, None if store.read_only else store.cache).encoder()
        add_naive_baseline(store, scored, judged | peers, encoder)
    if not scored.values:
        report.notes.append(f"no stored score of the {len(judged)} responses {source} judged: score them first")
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
            fact_judges = default_fact_judges(store, settings, metrics)
        for judge in fact_judges:
            _fact_rows(report, store, facts, judge, n_boot, seed)
    elif facts:
        report.notes.append(f"{len(facts)} labelled facts not judged (judge_facts is off)")
    return report


def default_fact_judges(store: "Store", settings: "Settings", metrics: Sequence[str] | None = None) -> list[Any]:
    """The judges of labelled facts: each fact metric as configured (Tri-HE's judge, CHAIR beside it), and, where an
    image judge is configured (``scoring.vlm_judge_model``), Tri-HE with the image judge alone beside them; those
    that look at the image read it from the store."""
    import dataclasses

    from ..metrics.registry import metric_spec
    from .fact_judging import FactJudge, fact_metrics

    def image(sample: Any) -> bytes | None:
        found = store.get_image(sample.image_sha256) if sample.image_sha256 else None
        return found[0] if found else None

    sc = settings.scoring
    wanted = [m for m in fact_metrics() if not metrics or m in metrics]
    # The image judge's answers kept in the store where it can be written: a second study asks nothing again.
    keeps = None if store.read_only else store
    # The fact metrics an image judge can judge (Tri-HE's judge), by what their specs say their keys read.
    seeing = [m for m in wanted if "scoring.vlm_judge_model" in metric_spec(m).settings]
    judges: list[Any] = []
    for m in wanted:  # one extractor for all of them
        judges.append(FactJudge(settings, store=keeps if m in seeing and sc.vlm_judge_model else None,
                                extractor=judges[0].extractor if judges else None, metric=m, images=image))
    if sc.vlm_judge_model and sc.trihe_judge != "vlm":
        alone = dataclasses.replace(settings, scoring=dataclasses.replace(sc, trihe_judge="vlm"))
        judges += [FactJudge(alone, store=keeps, extractor=judges[0].extractor, metric=m, images=image) for m in seeing]
    return judges


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
    flags: dict[tuple[str, str], dict[str, list[tuple[int, int]]]] = {}
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
            flags[(metric, key)] = {rid: sorted(spans) for rid, spans in rows}
            ids = [rid for rid, _ in rows]
            result = span_agreement([spans for _, spans in rows], [marked[rid] for rid in ids],
                                    [image_of[rid] for rid in ids], n_boot=n_boot, seed=seed)
            report.spans.append({"metric": metric, "config_key": key, "responses": result.responses,
                                 "of": len(marked), "flagged": result.flagged, "flagged_right": result.flagged_right,
                                 **_interval("precision", result.precision), "marked": result.marked,
                                 "marked_found": result.marked_found, **_interval("recall", result.recall)})
    samples = store.get_samples(sorted(set(sample_of.values())))
    report.span_notes.extend(same_flags_notes(flags, [samples[sid] for sid in set(sample_of.values()) if sid in samples]))


def same_flags_notes(flags: Mapping[tuple[str, str], Mapping[str, Sequence[tuple[int, int]]]],
                     samples: Sequence[Any]) -> list[str]:
    """A note for each group of metrics (and configurations) that flag exactly the same spans on every response
    they scored, so that their identical span rows read as what they are, and why where the references say it:
    an object list alone settles only which objects of its vocabulary are absent, so every metric can flag only
    those, on the same words.

    >>> from hallu_studio.model import Sample
    >>> s = Sample(id="b/1", benchmark="b", image_key="1", reference_objects=["dog"], reference_vocabulary="coco-80")
    >>> same_flags_notes({("trihe", "k"): {"r": [(0, 3)]}, ("chair", "k"): {"r": [(0, 3)]},
    ...                   ("emd", "k"): {"r": [(4, 6)]}}, [s])[0][:62]
    'Tri-HE and CHAIR flag the same spans on each of the 1 response'
    """
    from ..metrics.registry import metric_spec
    from ..reference_scope import Scope

    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for name, by_response in flags.items():
        if any(by_response.values()):
            groups[repr(sorted((rid, list(spans)) for rid, spans in by_response.items()))].append(name)
    scopes = [Scope.of_sample(sample) for sample in samples]
    # basis None: an empty list, which still settles that no object of its vocabulary is there
    lists_alone = bool(scopes) and all(sc.vocabulary is not None and not sc.captions
                                       and sc.basis in ("reference_objects", None) for sc in scopes)
    notes = []
    for same in (g for g in groups.values() if len(g) > 1):
        names = [metric_spec(m).display_name + (f" ({k})" if sum(x == m for x, _ in same) > 1 else "")
                 for m, k in same]
        n = len(flags[same[0]])
        text = (f"{' and '.join(names)} flag the same spans on each of the {n} response{'s' if n != 1 else ''} "
                "they scored, so their span rows are identical")
        if lists_alone:
            vocab = scopes[0].vocabulary.describe()  # type: ignore[union-attr]
            text += (f": these responses' only reference is an object list complete within {vocab}, which settles "
                     "only whether an object of that vocabulary is in the picture, so a judge of concepts can call "
                     "hallucinated only the objects of the vocabulary the list lacks; these flag exactly those, on "
                     "the words that name them (compared response by response)")
        notes.append(text + ".")
    return notes


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

