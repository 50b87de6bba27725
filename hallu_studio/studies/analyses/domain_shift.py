"""EMD per image domain, real against synthetic, and FID of each domain (VISCON §4.2, Table 2, Fig. 4).

Per model, the EMD of its responses on each image domain (original, cartoon, sketch,
oil, line ... whatever the benchmark tags) and on real against synthetic images,
each with a bootstrap interval by image. When an Inception network is available
offline, each domain's FID against the original images and the Pearson correlation
of domain FID with the mean EMD over models.

Worked example of the correlation: FID (cartoon, sketch, oil) = (10, 20, 30) and mean
EMD = (1, 3, 2): centred (-10, 0, 10) and (-1, 1, 0), r = 10 / sqrt(200 * 2) = 0.5.

>>> r, n = fid_emd_correlation({"cartoon": 10, "sketch": 20, "oil": 30}, {"cartoon": 1, "sketch": 3, "oil": 2})
>>> round(r, 6), n
(0.5, 3)
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ...config import Settings
from ...metrics.aggregate import bootstrap_intervals
from ..leaderboard import metric_computes
from .common import cluster_of, metric_intervals, run_colours, run_labels, select_runs, stored_rows
from .fid import features_fid, inception_features
from .length import pearson
from .result import AnalysisResult, empty_result, figure

if TYPE_CHECKING:
    from ...store import Store

NAME = "domain-shift"
TITLE = "EMD per image domain, real vs synthetic, FID (VISCON Table 2, Fig. 4)"
COLUMNS = ["model", "group", "emd", "emd_low", "emd_high", "responses", "fid"]
ORIGINAL = "original"


def fid_emd_correlation(fid: Mapping[str, float], mean_emd: Mapping[str, float]) -> tuple[float, int]:
    """Pearson r of domain FID with domain mean EMD over the domains both have, and how many."""
    domains = [d for d in fid if d in mean_emd and not math.isnan(fid[d]) and not math.isnan(mean_emd[d])]
    return pearson([float(fid[d]) for d in domains], [float(mean_emd[d]) for d in domains]), len(domains)


def domain_fids(store: "Store", benchmark: str | None, notes: list[str]) -> dict[str, float]:
    """FID of each non-original domain's images against the original ones (empty when not computable)."""
    features, how = inception_features()
    notes.append(how)
    if features is None:
        return {}
    images: dict[str, list[bytes]] = defaultdict(list)
    seen: set[str] = set()
    for sample in store.iter_samples(benchmark):
        if sample.image_sha256 and sample.image_sha256 not in seen:
            seen.add(sample.image_sha256)
            got = store.get_image(sample.image_sha256)
            if got is not None:
                images[sample.domain].append(got[0])
    if len(images.get(ORIGINAL, [])) < 2:
        notes.append("FID not computed: fewer than two original images in the store")
        return {}
    reference = features(images[ORIGINAL])
    out = {}
    for domain, data in sorted(images.items()):
        if domain != ORIGINAL and len(data) >= 2:
            out[domain] = features_fid(reference, features(data))
    return out


def _source_kind_rows(store: "Store", rows: Sequence[dict[str, Any]], n_boot: int,
                      seed: int) -> dict[tuple[str, str], Any]:
    """EMD total per (run, source kind) with the metric's own compute and a bootstrap by image."""
    samples = store.get_samples(sorted({r["sample_id"] for r in rows}))
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["stats"] is not None and r["sample_id"] in samples:
            groups[(r["run_id"], samples[r["sample_id"]].source_kind)].append(r)
    compute = metric_computes(["emd"]).get("emd")
    out = {}
    for key, rs in groups.items():
        if compute is None:
            continue
        out[key] = bootstrap_intervals([r["stats"] for r in rs], compute, [cluster_of(r) for r in rs],
                                       n_boot=n_boot, seed=seed, keys=["total"])["total"]
    return out


def analyse(store: "Store", settings: Settings, *, benchmark: str | None = None, runs: Sequence[str] | None = None,
            n_boot: int = 200, seed: int = 0, **_: Any) -> AnalysisResult:
    notes: list[str] = []
    selected = select_runs(store, benchmark, runs)
    labels = run_labels(selected)
    run_ids = [r["id"] for r in selected]
    by_domain, more = metric_intervals(store, settings, "emd", "total", run_ids, benchmark=benchmark, n_boot=n_boot,
                                       seed=seed, by_domain=True)
    notes += more
    if not by_domain:
        return empty_result(NAME, TITLE, COLUMNS, "no EMD scores on the selected runs: score them with "
                            "`hallu-studio score --metrics emd`", notes)
    rows_emd, _ = stored_rows(store, settings, "emd", run_ids, benchmark)
    kinds = _source_kind_rows(store, rows_emd, n_boot, seed)
    fids = domain_fids(store, benchmark, notes)
    rows: list[dict[str, Any]] = []
    for (run_id, domain), r in sorted(by_domain.items(), key=lambda kv: (labels[kv[0][0]], str(kv[0][1]))):
        rows.append({"model": labels[run_id], "run_id": run_id, "group": f"domain: {domain}", "emd": r["value"],
                     "emd_low": r["low"], "emd_high": r["high"], "responses": r["n"],
                     "fid": 0.0 if domain == ORIGINAL and fids else fids.get(domain, math.nan)})
    for (run_id, kind), iv in sorted(kinds.items(), key=lambda kv: (labels[kv[0][0]], kv[0][1])):
        rows.append({"model": labels[run_id], "run_id": run_id, "group": f"source: {kind}", "emd": iv.value,
                     "emd_low": iv.low, "emd_high": iv.high, "responses": iv.n, "fid": math.nan})
    domains = sorted({d for _, d in by_domain})
    mean_emd = {d: sum(r["value"] for (_, dd), r in by_domain.items() if dd == d)
                / sum(1 for _, dd in by_domain if dd == d) for d in domains}
    if fids:
        r, n = fid_emd_correlation({ORIGINAL: 0.0, **fids}, mean_emd)
        notes.append(f"Pearson r of domain FID with mean EMD over models: {r:.3f} ({n} domains)")
    if len(domains) == 1:
        notes.append(f"the selected responses are all on one domain ({domains[0]}): nothing to compare across domains")
    return AnalysisResult(NAME, TITLE, COLUMNS, rows, _figure(by_domain, labels, run_colours(selected), domains, fids,
                                                             mean_emd), notes)


def _figure(by_domain: Mapping[tuple[str, str], Any], labels: Mapping[str, str], colours: Mapping[str, str],
            domains: list[str], fids: Mapping[str, float], mean_emd: Mapping[str, float]) -> Any:
    fig, axes = figure(2 if fids else 1, width=max(4.5, 1.0 * len(domains) + 2))
    ax = axes[0]
    run_ids = sorted({run_id for run_id, _ in by_domain}, key=lambda r: labels[r])
    width = 0.8 / max(1, len(run_ids))
    for i, run_id in enumerate(run_ids):
        xs = [j + i * width for j, d in enumerate(domains) if (run_id, d) in by_domain]
        rs = [by_domain[(run_id, d)] for d in domains if (run_id, d) in by_domain]
        ax.bar(xs, [r["value"] for r in rs], width, label=labels[run_id], color=colours.get(run_id),
               yerr=[[max(0.0, r["value"] - r["low"]) for r in rs], [max(0.0, r["high"] - r["value"]) for r in rs]])
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(domains))], domains, fontsize=8)
    ax.set_ylabel("EMD total (95% CI)")
    ax.set_title("EMD per image domain", fontsize=9)
    ax.legend(fontsize=6)
    if fids:
        ax2 = axes[1]
        shown = [d for d in domains if d in fids]
        ax2.scatter([fids[d] for d in shown], [mean_emd[d] for d in shown])
        for d in shown:
            ax2.annotate(d, (fids[d], mean_emd[d]), fontsize=7)
        ax2.set_xlabel("FID against original images")
        ax2.set_ylabel("mean EMD over models")
    fig.tight_layout()
    return fig
