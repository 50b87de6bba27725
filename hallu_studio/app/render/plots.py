"""The papers' overview plots as matplotlib figures, from browse rows (dicts)."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")  # the app renders off-screen; no display is assumed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from .palette import short_model_label  # noqa: E402


def _model(r: dict[str, Any]) -> str:
    return short_model_label(r.get("model"), r.get("synthetic"))


def _empty(fig: Figure, ax: Any, text: str) -> Figure:
    ax.text(0.5, 0.5, text, ha="center", va="center", color="#777")
    ax.set_axis_off()
    return fig


def _grouped_bars(ax: Any, table: dict[str, dict[str, float]], groups: list[str]) -> None:
    series = sorted(table)
    width = 0.8 / max(1, len(series))
    for k, name in enumerate(series):
        xs = [i + k * width for i in range(len(groups))]
        ax.bar(xs, [table[name].get(g, math.nan) for g in groups], width=width, label=name)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))], groups, rotation=20)
    ax.legend(fontsize=6)


def emd_by_domain_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Mean EMD (×100) per image domain and model (VISCON Fig. 4a)."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    # Domains are compared on one task: captions where there are any (VISCON describes images),
    # so that short VQA answers in the original domain do not skew its mean.
    scored = [r for r in rows if r.get("emd.total") is not None]
    captions = [r for r in scored if r.get("task") == "caption"]
    for r in captions or scored:
        acc[_model(r)][str(r.get("domain"))].append(float(r["emd.total"]))
    if not acc:
        return _empty(fig, ax, "no EMD scores yet")
    ax.set_title("captions" if captions else "all tasks", fontsize=8)
    domains = sorted({d for m in acc.values() for d in m})
    _grouped_bars(ax, {m: {d: sum(v) / len(v) for d, v in ds.items()} for m, ds in acc.items()}, domains)
    ax.set_ylabel("mean EMD (×100)")
    fig.tight_layout()
    return fig


def fit_alpha(lengths: Sequence[float], distances: Sequence[float]) -> float | None:
    """VISCON's α (Table 3): the least-squares slope of total edit distance on response length.

    None when fewer than two distinct lengths make a slope.

    >>> fit_alpha([10, 20, 40], [2, 4, 8])
    0.2
    """
    from ...metrics.edit_distance import edit_slope_alpha

    try:
        return edit_slope_alpha(lengths, distances)
    except ValueError:
        return None


def edit_vs_length_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Edit distance against response length (words) per model, with the fitted α (VISCON Fig. 5b)."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    acc: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        if r.get("edit.distance") is not None and r.get("edit.words"):
            acc[_model(r)].append((float(r["edit.words"]), float(r["edit.distance"])))
    if not acc:
        return _empty(fig, ax, "no Evaluate-by-Edit scores yet")
    for name, pts in sorted(acc.items()):
        alpha = fit_alpha([p[0] for p in pts], [p[1] for p in pts])
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, alpha=0.6,
                   label=f"{name} (α={alpha:.2f})" if alpha is not None else name)
    ax.set_xlabel("response length (words)")
    ax.set_ylabel("edit distance")
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


def object_relation_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Tri-HE object and relation hallucination rates (share of triplets) per model."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in rows:
        if r.get("trihe.n_triplets"):
            a = acc[_model(r)]
            a[0] += float(r.get("trihe.object") or 0)
            a[1] += float(r.get("trihe.relation") or 0)
            a[2] += float(r["trihe.n_triplets"])
    if not acc:
        return _empty(fig, ax, "no Tri-HE scores yet")
    table = {"object": {m: v[0] / v[2] for m, v in acc.items()}, "relation": {m: v[1] / v[2] for m, v in acc.items()}}
    _grouped_bars(ax, table, sorted(acc))
    ax.set_ylabel("share of triplets")
    fig.tight_layout()
    return fig


def halr_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Reefknot's Halr (% hallucinated answers) per task × relation category and model."""
    fig, ax = plt.subplots(figsize=(6, 3.2))
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.get("reefknot.hallucinated") is not None:
            acc[_model(r)][f"{r.get('task')}/{r.get('relation_category') or '?'}"].append(
                float(r["reefknot.hallucinated"]))
    if not acc:
        return _empty(fig, ax, "no Reefknot scores yet")
    groups = sorted({g for m in acc.values() for g in m})
    _grouped_bars(ax, {m: {g: 100 * sum(v) / len(v) for g, v in gs.items()} for m, gs in acc.items()}, groups)
    ax.set_ylabel("Halr (%)")
    fig.tight_layout()
    return fig
