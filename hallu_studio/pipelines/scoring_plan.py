"""What scoring stored responses would do, before it runs: per run and metric, how many responses the metric
applies to, how many are scored under the current settings already, and why the others do not apply.

The Run view's "score stored runs" and the Study view's "not scored yet" read it, and both start the same job
(``score_store(..., only=plan_response_ids(plan))``) on the responses it says are left. A response is *scored*
when the store holds its score under the configuration the current settings give (``metrics.keys``): what
``score_store`` would skip. Applicability is each metric's spec (``MetricSpec.not_applicable``).

>>> row = MetricPlan("r1", "trihe", responses=4, applicable=3, scored=1, not_applicable={"no graph": 1})
>>> row.to_score, row.status()
(2, '1 of 3 scored; 2 to score')
>>> MetricPlan("r1", "pope", 4, 0, 0, {"pope does not score caption samples": 4}).status()
'does not apply: pope does not score caption samples (4)'
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Collection, Sequence

if TYPE_CHECKING:
    from ..config import Settings
    from ..store import Store


@dataclass(frozen=True)
class MetricPlan:
    """One metric over one run's responses (those asked about: all of them, or some)."""

    run_id: str
    metric: str
    responses: int  # the run's responses asked about
    applicable: int  # those the metric scores
    scored: int  # applicable ones scored under the current settings' configuration
    not_applicable: dict[str, int] = field(default_factory=dict)  # why the others are not scored -> responses
    problem: str | None = None  # why the metric cannot be built under the current settings (then nothing is scored)
    todo: tuple[str, ...] = field(default=(), repr=False, compare=False)  # the response ids left to score

    @property
    def to_score(self) -> int:
        return 0 if self.problem else self.applicable - self.scored

    def status(self) -> str:
        """One line: scored, left, or why it does not apply."""
        if self.problem:
            return f"cannot be scored under the current settings: {self.problem}"
        if not self.applicable:
            return "does not apply: " + "; ".join(f"{why} ({n})" for why, n in self.not_applicable.items())
        if not self.to_score:
            return f"all {self.applicable} scored"
        return f"{self.scored} of {self.applicable} scored; {self.to_score} to score"


def scoring_plan(store: "Store", settings: "Settings", run_ids: Sequence[str],
                 metrics: Sequence[str] | None = None,
                 response_ids: Collection[str] | None = None) -> list[MetricPlan]:
    """Per run (in ``run_ids`` order) and metric (``metrics``, default every registered one, in registry order):
    what scoring would do. ``response_ids``: only these of the runs' responses are asked about (an imported
    study's judged responses)."""
    from ..metrics.keys import current_config_keys
    from ..metrics.registry import METRIC_NAMES, metric_spec

    names = list(metrics) if metrics else list(METRIC_NAMES)
    keys = current_config_keys(settings)
    scored = {m: store.scored_response_ids(m, keys.get(m)) if keys.get(m) else set() for m in names}
    wanted = set(response_ids) if response_ids is not None else None
    out: list[MetricPlan] = []
    for run_id in run_ids:
        responses = [r for r in store.iter_responses(run_id) if wanted is None or r.id in wanted]
        samples = store.get_samples(sorted({r.sample_id for r in responses}))
        for name in names:
            spec = metric_spec(name)
            why: Counter[str] = Counter()
            applicable: list[str] = []
            for r in responses:
                sample = samples.get(r.sample_id)
                reason = "its sample is not in the store" if sample is None else spec.not_applicable(sample)
                if reason is None:
                    applicable.append(r.id)
                else:
                    why[reason] += 1
            done = [rid for rid in applicable if rid in scored[name]]
            todo = tuple(rid for rid in applicable if rid not in scored[name])
            out.append(MetricPlan(run_id, name, len(responses), len(applicable), len(done),
                                  dict(why.most_common()), keys.problems.get(name), todo))
    return out


def plan_response_ids(plan: Sequence[MetricPlan]) -> list[str]:
    """Every response some row of ``plan`` leaves to score (each once, in plan order).

    >>> plan_response_ids([MetricPlan("r", "a", 2, 2, 0, todo=("x", "y")), MetricPlan("r", "b", 2, 1, 0, todo=("y",))])
    ['x', 'y']
    """
    return list(dict.fromkeys(rid for row in plan if row.to_score for rid in row.todo))


def plan_metrics(plan: Sequence[MetricPlan]) -> list[str]:
    """The metrics some row of ``plan`` leaves responses to (in plan order)."""
    return list(dict.fromkeys(row.metric for row in plan if row.to_score))


def why_not_applicable(plan: Sequence[MetricPlan]) -> dict[str, str | None]:
    """Per metric of ``plan``: None when it applies to some response, else why it applies to none (its most
    frequent reason, or the settings problem that keeps it from being built).

    >>> why_not_applicable([MetricPlan("r", "a", 1, 0, 0, {"no graph": 1}), MetricPlan("s", "a", 1, 1, 0),
    ...                     MetricPlan("r", "b", 2, 0, 0, {"b does not score yes_no samples": 2})])
    {'a': None, 'b': 'b does not score yes_no samples'}
    """
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    applies: dict[str, bool] = {}
    for row in plan:
        applies[row.metric] = applies.get(row.metric, False) or (bool(row.applicable) and not row.problem)
        if row.problem:
            reasons[row.metric][f"cannot be built under the current settings: {row.problem}"] += 1
        reasons[row.metric].update(row.not_applicable)
    return {m: None if ok else (reasons[m].most_common(1)[0][0] if reasons[m] else "no responses")
            for m, ok in applies.items()}
