"""How far could any score built from HalluStudio's offline signals agree with people? A supervised ceiling.

``bench_human_agreement.py`` asks whether each score, as it is, separates what people called hallucinated from
what they called accurate. This script asks what *every* signal the offline pipeline has could reach together,
if a combination of them were fitted on the people's own labels, the most favourable case for any
hand-written score made of the same parts:

* every number the four metrics store per response (``trihe``, ``halfscore``, ``emd``, ``chair``: claim counts,
  unverifiable and inference counts, shares, precision / recall, EMD per concept kind, CHAIR's counts);
* the naive baseline (1 − mean MiniLM cosine of response and references) and three finer readings of it:
  1 − the *highest* cosine to one reference, the same for the response's first sentence alone, and the mean
  over the response's sentences of each one's 1 − highest cosine; and the response's length in words.

On each set with a yes/no human call (HaELM, its held-out variant, M-HalDetect, FaithScore) it prints the
AUROC of the Tri-HE share and of the naive baseline (as in ``bench_human_agreement``), of the best single
signal (chosen by looking at the labels: optimistic), of an L2 logistic regression over all signals
cross-validated (5 folds stratified, 20 repetitions: the mean and the range), and of the same regression
fitted and scored on all responses (in-sample: an upper bound that overfits).

The stores are ``bench_human_agreement``'s (same cache, same options): a set scored there is not scored
again here.

    python benchmarks/bench_signal_ceiling.py [--sets haelm,haelm-heldout,mhaldetect,faithscore] [--write]

``--write`` puts the output into docs/validity.md between the ``<!-- bench_signal_ceiling -->`` markers.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_human_agreement as bha  # noqa: E402  (sets up the path and the offline environment)

from hallu_studio.config import Settings  # noqa: E402
from hallu_studio.components import Components  # noqa: E402
from hallu_studio.extraction.spans import sentence_spans  # noqa: E402
from hallu_studio.store import Store  # noqa: E402
from hallu_studio.studies.baselines import naive_dissimilarity, reference_texts  # noqa: E402
from hallu_studio.studies.human_sources import stored_scores  # noqa: E402
from hallu_studio.vectors import unit_rows  # noqa: E402

BINARY_SETS = ("haelm", "haelm-heldout", "mhaldetect", "faithscore")
MARK_BEGIN, MARK_END = "<!-- bench_signal_ceiling -->", "<!-- /bench_signal_ceiling -->"
REPEATS, FOLDS = 20, 5


def stored_signals(store: Store, ids: list[str], metrics: list[str]) -> dict[str, dict[str, float]]:
    """``{signal name: {response id: value}}``: every number each metric stores per response, and Tri-HE's share
    read as the study reads it (``human_sources.stored_scores``; the other headline scores are stored values)."""
    out: dict[str, dict[str, float]] = {}
    wanted = set(ids)
    for metric in metrics:
        for response, score in store.iter_scores(metric):
            if response.id not in wanted:
                continue
            for key, value in (score.values or {}).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value):
                    out.setdefault(f"{metric} {key}", {})[response.id] = float(value)
    for (name, _), values in stored_scores(store, wanted, ["trihe"]).values.items():  # one configuration
        out[name] = dict(values)
    return out


def similarity_signals(store: Store, ids: list[str], encoder: Any) -> dict[str, dict[str, float]]:
    """The naive baseline and its finer readings (module docstring), and the length in words."""
    responses = store.get_responses(ids)
    samples = store.get_samples(sorted({r.sample_id for r in responses.values()}))
    items = []
    for rid in ids:
        refs = reference_texts(samples[responses[rid].sample_id]) if responses[rid].sample_id in samples else []
        text = responses[rid].text
        sentences = [text[a:b].strip() for a, b in sentence_spans(text) if text[a:b].strip()] or [text]
        items.append((rid, text, sentences, refs))
    texts = list(dict.fromkeys(t for _, text, sents, refs in items for t in (text, *sents, *refs)))
    vectors = dict(zip(texts, unit_rows(np.asarray(encoder.encode(texts), dtype=float))))
    naive = naive_dissimilarity([(text, refs) for _, text, _, refs in items], encoder)  # the study's baseline
    out: dict[str, dict[str, float]] = {k: {} for k in ("naive 1-mean cosine", "naive 1-max cosine",
                                                        "first sentence 1-max cosine",
                                                        "sentences mean 1-max cosine", "words")}
    for (rid, text, sentences, refs), mean in zip(items, naive):
        out["words"][rid] = float(len(text.split()))
        if not refs:
            continue
        r = np.stack([vectors[t] for t in refs])
        best = np.array([float((r @ vectors[s]).max()) for s in sentences])
        out["naive 1-mean cosine"][rid] = mean
        out["naive 1-max cosine"][rid] = 1.0 - float((r @ vectors[text]).max())
        out["first sentence 1-max cosine"][rid] = 1.0 - float(best[0])
        out["sentences mean 1-max cosine"][rid] = float((1.0 - best).mean())
    return out


def design(signals: dict[str, dict[str, float]], ids: list[str]) -> tuple[np.ndarray, list[str]]:
    """Responses x signals, standardised; a missing value takes its signal's median (signals every response
    lacks, or constant ones, are dropped)."""
    names, columns = [], []
    for name, values in sorted(signals.items()):
        col = np.array([values.get(i, np.nan) for i in ids], dtype=float)
        if np.isnan(col).all():
            continue
        col = np.where(np.isnan(col), np.nanmedian(col), col)
        if col.std() == 0:
            continue
        names.append(name)
        columns.append((col - col.mean()) / col.std())
    return np.stack(columns, axis=1), names


def ceiling(name: str, result: Any, metrics: list[str], encoder: Any) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    ids = sorted(result.calls)
    y = np.array([result.calls[i] for i in ids], dtype=bool)
    with Store(result.store_path) as store:
        signals = stored_signals(store, ids, metrics)
        signals.update(similarity_signals(store, ids, encoder))
    single = {}
    for signal, values in signals.items():
        have = [k for k, i in enumerate(ids) if i in values]
        ys = y[have]
        if len(have) >= 20 and 0 < ys.sum() < len(ys):
            single[signal] = (roc_auc_score(ys, [values[ids[k]] for k in have]), len(have))
    x, names = design(signals, ids)
    model = LogisticRegression(C=0.3, max_iter=5000)
    cv = []
    for seed in range(REPEATS):
        folds = StratifiedKFold(FOLDS, shuffle=True, random_state=seed)
        p = cross_val_predict(model, x, y, cv=folds, method="predict_proba")[:, 1]
        cv.append(roc_auc_score(y, p))
    fitted = roc_auc_score(y, model.fit(x, y).predict_proba(x)[:, 1])
    # Either direction counts for the best single signal (the labels pick it); the two scores keep theirs.
    best = max(single, key=lambda k: abs(single[k][0] - 0.5))
    auc = single[best][0]
    return {"set": name, "n": len(ids), "positives": int(y.sum()), "signals": len(names),
            "trihe": single.get("trihe share", (float("nan"), 0))[0], "naive": single["naive 1-mean cosine"][0],
            "best": (best, max(auc, 1 - auc), "" if auc >= 0.5 else " (lower = hallucinated)"),
            "cv": (float(np.mean(cv)), min(cv), max(cv)), "fitted": fitted}


def table(rows: list[dict[str, Any]]) -> str:
    out = ["| set | n (hallucinated) | signals | Tri-HE share | naive 1 − mean cosine | best single signal "
           "(picked on the labels) | all signals, logistic, cross-validated: mean [range] | all signals, "
           "fitted in-sample |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        best, auc, sign = r["best"]
        out.append(f"| {r['set']} | {r['n']} ({r['positives']}) | {r['signals']} | {r['trihe']:.2f} | "
                   f"{r['naive']:.2f} | {best}{sign}: {auc:.2f} | **{r['cv'][0]:.2f}** [{r['cv'][1]:.2f}, "
                   f"{r['cv'][2]:.2f}] | {r['fitted']:.2f} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(BINARY_SETS), help=f"comma-separated, of {', '.join(BINARY_SETS)}")
    ap.add_argument("--cache", default=str(Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") /
                                           "hallu-studio" / "bench_human_agreement"))
    ap.add_argument("--write", action="store_true", help="write the output into docs/validity.md")
    args = ap.parse_args()
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in names if s not in BINARY_SETS]
    if unknown:
        ap.error(f"unknown set {unknown[0]!r}; choose from {', '.join(BINARY_SETS)}")
    if not bha.shared_human().is_dir():
        print(f"skipped: {bha.shared_human()} is not here (set HALLU_STUDIO_SHARED to the folder holding datasets/)")
        return 0
    names = [s for s in names if (bha.shared_human() / bha.VARIANT_OF.get(s, s)).is_dir()]
    # The options bench_human_agreement's default run uses, so its cached stores are found.
    opts = argparse.Namespace(metrics=list(bha.METRICS), limit=None, objects_as_scene_graph=False, no_cache=False,
                              cache=args.cache, n_boot=10)
    settings = Settings()
    encoder = None
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        shared = {"tmp": tmp, "fact_judges": lambda: []}
        for name in names:
            print(f"{name} ...", file=sys.stderr)
            result = bha.run_set(name, opts, bha.settings_for(name, settings), shared)
            if encoder is None:
                encoder = Components(settings).encoder()
            rows.append(ceiling(name, result, opts.metrics, encoder))
    text = (f"_Produced by `python benchmarks/bench_signal_ceiling.py --sets {','.join(names)}` at commit "
            f"{bha.git_head()} on `bench_human_agreement`'s stores (settings key {bha.settings_key(settings)[:8]}); "
            f"{time.perf_counter() - started:.0f} s._\n\nAUROC of \"people call it hallucinated\" (HaELM), \"has a "
            f"marked span\" (M-HalDetect), \"has a fact labelled hallucinated\" (FaithScore); logistic regression "
            f"with L2 (C = 0.3) on standardised signals, {FOLDS}-fold stratified cross-validation repeated "
            f"{REPEATS} times.\n\n" + table(rows))
    print(text)
    if args.write:
        path = bha.ROOT / "docs" / "validity.md"
        doc = path.read_text(encoding="utf-8")
        block = f"{MARK_BEGIN}\n{text}\n{MARK_END}"
        if MARK_BEGIN in doc:
            doc = doc[: doc.index(MARK_BEGIN)] + block + doc[doc.index(MARK_END) + len(MARK_END):]
        else:
            doc = doc.rstrip() + "\n\n### How far the offline signals could reach together (bench_signal_ceiling)\n\n" \
                + block + "\n"
        path.write_text(doc, encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
