"""Which stored configuration of each metric is shown: one rule for the Overview, Browse, Inspect, the report,
the command-line leaderboard and the analyses.

A store holds each metric's scores under every configuration they were computed with (``metrics.keys``). The
rule: a metric's configuration in force is **the current settings' one where the store holds scores under it**;
where it holds none, the configuration with the most scores (ties: the one computed last) is shown instead, and
a note names it and says why (not scored yet under the current settings, or the current settings cannot build
the metric here). Scores under other configurations stay in the store, apart.

Configurations are named for people by metric and when their scores were computed, numbered per metric from
the oldest ("emd settings 2 · 23 Nov 17:40"); the key itself stays beside the name where a table has room.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping

from ..presentation import leaves, short_value

if TYPE_CHECKING:
    from ..config import Settings
    from ..metrics.keys import ConfigKeys
    from ..store import Store

CONCEPTS = "concepts"


def _when(computed_at: Any) -> str:
    try:
        return datetime.fromisoformat(str(computed_at)).strftime("%d %b %H:%M")
    except ValueError:
        return str(computed_at or "")


def _differences(configs: list[Any]) -> list[str]:
    """For each configuration, what sets it apart from the metric's others ("judge llm"; "no ground_cost" where
    the others have one), at most two settings; "" where it is not known (scores written before the store kept
    configurations)."""
    flat = [{**leaves(c.get("metric", {})), **leaves(c.get("extractor", {}), "extractor")}
            if isinstance(c, dict) else None for c in configs]
    if sum(f is not None for f in flat) < 2:
        return [""] * len(configs)
    out = []
    for f in flat:
        if f is None:
            out.append("")
            continue
        others = [g for g in flat if g is not None and g is not f]
        union = dict.fromkeys([*f, *(k for g in others for k in g)])
        differing = [k for k in union if k.split(".")[-1] not in ("metric", "version")
                     and any(g.get(k, None) != f.get(k, None) for g in others)]
        top = [k for k in differing if "." not in k]  # a nested part follows from a top-level one (ground_cost)
        shared = [k for k in top or differing if k in f and all(k in g for g in others)]  # judge graph / llm
        differing = shared or sorted(top or differing, key=lambda k: (k not in f, k.count("."), len(k)))
        out.append(", ".join(f"{k.split('.')[-1]} {short_value(f[k])}" if k in f else f"no {k.split('.')[-1]}"
                             for k in differing[:2]))
    return out


def config_labels(configs: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """``{(metric, config_key): "emd settings 1 · 23 Nov 17:40"}`` for ``Store.score_configs()`` rows; where the
    store knows what each configuration was made of (``config``), what sets it apart joins the name.

    >>> config_labels([{"metric": "emd", "config_key": "a", "computed_at": "2025-11-23 17:40:00"},
    ...                {"metric": "emd", "config_key": "b", "computed_at": "2025-11-24 09:00:00"}])[("emd", "b")]
    'emd settings 2 · 24 Nov 09:00'
    >>> config_labels([{"metric": "trihe", "config_key": "a", "computed_at": "2025-11-23 17:40:00",
    ...                 "config": {"metric": {"judge": "graph", "top_k": 3}}},
    ...                {"metric": "trihe", "config_key": "b", "computed_at": "2025-11-24 09:00:00",
    ...                 "config": {"metric": {"judge": "llm", "top_k": 3}}}])[("trihe", "b")]
    'trihe settings 2 (judge llm) · 24 Nov 09:00'
    """
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for row in configs:
        by_metric.setdefault(row["metric"], []).append(row)
    labels = {}
    for metric, rows in by_metric.items():
        rows = sorted(rows, key=lambda r: str(r["computed_at"] or ""))
        apart = _differences([r.get("config") for r in rows])
        for n, (row, diff) in enumerate(zip(rows, apart), start=1):
            numbered = f" {n}" if len(rows) > 1 else ""
            what = f" ({diff})" if diff else ""
            labels[(metric, row["config_key"])] = f"{metric} settings{numbered}{what} · {_when(row['computed_at'])}"
    return labels


def config_label(labels: Mapping[tuple[str, str], str], metric: str, key: str) -> str:
    """The name of one configuration; one not in ``labels`` (scored since they were read) by its key's start."""
    return labels.get((metric, key)) or f"{metric} settings {str(key)[:6]}"


@dataclass(frozen=True)
class Shown:
    """One metric's configuration in force: the key whose scores are shown, and how it relates to the current
    settings' key."""

    metric: str
    key: str | None  # the configuration shown; None: no score of this metric in the store
    current: str | None  # the current settings' key; None: they cannot build the metric here (``problem``)
    label: str = ""
    scores: int = 0
    problem: str | None = None

    @property
    def is_current(self) -> bool:
        return self.key is not None and self.key == self.current

    @property
    def why(self) -> str | None:
        """Why the configuration shown is not the current settings' one (None when it is, or nothing is shown)."""
        if self.key is None or self.is_current or (self.current is None and self.problem is None):
            return None  # nothing shown, the current one, or a metric no registered class names (nothing to build)
        return (f"the current settings cannot build it here ({self.problem})" if self.current is None
                else "the current settings' configuration is not scored yet (`hallu-studio score` computes it)")

    @property
    def shown_as(self) -> str:
        return f"{self.label} ({self.scores:,} scores)"

    @property
    def note(self) -> str | None:
        return f"{self.metric}: {self.why}; shown: {self.shown_as}" if self.why else None


@dataclass(frozen=True)
class InForce:
    """The configuration in force of every metric the store holds scores of (``configs_in_force``)."""

    shown: dict[str, Shown] = field(default_factory=dict)
    labels: dict[tuple[str, str], str] = field(default_factory=dict)

    def key(self, metric: str) -> str | None:
        shown = self.shown.get(metric)
        return shown.key if shown is not None else None

    def keys(self) -> dict[str, str]:
        """``{metric: config key}`` of every metric with scores (``concepts`` included)."""
        return {m: s.key for m, s in self.shown.items() if s.key is not None}

    def label(self, metric: str, key: str) -> str:
        name = config_label(self.labels, metric, key)
        return f"{name} (current settings)" if self.shown.get(metric) and self.shown[metric].current == key else name

    def notes(self, metrics: Any = None) -> list[str]:
        """The notes of the metrics (all, or those in ``metrics``) shown under another than the current settings'
        configuration."""
        # One note per reason, naming its metrics: after a settings change, one line rather than one per metric.
        by_why: dict[str, list[Shown]] = {}
        for m, s in self.shown.items():
            if s.why and m != CONCEPTS and (metrics is None or m in metrics):
                by_why.setdefault(s.why, []).append(s)
        return [group[0].note if len(group) == 1 else  # type: ignore[misc]
                f"{', '.join(s.metric for s in group)}: {why}; shown: {', '.join(s.shown_as for s in group)}"
                for why, group in by_why.items()]

    def fingerprint(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted(self.keys().items()))


def choose(configs: list[dict[str, Any]], current: "ConfigKeys") -> InForce:
    """The rule, on ``Store.score_configs()`` rows and the current settings' keys (a pure function).

    >>> from hallu_studio.metrics.keys import ConfigKeys
    >>> rows = [{"metric": "emd", "config_key": "old", "scores": 9, "computed_at": "2025-11-23 17:40:00"},
    ...         {"metric": "emd", "config_key": "new", "scores": 2, "computed_at": "2025-11-24 09:00:00"},
    ...         {"metric": "pope", "config_key": "p0", "scores": 5, "computed_at": "2025-11-23 17:40:00"}]
    >>> shown = choose(rows, ConfigKeys(keys={"emd": "new", "pope": "p1"}))
    >>> shown.key("emd"), shown.key("pope"), shown.notes()
    ('new', 'p0', ["pope: the current settings' configuration is not scored yet (`hallu-studio score` computes it); shown: pope settings · 23 Nov 17:40 (5 scores)"])
    """
    labels = config_labels(configs)
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for row in configs:
        by_metric.setdefault(row["metric"], []).append(row)
    shown: dict[str, Shown] = {}
    for metric, rows in by_metric.items():
        now = current.get(metric)
        hit = next((r for r in rows if r["config_key"] == now), None)
        if hit is None:  # the most scores; ties: the latest computed
            hit = max(rows, key=lambda r: (int(r["scores"] or 0), str(r["computed_at"] or "")))
        shown[metric] = Shown(metric, hit["config_key"], now, config_label(labels, metric, hit["config_key"]),
                              int(hit["scores"] or 0), current.problems.get(metric))
    return InForce(shown, labels)


def configs_in_force(store: "Store", settings: "Settings | None" = None) -> InForce:
    """The configuration in force of each metric in ``store`` under ``settings`` (default: the defaults)."""
    from ..config import Settings
    from ..metrics.keys import current_config_keys

    return choose(store.score_configs(), current_config_keys(settings if settings is not None else Settings()))
