"""HalFscore validity: probe detection on the sample captions, and ranking real DCI captions above degraded copies.

1. Sample benchmark, task "caption": probe captions (rate 0.3, all four types, seed 1),
   concepts by the offline parser, HalFscore with each matcher; detection rate per injected
   type and false-alarm rate (``studies.probe_detection.detection_row``).
2. Real DCI references (``../shared/datasets/halfscore``: annotation.json and the LLaVA-1.5
   captions), the first N images: each real caption against four degraded copies (relations
   swapped, colours changed, counts changed, objects added; a copy the caption offers nothing
   to degrade is skipped). The real caption must have the higher HalFscore F; a tie is a miss.
3. Speed: responses per second of each matcher on the same items, side by side.

    PYTHONPATH=$PWD python benchmarks/bench_halfscore_validity.py [--images 100] [--matchers graph,embedding]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path

from hallu_studio.backends.probe import ProbeOptions, describe
from hallu_studio.config import Settings
from hallu_studio.extraction import ParserExtractor
from hallu_studio.lexicon.attributes import FAMILIES
from hallu_studio.lexicon.words import NUMBER_WORDS
from hallu_studio.metrics.base import ScoringItem
from hallu_studio.metrics.halfscore import HalFscoreMetric
from hallu_studio.model import Sample, content_key
from hallu_studio.studies.probe_detection import ProbeItem, detection_row

DCI = Path(os.environ.get("HALFSCORE_DATA", Path(__file__).resolve().parents[1] / ".." / ".." / "shared" / "datasets" / "halfscore"))
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

_COLOURS = sorted({sorted(c)[0] for scale in FAMILIES["colour"] for c in scale} - {"blond"})
_COLOUR_WORDS = {w for scale in FAMILIES["colour"] for c in scale for w in c}
_SWAPS = {"left": "right", "right": "left", "on": "under", "under": "on", "above": "below", "below": "above",
          "behind": "in front of", "in front of": "behind", "inside": "outside", "outside": "inside",
          "holding": "dropping", "wearing": "holding", "riding": "pushing", "sitting on": "standing under",
          "standing on": "lying under", "next to": "far from", "near": "far from", "beside": "far from",
          "top": "bottom", "bottom": "top"}
_ADDED = ("a giraffe", "a pizza", "a red umbrella", "a surfboard", "an elephant", "a toaster", "a kite", "a teddy bear",
          "a zebra", "a snowboard", "a hair drier", "a saxophone")


def degrade(caption: str, how: str, rng: random.Random, reference: str = "") -> str | None:
    """A copy of ``caption`` with one kind of error everywhere it can be made; None if it cannot.

    Added objects are ones the reference text never names (an added object must be absent).
    """
    if how == "relations":
        keys = sorted(_SWAPS, key=len, reverse=True)
        pattern = re.compile(r"\b(" + "|".join(re.escape(k) for k in keys) + r")\b", re.IGNORECASE)
        out = pattern.sub(lambda m: _SWAPS[m.group(1).lower()], caption)
    elif how == "colours":
        pattern = re.compile(r"\b(" + "|".join(sorted(_COLOUR_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
        out = pattern.sub(lambda m: rng.choice([c for c in _COLOURS if c != m.group(1).lower()]), caption)
    elif how == "counts":
        words = NUMBER_WORDS[2:11]
        pattern = re.compile(r"\b(" + "|".join(words) + r"|\d+)\b", re.IGNORECASE)

        def other(m: re.Match) -> str:
            w = m.group(1).lower()
            n = int(w) if w.isdigit() else NUMBER_WORDS.index(w)
            return NUMBER_WORDS[n + 2] if n + 2 < len(NUMBER_WORDS) else str(n + 2)
        out = pattern.sub(other, caption)
    elif how == "objects":
        named = set(re.findall(r"[a-z]+", reference.lower()))
        absent = [a for a in _ADDED if not set(a.split()[1:]) & named]
        extra = rng.sample(absent, 2)
        out = caption.rstrip() + f" There is also {extra[0]} and {extra[1]} in the image."
    else:
        raise ValueError(how)
    return out if out != caption else None


def dci(matchers: list[str], n_images: int, extractor: ParserExtractor) -> dict[str, float]:
    from hallu_studio.importers.halfscore import read_halfscore_annotations

    refs = {s.image_key: s for s in read_halfscore_annotations(DCI / "annotation.json").samples}
    captions = [json.loads(line) for line in (DCI / "llava-1.5-7b_captions.jsonl").read_text().splitlines() if line.strip()]
    rows = []
    for c in captions:
        sample = refs.get(c["image"].strip())
        if sample is not None:
            rows.append((sample, c["caption"]))
        if len(rows) == n_images:
            break
    kinds = ("relations", "colours", "counts", "objects")
    texts, owners = [], []
    for i, (sample, caption) in enumerate(rows):
        rng = random.Random(i)
        texts.append(caption)
        owners.append((i, "real"))
        for how in kinds:
            d = degrade(caption, how, rng, sample.reference_text or "")
            if d is not None:
                texts.append(d)
                owners.append((i, how))
    concepts = extractor.extract(texts)
    extract = lambda text: extractor.extract([text])[0]  # noqa: E731
    speed = {}
    for name in matchers:
        m = metric(name, extract)
        items = [ScoringItem(f"r{j}", t, rows[i][0], mentioned=c) for j, (t, (i, _), c) in enumerate(zip(texts, owners, concepts))]
        m.update_many(items[:1])  # the reference extraction is shared; time the matching
        t0 = time.perf_counter()
        results = m.update_many(items)
        speed[name] = len(items) / (time.perf_counter() - t0)
        f = {}
        for (i, how), r in zip(owners, results):
            f.setdefault(i, {})[how] = r.values.get("f")
        wins = {k: [0, 0, 0] for k in kinds}  # strictly above, at least as high, copies
        all_above = all_level = 0
        for i, by in f.items():
            ok = level = True
            for how in kinds:
                if how in by:
                    wins[how][2] += 1
                    real, worse = by["real"], by[how]
                    above = real is not None and worse is not None and real > worse
                    not_below = real is not None and worse is not None and real >= worse
                    wins[how][0] += above
                    wins[how][1] += not_below
                    ok, level = ok and above, level and not_below
            all_above += ok
            all_level += level
        per = "  ".join(f"{k} {w}/{n} (tied or above {t}/{n})" for k, (w, t, n) in wins.items())
        print(f"  {name:9s} real strictly above every degraded copy on {all_above}/{len(f)} images "
              f"({all_above / len(f):.0%}), tied or above on {all_level}/{len(f)};  per degradation: {per}")
    return speed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=100)
    ap.add_argument("--samples", type=int, default=None, help="first N sample captions (default all)")
    ap.add_argument("--matchers", default="graph,embedding")
    args = ap.parse_args(argv)
    matchers = [m.strip() for m in args.matchers.split(",") if m.strip()]
    extractor = ParserExtractor()
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
