"""The scoring engines side by side: the same N stored responses scored by one process, ``--workers 2`` and a
local Ray with two actors, each on a fresh copy of one store, in one run (issue 34: ``--workers 2`` at least 1.6x
one process; Ray local within 15 % of ``--workers 2``).

The responses are VILA-8B's COCO_VAL descriptions from ``../shared`` (VLMEvalKit's table, through the
``vlmevalkit`` importer), or the embedded sample benchmark's when ``../shared`` is absent. The store is imported
once; every engine scores a copy of it (nothing cached), so each pays its own model loading: the time is the
whole pass, start-up included, as a user runs it; with few responses the start-up of the workers dominates.

    python benchmarks/bench_engines.py [--n 200] [--metrics trihe,halfscore,emd,chair] [--engines one,workers2,ray2]

Prints responses/s per engine and the ratios, with the load average before and after: the machine may be shared,
read the ratios, measured side by side. Each engine's rate after its first batch is written (start-up and model
loading left out: the CPU-bound phases, which the issue's 1.6x is about) is printed beside its whole-pass rate.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hallu_studio.cli import main  # noqa: E402
from hallu_studio.config import Settings  # noqa: E402
from hallu_studio.pipelines.engines import InProcess, LocalProcesses  # noqa: E402
from hallu_studio.pipelines.scoring import score_store  # noqa: E402
from hallu_studio.store import Store  # noqa: E402

SHARED = Path(os.environ.get("HALLU_STUDIO_SHARED", Path(__file__).resolve().parents[2] / "shared"))
COCO_VAL = SHARED / "datasets/toolkits/vlmevalkit-vila_8b/vila_8b_COCO_VAL.xlsx"


def imported_store(folder: Path) -> tuple[Path, str]:
    """A store holding the responses to score, and what they are."""
    db = folder / "template.duckdb"
    if COCO_VAL.exists():
        args, what = ["--format", "vlmevalkit", str(COCO_VAL)], "VLMEvalKit COCO_VAL, VILA-8B"
    else:
        args, what = ["--format", "sample"], "the embedded sample benchmark (../shared is absent)"
    if main(["import", *args, "--db", str(db)]) != 0:
        raise SystemExit(f"the import of {what} failed")
    return db, what


def engine_of(name: str):
    if name == "one":
        return InProcess()
    if name == "workers2":
        return LocalProcesses(2)
    if name == "ray2":
        from hallu_studio.pipelines.engine_ray import RayActors

        return RayActors(2)
    raise SystemExit(f"unknown engine {name!r}: one | workers2 | ray2")


def timed_pass(template: Path, folder: Path, name: str, n: int, metrics: list[str]) -> tuple[float, int, float | None]:
    """Seconds to score the first ``n`` responses of a fresh copy of ``template`` with engine ``name``; responses;
    and the steady rate: responses/s from the first batch written to the last (start-up and model loading, which
    end with the first batch, left out), None with fewer than three batches."""
    db = folder / f"{name}.duckdb"
    shutil.copy(template, db)
    settings = Settings()
    with Store(db) as store:
        ids = store.response_ids()[:n]
        engine = engine_of(name)
        if name == "ray2":
            import ray

            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        try:
            written: list[tuple[float, int]] = []  # (time, responses done) at each batch written
            start = time.perf_counter()
            report = score_store(store, settings, metrics, only=ids, progress=False, engine=engine,
                                 on_progress=lambda done, total: written.append((time.perf_counter(), done)))
            seconds = time.perf_counter() - start
        finally:
            if name == "ray2":
                ray.shutdown()
    print(f"  {name}: {report.summary()}", flush=True)
    steady = None
    if len(written) >= 3:
        (t0, d0), (t1, d1) = written[0], written[-1]
        steady = (d1 - d0) / (t1 - t0)
        print(f"  {name}: first batch written after {t0 - start:.1f} s", flush=True)
    return seconds, len(ids), steady


def run() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="responses scored by each engine")
    parser.add_argument("--metrics", default="trihe,halfscore,emd,chair")
    parser.add_argument("--engines", default="one,workers2,ray2")
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()}; cores: {os.cpu_count()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        template, what = imported_store(folder)
        print(f"responses: {what}; metrics {args.metrics}; batch size {Settings().scoring.batch_size}", flush=True)
        rates: dict[str, float] = {}
        steady: dict[str, float | None] = {}
        for name in args.engines.split(","):
            seconds, n, steady[name] = timed_pass(template, folder, name, args.n, args.metrics.split(","))
            rates[name] = n / seconds
            after = f"{steady[name]:6.2f}" if steady[name] else "   n/a"
            print(f"{name:>9}: {n} responses in {seconds:7.1f} s = {rates[name]:6.2f} responses/s; "
                  f"after the first batch {after} responses/s", flush=True)
    for a, b, target in (("workers2", "one", "issue: at least 1.6x"),
                         ("ray2", "workers2", "issue: within 15 %, i.e. >= 0.85x")):
        if a in rates and b in rates:
            line = f"{a} / {b}: {rates[a] / rates[b]:.2f}x whole pass"
            if steady.get(a) and steady.get(b):
                line += f", {steady[a] / steady[b]:.2f}x after the first batch"
            print(f"{line} ({target})")
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    run()
