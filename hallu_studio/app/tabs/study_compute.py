"""The Study tab's tables and scatter plot, from ``hallu_studio.studies`` (no statistics computed here)."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from ...studies import collect
from ..context import AppContext
from ..config_names import config_label, config_labels
from ..render import records_table_html
from ..render.palette import esc
from ..render.tables import cell_text, readable_number

SECTIONS: tuple[tuple[str, str], ...] = (
    ("correlations", "metric vs human ratings (Pearson, Spearman, Kendall with bootstrap CIs by image)"),
    ("agreement", "agreement between annotators (Krippendorff's alpha)"),
    ("judges", "judge accuracy and confusion against human corrections"),
    ("probes", "detection rate of each metric on the probes' injected hallucinations"),
    ("preferences", "pairwise A/B preferences with Bradley–Terry strengths"),
)


CORRELATION_NOTE = ("not defined: the metric's values (or the ratings) do not vary across these responses, "
                    "or too few responses are rated")
KAPPA_NOTE = "not defined: the judge or the people used only one verdict, so chance agreement is total"
ALPHA_NOTE = "not defined: fewer than two annotators rated the same response, or every rating is the same"


def _interval(value: float, low: float, high: float) -> str:
    """"0.412 [0.20, 0.58]": the estimate with its 95% bootstrap interval (or "n/a" where undefined)."""
    if any(isinstance(v, float) and math.isnan(v) for v in (value, low, high)):
        return cell_text(value) if not (isinstance(value, float) and math.isnan(value)) else "n/a"
    return f"{readable_number(value)} [{readable_number(low)}, {readable_number(high)}]"


def _correlations_html(ctx: AppContext, labels: dict[tuple[str, str], str]) -> str:
    rows = []
    for r in collect.correlation_table(ctx.store):
        rows.append({"metric": r["metric"], "value": r["value"],
                     "configuration": config_label(labels, r["metric"], r["config_key"]),
                     "responses": r["n"], "images": r["clusters"],
                     **{name.capitalize() + " (95% CI)": _interval(r[name], r[f"{name}_low"], r[f"{name}_high"])
                        for name in ("pearson", "spearman", "kendall")}})
    note = ('<p class="hs-note">Human ratings run 1–5, higher = less hallucination: a metric where higher is '
            'worse should correlate negatively. n/a: ' + esc(CORRELATION_NOTE) + '.</p>') if rows else ""
    return records_table_html(rows, empty="no human ratings yet (rate responses in the Annotate view)") + note


def _agreement_html(ctx: AppContext) -> str:
    a = collect.annotator_agreement(ctx.store)
    row = {"Krippendorff's α": a.get("alpha"), "level": a.get("level"), "annotators": a.get("annotators"),
           "responses rated": a.get("items"), "rated by two or more": a.get("items_rated_twice")}
    return records_table_html([row], undefined_note=ALPHA_NOTE)


def _judges_html(ctx: AppContext, labels: dict[tuple[str, str], str]) -> str:
    table = collect.judge_accuracy_table(ctx.store)
    rows, confusions = [], []
    for name, acc in table.items():
        judge, _, key = name.partition("@")
        title = f"{judge} ({config_label(labels, 'trihe', key)})" if key else judge
        rows.append({"judge": title, "triplets corrected": acc.n, "accuracy": acc.accuracy,
                     "binary accuracy": acc.binary_accuracy, "Cohen's κ": acc.kappa})
        conf = [{"human ↓ · judge →": label, **{j: acc.confusion[i][k] for k, j in enumerate(acc.labels)}}
                for i, label in enumerate(acc.labels)] if acc.confusion else []
        confusions.append(f"<p><b>{esc(title)}</b>: confusion (rows: the people's verdict)</p>"
                          + records_table_html(conf))
    return (records_table_html(rows, empty="no human triplet corrections yet", undefined_note=KAPPA_NOTE)
            + "".join(confusions))


def _probes_html(ctx: AppContext, labels: dict[tuple[str, str], str]) -> str:
    rows = []
    for r in collect.probe_detection_table(ctx.store):
        row = {k: v for k, v in vars(r).items() if k not in ("by_type", "config_key")}
        if r.config_key:
            row["configuration"] = config_label(labels, r.metric, r.config_key)
        row["by type (injected / detected)"] = r.by_type
        rows.append(row)
    return records_table_html([{k.replace("_", " "): v for k, v in row.items()} for row in rows],
                              empty="no probe runs with injected hallucinations")


def _preferences_html(ctx: AppContext) -> str:
    rows = []
    for aspect in ("overall", "precision", "recall"):
        for model, s in sorted(collect.preference_strengths(ctx.store, aspect).items(), key=lambda kv: -kv[1].strength):
            rows.append({"aspect": aspect, "model": model, "Bradley–Terry strength": s.strength, "wins": s.wins,
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
    labels = config_labels(ctx.store)
    return {
        "correlations": _correlations_html(ctx, labels),
        "agreement": _agreement_html(ctx),
        "judges": _judges_html(ctx, labels),
        "probes": _probes_html(ctx, labels),
        "preferences": _preferences_html(ctx),
    }


def compute(ctx: AppContext) -> list[Any]:
    tables = all_tables_html(ctx)
    fig = scatter_figure(ctx)
    plt.close(fig)
    return [tables[key] for key, _ in SECTIONS] + [fig]
