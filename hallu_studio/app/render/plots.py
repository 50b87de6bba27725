"""The papers' overview plots as matplotlib figures, from browse rows (dicts).

Which plots there are is the metrics' word (``MetricSpec.plots``: a ``Plot`` names its kind, the per-response
values it reads and its captions); this module only knows how to draw each kind, so a metric that declares a plot
is drawn here with no change (``DRAWINGS``).

Every model has its own colour (``palette.model_colour``, a function of its name) in every plot;
legends sit outside the axes, on the right, so they never cover data; titles are left to the
page (the figure has none to collide with).
"""

from __future__ import annotations

import math
from collections import defaultdict
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Collection, Sequence

import matplotlib

matplotlib.use("Agg")  # the app renders off-screen; no display is assumed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from ...presentation import model_colour, short_model_label  # noqa: E402

if TYPE_CHECKING:
    from ...metrics.spec import MetricSpec, Plot

FIGSIZE = (6.4, 3.0)  # inches at 110 dpi: half of a 1,400 px page, legend included


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


def _column(spec: "MetricSpec", key: str) -> str:
    return f"{spec.name}.{key}"


def _axis(plot: "Plot", text: str | None = None) -> str:
    return f"{text or plot.axis} {'↓' if plot.lower_is_better else '↑'}"


def mean_by_figure(rows: Sequence[dict[str, Any]], spec: "MetricSpec", plot: "Plot") -> Figure:
    """Per model, the mean of one per-response value (× ``plot.scale``) per group of answers, as grouped bars
    (VISCON Fig. 4a: EMD per image domain; Reefknot's Halr per task and relation category)."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    column = _column(spec, plot.keys[0])
    scored = [r for r in rows if r.get(column) is not None]
    # Groups are compared on one task where the plot asks for it (VISCON describes images: captions), so that
    # short VQA answers in one group do not skew its mean.
    preferred = [r for r in scored if plot.prefer_task and r.get("task") == plot.prefer_task]
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in preferred or scored:
        group = " · ".join(str(r.get(f)) for f in plot.by if r.get(f) not in (None, ""))
        acc[_model(r)][group].append(float(r[column]))
    if not acc:
        return _empty(fig, ax, f"no {spec.family} scores yet")
    groups = sorted({g for m in acc.values() for g in m})
    _grouped_bars(ax, {m: {g: plot.scale * sum(v) / len(v) for g, v in gs.items()} for m, gs in acc.items()},
                  groups, _colours(rows))
    which = (f", {plot.prefer_task}s" if preferred else ", all tasks") if plot.prefer_task else ""
    ax.set_ylabel(_axis(plot, plot.axis + which), fontsize=8)
    return fig


def fit_alpha(lengths: Sequence[float], distances: Sequence[float],
              slope: Callable[[Any, Any], float | None] | None = None) -> float | None:
    """A plot's fitted slope over some points (by default VISCON's α, Table 3: the least-squares slope of total
    edit distance on response length); None when the points make no slope (fewer than two distinct lengths).

    >>> fit_alpha([10, 20, 40], [2, 4, 8])
    0.2
    >>> fit_alpha([10, 10], [2, 4]) is None
    True
    """
    if slope is None:
        from ...metrics.edit_distance import edit_slope_alpha as slope
    try:
        return slope(lengths, distances)
    except ValueError:
        return None


def scatter_figure(rows: Sequence[dict[str, Any]], spec: "MetricSpec", plot: "Plot") -> Figure:
    """Per model, one per-response value against another, each model's fitted slope in the legend
    (VISCON Fig. 5b: edit distance against response length, with α)."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    x_column, y_column = _column(spec, plot.keys[0]), _column(spec, plot.keys[1])
    acc: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in rows:
        if r.get(y_column) is not None and r.get(x_column):
            acc[_model(r)].append((float(r[x_column]), float(r[y_column])))
    if not acc:
        return _empty(fig, ax, f"no {spec.family} scores yet")
    colours = _colours(rows)
    for name, pts in sorted(acc.items()):
        fitted = fit_alpha([p[0] for p in pts], [p[1] for p in pts], plot.slope) if plot.slope else None
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=10, alpha=0.6, color=colours.get(name),
                   label=f"{name} ({plot.slope_name}={fitted:.2f})" if fitted is not None else name)
    ax.set_xlabel(plot.x_axis, fontsize=8)
    ax.set_ylabel(_axis(plot), fontsize=8)
    ax.tick_params(labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    _legend_outside(ax)
    return fig


def shares_figure(rows: Sequence[dict[str, Any]], spec: "MetricSpec", plot: "Plot") -> Figure:
    """Per model, each of some per-response counts summed, as a % of another count summed (Tri-HE: object and
    relation hallucinations as shares of all claims)."""
    fig, ax = plt.subplots(figsize=FIGSIZE)
    total = _column(spec, plot.total)
    acc: dict[str, list[float]] = defaultdict(lambda: [0.0] * (len(plot.keys) + 1))
    for r in rows:
        if r.get(total):
            a = acc[_model(r)]
            for i, key in enumerate(plot.keys):
                a[i] += float(r.get(_column(spec, key)) or 0)
            a[-1] += float(r[total])
    if not acc:
        return _empty(fig, ax, f"no {spec.family} scores yet")
    table = {m: {key: 100 * v[i] / v[-1] for i, key in enumerate(plot.keys)} for m, v in acc.items()}
    _grouped_bars(ax, table, list(plot.keys), _colours(rows))
    ax.set_ylabel(_axis(plot), fontsize=8)
    return fig


# A plot's kind (``Plot.kind``) -> how it is drawn: ``(rows, spec, plot) -> Figure``.
DRAWINGS: dict[str, Callable[[Sequence[dict[str, Any]], "MetricSpec", "Plot"], Figure]] = {
    "mean_by": mean_by_figure, "scatter": scatter_figure, "shares": shares_figure}


def overview_figures(metrics: Collection[str] | None = None
                     ) -> list[tuple[Callable[[Sequence[dict[str, Any]]], Figure], str, str, str]]:
    """``(make, caption, detail, family)`` of every registered metric's plots (or of ``metrics``'), in the registry's
    order; ``make(rows)`` draws one. A kind no drawing knows is an error naming the metric, not a plot left out."""
    from ...metrics.registry import metric_specs

    out = []
    for spec in metric_specs():
        if metrics is not None and spec.name not in metrics:
            continue
        for plot in spec.plots:
            if plot.kind not in DRAWINGS:
                raise ValueError(f"{spec.name} asks for a plot of kind {plot.kind!r}; known kinds: "
                                 f"{', '.join(DRAWINGS)}")
            out.append((partial(DRAWINGS[plot.kind], spec=spec, plot=plot), f"{spec.family}: {plot.caption}",
                        plot.detail, spec.family))
    return out


def missing_note(families: Sequence[str]) -> str:
    """The line under the plots naming each metric family with no scores to plot, once each, in order.

    >>> missing_note(["Tri-HE", "VISCON", "VISCON", "Reefknot"])
    'No scores to plot yet for: Tri-HE, VISCON, Reefknot.'
    >>> missing_note([])
    ''
    """
    names = list(dict.fromkeys(families))
    return f"No scores to plot yet for: {', '.join(names)}." if names else ""


def figures_html(rows: Sequence[dict[str, Any]], names: dict[str, str] | None = None,
                 metrics: Collection[str] | None = None) -> str:
    """The Overview's plots as inline PNG images with captions; plots without data are named, not drawn.
    ``names``: run id -> the run's name (``presentation.run_names``), so that two runs of a model plot apart;
    ``metrics``: the metrics that apply to the benchmark (the others' plots are neither drawn nor named as waiting:
    Reefknot on a benchmark without relation questions never gets scores)."""
    import base64

    from .palette import esc

    if names:
        rows = [{**r, "run_name": names.get(r.get("run_id"))} for r in rows]

    figures = overview_figures(metrics)
    shown, missing = [], []
    for make, caption, detail, family in figures:
        fig = make(rows)
        if not fig.axes[0].has_data():
            plt.close(fig)
            missing.append((family, caption))
            continue
        data = base64.b64encode(figure_png(fig)).decode("ascii")
        shown.append(f'<figure><figcaption>{esc(caption)} <span>· {esc(detail)}</span></figcaption>'
                     f'<img alt="{esc(caption)}" src="data:image/png;base64,{data}"/></figure>')
    # A family none of whose plots is drawn is named once; where another of its plots is drawn (VISCON's EMD
    # drawn, its edit plot waiting), the plot left out is named instead.
    left_out = {caption for _, caption in missing}
    blank = {family for family, _ in missing} - {family for _, c, _, family in figures if c not in left_out}
    text = missing_note([family if family in blank else caption for family, caption in missing])
    note = f'<p class="hs-notes">{esc(text)}</p>' if text else ""
    return f'<div class="hs-figs">{"".join(shown)}</div>{note}' if shown else note
