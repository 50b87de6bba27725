"""Two or more runs on the same items, compared per metric (VISCON Tables 6-8, Tri-HE Tables 5 and 10).

Decoding methods, model sizes, prompts or mitigations: each run is compared with the
first (the baseline) on every metric both were scored with, on the samples both
answered. The per-response number is the one the correlation study uses
(``studies.collect.item_value``: EMD total, Tri-HE share of hallucinated triplets,
CHAIR_i, 1 - correct for POPE ...); the difference of means comes with a paired
cluster-bootstrap interval by image and a p-value (``paired.paired_difference``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Sequence

from ...config import Settings
from ..collect import item_value
from .common import cluster_of, config_in_force, run_labels, select_runs
from .paired import paired_difference
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "run-comparison"
TITLE = "Runs compared per metric, paired by sample (VISCON Tables 6-8, Tri-HE Tables 5, 10)"
COLUMNS = ["metric", "baseline", "run", "n", "images", "mean_baseline", "mean_run", "difference", "low", "high",
           "p_value"]


def paired_values(rows: Sequence[dict[str, Any]], base: str, other: str) -> tuple[list[float], list[float], list[str]]:
    """Per-response values of two runs paired by sample id (samples missing on either side left out)."""
    by_run: dict[str, dict[str, tuple[float, str]]] = defaultdict(dict)
    for r in rows:
        value = item_value(r["metric"], r["values"])
        if value is not None and not math.isnan(value):
            by_run[r["run_id"]][r["sample_id"]] = (value, cluster_of(r))
    shared = sorted(set(by_run[base]) & set(by_run[other]))
    return ([by_run[base][s][0] for s in shared], [by_run[other][s][0] for s in shared],
            [by_run[base][s][1] for s in shared])


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            metrics: Sequence[str] | None = None, n_boot: int = 1000, seed: int = 0, **_: Any) -> AnalysisResult:
    selected = select_runs(store, benchmark, runs)
    notes = [("difference = run - baseline on the per-response value; p-value of 'no difference' from the "
              "bootstrap centred on zero, resampling images")]
    if len(selected) < 2:
        return empty_result(NAME, TITLE, COLUMNS, f"{len(selected)} run(s) selected: comparing needs two or more "
                            "(the first named is the baseline)", notes)
    labels = run_labels(selected)
    base = selected[0]["id"]
    notes.insert(0, f"baseline: {labels[base]}")
    run_ids = [r["id"] for r in selected]
    wanted = set(run_ids)
    all_rows = [r for r in store.score_stat_rows(benchmark=benchmark)
                if r["run_id"] in wanted and r["metric"] != "concepts"]
    scored = {r["metric"] for r in all_rows}
    names = sorted(scored if not metrics else set(metrics))
    if metrics and set(metrics) - scored:
        notes.append(f"not scored on these runs: {', '.join(sorted(set(metrics) - scored))}; "
                     f"scored: {', '.join(sorted(scored)) or 'nothing'}")
    rows = []
    for metric in names:
        metric_rows = [r for r in all_rows if r["metric"] == metric]
        key, more = config_in_force(store, settings, metric)
        notes += more
        metric_rows = [r for r in metric_rows if r["config_key"] == key]
        for other in run_ids[1:]:
            a, b, clusters = paired_values(metric_rows, base, other)
            if not a:
                continue
            d = paired_difference(a, b, clusters, n_boot=n_boot, seed=seed)
            rows.append({"metric": metric, "baseline": labels[base], "run": labels[other], "run_id": other,
                         "n": d.n, "images": d.clusters, "mean_baseline": d.mean_a, "mean_run": d.mean_b,
                         "difference": d.difference, "low": d.low, "high": d.high, "p_value": d.p_value})
    if not rows:
        return empty_result(NAME, TITLE, COLUMNS, "the selected runs share no scored samples with the baseline",
                            notes)
    return AnalysisResult(NAME, TITLE, COLUMNS, rows, _figure(rows), notes)


def _figure(rows: list[dict[str, Any]]) -> Any:
    fig, (ax,) = figure(1, width=6.0, height=max(2.5, 0.35 * len(rows) + 1))
    ys = list(range(len(rows)))[::-1]
    for y, r in zip(ys, rows):
        ax.errorbar([r["difference"]], [y], xerr=[[r["difference"] - r["low"]], [r["high"] - r["difference"]]],
                    fmt="o", color="C3" if r["p_value"] < 0.05 else "C0", capsize=3)
    ax.axvline(0, color="#999", lw=0.8)
    ax.set_yticks(ys, [f"{r['metric']}: {r['run']}" for r in rows], fontsize=7)
    ax.set_xlabel("difference from the baseline (95% CI; red: p < 0.05)")
    fig.tight_layout()
    return fig
