"""Per benchmark, the runs ranked best first on the metrics' headline numbers: the Overview, the report and the
command-line leaderboard rank by this one rule.

``rank_benchmark`` is a pure function of ``studies.leaderboard`` rows (of the configurations in force,
``studies.in_force``), the runs (with their response counts) and which metrics apply to which of a run's
responses; ``benchmark_boards`` reads those from the store. The numbers themselves (micro-averages with bootstrap
intervals resampled by image, ``N_BOOT`` replicates) are ``studies.leaderboard``'s, not computed here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..metrics.spec import MetricSpec, Number
from ..presentation import model_label, run_names, short_model_label, with_interval
from .leaderboard import N_BOOT

if TYPE_CHECKING:
    from ..store import Store
    from .in_force import InForce

GUIDE = "docs/guide/metrics-and-weaknesses.md"


@dataclass(frozen=True)
class Headline:
    """One metric's headline number as the Overview ranks and shows it; everything about it is its spec's."""

    spec: MetricSpec

    @property
    def metric(self) -> str:
        return self.spec.name

    @property
    def number(self) -> Number:
        return self.spec.headline

    @property
    def key(self) -> str:
        return self.number.key

    @property
    def family(self) -> str:
        return self.spec.family

    @property
    def name(self) -> str:
        return self.number.name

    @property
    def unit(self) -> str:
        return self.number.unit

    @property
    def lower_is_better(self) -> bool:
        return self.number.lower_is_better

    @property
    def meaning(self) -> str:
        return self.number.meaning

    @property
    def misleads(self) -> str:
        return self.number.misleads

    @property
    def column(self) -> str:
        return self.spec.column(self.number)

    @property
    def arrow(self) -> str:
        return self.number.arrow

    @property
    def tooltip(self) -> str:
        return (f"{self.spec.title(self.number)} ({self.unit}, {self.number.better}): {self.meaning} "
                f"Misleads: {self.misleads} ({GUIDE})")


def headlines() -> tuple[Headline, ...]:
    """Every registered metric's headline, in the registry's order: the ranking rule ranks a benchmark's runs by
    the first of these it has numbers for. Read from the registry on each call, so a metric registered later
    (a plugin, a test) ranks too."""
    from ..metrics.registry import metric_names, metric_spec

    return tuple(Headline(metric_spec(m)) for m in metric_names())


def families() -> tuple[str, ...]:
    """The headlines' families (papers), in registry order."""
    return tuple(dict.fromkeys(h.family for h in headlines()))


@dataclass
class Cell:
    """One run's number for one headline: value and interval, or why there is none."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    scored: int = 0  # responses scored by this metric
    applicable: int = 0  # the run's responses this metric applies to
    note: str | None = None  # why there is no value ("not scored yet", ...)

    @property
    def partial(self) -> bool:
        return 0 < self.scored < self.applicable


@dataclass
class RankedRun:
    run_id: str
    model: str
    synthetic: bool
    responses: int
    cells: dict[str, Cell] = field(default_factory=dict)  # Headline.column -> Cell
    rank: int | None = None  # None: not ranked (no value on the ranking headline)
    name: str = ""  # what people read: ``presentation.run_names`` over the board's runs (unique on the board)


@dataclass
class BenchmarkBoard:
    benchmark: str
    headlines: list[Headline]  # the ones that apply to this benchmark
    not_applicable: dict[str, str]  # family -> why none of its metrics applies here
    runs: list[RankedRun]
    ranked_by: Headline | None
    problems: list[str] = field(default_factory=list)  # metrics that could not be aggregated
    # Which configuration each headline's numbers are of (``InForce.label``), and a note for each shown under
    # another than the current settings' one (``InForce.notes``).
    configs: dict[str, str] = field(default_factory=dict)
    config_notes: list[str] = field(default_factory=list)

    @property
    def families(self) -> list[str]:
        return [f for f in families() if any(h.family == f for h in self.headlines)]


def rank_benchmark(benchmark: str, rows: Sequence[Mapping[str, Any]], runs: Sequence[Mapping[str, Any]],
                   applicable: Mapping[str, Mapping[str, int]], reasons: Mapping[str, str]) -> BenchmarkBoard:
    """Runs of one benchmark ranked best first.

    ``rows``: leaderboard rows of this benchmark, one configuration per metric (the one in force);
    ``runs``: ``Store.list_runs`` dicts (with
    ``responses``); ``applicable[metric][run_id]``: how many of the run's responses the metric
    applies to; ``reasons[metric]``: why a metric applies to none of the benchmark's samples.

    >>> h = [{"run_id": r, "model": m, "synthetic": False, "metric": "emd", "config_key": "k", "key": "total",
    ...       "value": v, "low": v - 1, "high": v + 1, "n": 4} for r, m, v in (("a", "A", 20.0), ("b", "B", 10.0))]
    >>> runs = [{"id": "a", "model": "A", "synthetic": False, "responses": 4},
    ...         {"id": "b", "model": "B", "synthetic": False, "responses": 8}]
    >>> board = rank_benchmark("x", h, runs, {"emd": {"a": 4, "b": 8}}, {"trihe": "no scene graphs"})
    >>> [(r.model, r.rank, r.cells["emd.total"].partial) for r in board.runs], board.ranked_by.name
    ([('B', 1, True), ('A', 2, False)], 'EMD')
    """
    every = headlines()
    shown = [h for h in every if h.metric not in reasons]
    not_applicable: dict[str, str] = {}
    for family in families():
        members = [h for h in every if h.family == family]
        if all(h.metric in reasons for h in members):
            not_applicable[family] = "; ".join(dict.fromkeys(reasons[h.metric] for h in members))
    board_runs = []
    names = run_names(runs)
    for run in runs:
        rr = RankedRun(run["id"], str(run["model"]), bool(run.get("synthetic")), int(run.get("responses") or 0),
                       name=names[str(run["id"])])
        for h in shown:
            found = [r for r in rows if r["run_id"] == run["id"] and r["metric"] == h.metric]
            total = int(applicable.get(h.metric, {}).get(run["id"], 0))
            scored = max((int(r.get("n") or 0) for r in found), default=0)
            hit = next((r for r in found if r["key"] == h.key and r.get("split") is None
                        and r.get("value") is not None), None)
            if hit is not None:
                cell = Cell(float(hit["value"]), hit.get("low"), hit.get("high"), scored, total)
            elif not rr.responses:
                cell = Cell(note="no responses yet")
            elif total == 0:
                cell = Cell(note="no response of this run is of a kind it scores")
            elif scored:
                cell = Cell(scored=scored, applicable=total, note="undefined on these answers")
            else:
                cell = Cell(applicable=total, note="not scored yet")
            rr.cells[h.column] = cell
        board_runs.append(rr)
    ranked_by = next((h for h in shown if any(r.cells[h.column].value is not None for r in board_runs)), None)

    def order(r: RankedRun) -> tuple[Any, ...]:
        value = r.cells[ranked_by.column].value if ranked_by else None
        if value is None:
            return (1, 0.0, display_key(r))
        return (0, value if ranked_by.lower_is_better else -value, display_key(r))

    board_runs.sort(key=order)
    for i, r in enumerate(x for x in board_runs if ranked_by and x.cells[ranked_by.column].value is not None):
        r.rank = i + 1
    return BenchmarkBoard(benchmark, shown, not_applicable, board_runs, ranked_by)


def applicability(store: "Store", benchmark: str) -> tuple[dict[str, dict[str, int]], dict[str, str]]:
    """Per metric, how many of each run's responses it applies to; and why a metric applies to none."""
    from ..metrics.registry import METRIC_NAMES, not_applicable_reason

    applies: dict[str, set[str]] = {m: set() for m in METRIC_NAMES}
    why: dict[str, Counter[str]] = {m: Counter() for m in METRIC_NAMES}
    for sample in store.iter_samples(benchmark):
        for metric in METRIC_NAMES:
            reason = not_applicable_reason(metric, sample)
            if reason is None:
                applies[metric].add(sample.id)
            else:
                why[metric][reason] += 1
    counts: dict[str, dict[str, int]] = {m: {} for m in METRIC_NAMES}
    for run in store.list_runs(benchmark):
        answered = store.done_sample_ids(run["id"])
        for metric, ids in applies.items():
            counts[metric][run["id"]] = len(answered & ids)
    reasons = {m: why[m].most_common(1)[0][0] for m in METRIC_NAMES if not applies[m] and why[m]}
    return counts, reasons


def _headline_rows(store: "Store", benchmark: str, n_boot: int, configs: dict[str, str]
                   ) -> tuple[list[dict[str, Any]], list[str]]:
    """Leaderboard rows of the headline metrics under ``configs``; a metric that cannot be aggregated is named, not
    fatal."""
    from .leaderboard import leaderboard

    metrics = sorted({h.metric for h in headlines()})
    try:
        return leaderboard(store, benchmark, metrics=metrics, n_boot=n_boot, configs=configs), []
    except (ValueError, TypeError, KeyError):
        rows, problems = [], []
        for metric in metrics:
            try:
                rows += leaderboard(store, benchmark, metrics=[metric], n_boot=n_boot, configs=configs)
            except (ValueError, TypeError, KeyError) as exc:
                problems.append(f"{metric}: not aggregated ({exc})")
        return rows, problems


def benchmark_boards(store: "Store", in_force: "InForce", benchmark: str | None = None,
                     n_boot: int = N_BOOT) -> list[BenchmarkBoard]:
    """One ranked board per benchmark (or for the one named) that has runs, of the configurations ``in_force``."""
    names = [benchmark] if benchmark else [b.name for b in store.benchmark_infos()]
    boards = []
    for name in names:
        runs = store.list_runs(name)
        if not runs:
            continue
        rows, problems = _headline_rows(store, name, n_boot, in_force.keys())
        counts, reasons = applicability(store, name)
        board = rank_benchmark(name, rows, runs, counts, reasons)
        board.problems = problems
        board.config_notes = in_force.notes({h.metric for h in board.headlines})
        board.configs = {h.metric: in_force.label(h.metric, key) for h in board.headlines
                         if (key := in_force.key(h.metric)) is not None}
        boards.append(board)
    return boards


def display_key(r: RankedRun) -> tuple[str, str]:
    return model_label(r.model, r.synthetic), r.name


def pivot_leaderboard(rows: Sequence[dict[str, Any]], by_domain: bool = False,
                      names: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Every number, one record per run (and domain): ``model`` (the run's name in ``names``, from
    ``presentation.run_names``, where given), ``benchmark``, ``n``, then ``metric.key`` cells
    (``metric.key split`` for a split's number: ``pope.f1 adversarial``).

    >>> pivot_leaderboard([{"model": "m", "run_id": "r", "synthetic": True, "benchmark": "b", "metric": "emd",
    ...                     "config_key": "k", "key": "total", "value": 12.0, "low": 10.0, "high": 14.0, "n": 5}])
    [{'model': 'm (synthetic)', 'benchmark': 'b', 'scored': 5, 'emd.total': '12 [10, 14]'}]
    """

    def cell(row: dict[str, Any]) -> str:
        text = with_interval(row.get("value"), row.get("low"), row.get("high"))
        return text + (" (mean)" if row.get("value") is not None and row.get("aggregation") == "mean of values"
                       else "")

    configs: dict[str, set[str]] = {}
    for r in rows:
        configs.setdefault(r["metric"], set()).add(r["config_key"])
    table: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        key = (r["run_id"], r.get("domain")) if by_domain else (r["run_id"],)
        name = (names or {}).get(r["run_id"])
        rec = table.setdefault(key, {"model": short_model_label(r["model"], r.get("synthetic"), name=name),
                                     "benchmark": r["benchmark"], **({"domain": r.get("domain")} if by_domain else {}),
                                     "scored": 0})
        rec["scored"] = max(rec["scored"], int(r.get("n") or 0))
        # Several configurations of one metric (two judges, say) get a column each.
        column = (f"{r['metric']}.{r['key']}" + (f" {r['split']}" if r.get("split") else "")
                  + (f"@{r['config_key'][:6]}" if len(configs[r["metric"]]) > 1 else ""))
        rec[column] = cell(r)
    return sorted(table.values(), key=lambda rec: (str(rec["benchmark"]), str(rec.get("domain")), str(rec["model"])))
