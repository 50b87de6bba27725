"""The papers' overview plots as matplotlib figures, from browse rows (dicts).

Every model has its own colour (``palette.model_colour``, a function of its name) in every plot;
legends sit outside the axes, on the right, so they never cover data; titles are left to the
page (the figure has none to collide with).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")  # the app renders off-screen; no display is assumed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ...presentation import model_colour, short_model_label  # noqa: E402

FIGSIZE = (6.4, 3.0)  # inches at 110 dpi: half of a 1,400 px page, legend included
# The per-response values these plots read besides Browse's columns (``columns.all_keys``).
PLOT_COLUMNS: tuple[str, ...] = ("edit.distance", "edit.words", "trihe.n_triplets", "trihe.object", "trihe.relation")


def _model(r: dict[str, Any]) -> str:
    """A row's legend label: its run's name (``run_name``, set by ``figures_html``) or its model's short name."""
    return short_model_label(r.get("model"), r.get("synthetic"), name=r.get("run_name"))


def _colours(rows: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Legend label -> the model's colour."""
    return {_model(r): model_colour(r.get("model")) for r in rows}


def _legend_outside(ax: Any) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False,
                  borderaxespad=0.0)


def figure_png(fig: Figure, dpi: int = 110) -> bytes:
    """The figure as PNG, cropped to what is drawn (the outside legend included), then closed."""
    import io

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.08)
    finally:
        plt.close(fig)
    return buf.getvalue()


def _empty(fig: Figure, ax: Any, text: str) -> Figure:
    ax.text(0.5, 0.5, text, ha="center", va="center", color="#777")
    ax.set_axis_off()
    return fig


def _grouped_bars(ax: Any, table: dict[str, dict[str, float]], groups: list[str], colours: dict[str, str]) -> None:
    """One bar per model (series, in its colour) within each group on the x axis; legend outside."""
    series = sorted(table)
    width = 0.8 / max(1, len(series))
    for k, name in enumerate(series):
        xs = [i + k * width for i in range(len(groups))]
        ax.bar(xs, [table[name].get(g, math.nan) for g in groups], width=width, label=name, color=colours.get(name))
    rotate = len(groups) > 4 or max((len(g) for g in groups), default=0) > 10
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(groups))], groups, rotation=30 if rotate else 0,
                  ha="right" if rotate else "center", fontsize=8)
    ax.tick_params(axis="y", labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    _legend_outside(ax)


def emd_by_domain_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Mean EMD (×100) per image domain and model (VISCON Fig. 4a)."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    # Domains are compared on one task: captions where there are any (VISCON describes images),
    # so that short VQA answers in the original domain do not skew its mean.
    scored = [r for r in rows if r.get("emd.total") is not None]
    captions = [r for r in scored if r.get("task") == "caption"]
    for r in captions or scored:
        acc[_model(r)][str(r.get("domain"))].append(float(r["emd.total"]))
    if not acc:
        return _empty(fig, ax, "no EMD scores yet")
    domains = sorted({d for m in acc.values() for d in m})
    _grouped_bars(ax, {m: {d: sum(v) / len(v) for d, v in ds.items()} for m, ds in acc.items()}, domains,
                  _colours(rows))
    ax.set_ylabel(f"mean EMD ×100, {'captions' if captions else 'all tasks'} ↓", fontsize=8)
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
    fig, ax = plt.subplots(figsize=FIGSIZE)
    acc: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        if r.get("edit.distance") is not None and r.get("edit.words"):
            acc[_model(r)].append((float(r["edit.words"]), float(r["edit.distance"])))
    if not acc:
        return _empty(fig, ax, "no Evaluate-by-Edit scores yet")
    colours = _colours(rows)
    for name, pts in sorted(acc.items()):
        alpha = fit_alpha([p[0] for p in pts], [p[1] for p in pts])
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, alpha=0.6, color=colours.get(name),
                   label=f"{name} (α={alpha:.2f})" if alpha is not None else name)
    ax.set_xlabel("response length (words)", fontsize=8)
    ax.set_ylabel("edit distance (words) ↓", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    _legend_outside(ax)
    return fig


def object_relation_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Tri-HE object and relation hallucination rates (share of triplets) per model."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    acc: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for r in rows:
        if r.get("trihe.n_triplets"):
            a = acc[_model(r)]
            a[0] += float(r.get("trihe.object") or 0)
            a[1] += float(r.get("trihe.relation") or 0)
            a[2] += float(r["trihe.n_triplets"])
    if not acc:
        return _empty(fig, ax, "no Tri-HE scores yet")
    table = {m: {"object": 100 * v[0] / v[2], "relation": 100 * v[1] / v[2]} for m, v in acc.items()}
    _grouped_bars(ax, table, ["object", "relation"], _colours(rows))
    ax.set_ylabel("hallucinated triplets (%) ↓", fontsize=8)
    return fig


def halr_figure(rows: Sequence[dict[str, Any]]) -> Figure:
    """Reefknot's Halr (% hallucinated answers) per task × relation category and model."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r.get("reefknot.hallucinated") is not None:
            category = r.get("relation_category")
            acc[_model(r)][f"{r.get('task')} · {category}" if category else str(r.get("task"))].append(
                float(r["reefknot.hallucinated"]))
    if not acc:
        return _empty(fig, ax, "no Reefknot scores yet")
    groups = sorted({g for m in acc.values() for g in m})
    _grouped_bars(ax, {m: {g: 100 * sum(v) / len(v) for g, v in gs.items()} for m, gs in acc.items()}, groups,
                  _colours(rows))
    ax.set_ylabel("Halr (%) ↓", fontsize=8)
    return fig


# (figure, caption, what it shows) in page order.
OVERVIEW_FIGURES: tuple[tuple[Any, str, str], ...] = (
    (object_relation_figure, "Tri-HE: object vs relation hallucination", "share of each model's triplets"),
    (emd_by_domain_figure, "VISCON: EMD per image domain",
     "Fig. 4a; each bar the mean over a model's captions of one domain (the table's EMD: over all its answers); "
     "lower is closer to the reference"),
    (edit_vs_length_figure, "VISCON: edit distance vs length", "Fig. 5b; α is the per-model slope"),
    (halr_figure, "Reefknot: Halr by task and relation category", "hallucinated answers"),
)


def figures_html(rows: Sequence[dict[str, Any]], names: dict[str, str] | None = None) -> str:
    """The Overview's plots as inline PNG images with captions; plots without data are named, not drawn.
    ``names``: run id -> the run's name (``presentation.run_names``), so that two runs of a model plot apart."""
    import base64

    from .palette import esc

    if names:
        rows = [{**r, "run_name": names.get(r.get("run_id"))} for r in rows]

    shown, missing = [], []
    for make, caption, detail in OVERVIEW_FIGURES:
        fig = make(rows)
        if not fig.axes[0].has_data():
            plt.close(fig)
            missing.append(caption)
            continue
        data = base64.b64encode(figure_png(fig)).decode("ascii")
        shown.append(f'<figure><figcaption>{esc(caption)} <span>· {esc(detail)}</span></figcaption>'
                     f'<img alt="{esc(caption)}" src="data:image/png;base64,{data}"/></figure>')
    note = (f'<p class="hs-notes">Not drawn, no scores for them here: {esc("; ".join(missing))}.</p>'
            if missing else "")
    return f'<div class="hs-figs">{"".join(shown)}</div>{note}' if shown else note
