"""Offline extraction quality and speed, before and after the dense-text repairs, side by side.

Quality: precision and recall of objects, attributes, relations and counts on the
hand-labelled sentences of ``tests/data/extraction_gold.jsonl`` (DCI references and Tri-HE
gold answers, read from ``../shared/datasets``; see ``hallu_studio.extraction.evaluation``).
Probe counts: the share of the counts a probe caption states (rate 0.3, all four injection types, on
the sample benchmark's caption samples) that the extractor reads back with the same object name and
number; the probe records each count it writes, so this needs no labels.
Speed: words per second of a fresh ``ParserExtractor`` (spaCy model loaded before timing,
empty concept cache) on the labelled sentences, the first ``--captions`` DCI references and the probe captions; the two
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


def _probe_captions() -> tuple[list[str], list[set[tuple[str, int]]]]:
    """Probe captions of the sample benchmark (rate 0.3, every type) and the counts each one states."""
    import random

    from hallu_studio.backends.probe import ProbeOptions, describe
    from hallu_studio.lexicon.forms import normalize_name
    from hallu_studio.sample.build import build_sample_benchmark

    samples = [s for s in build_sample_benchmark(synthetic_scenes=30, with_variants=False).samples
               if s.task == "caption"]
    texts, counts = [], []
    for s in samples:
        text, signals = describe(s, ProbeOptions(rate=0.3, seed=1), random.Random(1))
        texts.append(text)
        counts.append({(normalize_name(r["concept"][0]), int(r["concept"][1]))
                       for r in signals["injected"] + signals["stated"] if r["type"] == "count"})
    return texts, counts


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
    probe_texts, probe_counts = _probe_captions()
    texts = sentences + captions[:args.captions]
    words = sum(len(t.split()) for t in texts + probe_texts)
    n_dci = sum(g.dataset.startswith("halfscore") for g in gold)
    print(f"{len(gold)} hand-labelled sentences ({n_dci} DCI, {len(gold) - n_dci} Tri-HE); "
          f"speed on {len(texts) + len(probe_texts)} texts (with the probe captions), {words} words")

    results: dict[str, tuple] = {}
    with tempfile.TemporaryDirectory() as tmp:
        _export(args.before, Path(tmp))
        for _ in range(max(args.repeats, 1)):
            for label, tree in ((f"before ({args.before})", Path(tmp)), ("after (working tree)", ROOT)):
                out = _run(tree, texts + probe_texts)
                sets = [ConceptSet.from_dict(d) for d in out["sets"]]
                speed = max(words / out["seconds"], results[label][1] if label in results else 0.0)
                read = [{(c.object, c.count) for c in cs.counts} for cs in sets[len(texts):]]
                probe_recall = sum(len(said & got) for said, got in zip(probe_counts, read)) / \
                    max(sum(len(said) for said in probe_counts), 1)
                results[label] = (score(sets[:len(gold)], [g.labels for g in gold]), speed, probe_recall)

    print(f"\n| extractor | {' | '.join(f'{k} P | {k} R' for k in CONCEPT_TYPES)} | probe counts R | words/s |")
    print("|---|" + "---|" * (2 * len(CONCEPT_TYPES) + 2))
    for label, (scores, speed, probe_recall) in results.items():
        cells = " | ".join(f"{_fmt(scores[k].precision)} | {_fmt(scores[k].recall)}" for k in CONCEPT_TYPES)
        print(f"| {label} | {cells} | {probe_recall:.2f} | {speed:,.0f} |")
    after = next(iter(reversed(results.values())))[0]
    print("\nlabels per type: " + ", ".join(f"{k} {after[k].gold}" for k in CONCEPT_TYPES))
    print(f"probe counts: {sum(len(c) for c in probe_counts)} in {len(probe_texts)} captions")
    (before_speed, after_speed) = [r[1] for r in results.values()]
    print(f"speed after / before: {after_speed / before_speed:.2f}")


if __name__ == "__main__":
    main()
