"""Do the metrics see the hallucinations the probe models injected on purpose?

Per metric (and configuration), over the selected probe runs with ``signals["injected"]``
(derived truncations are not probe output and are left out, as ``select_runs`` does),
one row for all hallucination types together (type ``all``) and one per type injected:
detection rate (injected concepts whose span the metric flags), false-alarm rate
(clean stated concepts it flags; a false alarm has no type, so every row of a metric
repeats the metric's), each with a 95 % bootstrap interval resampling images, and on
the ``all`` row the Spearman correlation of the metric's per-response value with the
response's injected share — all from ``studies.probe_detection``. Added here, also on
the ``all`` row: the rank correlation, across probe runs, of the metric's mean value
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
from ..collect import item_value, probe_detection_records
from ..probe_detection import ALL_TYPES, DETECTION_COLUMNS
from .common import mean, select_runs
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "probe-validity"
TITLE = "Metric detection of injected hallucinations (probe runs)"
COLUMNS = [*DETECTION_COLUMNS, "probe_runs", "spearman_vs_run_rate"]
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


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            metrics: Sequence[str] | None = None, n_boot: int = 1000, seed: int = 0, **_: Any) -> AnalysisResult:
    notes = ["detection: injected concepts whose span the metric flags; false alarm: clean stated concepts it flags",
             "false alarms have no hallucination type: each type's row repeats its metric's false alarms",
             "intervals: 95% bootstrap, resampling images (responses where the image is unknown)",
             "probe runs are synthetic: they check the metrics' mechanics, not real models"]
    probes = [r["id"] for r in select_runs(store, benchmark, runs) if r["backend"] == "probe"]
    wanted = list(metrics) if metrics else None
    records = probe_detection_records(store, wanted, probes, n_boot=n_boot, seed=seed) if probes else []
    if not records:
        return empty_result(NAME, TITLE, COLUMNS, "no scored probe runs with injected hallucinations: run "
                            "`hallu-studio run --model probe:rate=0.3` and score it", notes)
    by_run = _run_means(store, probes, benchmark)
    rows = []
    for r in records:
        key = (r["metric"], r["config_key"])
        summary = r["type"] == ALL_TYPES
        points = by_run.get(key, [])
        rows.append({**r, "probe_runs": len(points),
                     "spearman_vs_run_rate": rate_rank_correlation(points) if summary else math.nan})
    return AnalysisResult(NAME, TITLE, COLUMNS, rows, _figure([r for r in rows if r["type"] == ALL_TYPES], by_run),
                          notes)


def _figure(rows: list[dict[str, Any]], by_run: dict[tuple[str, str], list[tuple[float, float]]]) -> Any:
    fig, (ax, ax2) = figure(2)
    x = list(range(len(rows)))
    for offset, rate, label in ((-0.2, "detection_rate", "detection"), (0.2, "false_alarm_rate", "false alarms")):
        values = [r[rate] for r in rows]
        errors = [[max(0.0, v - r[f"{rate}_low"]) for v, r in zip(values, rows)],
                  [max(0.0, r[f"{rate}_high"] - v) for v, r in zip(values, rows)]]
        ax.bar([i + offset for i in x], values, 0.4, yerr=errors, capsize=2, label=label)
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
