"""Offline extraction quality and speed, before and after the dense-text repairs, side by side.

Quality: precision and recall of objects, attributes, relations and counts on the
hand-labelled sentences of ``tests/data/extraction_gold.jsonl`` (DCI references and Tri-HE
gold answers, read from ``../shared/datasets``; see ``hallu_studio.extraction.evaluation``).
Speed: words per second of a fresh ``ParserExtractor`` (spaCy model loaded before timing,
empty concept cache) on the labelled sentences plus the first ``--captions`` DCI references; the two
trees run alternately ``--repeats`` times and the best run of each counts (the machine is shared).

"before" is the parser at ``--before`` (a commit of this repository, exported with
``git archive`` into a temporary folder and run in a subprocess), "after" the working tree.

    python benchmarks/bench_extraction.py                     # before = 3889da8 (main before the repairs)
    python benchmarks/bench_extraction.py --before HEAD~3 --captions 300 --datasets /work/shared/datasets
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATASETS = ROOT.parent / "shared" / "datasets"
GOLD = ROOT / "tests" / "data" / "extraction_gold.jsonl"

# Run in a subprocess on either tree: extract the texts (one JSON list per line on stdin) and time it.
_WORKER = r"""
import json, sys, time
from hallu_studio.extraction import ParserExtractor
texts = json.loads(sys.stdin.read())
ex = ParserExtractor()
ex.extract(["Warm-up: a dog on a mat."])
t0 = time.perf_counter()
sets = ex.extract(texts)
elapsed = time.perf_counter() - t0
print(json.dumps({"seconds": elapsed, "sets": [s.to_dict() for s in sets]}))
"""


def _export(commit: str, dest: Path) -> None:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit, "hallu_studio"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")


def _run(tree: Path, texts: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    done = subprocess.run([sys.executable, "-c", _WORKER], input=json.dumps(texts), env=env, check=True,
                          capture_output=True, text=True, cwd=tree)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="3889da8", help="commit of the parser to compare with")
    ap.add_argument("--captions", type=int, default=200, help="DCI references added to the speed run")
    ap.add_argument("--datasets", default=str(DEFAULT_DATASETS), help="folder holding halfscore/ and tri-he/")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each tree, alternating")
    args = ap.parse_args()
    datasets = Path(args.datasets)
    sys.path.insert(0, str(ROOT))
    from hallu_studio.extraction.evaluation import CONCEPT_TYPES, load_gold, resolve, score
    from hallu_studio.model import ConceptSet

    if not (datasets / "halfscore" / "annotation.json").exists():
        sys.exit(f"{datasets} is not available: the labelled sentences live there (see --datasets)")
    gold = load_gold(GOLD)
    sentences = resolve(gold, datasets)
    captions = [r["caption"] for r in json.loads((datasets / "halfscore" / "annotation.json").read_text())]
    texts = sentences + captions[:args.captions]
    words = sum(len(t.split()) for t in texts)
    n_dci = sum(g.dataset.startswith("halfscore") for g in gold)
    print(f"{len(gold)} hand-labelled sentences ({n_dci} DCI, {len(gold) - n_dci} Tri-HE); "
          f"speed on {len(texts)} texts, {words} words")

    results: dict[str, tuple] = {}
    with tempfile.TemporaryDirectory() as tmp:
        _export(args.before, Path(tmp))
        for _ in range(max(args.repeats, 1)):
            for label, tree in ((f"before ({args.before})", Path(tmp)), ("after (working tree)", ROOT)):
                out = _run(tree, texts)
                found = [ConceptSet.from_dict(d) for d in out["sets"][:len(gold)]]
                speed = max(words / out["seconds"], results[label][1] if label in results else 0.0)
                results[label] = (score(found, [g.labels for g in gold]), speed)

    print(f"\n| extractor | {' | '.join(f'{k} P | {k} R' for k in CONCEPT_TYPES)} | words/s |")
    print("|---|" + "---|" * (2 * len(CONCEPT_TYPES) + 1))
    for label, (scores, speed) in results.items():
        cells = " | ".join(f"{_fmt(scores[k].precision)} | {_fmt(scores[k].recall)}" for k in CONCEPT_TYPES)
        print(f"| {label} | {cells} | {speed:,.0f} |")
    after = next(iter(reversed(results.values())))[0]
    print("\nlabels per type: " + ", ".join(f"{k} {after[k].gold}" for k in CONCEPT_TYPES))
    (before_speed, after_speed) = [s for _, s in results.values()]
    print(f"speed after / before: {after_speed / before_speed:.2f}")


if __name__ == "__main__":
    main()
