"""The Overview's leaderboard: ``studies.leaderboard`` rows pivoted to models × metrics.

Pure function of the leaderboard's rows; the numbers (micro-averages with bootstrap
intervals resampled by image) are the studies module's, not computed here.
"""

from __future__ import annotations

from typing import Any, Sequence

from .render.palette import model_label


def _num(x: float) -> str:
    return f"{0.0 if abs(x) < 1e-9 else x:.3g}"  # float noise of an exact match (1e-14) reads as 0


def _cell(row: dict[str, Any]) -> str:
    value, low, high = row.get("value"), row.get("low"), row.get("high")
    if value is None:
        return "—"
    text = _num(value)
    if low is not None and high is not None:
        text += f" [{_num(low)}, {_num(high)}]"
    if row.get("aggregation") == "mean of values":
        text += " (mean)"
    return text


def pivot_leaderboard(rows: Sequence[dict[str, Any]], by_domain: bool = False) -> list[dict[str, Any]]:
    """One record per run (and domain): ``model``, ``benchmark``, ``n``, then ``metric.key`` cells.

    >>> pivot_leaderboard([{"model": "m", "run_id": "r", "synthetic": True, "benchmark": "b", "metric": "emd",
    ...                     "config_key": "k", "key": "total", "value": 12.0, "low": 10.0, "high": 14.0, "n": 5}])
    [{'model': 'm [synthetic]', 'benchmark': 'b', 'responses': 5, 'emd.total': '12 [10, 14]'}]
    """
    configs: dict[str, set[str]] = {}
    for r in rows:
        configs.setdefault(r["metric"], set()).add(r["config_key"])
    table: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        key = (r["run_id"], r.get("domain")) if by_domain else (r["run_id"],)
        rec = table.setdefault(key, {"model": model_label(r["model"], r.get("synthetic")),
                                     "benchmark": r["benchmark"], **({"domain": r.get("domain")} if by_domain else {}),
                                     "responses": 0})
        rec["responses"] = max(rec["responses"], int(r.get("n") or 0))
        # Several configurations of one metric (two judges, say) get a column each.
        column = f"{r['metric']}.{r['key']}" + (f"@{r['config_key'][:6]}" if len(configs[r["metric"]]) > 1 else "")
        rec[column] = _cell(r)
    return sorted(table.values(), key=lambda rec: (str(rec["benchmark"]), str(rec.get("domain")), str(rec["model"])))
