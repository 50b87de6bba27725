"""EMD under a shift of vocabulary: one or two words of each response swapped for synonyms (VISCON Fig. 6).

A robust metric should barely move when "sofa" becomes "couch". Per model: the mean
EMD of the original and the shifted responses, the paired change with a bootstrap
interval by image and a p-value, and whether the models' ranking (lower EMD first)
changes. Responses are re-scored in memory (nothing is written to the store).

>>> ranks({"A": 10.0, "B": 5.0, "C": 7.5})
{'B': 1, 'C': 2, 'A': 3}
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from scipy import stats as st

from ...config import Settings
from .common import run_labels, select_runs
from .paired import paired_difference
from .rescoring import default_encoder, emd_totals, free_text_answers
from .result import AnalysisResult, empty_result, figure
from .synonyms import Candidate, swap_words, synonym_source

if TYPE_CHECKING:
    from ...store import Store

NAME = "vocabulary-shift"
TITLE = "EMD when words are swapped for synonyms (VISCON Fig. 6)"
COLUMNS = ["model", "responses", "swapped", "emd_original", "emd_shifted", "change", "change_low", "change_high",
           "p_value", "rank_original", "rank_shifted"]


def ranks(values: Mapping[str, float]) -> dict[str, int]:
    """1 for the lowest value (the least hallucinating model under EMD), ties broken by name."""
    order = sorted(values, key=lambda k: (values[k], k))
    return {k: i + 1 for i, k in enumerate(order)}


def candidates_of(concepts: Any) -> list[Candidate]:
    """Object names (nouns) and attributes (adjectives) of a concept set, where their spans are known."""
    out: list[Candidate] = [(o.span, o.name, "n") for o in concepts.objects if o.span]
    out += [(a.span, a.attribute, "a") for a in concepts.attributes if a.span]
    return out


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            n_words: int = 1, limit: int | None = 100, n_boot: int = 500, seed: int = 0, emd_key: str = "total",
            encoder: Any = None, extractor: Any = None, **_: Any) -> AnalysisResult:
    if n_words not in (1, 2):
        raise ValueError(f"n_words must be 1 or 2 (VISCON swaps one or two words), got {n_words}")
    synonyms, how = synonym_source()
    notes = [how, (f"{n_words} word(s) per response swapped, among its extracted objects and attributes; "
                   f"at most {limit or 'all'} responses per run, re-scored in memory"),
             f"EMD value: {emd_key} (undefined where one side lacks a concept type)"]
    selected = select_runs(store, benchmark, runs)
    labels = run_labels(selected)
    answers = free_text_answers(store, selected, labels, limit)
    if not answers:
        return empty_result(NAME, TITLE, COLUMNS, "no caption or VQA responses in the selected runs", notes)
    if extractor is None:
        from ...metrics.registry import make_extractor

        extractor = make_extractor(settings, store.cache)
    encoder = encoder if encoder is not None else default_encoder(settings, store)
    concepts = extractor.extract([a.response.text for a in answers])
    shifted, swapped = [], []
    for a, cs in zip(answers, concepts):
        text, swaps = swap_words(a.response.text, candidates_of(cs), synonyms, n_words, seed=f"{seed}:{a.response.id}")
        shifted.append(text)
        swapped.append(bool(swaps))
    before = emd_totals(answers, [a.response.text for a in answers], encoder, extractor, mentioned=concepts,
                        key=emd_key)
    after = emd_totals(answers, shifted, encoder, extractor, key=emd_key)
    per_model: dict[str, list[tuple[float, float, str, bool]]] = defaultdict(list)
    for a, b, s, did in zip(answers, before, after, swapped):
        if b is not None and s is not None and not math.isnan(b) and not math.isnan(s):
            per_model[a.model].append((b, s, f"{a.sample.benchmark}/{a.sample.image_key}", did))
    if not per_model:
        return empty_result(NAME, TITLE, COLUMNS, "EMD is undefined on every selected response", notes)
    rows = []
    for model, items in sorted(per_model.items()):
        d = paired_difference([i[0] for i in items], [i[1] for i in items], [i[2] for i in items], n_boot=n_boot,
                              seed=seed)
        rows.append({"model": model, "responses": d.n, "swapped": sum(i[3] for i in items),
                     "emd_original": d.mean_a, "emd_shifted": d.mean_b, "change": d.difference,
                     "change_low": d.low, "change_high": d.high, "p_value": d.p_value})
    r_before = ranks({r["model"]: r["emd_original"] for r in rows})
    r_after = ranks({r["model"]: r["emd_shifted"] for r in rows})
    for r in rows:
        r["rank_original"], r["rank_shifted"] = r_before[r["model"]], r_after[r["model"]]
    if len(rows) > 1:
        models = [r["model"] for r in rows]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tau = st.kendalltau([r_before[m] for m in models], [r_after[m] for m in models]).statistic
        changed = any(r_before[m] != r_after[m] for m in models)
        notes.append(f"model ranking by EMD {'changes' if changed else 'does not change'} "
                     f"(Kendall tau between the rankings {tau:.3f})")
    notes.append(f"{sum(swapped)} of {len(swapped)} responses had a word with a synonym to swap; the others "
                 "count with a change of 0")
    return AnalysisResult(NAME, TITLE, COLUMNS, rows, _figure(rows), notes)


def _figure(rows: list[dict[str, Any]]) -> Any:
    fig, (ax,) = figure(1, width=max(4.5, 1.3 * len(rows)))
    x = list(range(len(rows)))
    ax.bar([i - 0.2 for i in x], [r["emd_original"] for r in rows], 0.4, label="original")
    ax.bar([i + 0.2 for i in x], [r["emd_shifted"] for r in rows], 0.4, label="synonyms swapped")
    ax.set_xticks(x, [r["model"] for r in rows], rotation=20, ha="right", fontsize=7)
    ax.set_ylabel("mean EMD total")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
