"""Confidence and hallucination (Reefknot Fig. 7-9): entropy buckets and answer probability across layers.

- Hallucination rate by entropy bucket of the answer (Reefknot eq. 2, bits: the
  entropy over the answer candidates stored in the ``reefknot`` score or the
  response's ``answer`` signal), per model.
- From runs that recorded the logit lens (``--logit-lens K``): the probability of
  the answer's token at each layer, averaged over answers the model hallucinated and
  over answers it did not. A token outside a layer's top K counts as 0 (a lower bound).

Worked example: entropies 0.1, 0.15, 0.5, 0.55, 0.9 with hallucinated = no, no, yes,
no, yes and edges 0, 0.3, 0.6, 1.0: bucket [0, 0.3) has 2 answers, rate 0; [0.3, 0.6)
2, rate 0.5; [0.6, 1.0] 1, rate 1.

>>> [(b.label, b.answers, b.rate) for b in entropy_buckets([0.1, 0.15, 0.5, 0.55, 0.9],
...                                                      [False, False, True, False, True], (0, 0.3, 0.6, 1.0))]
[('[0, 0.3)', 2, 0.0), ('[0.3, 0.6)', 2, 0.5), ('[0.6, 1]', 1, 1.0)]
>>> answer_layer_probs({"layers": [{"layer": 1, "tokens": ["No", "▁yes"], "probs": [0.6, 0.3]},
...                                {"layer": 2, "tokens": ["yes", "Yes"], "probs": [0.5, 0.4]}]}, "yes")
[0.3, 0.9]
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...config import Settings
from .common import run_colours, run_labels, select_runs
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "confidence-layers"
TITLE = "Hallucination by answer entropy, answer probability across layers (Reefknot Fig. 7-9)"
COLUMNS = ["model", "bucket", "answers", "hallucinated", "rate"]
DEFAULT_EDGES: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0)  # bits; MCQ (4 choices) reaches 2


@dataclass(frozen=True)
class Bucket:
    label: str
    answers: int
    hallucinated: int

    @property
    def rate(self) -> float:
        return self.hallucinated / self.answers if self.answers else math.nan


def entropy_buckets(entropies: Sequence[float], hallucinated: Sequence[bool],
                    edges: Sequence[float] = DEFAULT_EDGES) -> list[Bucket]:
    """Answers per half-open bucket ``[e_i, e_i+1)`` (the last one closed); values outside are left out."""
    if len(entropies) != len(hallucinated):
        raise ValueError(f"got {len(entropies)} entropies but {len(hallucinated)} hallucination flags")
    if len(edges) < 2 or list(edges) != sorted(edges):
        raise ValueError(f"bucket edges must be at least two increasing numbers, got {list(edges)}")
    counts = [[0, 0] for _ in range(len(edges) - 1)]
    for e, h in zip(entropies, hallucinated):
        if e is None or math.isnan(e) or e < edges[0] or e > edges[-1]:
            continue
        i = min(int(np.searchsorted(edges, e, side="right")) - 1, len(edges) - 2)
        counts[i][0] += 1
        counts[i][1] += bool(h)
    out = []
    for i, (n, h) in enumerate(counts):
        close = "]" if i == len(counts) - 1 else ")"
        out.append(Bucket(f"[{edges[i]:g}, {edges[i + 1]:g}{close}", n, h))
    return out


def _token_text(token: str) -> str:
    # SentencePiece marks a leading space with "▁", GPT-2 style BPE with "Ġ".
    return token.replace("▁", " ").replace("Ġ", " ").strip().lower()


def answer_layer_probs(lens: Any, answer: str) -> list[float] | None:
    """The answer token's probability at each layer of a recorded logit lens (None when unreadable).

    Reads the transformers backend's ``{"layers": [{"layer", "tokens", "probs"}]}`` (or a
    list of them, one per position: the first is used) and ``{candidate: [p per layer]}``.
    """
    word = (answer or "").strip().lower()
    if not word or lens is None:
        return None
    if isinstance(lens, list):
        lens = lens[0] if lens else None
    if not isinstance(lens, dict):
        return None
    if "layers" in lens:
        out = []
        for layer in lens["layers"]:
            out.append(float(sum(p for t, p in zip(layer.get("tokens") or [], layer.get("probs") or [])
                                 if _token_text(str(t)) == word)))
        return out or None
    for key, probs in lens.items():
        if str(key).strip().lower() == word and isinstance(probs, list):
            return [float(p) for p in probs]
    return None


def mean_curve(curves: Sequence[Sequence[float]]) -> list[float]:
    """Layer-wise mean of curves (shorter ones are left out of the deeper layers)."""
    depth = max((len(c) for c in curves), default=0)
    return [float(np.mean([c[i] for c in curves if len(c) > i])) for i in range(depth)]


def _entropy(values: dict[str, Any], signals: dict[str, Any]) -> float | None:
    e = values.get("entropy")
    if e is None:
        e = (signals.get("answer") or {}).get("entropy")
    return float(e) if isinstance(e, (int, float)) and not isinstance(e, bool) else None


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            edges: Sequence[float] = DEFAULT_EDGES, **_: Any) -> AnalysisResult:
    notes = ["entropy in bits over the answer candidates (yes/no: 0-1, four options: 0-2)"]
    selected = select_runs(store, benchmark, runs)
    labels = run_labels(selected)
    by_model: dict[str, tuple[list[float], list[bool]]] = defaultdict(lambda: ([], []))
    curves: dict[bool, list[list[float]]] = {True: [], False: []}
    configs: set[str] = set()
    for run in selected:
        for response, score in store.iter_scores("reefknot", run_id=run["id"], with_evidence=True):
            hallucinated = score.values.get("hallucinated")
            if hallucinated is None:
                continue
            configs.add(score.config_key)
            e = _entropy(score.values, response.signals or {})
            if e is not None:
                by_model[labels[run["id"]]][0].append(e)
                by_model[labels[run["id"]]][1].append(bool(hallucinated))
            curve = answer_layer_probs((response.signals or {}).get("logit_lens"),
                                       str(score.evidence.get("parsed_answer") or ""))
            if curve:
                curves[bool(hallucinated)].append(curve)
    if len(configs) > 1:
        notes.append(f"reefknot scores under {len(configs)} configurations are pooled")
    rows = []
    for model, (entropies, flags) in sorted(by_model.items()):
        for b in entropy_buckets(entropies, flags, edges):
            if not b.answers:
                continue  # an empty bucket has no rate to show
            rows.append({"model": model, "bucket": b.label, "answers": b.answers, "hallucinated": b.hallucinated,
                         "rate": b.rate})
    n_lens = len(curves[True]) + len(curves[False])
    if n_lens:
        notes.append(f"logit lens recorded for {n_lens} answers ({len(curves[True])} hallucinated)")
    else:
        notes.append("no run recorded the logit lens (run a transformers model with --logit-lens K): "
                     "the layer curves are not drawn")
    if not rows and not n_lens:
        return empty_result(NAME, TITLE, COLUMNS, "no Reefknot scores with answer entropy in the selected runs: "
                            "score yes/no or MCQ runs with `hallu-studio score --metrics reefknot`", notes)
    colours = {labels[run_id]: colour for run_id, colour in run_colours(selected).items()}
    return AnalysisResult(NAME, TITLE, COLUMNS, rows, _figure(rows, curves, colours), notes)


def _lower_edge(label: str) -> float:
    """``"[0.3, 0.6)"`` -> 0.3"""
    return float(label.lstrip("[(").split(",")[0])


def _figure(rows: list[dict[str, Any]], curves: dict[bool, list[list[float]]], colours: dict[str, str]) -> Any:
    with_lens = bool(curves[True] or curves[False])
    fig, axes = figure(2 if with_lens else 1)
    ax = axes[0]
    models = sorted({r["model"] for r in rows})
    # Rows come model by model, so a bucket may first appear late: order them by their lower edge.
    buckets = sorted(dict.fromkeys(r["bucket"] for r in rows), key=_lower_edge)
    for model in models:
        rates = {r["bucket"]: r["rate"] for r in rows if r["model"] == model}
        ax.plot(range(len(buckets)), [rates.get(b, math.nan) for b in buckets], marker="o", label=model,
                color=colours.get(model))
    ax.set_xticks(range(len(buckets)), buckets, rotation=30, fontsize=7)
    ax.set_xlabel("answer entropy (bits)")
    ax.set_ylabel("hallucination rate")
    if models:
        ax.legend(fontsize=6)
    if with_lens:
        for flag, name in ((True, "hallucinated"), (False, "not hallucinated")):
            if curves[flag]:
                curve = mean_curve(curves[flag])
                axes[1].plot(range(1, len(curve) + 1), curve, marker=".", label=f"{name} ({len(curves[flag])})")
        axes[1].set_xlabel("layer")
        axes[1].set_ylabel("mean probability of the answer token")
        axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig
