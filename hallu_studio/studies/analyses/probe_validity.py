"""Do the metrics see the hallucinations the probe models injected on purpose?

Per metric (and configuration), over the selected probe runs with ``signals["injected"]``
(derived truncations are not probe output and are left out, as ``select_runs`` does):
detection rate (injected concepts whose span the metric flags), false-alarm rate
(clean stated concepts it flags) and the Spearman correlation of its per-response
value with the response's injected share — all from ``studies.probe_detection``.
Added here: the rank correlation, across probe runs, of the metric's mean value
with the run's injection rate (``rate=`` of the probe model).

Worked example: runs at rates 0, 0.1, 0.3, 0.5 with mean values 1, 3, 2, 4: ranks
differ by (0, 1, 1, 0), Spearman = 1 - 6 * 2 / (4 * 15) = 0.8.

>>> round(rate_rank_correlation([(0.0, 1.0), (0.1, 3.0), (0.3, 2.0), (0.5, 4.0)]), 6)
0.8
>>> probe_rate("probe rate=0.3 mix=object+relation seed=0 [synthetic]")
0.3
"""

from __future__ import annotations

import math
import re
import warnings
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Sequence

from scipy import stats as st

from ...config import Settings
from ..collect import item_value
from ..probe_detection import DetectionRow, ProbeItem, detection_row
from .common import mean, select_runs
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "probe-validity"
TITLE = "Metric detection of injected hallucinations (probe runs)"
COLUMNS = ["metric", "config_key", "responses", "detection_rate", "false_alarm_rate", "injected", "stated",
           "spearman_vs_injected_share", "probe_runs", "spearman_vs_run_rate"]
_RATE = re.compile(r"\brate=([0-9.]+)")


def probe_rate(model: str) -> float | None:
    """The injection rate a probe run's model name states, or None."""
    found = _RATE.search(model or "")
    return float(found.group(1)) if found else None


def rate_rank_correlation(points: Sequence[tuple[float, float]]) -> float:
    """Spearman of (run injection rate, run mean metric value); NaN with fewer than three distinct rates."""
    rates, values = [p[0] for p in points], [p[1] for p in points]
    if len(set(rates)) < 3 or len(set(values)) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(st.spearmanr(rates, values).statistic)


def _run_means(store: "Store", run_ids: Sequence[str],
               benchmark: str | None) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """(metric, config) -> [(run injection rate, run mean per-response value)] over these probe runs."""
    wanted = set(run_ids)
    rates = {r["id"]: probe_rate(r["model"]) for r in store.list_runs(benchmark) if r["id"] in wanted}
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for row in store.score_stat_rows(benchmark=benchmark):
        if rates.get(row["run_id"]) is None or row["metric"] == "concepts":
            continue
        v = item_value(row["metric"], row["values"])
        if v is not None and not math.isnan(v):
            values[(row["metric"], row["config_key"], row["run_id"])].append(v)
    out: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for (metric, key, run_id), vs in values.items():
        out[(metric, key)].append((rates[run_id], mean(vs)))  # type: ignore[arg-type]
    return out


def detection_table(store: "Store", run_ids: Sequence[str], metrics: Sequence[str] | None) -> list[DetectionRow]:
    """``collect.probe_detection_table`` restricted to these runs (the same ``detection_row`` per metric)."""
    items: dict[tuple[str, str], list[ProbeItem]] = defaultdict(list)
    for run_id in run_ids:
        concepts = {r.id: s.evidence.get("concepts")
                    for r, s in store.iter_scores("concepts", run_id=run_id, with_evidence=True)}
        for response, score in store.iter_scores(None, run_id=run_id, with_evidence=True):
            signals = response.signals or {}
            if score.metric == "concepts" or (metrics and score.metric not in metrics) or "injected" not in signals:
                continue
            items[(score.metric, score.config_key)].append(ProbeItem(
                response.text, list(signals.get("injected") or []), list(signals.get("stated") or []),
                score.values, score.evidence, item_value(score.metric, score.values), concepts.get(response.id)))
    return [detection_row(metric, rows, key) for (metric, key), rows in sorted(items.items())]


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            metrics: Sequence[str] | None = None, **_: Any) -> AnalysisResult:
    notes = ["detection: injected concepts whose span the metric flags; false alarm: clean stated concepts it flags",
             "probe runs are synthetic: they check the metrics' mechanics, not real models"]
    probes = [r["id"] for r in select_runs(store, benchmark, runs) if r["backend"] == "probe"]
    detection = detection_table(store, probes, list(metrics) if metrics else None)
    by_run = _run_means(store, probes, benchmark)
    if not detection:
        return empty_result(NAME, TITLE, COLUMNS, "no scored probe runs with injected hallucinations: run "
                            "`hallu-studio run --model probe:rate=0.3` and score it", notes)
    rows = []
    for d in detection:
        points = by_run.get((d.metric, d.config_key), [])
        rows.append({"metric": d.metric, "config_key": d.config_key, "responses": d.responses,
                     "detection_rate": d.detection_rate, "false_alarm_rate": d.false_alarm_rate,
                     "injected": d.injected, "stated": d.stated,
                     "spearman_vs_injected_share": d.spearman_with_injected_share, "probe_runs": len(points),
                     "spearman_vs_run_rate": rate_rank_correlation(points),
                     "by_type": ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in d.by_type.items())})
    return AnalysisResult(NAME, TITLE, COLUMNS + ["by_type"], rows, _figure(rows, by_run), notes)


def _figure(rows: list[dict[str, Any]], by_run: dict[tuple[str, str], list[tuple[float, float]]]) -> Any:
    fig, (ax, ax2) = figure(2)
    x = list(range(len(rows)))
    ax.bar([i - 0.2 for i in x], [r["detection_rate"] for r in rows], 0.4, label="detection")
    ax.bar([i + 0.2 for i in x], [r["false_alarm_rate"] for r in rows], 0.4, label="false alarms")
    ax.set_xticks(x, [r["metric"] for r in rows], rotation=20, fontsize=7)
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    ax.set_title("injected concepts flagged", fontsize=9)
    for r in rows:
        points = sorted(by_run.get((r["metric"], r["config_key"]), []))
        if points:
            values = [p[1] for p in points]
            top = max(abs(v) for v in values) or 1.0
            ax2.plot([p[0] for p in points], [v / top for v in values], marker="o", label=r["metric"])
    ax2.set_xlabel("probe injection rate")
    ax2.set_ylabel("mean value / its largest")
    ax2.set_title("metric vs injection rate", fontsize=9)
    if ax2.get_legend_handles_labels()[0]:
        ax2.legend(fontsize=6)
    fig.tight_layout()
    return fig
