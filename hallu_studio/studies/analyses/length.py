"""Hallucination against response length (Tri-HE Figure 3, VISCON Figure 5 and Table 3).

Three views of one question, per model:

- responses cut to their first K words (``derive_truncated_runs``), scored like any run:
  Tri-HE's Hallu_Q and EMD for each K and for the full responses;
- EMD of the full responses against their length (Pearson r);
- total word edit distance against length, with VISCON's slope α (least squares) and
  a covariance ellipse (2 standard deviations) per model.

Worked example of the ellipse: points (1, 2), (2, 4), (3, 6) have covariance
[[1, 2], [2, 4]] with eigenvalues 5 and 0; the major axis points along (1, 2), at
atan2(2, 1) = 63.43 degrees, and is 2 * 2 * sqrt(5) = 8.944 long; the minor axis is 0.

>>> e = covariance_ellipse([1, 2, 3], [2, 4, 6])
>>> e.center, round(e.width, 3), round(e.height, 3), round(e.angle, 2)
((2.0, 4.0), 8.944, 0.0, 63.43)
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
from matplotlib.patches import Ellipse
from scipy import stats as st

from ...config import Settings
from ...metrics.edit_distance import edit_slope_alpha
from .common import metric_intervals, run_colours, run_labels, select_runs, stored_rows
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "length"
TITLE = "Hallucination against response length (Tri-HE Fig. 3, VISCON Fig. 5)"
COLUMNS = ["model", "K", "hallu_q", "hallu_q_low", "hallu_q_high", "emd", "emd_low", "emd_high",
           "emd_vs_length_r", "edit_alpha", "responses"]
DEFAULT_KS: tuple[int, ...] = (10, 20, 50)


@dataclass(frozen=True)
class EllipseShape:
    center: tuple[float, float]
    width: float  # full length of the major axis
    height: float  # full length of the minor axis
    angle: float  # degrees, counter-clockwise from the x axis


def covariance_ellipse(xs: Sequence[float], ys: Sequence[float], n_std: float = 2.0) -> EllipseShape:
    """The ``n_std`` standard-deviation ellipse of the sample covariance of (xs, ys)."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise ValueError(f"an ellipse needs at least two paired points, got {len(xs)} and {len(ys)}")
    cov = np.cov(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
    values, vectors = np.linalg.eigh(cov)  # ascending eigenvalues
    values = np.clip(values, 0.0, None)
    major = vectors[:, 1]
    angle = math.degrees(math.atan2(major[1], major[0]))
    angle = angle + 180.0 if angle < -90 else angle - 180.0 if angle > 90 else angle
    return EllipseShape((float(np.mean(xs)), float(np.mean(ys))), float(2 * n_std * math.sqrt(values[1])),
                        float(round(2 * n_std * math.sqrt(values[0]), 12)), float(angle))


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(st.pearsonr(x, y).statistic)


def _derive_and_score(store: "Store", settings: Settings, run_ids: Sequence[str], ks: Sequence[int],
                      metrics: Sequence[str], notes: list[str]) -> None:
    from ...pipelines.running import derive_truncated_runs
    from ...pipelines.scoring import score_store

    if store.read_only:
        notes.append("the store is open read-only: truncated runs were not derived or scored; "
                     "only those already stored are shown")
        return
    for run_id in run_ids:
        for derived in derive_truncated_runs(store, run_id, ks):
            report = score_store(store, settings, list(metrics), run_id=derived, progress=False)
            if report.failed:
                notes.append(f"{derived}: {report.summary()}")


def _length_points(store: "Store", settings: Settings, metric: str, value_key: str, run_ids: Sequence[str],
                   benchmark: str | None, notes: list[str]) -> dict[str, list[tuple[float, float]]]:
    """Per run: (response length in words, the metric's per-response value)."""
    rows, more = stored_rows(store, settings, metric, run_ids, benchmark)
    notes.extend(more)
    lengths = {}
    for run_id in run_ids:
        for response in store.iter_responses(run_id):
            lengths[response.id] = len(response.text.split())
    out: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        value = r["values"].get(value_key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
            length = r["values"].get("words") if metric == "edit" else lengths.get(r["response_id"])
            if length is not None:
                out[r["run_id"]].append((float(length), float(value)))
    return out


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            ks: Sequence[int] = DEFAULT_KS, metrics: Sequence[str] = ("trihe", "emd"), derive: bool = True,
            n_boot: int = 200, seed: int = 0, **_: Any) -> AnalysisResult:
    from ...pipelines.running import truncated_run_id

    ks = sorted({int(k) for k in ks})
    if not ks or ks[0] < 1:
        raise ValueError(f"truncation lengths must be positive integers, got {list(ks)}")
    notes: list[str] = ["K = responses cut to their first K whitespace tokens; 'full' = the responses as given",
                        "edit distance comes from stored `edit` scores (score them to see α and the ellipses)"]
    base = [r for r in select_runs(store, benchmark, runs) if r["responses"]]
    if not base:
        return empty_result(NAME, TITLE, COLUMNS, "no runs with responses to analyse", notes)
    labels = run_labels(base)
    base_ids = [r["id"] for r in base]
    if derive:
        _derive_and_score(store, settings, base_ids, ks, metrics, notes)
    variants = {(run_id, "full"): run_id for run_id in base_ids}
    variants.update({(run_id, k): truncated_run_id(run_id, k) for run_id in base_ids for k in ks})
    all_ids = list(variants.values())
    hallu, more = metric_intervals(store, settings, "trihe", "hallu_q", all_ids, n_boot=n_boot, seed=seed)
    emd, more2 = metric_intervals(store, settings, "emd", "total", all_ids, n_boot=n_boot, seed=seed)
    notes += more + more2
    emd_points = _length_points(store, settings, "emd", "total", base_ids, benchmark, notes)
    edit_points = _length_points(store, settings, "edit", "distance", base_ids, benchmark, notes)
    rows = []
    for (run_id, k), variant in variants.items():
        h, e = hallu.get(variant), emd.get(variant)
        if h is None and e is None:
            continue
        # Length relations are properties of the full responses; truncated rows leave them empty.
        row: dict[str, Any] = {"model": labels[run_id], "run_id": run_id, "K": k, "responses": (h or e)["n"],
                               "emd_vs_length_r": math.nan, "edit_alpha": math.nan}
        for name, iv in (("hallu_q", h), ("emd", e)):
            row.update({name: iv["value"] if iv else math.nan, f"{name}_low": iv["low"] if iv else math.nan,
                        f"{name}_high": iv["high"] if iv else math.nan})
        if k == "full":
            pts = emd_points.get(run_id, [])
            row["emd_vs_length_r"] = pearson([p[0] for p in pts], [p[1] for p in pts])
            pts = edit_points.get(run_id, [])
            try:
                row["edit_alpha"] = edit_slope_alpha([p[0] for p in pts], [p[1] for p in pts])
            except ValueError:
                row["edit_alpha"] = math.nan
        rows.append(row)
    rows.sort(key=lambda r: (r["model"], math.inf if r["K"] == "full" else r["K"]))
    if not rows:
        return empty_result(NAME, TITLE, COLUMNS, "no Tri-HE or EMD scores on these runs or their truncations: "
                            "score them first (`hallu-studio score --metrics trihe,emd`)", notes)
    return AnalysisResult(NAME, TITLE, COLUMNS, rows, _figure(rows, labels, run_colours(base), emd_points, edit_points,
                                                             ks), notes)


def _figure(rows: list[dict[str, Any]], labels: dict[str, str], colors: dict[str, str],
            emd_points: dict[str, list[tuple[float, float]]], edit_points: dict[str, list[tuple[float, float]]],
            ks: Sequence[int]) -> Any:
    fig, (ax_k, ax_emd, ax_edit) = figure(3)
    by_run: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_run[r["run_id"]].append(r)
    full_x = max(ks) * 1.5
    for run_id, rs in by_run.items():
        pts = sorted(((full_x if r["K"] == "full" else r["K"]), r["hallu_q"]) for r in rs
                     if not math.isnan(r["hallu_q"]))
        if pts:
            ax_k.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colors.get(run_id),
                      label=labels[run_id])
    ax_k.set_xticks([*ks, full_x], [*map(str, ks), "full"])
    ax_k.set_xlabel("first K tokens")
    ax_k.set_ylabel("Hallu_Q (%)")
    ax_k.set_title("Tri-HE rate of truncated responses", fontsize=9)
    for run_id, pts in emd_points.items():
        ax_emd.scatter([p[0] for p in pts], [p[1] for p in pts], s=8, alpha=0.6, color=colors.get(run_id),
                       label=labels[run_id])
    ax_emd.set_xlabel("response length (words)")
    ax_emd.set_ylabel("EMD total")
    ax_emd.set_title("EMD vs length", fontsize=9)
    for run_id, pts in edit_points.items():
        color = colors.get(run_id)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        ax_edit.scatter(xs, ys, s=8, alpha=0.6, color=color, label=labels[run_id])
        if len(pts) >= 2 and len(set(xs)) > 1:
            e = covariance_ellipse(xs, ys)
            ax_edit.add_patch(Ellipse(e.center, e.width, e.height, angle=e.angle, fill=False, color=color))
            alpha = edit_slope_alpha(xs, ys)
            grid = np.linspace(min(xs), max(xs), 2)
            ax_edit.plot(grid, np.polyval(np.polyfit(xs, ys, 1), grid), color=color, lw=1,
                         label=f"α = {alpha:.2f}")
    ax_edit.set_xlabel("response length (words)")
    ax_edit.set_ylabel("total edit distance")
    ax_edit.set_title("edit distance vs length (slope α, 2σ ellipse)", fontsize=9)
    for ax in (ax_k, ax_emd, ax_edit):
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6)
    fig.tight_layout()
    return fig
