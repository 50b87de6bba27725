"""Names people can read for scoring configurations, instead of their 16-character keys.

A configuration is named by its metric and when its scores were computed, numbered per
metric from the oldest ("emd settings 2 · 23 Nov 17:40"); the key itself stays on the
Settings view, beside the name, for anyone who needs it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..store import Store


def _when(computed_at: Any) -> str:
    try:
        return datetime.fromisoformat(str(computed_at)).strftime("%d %b %H:%M")
    except ValueError:
        return str(computed_at or "")


def config_labels(store: Store) -> dict[tuple[str, str], str]:
    """``{(metric, config_key): "emd settings 1 · 23 Nov 17:40"}`` for every configuration in the store."""
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for row in store.score_configs():
        by_metric.setdefault(row["metric"], []).append(row)
    labels = {}
    for metric, rows in by_metric.items():
        rows.sort(key=lambda r: str(r["computed_at"] or ""))
        for n, row in enumerate(rows, start=1):
            numbered = f" {n}" if len(rows) > 1 else ""
            labels[(metric, row["config_key"])] = f"{metric} settings{numbered} · {_when(row['computed_at'])}"
    return labels


def config_label(labels: dict[tuple[str, str], str], metric: str, key: str) -> str:
    """The name of one configuration; one not in ``labels`` (scored since they were read) by its key's start."""
    return labels.get((metric, key)) or f"{metric} settings {str(key)[:6]}"
