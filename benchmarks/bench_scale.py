"""Where scoring's time goes at the field's scale: real VLMEvalKit COCO_VAL descriptions, stage by stage, at
several sizes, on the store path and stateless (issue 34).

Input: VILA-8B's COCO_VAL results as VLMEvalKit wrote them (``../shared/datasets/toolkits/vlmevalkit-vila_8b/
vila_8b_COCO_VAL.xlsx``: 5,000 descriptions of ~100 words, each with its image's five COCO captions), read,
never copied: the first n rows are written to a temporary folder under the file's own name.

Each (path, n) is one fresh process of a code version (this checkout, and ``--baseline DIR``: a checkout of
other code, e.g. ``git worktree add /tmp/base 6e46d39``), run one after the other in one run:

* ``store``: ``hallu-studio import --format vlmevalkit FILE`` into a new store (not timed), then
  ``hallu-studio score --metrics trihe,halfscore,emd,chair`` into it, as a user runs them;
* ``stateless``: the same n lines as ``score --input`` JSONL (each line the sample as the store holds it).

The scoring process times each stage by wrapping the functions that do it (``bench_cold_scoring``'s stage
clock; exclusive time): startup (imports, settings), load (spaCy and MiniLM), parse (spaCy + the concept
rules), encode (MiniLM's forward passes), ground (claims on the reference graph, WordNet), transport (exact
EMD), judge (the metrics' own work), cache, store (the store's reads and bulk writes), write (JSON output),
other. It prints, per run, each stage's responses/s (n over the stage's seconds), and how the cost per
response grows with n.

    python benchmarks/bench_scale.py --n 1000,5000                       # this checkout, both paths
    python benchmarks/bench_scale.py --n 300 --paths store --baseline /tmp/base   # side by side with other code
    python benchmarks/bench_scale.py --n 1000 --workers 1,2              # where `score --workers` exists

``--workers`` passes ``score --workers N`` through (the per-stage clock then sees the driver only: the
stages run in the workers, so only wall time and responses/s are compared). Prints the load average at the
start and end: the machine may be shared, read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cold_scoring import STAGES, StageClock, compare_outputs, install_stage_clock, run_mode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HALLU_STUDIO_SHARED") or ROOT.parent / "shared") / "datasets"
COCO_VAL = SHARED / "toolkits" / "vlmevalkit-vila_8b" / "vila_8b_COCO_VAL.xlsx"
METRICS = "trihe,halfscore,emd,chair"
STORE_READS = ("get_responses", "get_samples", "get_scores_for", "scored_response_ids", "response_ids",
               "iter_samples", "get_image")


def write_rows(n: int, folder: Path) -> Path:
    """The first ``n`` rows of the COCO_VAL results, under the file's own name (the importer reads the model's
    name from it)."""
    import pandas as pd

    target = folder / COCO_VAL.name
    pd.read_excel(COCO_VAL).head(n).to_excel(target, index=False)
    return target


def _time_store(clock: StageClock) -> None:
    from hallu_studio.store import Store

    from hallu_studio.pipelines import scoring

    clock.seconds.setdefault("store", 0.0)
    clock.wrap(Store, "put_score_batch", "store")
    for attr in STORE_READS:
        clock.wrap(Store, attr, "store")
    score_store = scoring.score_store

    def started(*args: Any, **kwargs: Any) -> Any:  # startup ends where the store path starts scoring
        clock.counts.setdefault("scoring_started", time.perf_counter())
        return score_store(*args, **kwargs)

    scoring.score_store = started


def worker(args: argparse.Namespace) -> None:
    """One scoring process of one code version (``--src``), timed by stage."""
    started = time.perf_counter()
    sys.path.insert(0, args.src)
    os.chdir(args.src)
    from hallu_studio.config import apply_offline_env_defaults

    apply_offline_env_defaults()
    import hallu_studio

    assert str(Path(hallu_studio.__file__).resolve()).startswith(str(Path(args.src).resolve())), hallu_studio.__file__
    from hallu_studio.cli import main

    clock = StageClock()
    install_stage_clock(clock)
    _time_store(clock)
    workers = ["--workers", args.workers] if args.workers else []
    if args.db:
        argv = ["score", "--db", args.db, "--metrics", METRICS, "--no-progress", *workers]
    else:
        argv = ["score", "--input", args.input, "--output", args.output, "--metrics", METRICS, "--no-progress",
                *workers]
    status = main(argv)
    wall = time.perf_counter() - started
    scoring_started = clock.counts.pop("scoring_started", None)
    clock.seconds["startup"] = (scoring_started or started) - started
    clock.seconds["other"] = wall - sum(v for k, v in clock.seconds.items() if k != "other")
    Path(args.result).write_text(json.dumps({"wall": wall, "status": status, "seconds": clock.seconds,
                                             "counts": clock.counts}))


def _cli(src: str, *argv: str) -> None:
    env = dict(os.environ, PYTHONPATH=src, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1")
    subprocess.run([sys.executable, "-m", "hallu_studio", *argv], env=env, cwd=src, check=True, capture_output=True)


def stateless_lines(db: Path, src: str, out: Path) -> None:
    """The store's samples and responses as ``score --input`` lines (each line's sample as stored)."""
    code = f"""
import json, sys
from hallu_studio.store import Store
store = Store({str(db)!r})
ids = store.response_ids()
responses = store.get_responses(ids)
samples = store.get_samples(sorted({{r.sample_id for r in responses.values()}}))
with open({str(out)!r}, "w") as fh:
    for rid in ids:
        r = responses[rid]
        line = samples[r.sample_id].to_dict()
        for key in ("benchmark", "image_sha256"):
            line.pop(key, None)
        line["response"] = r.text
        fh.write(json.dumps(line) + "\\n")
store.close()
"""
    env = dict(os.environ, PYTHONPATH=src, HF_HUB_OFFLINE="1")
    subprocess.run([sys.executable, "-c", code], env=env, cwd=src, check=True, capture_output=True)


def _rate(n: int, seconds: float) -> str:
    return "-" if seconds < 0.05 else f"{n / seconds:,.0f}" if n / seconds >= 100 else f"{n / seconds:,.1f}"


def report(rows: list[dict[str, Any]]) -> None:
    stages = [*STAGES[:-1], "store", "other"]
    print("\n## responses/s, overall and per stage (n / the stage's seconds; '-' under 0.05 s)\n")
    print("| version | path | workers | n | wall s | responses/s | " + " | ".join(stages) + " |")
    print("|---|---|---|---:|---:|---:|" + "---:|" * len(stages))
    for r in rows:
        secs, n = r["seconds"], r["n"]
        print(f"| {r['version']} | {r['path']} | {r['workers'] or 1} | {n:,} | {r['wall']:.1f} | "
              f"{n / r['wall']:.2f} | " + " | ".join(_rate(n, secs.get(s, 0.0)) for s in stages) + " |")
    print("\n## seconds per response by n (growth: linear when the column stays flat)\n")
    keys = sorted({(r["version"], r["path"], r["workers"]) for r in rows})
    for key in keys:
        runs = sorted((r for r in rows if (r["version"], r["path"], r["workers"]) == key), key=lambda r: r["n"])
        scoring = [(r["n"], (r["wall"] - r["seconds"].get("startup", 0) - r["seconds"].get("load", 0)) / r["n"])
                   for r in runs]
        text = ", ".join(f"n={n:,}: {s * 1000:.0f} ms" for n, s in scoring)
        if len(scoring) > 1:
            text += f"; last/first {scoring[-1][1] / scoring[0][1]:.2f}x"
        print(f"- {key[0]}, {key[1]}, workers {key[2] or 1}: {text} (after startup and model loading)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="1000,5000", help="sizes, comma-separated (at most 5,000)")
    ap.add_argument("--paths", default="store,stateless", help="store, stateless or both")
    ap.add_argument("--baseline", default=None, help="a checkout of other code, run side by side")
    ap.add_argument("--workers", default="", help="comma-separated `score --workers` values to pass through")
    ap.add_argument("--keep", default=None, help="keep the inputs, stores and outputs in this folder")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for name in ("src", "input", "output", "db", "result"):
        ap.add_argument(f"--{name}", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--workers-one", dest="workers_one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        args.workers = args.workers_one
        return worker(args)
    if not COCO_VAL.exists():
        print(f"skipped: needs {COCO_VAL} (../shared beside the checkout)")
        return
    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    versions = {"this checkout": str(ROOT)} | ({"baseline": str(Path(args.baseline).resolve())} if args.baseline
                                               else {})
    workers = [w.strip() for w in args.workers.split(",") if w.strip()] or [None]
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; files in {folder}", flush=True)
    rows: list[dict[str, Any]] = []
    for n in [int(x) for x in args.n.split(",") if x.strip()]:
        rows_folder = folder / f"n{n}"
        rows_folder.mkdir(exist_ok=True)
        xlsx = write_rows(n, rows_folder)
        outputs: dict[str, Path] = {}
        for name, src in versions.items():
            for w in workers:
                for path in [p.strip() for p in args.paths.split(",") if p.strip()]:
                    tag = f"{name.replace(' ', '-')}.{path}.w{w or 1}"
                    db = rows_folder / f"{tag}.duckdb"
                    db.unlink(missing_ok=True)
                    _cli(src, "import", "--format", "vlmevalkit", str(xlsx), "--db", str(db))
                    options: dict[str, Any] = {"src": src, "workers_one": w}
                    if path == "store":
                        options["db"] = db
                    else:
                        lines = rows_folder / "lines.jsonl"
                        if not lines.exists():
                            stateless_lines(db, src, lines)
                        options |= {"input": lines, "output": rows_folder / f"{tag}.out.jsonl"}
                    load = os.getloadavg()[0]
                    got = run_mode("worker", rows_folder / f"{tag}.result.json", script=__file__, **options)
                    rows.append({"version": name, "path": path, "workers": w, "n": n, **got})
                    print(f"  n={n:,} {name} {path} workers {w or 1}: {got['wall']:.1f} s, {n / got['wall']:.2f} "
                          f"responses/s (load {load:.1f} -> {os.getloadavg()[0]:.1f})", flush=True)
                    if path == "stateless":
                        outputs[tag] = rows_folder / f"{tag}.out.jsonl"
        first = next(iter(outputs), None)
        for tag, out in outputs.items():
            if tag != first and first is not None:
                print(f"  n={n:,} {tag} vs {first}: {compare_outputs(outputs[first], out)}")
    report(rows)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
