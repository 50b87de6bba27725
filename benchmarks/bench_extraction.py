"""Offline extraction quality and speed, before and after the parser's repairs, side by side.

Quality: precision and recall of objects, attributes, relations and counts on the
hand-labelled sentences of ``tests/data/extraction_gold.jsonl``: the dataset sentences (DCI
references and Tri-HE gold answers, read from ``../shared/datasets``; see
``benchmarks/extraction_evaluation.py``) and, in a table of their own, the short COCO-style
captions written for the gold (their text is in the file, so they need no dataset).
Probe counts: the share of the counts a probe caption states (rate 0.3, all four injection types, on
the sample benchmark's caption samples) that the extractor reads back with the same object name and
number; the probe records each count it writes, so this needs no labels.
People's span labels (``--human``): M-HalDetect's INACCURATE spans in 363 InstructBLIP descriptions
(``../shared/datasets/human/mhaldetect``): the share of marked spans that some extracted concept's span
overlaps (per concept type too), the share of concept spans on marks against the marked share of the
text, and how many sentences with / without a mark hold a concept (``evaluation.span_coverage``).
Skipped, with a message, when that folder is absent.
Speed: words per second of a fresh ``ParserExtractor`` (spaCy model loaded before timing,
empty concept cache) on the labelled sentences, the first ``--captions`` DCI references and the probe captions; the two
trees run alternately ``--repeats`` times and the best run of each counts (the machine is shared).

"before" is the parser at ``--before`` (a commit of this repository, exported with
``git archive`` into a temporary folder and run in a subprocess), "after" the working tree.

    python benchmarks/bench_extraction.py                     # before = 3889da8 (main before the repairs)
    python benchmarks/bench_extraction.py --before a7123d3 --human --datasets /work/shared/datasets
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
print(json.dumps({"seconds": elapsed, "sets": [s.to_dict(with_spans=True) for s in sets]}))
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


def _mhaldetect(datasets: Path) -> tuple[list[str], list[list[tuple[int, int]]]] | None:
    """M-HalDetect's descriptions (each once; the file resamples some) and the spans people marked INACCURATE."""
    path = datasets / "human" / "mhaldetect" / "processed_mhal_dataset.json"
    if not path.exists():
        return None
    marks: dict[str, list[tuple[int, int]]] = {}
    for row in json.loads(path.read_text(encoding="utf-8")):
        spans = [(int(s["start"]), int(s["end"])) for s in row.get("hallucination_spans") or []]
        marks.setdefault(str(row["test_solution"]), spans)
    return list(marks), list(marks.values())


def _quality_table(title: str, results: dict[str, list], labels: list, concept_types: tuple[str, ...]) -> None:
    from extraction_evaluation import score

    print(f"\n{title}\n")
    print(f"| extractor | {' | '.join(f'{k} P | {k} R' for k in concept_types)} |")
    print("|---|" + "---|" * (2 * len(concept_types)))
    for label, sets in results.items():
        scores = score(sets, labels)
        cells = " | ".join(f"{_fmt(scores[k].precision)} | {_fmt(scores[k].recall)}" for k in concept_types)
        print(f"| {label} | {cells} |")
    after = score(next(iter(reversed(results.values()))), labels)
    print("\nlabels per type: " + ", ".join(f"{k} {after[k].gold}" for k in concept_types))


def _span_table(results: dict[str, list], texts: list[str], marks: list) -> None:
    from extraction_evaluation import span_coverage

    n_marked = sum(1 for m in marks if m)
    print(f"\nM-HalDetect: {len(texts)} InstructBLIP descriptions ({n_marked} with a mark), "
          f"{sum(len(m) for m in marks)} spans people marked INACCURATE\n")
    print("| extractor | marks hit (any concept) | by objects | by attributes | by relations | by counts | "
          "concepts on marks | lift | mean concept span (chars) | marked sentences with a concept | "
          "clean sentences with a concept | concepts per marked / clean sentence |")
    print("|---|" + "---|" * 11)
    for label, sets in results.items():
        c = span_coverage(texts, marks, sets)
        by = " | ".join(f"{c.marks_hit[k] / c.marks:.2f}" for k in ("objects", "attributes", "relations", "counts"))
        print(f"| {label} | {_fmt(c.span_recall)} ({c.marks_hit['any']}/{c.marks}) | {by} | "
              f"{_fmt(c.on_marks)} ({c.concepts_on_marks}/{c.concepts}) | {_fmt(c.lift)} | "
              f"{c.concept_chars / max(c.concepts, 1):.1f} | "
              f"{c.marked_sentences_with_concept / max(c.marked_sentences, 1):.2f} "
              f"({c.marked_sentences_with_concept}/{c.marked_sentences}) | "
              f"{c.clean_sentences_with_concept / max(c.clean_sentences, 1):.2f} "
              f"({c.clean_sentences_with_concept}/{c.clean_sentences}) | "
              f"{c.concepts_in_marked_sentences / max(c.marked_sentences, 1):.2f} / "
              f"{c.concepts_in_clean_sentences / max(c.clean_sentences, 1):.2f} |")
    print(f"\nmarked share of the characters: {span_coverage(texts, marks, next(iter(results.values()))).marked_char_share:.2f}"
          " (lift 1.0: concepts fall on marks as often as on any text)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="3889da8", help="commit of the parser to compare with")
    ap.add_argument("--captions", type=int, default=200, help="DCI references added to the speed run")
    ap.add_argument("--datasets", default=str(DEFAULT_DATASETS), help="folder holding halfscore/, tri-he/, human/")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each tree, alternating")
    ap.add_argument("--human", action="store_true",
                    help="also measure how well concept spans point at the spans people marked (M-HalDetect)")
    args = ap.parse_args()
    datasets = Path(args.datasets)
    sys.path.insert(0, str(ROOT))
    from extraction_evaluation import CONCEPT_TYPES, load_gold, resolve
    from hallu_studio.model import ConceptSet

    gold = load_gold(GOLD)
    written = [g for g in gold if g.written]
    pointed = [g for g in gold if not g.written]
    if (datasets / "halfscore" / "annotation.json").exists():
        sentences = resolve(pointed, datasets)
        captions = [r["caption"] for r in json.loads((datasets / "halfscore" / "annotation.json").read_text())]
    else:
        print(f"{datasets} is not available: the dataset sentences and DCI references are skipped (see --datasets); "
              "the written captions and the probe captions still run")
        sentences, captions, pointed = [], [], []
    human = _mhaldetect(datasets) if args.human else None
    if args.human and human is None:
        print(f"--human: {datasets / 'human' / 'mhaldetect'} is not available; the span measure is skipped")
    human_texts, human_marks = human or ([], [])
    probe_texts, probe_counts = _probe_captions()
    texts = sentences + [g.text or "" for g in written] + captions[:args.captions]
    words = sum(len(t.split()) for t in texts + probe_texts)
    n_dci = sum(g.dataset.startswith("halfscore") for g in pointed)
    print(f"{len(pointed)} hand-labelled dataset sentences ({n_dci} DCI, {len(pointed) - n_dci} Tri-HE), "
          f"{len(written)} written captions; speed on {len(texts) + len(probe_texts)} texts (with the probe captions), "
          f"{words} words")

    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        _export(args.before, Path(tmp))
        for _ in range(max(args.repeats, 1)):
            for label, tree in ((f"before ({args.before})", Path(tmp)), ("after (working tree)", ROOT)):
                out = _run(tree, texts + probe_texts)
                sets = [ConceptSet.from_dict(d) for d in out["sets"]]
                speed = max(words / out["seconds"], results[label]["speed"] if label in results else 0.0)
                read = [{(c.object, c.count) for c in cs.counts} for cs in sets[len(texts):]]
                probe_recall = sum(len(said & got) for said, got in zip(probe_counts, read)) / \
                    max(sum(len(said) for said in probe_counts), 1)
                results[label] = {"sentences": sets[:len(sentences)],
                                  "written": sets[len(sentences):len(sentences) + len(written)],
                                  "speed": speed, "probe": probe_recall}
        if human_texts:
            for label, tree in ((f"before ({args.before})", Path(tmp)), ("after (working tree)", ROOT)):
                results[label]["human"] = [ConceptSet.from_dict(d) for d in _run(tree, human_texts)["sets"]]

    if pointed:
        _quality_table(f"Dataset sentences ({len(pointed)}: DCI references, Tri-HE gold answers)",
                       {k: r["sentences"] for k, r in results.items()}, [g.labels for g in pointed], CONCEPT_TYPES)
    _quality_table(f"Written short captions ({len(written)})", {k: r["written"] for k, r in results.items()},
                   [g.labels for g in written], CONCEPT_TYPES)
    if human_texts:
        _span_table({k: r["human"] for k, r in results.items()}, human_texts, human_marks)
    print("\n| extractor | probe counts R | words/s |\n|---|---|---|")
    for label, r in results.items():
        print(f"| {label} | {r['probe']:.2f} | {r['speed']:,.0f} |")
    print(f"probe counts: {sum(len(c) for c in probe_counts)} in {len(probe_texts)} captions")
    (before_speed, after_speed) = [r["speed"] for r in results.values()]
    print(f"speed after / before: {after_speed / before_speed:.2f}")


if __name__ == "__main__":
    main()
