"""EMD under different concept extractors (VISCON Tables 9-10).

The same responses are extracted by each available extractor (the offline parser;
the configured LLM, when there is one) and scored with EMD in memory. Per model:
the mean EMD under each; across extractors: the Pearson correlation of per-response
EMD, and of per-model means when there are three models or more.

Worked example: per-response EMD under a = (1, 2, 3) and b = (2, 4, 7) on the
responses both scored (b's r4 has no partner): r = 5 / sqrt(2 * 114 / 9) = 0.993.

>>> r, n = pearson_between({"r1": 1, "r2": 2, "r3": 3}, {"r1": 2, "r2": 4, "r3": 7, "r4": 1})
>>> round(r, 3), n
(0.993, 3)
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from itertools import combinations
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ...config import Settings
from .common import mean, run_labels, select_runs
from .length import pearson
from .rescoring import default_encoder, emd_totals, free_text_answers
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "extractor-robustness"
TITLE = "EMD under different concept extractors (VISCON Tables 9-10)"


def pearson_between(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[float, int]:
    """Pearson r over the keys both have (None / NaN values dropped), and how many."""
    keys = [k for k in a if k in b and a[k] is not None and b[k] is not None
            and not math.isnan(a[k]) and not math.isnan(b[k])]
    return pearson([float(a[k]) for k in keys], [float(b[k]) for k in keys]), len(keys)


def available_extractors(settings: Settings, store: "Store") -> tuple[dict[str, Any], list[str]]:
    """The offline parser, and the configured LLM's extractor when an LLM is configured."""
    from ...components import Components

    parts = Components(settings, store.cache)
    out: dict[str, Any] = {"parser": parts.parser()}
    notes = []
    if settings.llm.configured:
        llm = dataclasses.replace(settings, scoring=dataclasses.replace(settings.scoring, extractor="llm"))
        out[f"llm:{settings.llm.model}"] = Components(llm, store.cache, llm_client=parts.llm_client()).extractor()
    else:
        notes.append("only one extractor is available (the offline parser): no LLM is configured "
                     "([llm] base_url and model), so there is no correlation between extractors to report; "
                     "the table shows EMD under the parser alone")
    return out, notes


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            limit: int | None = 100, emd_key: str = "total", encoder: Any = None,
            extractors: Mapping[str, Any] | None = None, **_: Any) -> AnalysisResult:
    notes: list[str] = [f"EMD value: {emd_key} (undefined where one side lacks a concept type)"]
    if extractors is None:
        extractors, more = available_extractors(settings, store)
        notes += more
    names = list(extractors)
    columns = ["model", "responses", *[f"emd[{n}]" for n in names]]
    selected = select_runs(store, benchmark, runs)
    labels = run_labels(selected)
    answers = free_text_answers(store, selected, labels, limit)
    notes.append(f"at most {limit or 'all'} responses per run, re-scored in memory")
    if not answers:
        return empty_result(NAME, TITLE, columns, "no caption or VQA responses in the selected runs", notes)
    encoder = encoder if encoder is not None else default_encoder(settings, store)
    texts = [a.response.text for a in answers]
    values: dict[str, dict[str, float]] = {}
    for name, extractor in extractors.items():
        try:
            totals = emd_totals(answers, texts, encoder, extractor, key=emd_key)
        except Exception as exc:  # noqa: BLE001 - one extractor failing (an LLM down) must not hide the others
            notes.append(f"extractor {name} failed: {type(exc).__name__}: {exc}")
            continue
        values[name] = {a.response.id: t for a, t in zip(answers, totals) if t is not None and not math.isnan(t)}
    by_model: dict[str, list[str]] = defaultdict(list)
    for a in answers:
        by_model[a.model].append(a.response.id)
    rows = []
    for model, ids in sorted(by_model.items()):
        row: dict[str, Any] = {"model": model, "responses": len(ids)}
        for name in names:
            got = [values[name][i] for i in ids if i in values.get(name, {})]
            row[f"emd[{name}]"] = mean(got)
        rows.append(row)
    for a_name, b_name in combinations([n for n in names if n in values], 2):
        r, n = pearson_between(values[a_name], values[b_name])
        notes.append(f"Pearson r of per-response EMD, {a_name} vs {b_name}: {r:.3f} ({n} responses)")
        if len(rows) >= 3:
            means_a = {row["model"]: row[f"emd[{a_name}]"] for row in rows}
            means_b = {row["model"]: row[f"emd[{b_name}]"] for row in rows}
            r_m, n_m = pearson_between(means_a, means_b)
            notes.append(f"Pearson r of per-model mean EMD, {a_name} vs {b_name}: {r_m:.3f} ({n_m} models)")
    return AnalysisResult(NAME, TITLE, columns, rows, _figure(rows, names, values), notes)


def _figure(rows: list[dict[str, Any]], names: list[str], values: Mapping[str, Mapping[str, float]]) -> Any:
    scatter = len([n for n in names if n in values]) >= 2
    fig, axes = figure(2 if scatter else 1)
    ax = axes[0]
    width = 0.8 / max(1, len(names))
    for j, name in enumerate(names):
        ax.bar([i + j * width for i in range(len(rows))], [r[f"emd[{name}]"] for r in rows], width, label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))], [r["model"] for r in rows], rotation=20,
                  ha="right", fontsize=7)
    ax.set_ylabel("mean EMD total")
    ax.legend(fontsize=7)
    if scatter:
        a_name, b_name = [n for n in names if n in values][:2]
        keys = [k for k in values[a_name] if k in values[b_name]]
        axes[1].scatter([values[a_name][k] for k in keys], [values[b_name][k] for k in keys], s=8, alpha=0.6)
        axes[1].set_xlabel(f"EMD ({a_name})")
        axes[1].set_ylabel(f"EMD ({b_name})")
    fig.tight_layout()
    return fig
