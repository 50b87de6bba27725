"""The Study tab's tables and scatter plot, from ``hallu_studio.studies`` (no statistics computed here)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from ...studies import collect
from ..context import AppContext
from ..render import records_table_html
from ..render.palette import esc

SECTIONS: tuple[tuple[str, str], ...] = (
    ("correlations", "metric vs human ratings (Pearson, Spearman, Kendall with bootstrap CIs by image)"),
    ("agreement", "agreement between annotators (Krippendorff's alpha)"),
    ("judges", "judge accuracy and confusion against human corrections"),
    ("probes", "detection rate of each metric on the probes' injected hallucinations"),
    ("preferences", "pairwise A/B preferences with Bradley–Terry strengths"),
)


def _judges_html(ctx: AppContext) -> str:
    table = collect.judge_accuracy_table(ctx.store)
    rows, confusions = [], []
    for name, acc in table.items():
        rows.append({"judge": name, "triplets": acc.n, "accuracy": acc.accuracy,
                     "binary accuracy": acc.binary_accuracy, "Cohen's kappa": acc.kappa})
        conf = [{"human \\ judge": label, **{j: acc.confusion[i][k] for k, j in enumerate(acc.labels)}}
                for i, label in enumerate(acc.labels)] if acc.confusion else []
        confusions.append(f"<p><b>{esc(name)}</b> confusion</p>" + records_table_html(conf))
    return records_table_html(rows, empty="no human triplet corrections yet") + "".join(confusions)


def _preferences_html(ctx: AppContext) -> str:
    rows = []
    for aspect in ("overall", "precision", "recall"):
        for model, s in sorted(collect.preference_strengths(ctx.store, aspect).items(), key=lambda kv: -kv[1].strength):
            rows.append({"aspect": aspect, "model": model, "strength": s.strength, "wins": s.wins,
                         "losses": s.losses, "comparisons": s.comparisons})
    return records_table_html(rows, empty="no A/B preferences yet (use the `prefer` API or Inspect's compare)")


def scatter_figure(ctx: AppContext) -> Figure:
    """Each metric's per-response number against the mean human rating, one panel per metric."""
    human = collect.mean_human_ratings(ctx.store)
    points: dict[str, list[tuple[float, float]]] = defaultdict(list)
    if human:
        for row in ctx.store.score_stat_rows():
            if row["response_id"] in human and row["metric"] != "concepts":
                v = collect.item_value(row["metric"], row["values"])
                if v is not None:
                    points[row["metric"]].append((v, human[row["response_id"]]))
    metrics = sorted(points)
    fig, axes = plt.subplots(1, max(1, len(metrics)), figsize=(3.2 * max(1, len(metrics)), 3), squeeze=False)
    if not metrics:
        axes[0][0].text(0.5, 0.5, "no human ratings yet", ha="center", va="center", color="#777")
        axes[0][0].set_axis_off()
    for ax, metric in zip(axes[0], metrics):
        xs, ys = zip(*points[metric])
        ax.scatter(xs, ys, s=10, alpha=0.6)
        ax.set_title(metric)
        ax.set_xlabel("metric value")
        ax.set_ylabel("mean human rating")
    fig.tight_layout()
    return fig


def all_tables_html(ctx: AppContext) -> dict[str, str]:
    corr = collect.correlation_table(ctx.store)
    agreement = collect.annotator_agreement(ctx.store)
    probes = [{k: v for k, v in vars(r).items() if k != "by_type"} | {"by type (injected, detected)": r.by_type}
              for r in collect.probe_detection_table(ctx.store)]
    return {
        "correlations": records_table_html(corr, empty="no human ratings yet"),
        "agreement": records_table_html([agreement]),
        "judges": _judges_html(ctx),
        "probes": records_table_html(probes, empty="no probe runs with injected hallucinations"),
        "preferences": _preferences_html(ctx),
    }


def compute(ctx: AppContext) -> list[Any]:
    tables = all_tables_html(ctx)
    fig = scatter_figure(ctx)
    plt.close(fig)
    return [tables[key] for key, _ in SECTIONS] + [fig]
