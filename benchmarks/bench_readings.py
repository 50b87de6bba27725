"""The released readings beside the project's own, on real data (docs/validity.md, "Released readings").

Sections (each prints a Markdown table):

* ``trihe``: Tri-HE's embedding judge on the gold answers of ``../shared/datasets/tri-he`` (parser
  extraction): Hallu_Q with a 95 % bootstrap CI by image, claims supported; ``--dump FILE`` writes each
  claim's verdict so that two runs (the code before and after a change) can be compared with ``--compare``;
  and the released rule with each image's triplets in the file's own order against the order the importer
  gives them (scene-graph relations, then attributes, then the question's triplets).
* ``chair``: M-HalDetect's InstructBLIP descriptions (``../shared/datasets/human/mhaldetect``) with each
  image's COCO-80 objects: per description, whether people marked an inaccurate span; the share of counted
  mentions CHAIR flags in descriptions with and without one, and the AUROC of CHAIR_i for "has a marked span".
  The objects go in as a scene graph (how the code before ``reference_vocabulary`` had to take them) and,
  where the code knows it, as ``reference_objects`` with ``reference_vocabulary = "coco-80"``.
* ``reefknot``: Reefknot's released questions. The release's own ``response`` fields are all empty: Halr of
  those under each reading; and the probe's answers (synthetic, rate 0.2): Halr and the entropy flag per reading.

    python benchmarks/bench_readings.py [--sections trihe,chair,reefknot] [--shared DIR] [--dump FILE]
    python benchmarks/bench_readings.py --compare BEFORE.json AFTER.json

The same file runs against older code (a checkout of the commit before the readings existed): what that
code does not have is left out of its tables.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.config import Settings, apply_offline_env_defaults  # noqa: E402

apply_offline_env_defaults()

from hallu_studio.components import Components  # noqa: E402
from hallu_studio.extraction import ParserExtractor  # noqa: E402
from hallu_studio.metrics.aggregate import bootstrap_ci  # noqa: E402
from hallu_studio.metrics.base import ScoringItem  # noqa: E402
from hallu_studio.model import Sample, SceneGraph  # noqa: E402

SECTIONS = ("trihe", "chair", "reefknot")


def shared_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get("HALLU_STUDIO_SHARED") or ROOT.parent / "shared") / "datasets"


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(a positive scores above a negative), ties counted half (Mann-Whitney)."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives)) if positives and negatives else float("nan")


def in_batches(metric: Any, items: Sequence[ScoringItem], size: int = 64) -> list[Any]:
    out: list[Any] = []
    for k in range(0, len(items), size):
        chunk = items[k:k + size]
        out.extend(metric.update_many(chunk) if hasattr(metric, "update_many") else [metric.update(i) for i in chunk])
    return out


def has_setting(section: str, name: str) -> bool:
    return hasattr(getattr(Settings(), section), name)


# ----------------------------------------------------------------------------- Tri-HE

def section_trihe(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    from hallu_studio.importers.tri_he import read_tri_he
    from hallu_studio.judges import JudgeReference
    from hallu_studio.metrics.trihe import TriHEMetric, reference_for, response_claims

    folder = args.shared / "tri-he"
    if not folder.exists():
        return "### Tri-HE embedding judge\n\n(skipped: ../shared/datasets/tri-he is not here)"
    samples = [s for s in read_tri_he(folder).samples if s.answer][:args.questions]
    t0 = time.perf_counter()
    concepts = extractor.extract([s.answer or "" for s in samples])
    print(f"  extracted {len(samples)} gold answers in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    items = [ScoringItem(s.id, s.answer or "", s, mentioned=c) for s, c in zip(samples, concepts)]
    settings = Settings()
    settings.scoring.trihe_judge = "embedding"
    metric = TriHEMetric.from_settings(settings)
    results = in_batches(metric, items)
    stats = [r.stats for r in results]
    value, low, high = bootstrap_ci(stats, metric.compute, clusters=[s["image"] for s in stats], n_boot=args.n_boot,
                                    key="hallu_q")
    verdicts = {f"{i.response_id}#{k}": t["verdict"] for i, r in zip(items, results)
                for k, t in enumerate(r.evidence.get("triplets") or [])}
    supported = sum(v == "supported" for v in verdicts.values())
    if args.dump:
        Path(args.dump).write_text(json.dumps(verdicts, indent=0), encoding="utf-8")
    lines = [f"### Tri-HE embedding judge on the gold answers ({len(samples)} questions, "
             f"{len({s.image_key for s in samples})} images, parser extraction)", "",
             "| Hallu_Q [95 % CI] | claims | supported | verdicts |", "|---|---|---|---|",
             f"| {value:.1f} [{low:.1f}, {high:.1f}] | {len(verdicts)} | {supported} ({supported / len(verdicts):.3f}) | "
             + ", ".join(f"{k} {n}" for k, n in sorted(Counter(verdicts.values()).items())) + " |"]
    if hasattr(metric.judge, "scores"):  # the released rule: the reference order the file gives
        raw = json.loads((folder / "tri-he.json").read_text(encoding="utf-8"))
        judge, same, differ, n = metric.judge, 0, [], 0
        for item in items:
            claims = [t for t, _ in response_claims(item.mentioned)] if item.mentioned else []
            if not claims:
                continue
            ours = reference_for(item.sample)
            listed = [tuple(p.strip() for p in t.strip().strip("()").split(",")) for t in
                      raw[item.sample.image_key]["triplets"]]
            theirs = JudgeReference(triplets=[t for t in listed if len(t) == 3], objects=ours.objects)
            for c, a, b in zip(claims, judge.scores(claims, ours), judge.scores(claims, theirs)):
                n += 1
                ok_a = a is not None and a.score > judge.support_threshold
                ok_b = b is not None and b.score > judge.support_threshold
                if ok_a == ok_b:
                    same += 1
                else:
                    differ.append((item.response_id, c, a.score if a else None, b.score if b else None))
        lines += ["", f"Released rule, the importer's reference order against the file's: {same} of {n} claims get the "
                  f"same support verdict; {len(differ)} differ" + (":" if differ else ".")]
        lines += [f"- {rid} {c}: {a:.4f} (importer's order) vs {b:.4f} (file's order)"
                  for rid, c, a, b in differ[:10] if a is not None and b is not None]
    return "\n".join(lines)


def compare(before: Path, after: Path) -> str:
    a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (before, after))
    both = sorted(set(a) & set(b))
    moved = Counter((a[k] == "supported", b[k] == "supported") for k in both)
    return (f"{len(both)} claims in both runs: supported before and after {moved[(True, True)]}, "
            f"newly supported {moved[(False, True)]}, no longer supported {moved[(True, False)]}, "
            f"unsupported in both {moved[(False, False)]}")


# ----------------------------------------------------------------------------- CHAIR on M-HalDetect

def mhaldetect(folder: Path) -> list[tuple[Sample, str, bool]]:
    """(sample with the image's COCO objects, description, whether people marked an inaccurate span), once per
    distinct description."""
    rows = json.loads((folder / "processed_mhal_dataset.json").read_text(encoding="utf-8"))
    objects = json.loads((folder / "coco_objects_for_these_images.json").read_text(encoding="utf-8"))
    seen: dict[str, tuple[str, str, bool]] = {}
    for r in rows:
        image = str(int(r["image_path"].rsplit("_", 1)[1].split(".")[0]))
        seen.setdefault(r["test_solution"], (image, r["id"], bool(r["hallucination_spans"])))
    out = []
    for text, (image, rid, marked) in seen.items():
        names = list(objects.get(image, []))
        graph = SceneGraph.from_dict({"objects": [{"id": str(k), "name": n} for k, n in enumerate(names)]})
        out.append((Sample(id=f"mhal/{rid}", benchmark="mhal", image_key=image, task="caption", scene_graph=graph,
                           meta={"coco_objects": names}), text, marked))
    return out


def as_coco_80(sample: Sample) -> Sample:
    return Sample(id=sample.id, benchmark=sample.benchmark, image_key=sample.image_key, task=sample.task,
                  reference_objects=list(sample.meta["coco_objects"]), reference_vocabulary="coco-80")


def chair_row(label: str, metric: Any, items: Sequence[ScoringItem], marked: Sequence[bool]) -> str:
    results = in_batches(metric, items)
    flagged = {True: [0, 0], False: [0, 0]}
    scores = {True: [], False: []}
    for r, m in zip(results, marked):
        flagged[m][0] += int(r.values["hallucinated_objects"])
        flagged[m][1] += int(r.values["mentioned_objects"])
        scores[m].append(r.values["chair_i_item"] or 0.0)
    share = {m: flagged[m][0] / flagged[m][1] if flagged[m][1] else float("nan") for m in (True, False)}
    vocab = results[0].evidence.get("vocabulary", "the image's objects") if results else ""
    return (f"| {label} | {vocab} | {share[True]:.2f} ({flagged[True][0]}/{flagged[True][1]}) | "
            f"{share[False]:.2f} ({flagged[False][0]}/{flagged[False][1]}) | {auroc(scores[True], scores[False]):.2f} |")


def section_chair(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    from hallu_studio.metrics.chair import ChairMetric

    folder = args.shared / "human" / "mhaldetect"
    if not folder.exists():
        return "### CHAIR on M-HalDetect\n\n(skipped: ../shared/datasets/human/mhaldetect is not here)"
    data = mhaldetect(folder)
    t0 = time.perf_counter()
    concepts = extractor.extract([t for _, t, _ in data])
    print(f"  extracted {len(data)} descriptions in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    marked = [m for _, _, m in data]
    graph_items = [ScoringItem(s.id, t, s, mentioned=c) for (s, t, _), c in zip(data, concepts)]
    lines = [f"### CHAIR on M-HalDetect: {len(data)} distinct InstructBLIP descriptions, {sum(marked)} with a marked "
             "inaccurate span", "",
             "| CHAIR | vocabulary | mentions flagged, marked descriptions | mentions flagged, clean descriptions | "
             "AUROC of CHAIR_i for \"has a marked span\" |", "|---|---|---|---|---|",
             chair_row("objects as the scene graph (the code's only way before), studio", ChairMetric(), graph_items,
                       marked)]
    if has_setting("scoring", "chair_reading"):
        coco_items = [ScoringItem(i.response_id, i.response, as_coco_80(i.sample), mentioned=i.mentioned)
                      for i in graph_items]
        lines.append(chair_row("objects as the scene graph, released", ChairMetric(reading="released"), graph_items,
                               marked))
        lines.append(chair_row("reference_objects + reference_vocabulary coco-80, studio", ChairMetric(), coco_items,
                               marked))
        lines.append(chair_row("reference_objects + reference_vocabulary coco-80, released",
                               ChairMetric(reading="released"), coco_items, marked))
    return "\n".join(lines)


# ----------------------------------------------------------------------------- Reefknot

def section_reefknot(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    from hallu_studio.backends.probe import ProbeOptions, describe
    from hallu_studio.importers.reefknot import read_reefknot
    from hallu_studio.metrics.reefknot import ReefknotMetric

    folder = args.shared / "reefknot"
    if not folder.exists():
        return "### Reefknot\n\n(skipped: ../shared/datasets/reefknot is not here)"
    samples = [s for s in read_reefknot(folder)[0].samples if s.task in ("yes_no", "mcq")]
    readings = ["studio", "released"] if has_setting("scoring", "reefknot_reading") else ["studio"]
    options = ProbeOptions.parse("rate=0.2,seed=1")
    probe = []
    for s in samples:
        text, signals = describe(s, options, random.Random(f"reefknot/{s.id}"))
        probe.append(ScoringItem(f"probe/{s.id}", text, s, mentioned=None, signals=signals))
    empty = [ScoringItem(f"file/{s.id}", "", s, mentioned=None) for s in samples]
    lines = [f"### Reefknot: {len(samples)} released yes/no and multiple-choice questions", "",
             "| answers | reading | Halr yes/no | Halr MCQ | yes-ratio | entropy flagged (share) |",
             "|---|---|---|---|---|---|"]
    for label, items in (("the release's own responses (all empty)", empty), ("probe, rate 0.2 (synthetic)", probe)):
        for reading in readings:
            kwargs = {"reading": reading, "entropy_reading": reading} if len(readings) > 1 else {}
            metric = ReefknotMetric(**kwargs)
            out = metric.compute([r.stats for r in in_batches(metric, items, 512)])
            flagged = out.get("entropy.flagged_share")
            lines.append(f"| {label} | {reading} | {out.get('halr.yes_no', float('nan')):.2f} | "
                         f"{out.get('halr.mcq', float('nan')):.2f} | {out.get('yes_ratio', float('nan')):.3f} | "
                         + (f"{flagged:.3f} |" if flagged is not None else "— |"))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--shared", default=None, help="the folder holding datasets/ (default ../shared)")
    ap.add_argument("--questions", type=int, default=100_000, help="Tri-HE: the first N questions with an answer")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--dump", default=None, help="Tri-HE: write each claim's verdict to this JSON file")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two --dump files and stop")
    args = ap.parse_args()
    if args.compare:
        print(compare(Path(args.compare[0]), Path(args.compare[1])))
        return
    args.shared = shared_dir(args.shared)
    extractor = Components(Settings()).parser()
    chosen = [s.strip() for s in args.sections.split(",") if s.strip()]
    for name in chosen:
        if name not in SECTIONS:
            raise SystemExit(f"unknown section {name!r}; choose from {', '.join(SECTIONS)}")
    for name in chosen:
        t0 = time.perf_counter()
        print(globals()[f"section_{name}"](args, extractor))
        print()
        print(f"  {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
