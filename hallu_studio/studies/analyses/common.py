"""Store look-ups the analyses share: which runs, which score configuration, labels, clusters."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ...presentation import display_name, model_colour

if TYPE_CHECKING:
    from ...config import Settings
    from ...store import Store


def select_runs(store: "Store", benchmark: str | None = None, runs: Sequence[str] | None = None, *,
                include_derived: bool = False) -> list[dict[str, Any]]:
    """The runs an analysis looks at: those named in ``runs``, else every run (of ``benchmark``).

    Derived runs (truncations, ``meta.derived_from``) are left out unless named or asked for.
    Unknown run ids are refused with the list of known ones.
    """
    every = store.list_runs(benchmark)
    if runs:
        by_id = {r["id"]: r for r in store.list_runs()}
        unknown = [r for r in runs if r not in by_id]
        if unknown:
            raise ValueError(f"no run {unknown[0]!r} in the store; known runs: {', '.join(sorted(by_id)) or 'none'}")
        return [by_id[r] for r in runs]
    return [r for r in every if include_derived or not (r.get("meta") or {}).get("derived_from")]


def _setting(run: dict[str, Any], key: str) -> str:
    if key == "generation":
        return str((run.get("generation") or {}).get("strategy") or "")
    value = str(run.get(key) or "")
    return value if len(value) <= 24 else value[:21] + "..."


def run_labels(runs: Iterable[dict[str, Any]]) -> dict[str, str]:
    """A display name per run: its model's short name (``presentation.display_name``, as every view names it),
    plus what sets it apart where runs share a model.

    >>> run_labels([{"id": "r1", "model": "llava", "generation": {"strategy": "greedy"}, "mitigation": "none"},
    ...             {"id": "r2", "model": "llava", "generation": {"strategy": "beam"}, "mitigation": "none"},
    ...             {"id": "r3", "model": "transformers:Qwen/Qwen2-VL-7B"}])
    {'r1': 'llava [generation=greedy]', 'r2': 'llava [generation=beam]', 'r3': 'Qwen2-VL-7B'}
    """
    runs = list(runs)
    by_model: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        by_model.setdefault(r["model"], []).append(r)
    labels = {}
    for full, group in by_model.items():
        model = display_name(full)
        if len(group) == 1:
            labels[group[0]["id"]] = model
            continue
        differing = [k for k in ("generation", "prompt", "mitigation", "seed")
                     if len({_setting(r, k) for r in group}) > 1]
        for r in group:
            parts = ", ".join(f"{k}={_setting(r, k)}" for k in differing)
            labels[r["id"]] = f"{model} [{parts}]" if parts else f"{model} ({r['id']})"
    if len(set(labels.values())) < len(labels):  # two runs the settings above cannot tell apart
        labels = {r["id"]: f"{labels[r['id']]} ({r['id']})" for r in runs}
    return labels


def run_colours(runs: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Each run's colour in the analyses' plots: its model's, as in every view (``presentation.model_colour``)."""
    return {r["id"]: model_colour(r["model"]) for r in runs}


def config_in_force(store: "Store", settings: "Settings", metric: str) -> tuple[str | None, list[str]]:
    """The config key of ``metric`` an analysis reads: its configuration in force, as every view's
    (``studies.in_force``), and the note naming it where it is not the current settings' one."""
    from ..in_force import configs_in_force

    in_force = configs_in_force(store, settings)
    return in_force.key(metric), in_force.notes([metric])


def cluster_of(row: dict[str, Any]) -> str:
    """The bootstrap cluster of a response: its image (responses to one image are not independent)."""
    return f"{row.get('benchmark')}/{row.get('image_key') or row.get('sample_id')}"


def mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values)) if values else math.nan


def stored_rows(store: "Store", settings: "Settings", metric: str, run_ids: Sequence[str],
                benchmark: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """``score_stat_rows`` of one metric on these runs, under its configuration in force (``config_in_force``)."""
    wanted = set(run_ids)
    key, notes = config_in_force(store, settings, metric)
    return [r for r in store.score_stat_rows(metric, benchmark=benchmark)
            if r["run_id"] in wanted and r["config_key"] == key], notes


def metric_intervals(store: "Store", settings: "Settings", metric: str, key: str, run_ids: Sequence[str], *,
                     benchmark: str | None = None, n_boot: int = 200, seed: int = 0,
                     by_domain: bool = False) -> tuple[dict[Any, Any], list[str]]:
    """The leaderboard's ``key`` of ``metric`` (the metric's own ``compute``, bootstrap by image) per run.

    Returns ``{run_id: row}`` (``{(run_id, domain): row}`` with ``by_domain``); rows have value / low / high / n.
    """
    from ..leaderboard import leaderboard

    wanted = set(run_ids)
    config, notes = config_in_force(store, settings, metric)
    rows = [r for r in leaderboard(store, benchmark, by_domain, metrics=[metric], n_boot=n_boot, seed=seed,
                                   configs={metric: config} if config else {})
            if r["run_id"] in wanted and r["key"] == key and r.get("split") is None]
    out = {((r["run_id"], r["domain"]) if by_domain else r["run_id"]): r for r in rows}
    return out, notes
