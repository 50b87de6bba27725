"""Import throughput of the largest real files: Reefknot (three files), Tri-HE with its images, HalFscore.

Per dataset, parsing and storing are timed separately (into a fresh temporary store), then a
re-import of the same records (nothing new to add) for comparison, side by side in one run:

* ``reefknot``: ``YESNO.jsonl`` + ``Multichoice.jsonl`` + ``VQA.jsonl`` (21,560 questions); target < 10 s;
* ``tri-he``: ``tri-he.json`` with the 300 ``usage_figures`` photos (read, validated, hashed, stored);
* ``halfscore``: the 1,000 DCI dense captions (``annotation.json``), then LLaVA-1.5-7B's captions
  (``llava-1.5-7b_captions.jsonl``) as a recorded run;
* ``coco``: a synthetic split of COCO val2014's size (40,000 images, 200,000 captions, 290,000 instances
  with polygons: files of about 28 and 157 MB, made up by ``tests/coco_helpers.py`` in a temporary folder, or
  in ``--coco-dir`` to keep them between runs); its peak memory is the process's, so run it alone to read it.

    python benchmarks/bench_import.py [--datasets reefknot,tri-he,halfscore] [--shared ../shared/datasets]
    python benchmarks/bench_import.py --datasets coco [--coco-dir /tmp/coco-synthetic]
    python benchmarks/bench_import.py REEFKNOT_DIR [--images DIR]     # Reefknot only, as before
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.config import apply_offline_env_defaults  # noqa: E402
from hallu_studio.pipelines.importing import import_benchmark, import_responses  # noqa: E402
from hallu_studio.store import Store  # noqa: E402

DEFAULT_SHARED = ROOT.parent / "shared" / "datasets"
REEFKNOT_TARGET_S = 10.0


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _row(label: str, secs: float, n: int, unit: str) -> None:
    print(f"  {label:>12}: {secs:6.2f} s  {n / secs if secs else float('inf'):10.0f} {unit}/s")


def bench_reefknot(folder: Path, images: str | None) -> float:
    from hallu_studio.importers.reefknot import read_reefknot

    parse_s, (parsed, _) = _timed(lambda: read_reefknot(folder, images))
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.duckdb") as store:
        store_s, report = _timed(lambda: import_benchmark(store, parsed))
        again_s, again = _timed(lambda: import_benchmark(store, parsed))
    n, total = len(parsed.samples), parse_s + store_s
    print(f"reefknot: {n} questions ({report.added} added; re-import added {again.added}); "
          f"images found: {report.images_found}")
    for label, secs in (("parse", parse_s), ("store", store_s), ("parse+store", total), ("re-import", again_s)):
        _row(label, secs, n, "questions")
    print(f"  target < {REEFKNOT_TARGET_S:.0f} s: {'met' if total < REEFKNOT_TARGET_S else 'MISSED'} "
          f"(target / actual = {REEFKNOT_TARGET_S / total:.1f}x)")
    return total


def bench_tri_he(folder: Path) -> float:
    from hallu_studio.importers.tri_he import read_tri_he

    parse_s, parsed = _timed(lambda: read_tri_he(folder))  # images from usage_figures/
    image_bytes = sum(len(i.data) for i in parsed.images.values())
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.duckdb") as store:
        store_s, report = _timed(lambda: import_benchmark(store, parsed))
        again_s, again = _timed(lambda: import_benchmark(store, parsed))
    n = len(parsed.samples)
    print(f"tri-he: {n} questions, {len(parsed.images)} images ({image_bytes / 1e6:.1f} MB) "
          f"({report.added} added; re-import added {again.added}); images found: {report.images_found}")
    for label, secs in (("parse+images", parse_s), ("store", store_s), ("parse+store", parse_s + store_s),
                        ("re-import", again_s)):
        _row(label, secs, n, "questions")
    print(f"  images: {len(parsed.images) / parse_s:.0f} images/s, {image_bytes / 1e6 / parse_s:.1f} MB/s read+validated")
    return parse_s + store_s


def bench_halfscore(folder: Path) -> float:
    from hallu_studio.importers.halfscore import read_halfscore_annotations, read_halfscore_captions

    parse_s, parsed = _timed(lambda: read_halfscore_annotations(folder / "annotation.json"))
    captions_file = folder / "llava-1.5-7b_captions.jsonl"
    known = {s.id for s in parsed.samples}
    caps_s, captions = _timed(lambda: read_halfscore_captions(captions_file, known))
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.duckdb") as store:
        store_s, report = _timed(lambda: import_benchmark(store, parsed))
        resp_s, resp_report = _timed(lambda: import_responses(store, captions))
        again_s, _ = _timed(lambda: (import_benchmark(store, parsed), import_responses(store, captions)))
    n, m = len(parsed.samples), len(captions.responses)
    print(f"halfscore: {n} dense captions ({report.added} added), {m} LLaVA captions ({resp_report.added} added)")
    for label, secs, k, unit in (("parse refs", parse_s, n, "captions"), ("store refs", store_s, n, "captions"),
                                 ("parse run", caps_s, m, "captions"), ("store run", resp_s, m, "captions"),
                                 ("all", parse_s + store_s + caps_s + resp_s, n + m, "records"),
                                 ("re-import", again_s, n + m, "records")):
        _row(label, secs, k, unit)
    return parse_s + store_s + caps_s + resp_s


def bench_coco(folder: Path) -> float:
    from hallu_studio.importers.coco import read_coco

    sys.path.insert(0, str(ROOT / "tests"))
    from coco_helpers import write_synthetic_split

    if not (folder / "instances_val2014.json").is_file():
        write_s, _ = _timed(lambda: write_synthetic_split(folder))
        print(f"coco: wrote the synthetic split in {write_s:.1f} s")
    sizes = ", ".join(f"{f.name} {f.stat().st_size / 1e6:.0f} MB" for f in sorted(folder.glob("*.json")))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    parse_s, [parsed] = _timed(lambda: read_coco(folder))
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.duckdb") as store:
        store_s, report = _timed(lambda: import_benchmark(store, parsed))
        again_s, again = _timed(lambda: import_benchmark(store, parsed))
    n = len(parsed.samples)
    captions = sum(len(s.reference_text or ()) for s in parsed.samples)
    instances = sum(sum(s.meta.get("instance_counts", {}).values()) for s in parsed.samples)
    print(f"coco: {sizes}; {n} images, {captions} captions, {instances} instances ({report.added} added; "
          f"re-import added {again.added}; {parsed.records_failed} failed)")
    for label, secs in (("parse", parse_s), ("store", store_s), ("parse+store", parse_s + store_s),
                        ("re-import", again_s)):
        _row(label, secs, n, "images")
    print(f"  peak RSS: {rss_before:.0f} MB before parsing, {rss_after:.0f} MB after")
    return parse_s + store_s


def main() -> int:
    apply_offline_env_defaults()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=None, help="a Reefknot folder: time Reefknot only")
    ap.add_argument("--images", default=None, help="Reefknot image folder (optional)")
    ap.add_argument("--datasets", default="reefknot,tri-he,halfscore")
    ap.add_argument("--shared", default=str(DEFAULT_SHARED), help="folder holding reefknot/, tri-he/, halfscore/")
    ap.add_argument("--coco-dir", default=None, help="coco: where the synthetic split is written (and kept)")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; load average at start {os.getloadavg()[0]:.2f}")
    shared = Path(args.shared)
    if args.folder:
        jobs = {"reefknot": Path(args.folder)}
    else:
        jobs = {name: shared / name for name in (d.strip() for d in args.datasets.split(",")) if name}
    runners: dict[str, Callable[[Path], float]] = {
        "reefknot": lambda p: bench_reefknot(p, args.images), "tri-he": bench_tri_he, "halfscore": bench_halfscore,
        "coco": bench_coco}
    status = 0
    for name, folder in jobs.items():
        if name not in runners:
            print(f"unknown dataset {name!r}; known: {', '.join(runners)}", file=sys.stderr)
            return 2
        if name == "coco":
            if args.coco_dir:
                Path(args.coco_dir).mkdir(parents=True, exist_ok=True)
                bench_coco(Path(args.coco_dir))
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    bench_coco(Path(tmp))
            continue
        if not folder.is_dir():
            print(f"{name}: no folder at {folder}; skipped", file=sys.stderr)
            status = 2
            continue
        runners[name](folder)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return status


if __name__ == "__main__":
    sys.exit(main())
