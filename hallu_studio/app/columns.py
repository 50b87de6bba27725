"""The metric columns the app shows, and which direction is worse for each."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricColumn:
    key: str  # "metric.value_key" as in the store's browse query
    title: str
    higher_is_worse: bool


# Headline columns of Browse and the leaderboard, in display order.
HEADLINE_COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("emd.total", "EMD", True),
    MetricColumn("edit.per_word", "edits/word", True),
    MetricColumn("trihe.hallucinated", "halluc. claims (Tri-HE)", True),
    MetricColumn("halfscore.f", "HalF F", False),
    MetricColumn("reefknot.hallucinated", "Reefknot halluc.", True),
    MetricColumn("chair.chair_i_item", "CHAIR-i", True),
)
# Extra values the overview plots need.
PLOT_COLUMNS: tuple[str, ...] = ("edit.distance", "edit.words", "trihe.n_triplets", "trihe.object", "trihe.relation")
BY_KEY = {c.key: c for c in HEADLINE_COLUMNS}


# Browse opens on real failures: the responses with the most hallucinated claims first
# (EMD ranks short correct answers high, since a one-word answer leaves the whole scene unmatched).
DEFAULT_SORT = "trihe.hallucinated"


def metric_of(key: str) -> str:
    """The metric a column belongs to.

    >>> metric_of("emd.total")
    'emd'
    """
    return key.split(".", 1)[0]


def headline_keys() -> list[str]:
    return [c.key for c in HEADLINE_COLUMNS]


def all_keys() -> list[str]:
    return headline_keys() + list(PLOT_COLUMNS)
