"""Every configured hallucination judge against the human 1-5 ratings, per model (Tri-HE Table 3).

Judges: the embedding-similarity judge (always), the NLI judge (``scoring.nli_model``)
and the LLM judge (``[llm]``), each at two levels:

- triplet level: Tri-HE's own check, the share of a response's triplets judged
  hallucinated (object or relation);
- sentence level: the paper's baseline, the response split into sentences, each
  judged as one claim against the reference; the share of sentences not supported.

Each level's per-response share is correlated with the mean human rating (Pearson,
Spearman, Kendall with bootstrap intervals by image, ``studies.correlation``). The
human scale has 5 = no hallucination, so a judge that agrees with people correlates
negatively. Judging runs in memory on the rated responses only.

>>> split_sentences("A cat sits. It is grey!  Is it? yes")
['A cat sits.', 'It is grey!', 'Is it?', 'yes']
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ...config import Settings
from ...llm.errors import LLMAnswerError
from ...metrics.base import ScoringItem
from ..collect import mean_human_ratings
from ..correlation import correlate
from .common import run_labels, select_runs
from .rescoring import Answer, default_encoder
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "judge-agreement"
TITLE = "Judges against human 1-5 ratings, triplet and sentence level (Tri-HE Table 3)"
COLUMNS = ["judge", "level", "model", "n", "pearson", "pearson_low", "pearson_high", "spearman", "spearman_low",
           "spearman_high", "kendall", "kendall_low", "kendall_high"]
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
NOT_HALLUCINATED = ("supported", "unparseable")


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def configured_judges(settings: Settings, store: "Store", encoder: Any) -> tuple[dict[str, Any], list[str]]:
    """One judge per configured kind (embedding always; NLI and LLM when set up), and notes."""
    from ...components import Components

    kinds = ["embedding"]
    notes = []
    if settings.scoring.nli_model:
        kinds.append("nli")
    else:
        notes.append("no NLI judge: scoring.nli_model is not set")
    if settings.llm.configured:
        kinds.append("llm")
    else:
        notes.append("no LLM judge: no LLM is configured ([llm] base_url and model)")
    judges = {}
    for kind in kinds:
        variant = dataclasses.replace(settings, scoring=dataclasses.replace(settings.scoring, trihe_judge=kind))
        judges[kind] = Components(variant, store.cache, encoder=encoder).triplet_judge()
    return judges, notes


def triplet_level(judge: Any, answers: Sequence[Answer], concepts: Sequence[Any],
                  unjudged: list[str] | None = None) -> dict[str, float]:
    """Share of each response's triplets judged hallucinated (responses without triplets left out, and
    those the LLM judge gave an unusable answer about: their ids go to ``unjudged``)."""
    from ...metrics.trihe import TriHEMetric

    items = [ScoringItem(a.response.id, a.response.text, a.sample, c) for a, c in zip(answers, concepts)]
    metric = TriHEMetric(judge)
    try:
        judged = list(zip(items, metric.update_many(items)))
    except LLMAnswerError:  # one by one, leaving out the responses whose answers could not be used
        judged = []
        for item in items:
            try:
                judged.append((item, metric.update(item)))
            except LLMAnswerError:
                if unjudged is not None:
                    unjudged.append(item.response_id)
    out = {}
    for item, result in judged:
        n = result.values.get("n_triplets") or 0
        if n:
            out[item.response_id] = float(result.values["hallucinated"]) / float(n)
    return out


def sentence_level(judge: Any, answers: Sequence[Answer], unjudged: list[str] | None = None) -> dict[str, float]:
    """Share of each response's sentences the judge does not find supported by the reference (responses the
    LLM judge gave an unusable answer about left out: their ids go to ``unjudged``)."""
    from ...metrics.trihe import reference_for

    # A sentence is one claim: the judge embeds or reads it whole (``triplet_text`` joins the parts).
    work = [(a, [(s, "", "") for s in split_sentences(a.response.text)], reference_for(a.sample)) for a in answers]
    work = [w for w in work if w[1]]
    warm = getattr(judge, "warm", None)
    if warm is not None:
        warm([(claims, reference) for _, claims, reference in work])  # encode every phrase in one batch
    out = {}
    for a, claims, reference in work:
        try:
            verdicts = judge.judge(claims, reference)
        except LLMAnswerError:
            if unjudged is not None:
                unjudged.append(a.response.id)
            continue
        out[a.response.id] = sum(v.verdict not in NOT_HALLUCINATED for v in verdicts) / len(claims)
    return out


def agreement_rows(values: Mapping[tuple[str, str], Mapping[str, float]], human: Mapping[str, float],
                   model_of: Mapping[str, str], cluster_of: Mapping[str, str], n_boot: int = 1000,
                   seed: int = 0) -> list[dict[str, Any]]:
    """Per (judge, level) and model ("all" first): correlations of the judge's values with human ratings."""
    rows = []
    for (judge, level), per_response in values.items():
        ids = [r for r in per_response if r in human]
        groups: dict[str, list[str]] = {"all": ids}
        for r in ids:
            groups.setdefault(model_of[r], []).append(r)
        for model, members in groups.items():
            if len(members) < 3:
                continue
            result = correlate([per_response[r] for r in members], [human[r] for r in members],
                               [cluster_of[r] for r in members], n_boot=n_boot, seed=seed)
            rows.append({"judge": judge, "level": level, "model": model, **result.as_row()})
    return rows


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            n_boot: int = 1000, seed: int = 0, encoder: Any = None, extractor: Any = None,
            judges: Mapping[str, Any] | None = None, **_: Any) -> AnalysisResult:
    notes = ["human scale: 5 = no hallucination, so agreement shows as a negative correlation",
             ("triplet level: share of a response's triplets judged hallucinated; sentence level: share of its "
              "sentences not supported (the paper's sentence-level baseline)")]
    human = mean_human_ratings(store)
    selected = select_runs(store, benchmark, runs)
    labels = run_labels(selected)
    answers = []
    for run in selected:
        responses = [r for r in store.iter_responses(run["id"]) if r.id in human]
        samples = store.get_samples(sorted({r.sample_id for r in responses}))
        answers += [Answer(r, samples[r.sample_id], labels[run["id"]]) for r in responses if r.sample_id in samples]
    if len(answers) < 3:
        return empty_result(NAME, TITLE, COLUMNS, f"{len(answers)} rated responses in the selected runs; "
                            "at least three are needed (rate responses in the Annotate view)", notes)
    encoder = encoder if encoder is not None else default_encoder(settings, store)
    if judges is None:
        judges, more = configured_judges(settings, store, encoder)
        notes += more
    if extractor is None:
        from ...metrics.registry import make_extractor

        extractor = make_extractor(settings, store.cache)
    concepts = extractor.extract([a.response.text for a in answers])
    values: dict[tuple[str, str], dict[str, float]] = {}
    for name, judge in judges.items():
        unjudged: list[str] = []
        try:
            values[(name, "triplet")] = triplet_level(judge, answers, concepts, unjudged)
            values[(name, "sentence")] = sentence_level(judge, answers, unjudged)
            if unjudged:
                notes.append(f"judge {name}: {len(set(unjudged))} responses left out at some level: answers that "
                             "could not be used (cut or unreadable), asked again next time")
        except Exception as exc:  # noqa: BLE001 - one judge failing (an LLM down) must not hide the others
            notes.append(f"judge {name} failed: {type(exc).__name__}: {exc}")
    model_of = {a.response.id: a.model for a in answers}
    clusters = {a.response.id: f"{a.sample.benchmark}/{a.sample.image_key}" for a in answers}
    rows = agreement_rows(values, human, model_of, clusters, n_boot=n_boot, seed=seed)
    if not rows:
        return empty_result(NAME, TITLE, COLUMNS, "too few rated responses with judged claims to correlate", notes)
    return AnalysisResult(NAME, TITLE, COLUMNS, rows, _figure(rows), notes)


def _figure(rows: list[dict[str, Any]]) -> Any:
    fig, (ax,) = figure(1, width=max(5.0, 0.9 * len(rows)))
    overall = [r for r in rows if r["model"] == "all"] or rows
    labels = [f"{r['judge']}\n{r['level']}" for r in overall]
    values = [r["spearman"] for r in overall]
    err = [[max(0.0, r["spearman"] - r["spearman_low"]) if not math.isnan(r["spearman_low"]) else 0.0 for r in overall],
           [max(0.0, r["spearman_high"] - r["spearman"]) if not math.isnan(r["spearman_high"]) else 0.0
            for r in overall]]
    ax.bar(range(len(overall)), values, yerr=err, color=["C0" if r["level"] == "triplet" else "C1" for r in overall])
    ax.set_xticks(range(len(overall)), labels, fontsize=7)
    ax.axhline(0, color="#999", lw=0.8)
    ax.set_ylabel("Spearman with human rating (95% CI)")
    ax.set_title("judge vs human, all models", fontsize=9)
    fig.tight_layout()
    return fig
