"""HalFscore validity: probe detection on the sample captions, and ranking real DCI captions above degraded copies.

1. Sample benchmark, task "caption": probe captions (rate 0.3, all four types, seed 1),
   concepts by the offline parser, HalFscore with each matcher; detection rate per injected
   type and false-alarm rate (``studies.probe_detection.detection_row``).
2. Real DCI references (``../shared/datasets/halfscore``: annotation.json and the LLaVA-1.5
   captions), the first N images: each real caption against copies of itself made more wrong
   where the reference can tell (``benchmarks/reference_degradation.py``, as
   ``bench_validity.py --sections dci``): relations swapped, colours changed, counts changed,
   objects added, and all four in one copy; an image with nothing the reference verifies for a
   kind is left out of it (n per kind). Per matcher: the share of images where the real caption
   has the strictly higher HalFscore F, with wins / ties / losses.
3. Speed: responses per second of each matcher on the same items, side by side.

    PYTHONPATH=$PWD python benchmarks/bench_halfscore_validity.py [--images 100] [--matchers graph,embedding]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

from hallu_studio.backends.probe import ProbeOptions, describe
from hallu_studio.components import Components
from hallu_studio.config import Settings
from hallu_studio.extraction import ParserExtractor
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.halfscore import HalFscoreMetric
from hallu_studio.model import Sample, content_key
from hallu_studio.studies.probe_detection import ProbeItem, detection_row

DCI = Path(os.environ.get("HALFSCORE_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "halfscore"))
PROBE = "rate=0.3,mix=object+attribute+relation+count,seed=1"


def metric(matcher: str, extract=None) -> HalFscoreMetric:
    return HalFscoreMetric.from_settings(Settings(), matcher=matcher, extract=extract)


# ----------------------------------------------------------------------------- 1. probe detection

def probe_items(limit: int | None) -> tuple[list[Sample], list[tuple[str, dict]]]:
    from hallu_studio.sample import build_sample_benchmark

    samples = [s for s in build_sample_benchmark().samples if s.task == "caption"][:limit]
    opts = ProbeOptions.parse(PROBE)
    out = []
    for s in samples:
        rng = random.Random(content_key("probe", opts.seed, s.id, opts.rate, list(opts.mix), "caption"))
        out.append(describe(s, opts, rng))
    return samples, out


def detection(matchers: list[str], samples, captions, extractor: ParserExtractor) -> dict[str, float]:
    concepts = extractor.extract([t for t, _ in captions])
    speed = {}
    for name in matchers:
        m = metric(name)
        items = [ScoringItem(f"r{i}", t, s, mentioned=c) for i, (s, (t, _), c) in enumerate(zip(samples, captions, concepts))]
        t0 = time.perf_counter()
        results = m.update_many(items)
        speed[name] = len(items) / (time.perf_counter() - t0)
        probe = [ProbeItem(t, sig["injected"], sig["stated"], r.values, r.evidence, r.values.get("f"),
                           c.to_dict(with_spans=True)) for (t, sig), r, c in zip(captions, results, concepts)]
        row = detection_row("halfscore", probe)
        types = "  ".join(f"{k} {d / n:.2f} ({d}/{n})" for k, (n, d) in row.by_type.items())
        print(f"  {name:9s} detected {row.detection_rate:.2f}  false alarms {row.false_alarm_rate:.3f} "
              f"({row.false_alarms}/{row.stated})  by type: {types}")
    return speed


# ----------------------------------------------------------------------------- 2. DCI degradations

def dci(matchers: list[str], n_images: int, extractor: ParserExtractor) -> dict[str, float]:
    """Each real caption against copies of itself made more wrong where the DCI reference can tell
    (``studies.reference_degradation``, the degradations of ``bench_validity.py --sections dci``, same seeds)."""
    from bench_validity import read_dci  # beside this script (on sys.path when run): one reading of the DCI files

    from reference_degradation import ALL, KINDS, degrade, summary, wins_ties_losses

    keys, samples, captions = read_dci(DCI, n_images)
    said = dict(zip(keys, extractor.extract([captions[k] for k in keys])))
    reference_texts = {k: samples[k].reference_text or "" for k in keys}
    refs = dict(zip(keys, extractor.extract([reference_texts[k] for k in keys])))
    plans = {k: degrade(captions[k], said[k], refs[k], random.Random(f"dci/{k}")) for k in keys}
    kinds = [*KINDS, ALL]
    texts, owners = [], []  # every response scored, and (image, kind or "real")
    for k in keys:
        texts.append(captions[k])
        owners.append((k, "real"))
        for kind in kinds:
            copy = plans[k].copy(KINDS if kind == ALL else [kind])
            if copy is not None:
                texts.append(copy)
                owners.append((k, kind))
    concepts = extractor.extract(texts)
    parsed_references = {reference_texts[k]: refs[k] for k in keys}

    def extract(text: str):
        return parsed_references[text] if text in parsed_references else extractor.extract([text])[0]

    n = summary(plans)
    print("  n per kind (images where the reference verifies something to change; stated = a sentence added): " +
          ", ".join(f"{kind} {n[kind][0]}" + (f" ({n[kind][1]} stated)" if n[kind][1] else "") for kind in kinds))
    speed = {}
    for name in matchers:
        m = metric(name, extract)
        items = [ScoringItem(f"r{j}", t, samples[k], mentioned=c) for j, (t, (k, _), c) in
                 enumerate(zip(texts, owners, concepts))]
        m.update_many(items[:1])  # warm; the reference extraction is shared: time the matching
        t0 = time.perf_counter()
        results = m.update_many(items)
        speed[name] = len(items) / (time.perf_counter() - t0)
        f: dict[str, dict[str, float | None]] = {}
        for (k, kind), r in zip(owners, results):
            v = r.values.get("f")
            f.setdefault(k, {})[kind] = None if v is None else float(v)
        cells = []
        real = {k: by["real"] for k, by in f.items()}
        for kind in kinds:
            win, tie, loss = wins_ties_losses(real, {k: by[kind] for k, by in f.items() if kind in by}, True)
            total = win + tie + loss
            share = f"{win / total:.2f}" if total else "n/a"
            cells.append(f"{kind} {share} ({win}/{tie}/{loss})")
        print(f"  {name:9s} real caption strictly higher F (wins/ties/losses): " + ";  ".join(cells))
    return speed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=100)
    ap.add_argument("--samples", type=int, default=None, help="first N sample captions (default all)")
    ap.add_argument("--matchers", default="graph,embedding")
    args = ap.parse_args(argv)
    matchers = [m.strip() for m in args.matchers.split(",") if m.strip()]
    extractor = Components(Settings()).parser()
    samples, captions = probe_items(args.samples)
    print(f"1. Sample captions, probe {PROBE}: {len(captions)} responses")
    speed1 = detection(matchers, samples, captions, extractor)
    if (DCI / "annotation.json").exists():
        print(f"2. DCI references with LLaVA-1.5-7B captions, first {args.images} images")
        speed2 = dci(matchers, args.images, extractor)
    else:
        print(f"2. skipped: no DCI data at {DCI}")
        speed2 = {}
    print("3. Speed (responses/s, matching only, same items side by side)")
    for name in matchers:
        dci_speed = f", DCI {speed2[name]:.0f}" if name in speed2 else ""
        print(f"  {name:9s} sample {speed1[name]:.0f}{dci_speed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
