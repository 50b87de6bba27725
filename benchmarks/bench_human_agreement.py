"""Do HalluStudio's hallucination scores agree with people on real model outputs? Four published human studies.

For each set in ``../shared/datasets/human`` (or ``$HALLU_STUDIO_SHARED/datasets/human``), through the
product path, as a user would run it:

1. ``importers.human.read_human_judgements`` + ``pipelines.importing.import_human_study`` into a store of
   its own (``hallu-studio import --format human-judgements``);
2. ``pipelines.scoring.score_store`` with ``--metrics`` (``hallu-studio score``; default trihe, halfscore,
   emd, chair) under the settings (``--config``, else the defaults);
3. ``studies.human_sources.human_agreement`` on the stored scores (``hallu-studio study --source SET``).

It prints, per set: AUROC and AP of "contains a hallucination" (HaELM: people's label; M-HalDetect: any
marked span; FaithScore: any fact labelled hallucinated), rank correlation with the side-by-side
hallucination rating (IIW-400), span precision and recall against the marked spans (M-HalDetect), balanced
accuracy and coverage of the Tri-HE judge on the labelled facts (FaithScore), and each score's mean over
accurate vs hallucinated outputs; for every headline score (Tri-HE hallucinated share, HalFscore
1 - precision, EMD object / total, CHAIR-i) with two baselines beside it: CHAIR, and the naive
1 - mean MiniLM cosine between the response and its references (``studies.baselines``). Then the issue's
targets, met or not.

Caching: each set's scored store is kept under ``--cache`` (default ``~/.cache/hallu-studio/
bench_human_agreement``), keyed by a hash of the package's files on the import and scoring path (all but
``NOT_SCORING``), the settings, the set's files and the options; any change to them scores afresh (nothing
stale is reused). A rerun of unchanged code only re-imports (adding nothing), re-reads and recomputes the
study. ``--no-cache`` always starts empty.

    python benchmarks/bench_human_agreement.py [--sets haelm,mhaldetect,faithscore,iiw400] [--limit N]
        [--n-boot 1000] [--config TOML] [--objects-as-scene-graph] [--no-cache] [--write]

The first line says which lexical resources were in force (``benchmarks/measured_with.py``): the README install's
(``pip install`` alone: WordNet 3.0 shipped with the package) unless ``$WORDNET_DIR`` overrides it.

``--judge vlm --vlm-model SPEC --images DIR`` adds the image judge (``judges.vlm_judge``; docs/guide/image-judge.md):
each set's samples get their images from DIR (by file name, id, or a COCO file name ending in the id), and
Tri-HE and HalFscore are scored again with the image judge for what the reference leaves unverifiable ("reference +
image"), and Tri-HE with the image judge alone ("image"); every table shows those rows beside the reference
judges' (the same score name, `· reference + image` / `· image`), and the fact table has both judges. Needs a
model (any ``run --model`` spec) and the images; the sets' COCO images are not in ``../shared``.

``--objects-as-scene-graph`` also gives each sample with an object list a scene graph of those objects
(no attributes, no relations): how the issue's "before" figures were measured, when an object list could
only be passed that way. ``--write`` puts the output into docs/validity.md between the
``<!-- bench_human_agreement -->`` markers.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.config import Settings, apply_offline_env_defaults, load_settings  # noqa: E402

apply_offline_env_defaults()

from hallu_studio.importers.human import ParsedHumanStudy, read_human_judgements  # noqa: E402
from hallu_studio.model import Response, Run, SceneGraph, SceneObject  # noqa: E402
from hallu_studio.pipelines.importing import import_human_study  # noqa: E402
from hallu_studio.pipelines.scoring import score_store  # noqa: E402
from measured_with import install_note  # noqa: E402
from hallu_studio.store import Store  # noqa: E402
from hallu_studio.studies.human_sources import (HUMAN_KINDS, HumanAgreementReport, human_agreement,  # noqa: E402
                                                rating_targets, response_calls)

SETS: tuple[str, ...] = ("haelm", "mhaldetect", "faithscore", "iiw400", "haelm-heldout")
# A variant of a set: its folder, and what is done to the study read from it.
VARIANT_OF = {"haelm-heldout": "haelm"}
METRICS: tuple[str, ...] = ("trihe", "halfscore", "emd", "chair")
HEADLINE: tuple[str, ...] = ("trihe share", "halfscore 1-precision", "emd object", "emd total", "chair-i")
SHOWN: tuple[str, ...] = (*HEADLINE, "naive 1-cosine")
BASELINES = {"chair-i": "CHAIR (baseline)", "naive 1-cosine": "naive 1 − MiniLM cosine (baseline)"}
LABELS = {"trihe share": "Tri-HE hallucinated share", "halfscore 1-precision": "HalFscore 1 − precision",
          "emd object": "EMD object", "emd total": "EMD total", **BASELINES}
DESCRIPTIONS = {
    "haelm": "HaELM: LVLM captions people called accurate or not; 5 COCO reference captions each",
    "mhaldetect": "M-HalDetect (MHALO subset): InstructBLIP descriptions, spans people marked inaccurate; "
                  "reference: the image's COCO-80 object set",
    "faithscore": "FaithScore: LVLM answers, atomic facts people labelled; reference: the image's COCO-80 "
                  "object set",
    "iiw400": "IIW-400: PaLI-5B descriptions rated side by side against a person's (5 points, hallucination "
              "aspect); reference: the human description and object annotations",
    "haelm-heldout": "HaELM, one caption held out: the first of each image's five COCO captions scored as people's "
                     "output beside the LVLM captions, all against the other four",
}
MARK_BEGIN, MARK_END = "<!-- bench_human_agreement -->", "<!-- /bench_human_agreement -->"


def shared_human() -> Path:
    base = Path(os.environ["HALLU_STUDIO_SHARED"]) if os.environ.get("HALLU_STUDIO_SHARED") else ROOT.parent / "shared"
    return base / "datasets" / "human"


# ----------------------------------------------------------------------------- preparing a set


def limited(study: ParsedHumanStudy, limit: int | None) -> ParsedHumanStudy:
    """The study cut to its first ``limit`` judged responses (file order), their samples and judgements."""
    if limit is None:
        return study
    kept = study.responses.responses[:limit]
    ids = {r.id for r in kept}
    samples = {r.sample_id for r in kept}
    study.responses.responses = kept
    study.responses.runs = [r for r in study.responses.runs if r.id in {x.run_id for x in kept}]
    study.benchmark.samples = [s for s in study.benchmark.samples if s.id in samples]
    study.events = [e for e in study.events if e.response_id in ids]
    return study


def objects_as_scene_graph(study: ParsedHumanStudy) -> None:
    """Give each sample with an object list a scene graph of those objects (the issue's "before" setup)."""
    for s in study.benchmark.samples:
        if s.reference_objects and s.scene_graph.is_empty():
            s.scene_graph = SceneGraph([SceneObject(f"o{i}", name) for i, name in enumerate(s.reference_objects)])


# Subpackages the import and scoring path never imports (checked by grep when this was written): editing them
# leaves the stored scores valid. The study is recomputed on every run whatever the cache holds.
NOT_SCORING = ("app", "cli", "studies", "sample")  # backends: the image judge scores through them


def settings_key(settings: Settings) -> str:
    """Every metric's config key under ``settings`` (``metrics.keys``), as one hash."""
    from hallu_studio.metrics.keys import current_config_keys
    from hallu_studio.model import content_key

    return content_key("bench_human_agreement", current_config_keys(settings).keys)


def cache_key(settings: Settings, folder: Path, args: argparse.Namespace) -> str:
    """A hash of everything the stored scores depend on: the package's files, the settings, the data, the options."""
    h = hashlib.sha256()
    package = ROOT / "hallu_studio"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.relative_to(package).parts[0] not in NOT_SCORING:
            h.update(str(path.relative_to(ROOT)).encode())
            h.update(path.read_bytes())
    h.update(settings_key(settings).encode())
    for path in sorted(folder.iterdir()):
        stat = path.stat()
        h.update(f"{path.name}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    h.update(f"{args.limit}:{args.objects_as_scene_graph}:{','.join(args.metrics)}".encode())
    h.update(f"{args.judge}:{args.vlm_model}:{args.vlm_template}:{args.images}".encode())
    return h.hexdigest()[:16]


@dataclass
class SetResult:
    name: str
    report: HumanAgreementReport
    seconds: dict[str, float] = field(default_factory=dict)
    cached: bool = False
    responses: int = 0
    # Tri-HE's claims per judged response as (whole hallucinations, unverifiable, claims): the share at any
    # scoring.unverifiable_weight is (whole + weight * unverifiable) / claims, all it changes.
    claims: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    calls: dict[str, bool] = field(default_factory=dict)  # response -> people call it hallucinated
    ratings: dict[str, dict[str, float]] = field(default_factory=dict)  # rating target -> response -> value
    store_path: Path | None = None  # the scored store (a temporary one is gone after the run)


# The sets whose images are COCO's: CHAIR, the baseline, reads them as published (COCO-80 with its synonyms, the
# objects the captions and instance annotations name as ground truth), whatever the settings file says.
COCO_SETS = frozenset({"haelm", "mhaldetect", "faithscore", "haelm-heldout"})


def settings_for(name: str, settings: Settings) -> Settings:
    """The settings a set is scored under: ``settings``, with CHAIR's vocabulary COCO-80 on COCO's images."""
    if name not in COCO_SETS:
        return settings
    out = copy.deepcopy(settings)
    out.scoring.chair_vocabulary = "coco-80"
    return out


def held_out_caption(study: ParsedHumanStudy) -> None:
    """HaELM with the first of each image's five COCO captions written as a response of people (a run written by
    "human") and judged, as the machines' captions are, against the other four: how hallucinated a person's
    caption reads to each score beside the models'."""
    people = Run(id="run-heldout-coco-caption", benchmark=study.benchmark.benchmark.name,
                 model="people (a held-out COCO caption)", backend="recorded", meta={"written_by": "human"})
    for sample in study.benchmark.samples:
        captions = sample.reference_captions
        if len(captions) < 2:
            continue
        sample.reference_text = captions[1:]
        study.responses.responses.append(Response(people.id, sample.id, captions[0]))
    study.responses.runs.append(people)


def run_set(name: str, args: argparse.Namespace, settings: Settings, shared: dict[str, Any]) -> SetResult:
    folder = shared_human() / VARIANT_OF.get(name, name)
    key = cache_key(settings, folder, args)
    # One cached store per set and variant (options), replaced when the code or settings change.
    variant = name + ("-objects-as-graph" if args.objects_as_scene_graph else "") + \
        (f"-limit{args.limit}" if args.limit else "") + ("" if args.metrics == list(METRICS) else
                                                         "-" + "+".join(args.metrics))
    if args.no_cache:
        path = Path(shared["tmp"]) / f"{variant}.duckdb"
    else:
        cache = Path(args.cache).expanduser()
        cache.mkdir(parents=True, exist_ok=True)
        path = cache / f"{variant}-{key}.duckdb"
        stale = re.compile(re.escape(variant) + r"-[0-9a-f]{16}\.duckdb(\.wal)?$")
        for old in cache.iterdir():
            if stale.match(old.name) and not old.name.startswith(path.name):
                old.unlink()  # this variant under an earlier code version: never read again
    cached = path.exists()
    seconds: dict[str, float] = {}
    t = time.perf_counter()
    study = limited(read_human_judgements(folder), args.limit)
    if name == "haelm-heldout":
        held_out_caption(study)
    if args.objects_as_scene_graph:
        objects_as_scene_graph(study)
    if args.images:
        found = attach_images(study, Path(args.images))
        print(f"  images: {found} of {len(study.benchmark.samples)} samples' images found in {args.images}",
              file=sys.stderr)
    with Store(path) as store:
        for report in import_human_study(store, study):
            print(f"  {report.summary()}", file=sys.stderr)
        seconds["import"] = time.perf_counter() - t
        t = time.perf_counter()
        scored = score_store(store, settings, list(args.metrics), progress=sys.stderr.isatty())
        print(f"  {scored.summary()}", file=sys.stderr)
        variants = score_image_judge(store, settings, args) if args.judge == "vlm" else {}
        seconds["score"] = time.perf_counter() - t
        t = time.perf_counter()
        source = VARIANT_OF.get(name, name)
        kinds = next((s["kinds"] for s in store.event_sources() if s["source"] == source), [])
        # The naive baseline's encoder is the study's own, backed by this store: a cached rerun encodes nothing.
        judges = shared["fact_judges"]() if "fact_label" in kinds else None
        if judges is not None and variants:
            from hallu_studio.studies.human_sources import default_fact_judges

            image = image_settings(settings, args)
            judges = [*judges, *(j for j in default_fact_judges(store, image, ["trihe"]))]
        report = human_agreement(store, source, settings=settings, metrics=list(args.metrics), n_boot=args.n_boot,
                                 fact_judges=judges)
        name_variants(report, variants)
        seconds["study"] = time.perf_counter() - t
        events = store.list_events_of_kinds(HUMAN_KINDS, source=source)
        calls, _ = response_calls(events)
        claims = {}
        for response, score in store.iter_scores("trihe", with_evidence=True):
            verdicts = [t["verdict"] for t in score.evidence.get("triplets") or []]
            if verdicts and score.config_key == settings_trihe_key(settings):
                claims[response.id] = (sum(v in ("object", "relation") for v in verdicts),
                                       verdicts.count("unverifiable"), len(verdicts))
    return SetResult(name, report, seconds, cached, len(study.responses.responses), claims, calls,
                     rating_targets(events), path)


def settings_trihe_key(settings: Settings) -> str | None:
    """The config key of the Tri-HE scores the bench's settings make (the reference judge's)."""
    from hallu_studio.metrics.keys import current_config_keys

    return current_config_keys(settings).get("trihe")


# ----------------------------------------------------------------------------- the image judge (--judge vlm)


def attach_images(study: ParsedHumanStudy, folder: Path) -> int:
    """Give each sample its image from ``folder`` (by file name, stem, or a stem ending in ``_<id>`` as COCO's
    ``COCO_val2014_000000525439.jpg``); returns how many were found. A missing image leaves the sample without one."""
    from hallu_studio.images import IMAGE_SUFFIXES, ImageRejected, read_image

    paths: dict[str, Path] = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() in IMAGE_SUFFIXES:
            for key in (path.name, path.stem, path.stem.rpartition("_")[2]):
                paths.setdefault(key, path)
    found = 0
    for sample in study.benchmark.samples:
        path = paths.get(sample.image_key) or paths.get(Path(sample.image_key).stem)
        if path is None:
            continue
        try:
            image = read_image(path)
        except ImageRejected as exc:
            print(f"  image refused: {exc}", file=sys.stderr)
            continue
        sample.image_sha256 = image.sha256
        study.benchmark.images[image.sha256] = image
        found += 1
    return found


def image_settings(settings: Settings, args: argparse.Namespace, alone: bool = False) -> Settings:
    """``settings`` with the image judge: for what the reference leaves unverifiable, or (``alone``) for every claim."""
    out = copy.deepcopy(settings)
    out.scoring.vlm_judge_model = args.vlm_model
    out.scoring.vlm_judge_template = args.vlm_template
    out.scoring.vlm_judge_unsettled = "image"
    if alone:
        out.scoring.trihe_judge = "vlm"
    return out


def score_image_judge(store: Store, settings: Settings, args: argparse.Namespace) -> dict[str, str]:
    """Score Tri-HE and HalFscore with the image judge beside the reference judges; the config keys of those scores,
    each with the label its rows get."""
    from hallu_studio.metrics.keys import current_config_keys

    variants: dict[str, str] = {}
    for label, alone, metrics in (("reference + image", False, ("trihe", "halfscore")), ("image", True, ("trihe",))):
        wanted = [m for m in metrics if m in args.metrics]
        if not wanted:
            continue
        configured = image_settings(settings, args, alone)
        scored = score_store(store, configured, wanted, progress=sys.stderr.isatty())
        print(f"  {label}: {scored.summary()}", file=sys.stderr)
        keys = current_config_keys(configured)
        variants.update({key: label for m in wanted if (key := keys.get(m))})
    return variants


def name_variants(report: HumanAgreementReport, variants: dict[str, str]) -> None:
    """Rows of the image judge's configurations named ``<score> · <label>``, beside the reference judges' rows."""
    for rows in (report.binary, report.rank, report.groups):
        for row in rows:
            if row.get("config_key") in variants:
                row["score"] = f"{row['score']} · {variants[row['config_key']]}"


def shown(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The scores a table lists: the headline ones and baselines, each followed by its image-judge variants."""
    names = {r["score"] for r in rows}
    return [n for base in SHOWN for n in (base, *sorted(x for x in names if x.startswith(f"{base} · ")))]


def label(name: str) -> str:
    base, _, variant = name.partition(" · ")
    return f"{LABELS[base]} ({variant})" if variant else LABELS[base]


SWEEP = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0)


def weight_sweep(results: dict[str, SetResult]) -> str:
    """Tri-HE's share at each ``scoring.unverifiable_weight``, against each set's people: AUROC of what they called
    hallucinated, Spearman with a rating (the study's own sign), from the stored verdicts."""
    from sklearn.metrics import roc_auc_score
    from scipy.stats import spearmanr

    rows = ["| set, against people's | " + " | ".join(f"w = {w:g}" for w in SWEEP) + " |",
            "|---|" + "---|" * len(SWEEP)]
    for name, r in results.items():
        def share(rid: str, w: float) -> float:
            h, u, n = r.claims[rid]
            return (h + w * u) / n
        ids = [rid for rid in r.calls if rid in r.claims]
        if ids and 0 < sum(r.calls[i] for i in ids) < len(ids):
            y = [int(r.calls[i]) for i in ids]
            rows.append(f"| {name}, AUROC of hallucinated ({len(ids)}) | " +
                        " | ".join(f(roc_auc_score(y, [share(i, w) for i in ids])) for w in SWEEP) + " |")
        for target, human in r.ratings.items():
            ids = [rid for rid in human if rid in r.claims]
            if len(ids) > 2 and "hallucination" in target:
                rows.append(f"| {name}, Spearman with {target} ({len(ids)}; agreeing: negative) | " +
                            " | ".join(f(spearmanr([share(i, w) for i in ids], [human[i] for i in ids]).statistic)
                                       for w in SWEEP) + " |")
    return "\n".join(rows)


# ----------------------------------------------------------------------------- printing


def f(x: Any, digits: int = 2) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def ci(row: dict[str, Any], key: str, digits: int = 2) -> str:
    if row.get(key) is None or (isinstance(row[key], float) and math.isnan(row[key])):
        return "n/a"
    return f"{f(row[key], digits)} [{f(row[f'{key}_low'], digits)}, {f(row[f'{key}_high'], digits)}]"


def by_score(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["score"]: r for r in rows}


def binary_table(result: SetResult, what: str) -> list[str]:
    rows = by_score(result.report.binary)
    if not rows:
        return [f"(no {what} table: nothing scored)"]
    human = next(iter(rows.values()))["human"]
    out = [f"AUROC and AP of {what} ({human}; prevalence {f(next(iter(rows.values()))['prevalence'])}):", "",
           "| score (higher = more hallucination) | n | AUROC [95% CI] | AP [95% CI] |", "|---|---|---|---|"]
    for name in shown(result.report.binary):
        r = rows.get(name)
        out.append(f"| {label(name)} | {r['n'] if r else 0} | {ci(r, 'auroc') if r else 'n/a'} | "
                   f"{ci(r, 'ap') if r else 'n/a'} |")
    return out


def group_table(result: SetResult) -> list[str]:
    means: dict[str, dict[str, dict[str, Any]]] = {}
    for r in result.report.groups:
        means.setdefault(r["split"], {}).setdefault(r["score"], {})[r["group"]] = r
    out = []
    for split, groups in means.items():
        names = sorted({g for by in groups.values() for g in by})
        out += ["", f"Mean score, {split}:", "", "| score | " + " | ".join(f"{g} (n)" for g in names) + " |",
                "|---|" + "---|" * len(names)]
        for name in shown(result.report.groups):
            if name in groups:
                out.append(f"| {label(name)} | " + " | ".join(
                    f"{ci(groups[name][g], 'mean')} ({groups[name][g]['n']})" if g in groups[name] else "n/a"
                    for g in names) + " |")
    return out


def span_table(result: SetResult) -> list[str]:
    if not result.report.spans:
        return []
    out = ["", "Flagged spans against the marked spans (precision: flagged spans overlapping a marked one; "
               "recall: marked spans overlapped by a flagged one):", "",
           "| metric | responses | flagged | precision [95% CI] | marked | recall [95% CI] |", "|---|---|---|---|---|---|"]
    for r in result.report.spans:
        out.append(f"| {r['metric']} | {r['responses']} | {r['flagged']} | {ci(r, 'precision')} | {r['marked']} | "
                   f"{ci(r, 'recall')} |")
    if result.report.span_notes:  # rows that coincide, and why
        out += [""] + [f"- note: {n}" for n in result.report.span_notes]
    return out


def fact_table(result: SetResult) -> list[str]:
    if not result.report.facts:
        return []
    out = ["", "Judges on the labelled facts (balanced accuracy on the facts each settles; the others count "
               "in coverage, not as errors):", "",
           "| judge | facts | settled | coverage [95% CI] | balanced accuracy [95% CI] | accuracy | recall: "
           "hallucinated / accurate |", "|---|---|---|---|---|---|---|"]
    for r in result.report.facts:
        name = "CHAIR (baseline)" if r["metric"] == "chair" else f"Tri-HE judge ({r['judge']})"
        out.append(f"| {name} | {r['facts']} | {r['settled']} | {ci(r, 'coverage')} | "
                   f"{ci(r, 'balanced_accuracy')} | {f(r['accuracy'])} | {f(r['hallucinated_recall'])} / "
                   f"{f(r['accurate_recall'])} |")
    return out


def rank_table(result: SetResult) -> list[str]:
    rows = [r for r in result.report.rank if r["human"].startswith("comparison hallucination")]
    if not rows:
        return []
    out = [f"Rank correlation with the side-by-side hallucination rating ({rows[0]['human']}: +2 the model's "
           "description much better ... −2 the person's much better; a score that agrees correlates "
           "negatively):", "", "| score (higher = more hallucination) | n | Spearman [95% CI] | Kendall [95% CI] |",
           "|---|---|---|---|"]
    by = by_score(rows)
    for name in shown(rows):
        r = by.get(name)
        out.append(f"| {label(name)} | {r['n'] if r else 0} | {ci(r, 'spearman') if r else 'n/a'} | "
                   f"{ci(r, 'kendall') if r else 'n/a'} |")
    return out


def section(result: SetResult) -> str:
    s = result.seconds
    lines = [f"### {DESCRIPTIONS[result.name]}", "",
             f"{result.report.judged} judged responses; import {s['import']:.0f} s, score {s['score']:.0f} s"
             f"{' (cached store)' if result.cached else ''}, study {s['study']:.0f} s.", ""]
    what = {"haelm": "\"people call it hallucinated\"", "mhaldetect": "\"has a marked span\"",
            "faithscore": "\"has a fact labelled hallucinated\"", "iiw400": "",
            "haelm-heldout": "\"people call it hallucinated\" (against four captions)"}[result.name]
    if what:
        lines += binary_table(result, what)
    lines += rank_table(result) + span_table(result) + fact_table(result) + group_table(result)
    if result.report.notes:
        lines += [""] + [f"- note: {n}" for n in result.report.notes]
    return "\n".join(lines)


def targets(results: dict[str, SetResult]) -> str:
    """The issue's done-when figures, met or not (a set not run: not checked)."""
    rows = ["| target | measured | met |", "|---|---|---|"]

    def add(target: str, value: Any, met: bool | None) -> None:
        rows.append(f"| {target} | {value} | {'n/a' if met is None else ('yes' if met else '**no**')} |")

    def auroc(name: str, score: str) -> float:
        r = by_score(results[name].report.binary).get(score)
        return r["auroc"] if r else math.nan

    if "haelm" in results:
        a = auroc("haelm", "trihe share")
        add("HaELM: Tri-HE share AUROC ≥ 0.72", f(a), None if math.isnan(a) else a >= 0.72)
        naive = auroc("haelm", "naive 1-cosine")
        scores = {s: auroc("haelm", s) for s in HEADLINE}
        add("HaELM: every headline score beats the naive similarity (AUROC)",
            ", ".join(f"{s} {f(v)}" for s, v in scores.items()) + f"; naive {f(naive)}",
            None if math.isnan(naive) else all(not math.isnan(v) and v > naive for v in scores.values()))
    if "mhaldetect" in results:
        a = auroc("mhaldetect", "trihe share")
        add("M-HalDetect: Tri-HE share AUROC ≥ 0.65 for \"has a marked span\"", f(a), None if math.isnan(a) else a >= 0.65)
        spans = {r["metric"]: r for r in results["mhaldetect"].report.spans}
        p = spans.get("trihe", {}).get("precision", math.nan)
        add("M-HalDetect: Tri-HE flagged claims overlap a marked span with precision ≥ 0.45", f(p),
            None if math.isnan(p) else p >= 0.45)
    if "faithscore" in results:
        facts = {r["metric"]: r for r in results["faithscore"].report.facts}
        r = facts.get("trihe")
        b = r["balanced_accuracy"] if r else math.nan
        add("FaithScore: Tri-HE judge balanced accuracy ≥ 0.70 on the facts it settles (coverage beside)",
            f"{f(b)} (coverage {f(r['coverage']) if r else 'n/a'}, {r['settled'] if r else 0} of "
            f"{r['facts'] if r else 0} facts)", None if math.isnan(b) else b >= 0.70)
    if "iiw400" in results:
        r = by_score([x for x in results["iiw400"].report.rank if x["human"].startswith("comparison hallucination")]
                     ).get("trihe share")
        rho = r["spearman"] if r else math.nan
        add("IIW-400: Tri-HE share's Spearman with the hallucination rating has the right sign (negative)",
            ci(r, "spearman") if r else "n/a", None if math.isnan(rho) else rho < 0)
    # (split of the groups table, the group that should score lower, the one that should score higher, in words)
    for split, low, high, said in (("accurate vs hallucinated", "accurate", "hallucinated",
                                    "accurate outputs score lower than hallucinated ones"),
                                   ("human vs machine", "human-written", "machine",
                                    "human-written outputs score lower than machine ones")):
        for name, result in results.items():
            means: dict[str, dict[str, float]] = {}
            for g in result.report.groups:
                if g["split"] == split:
                    means.setdefault(g["score"], {})[g["group"]] = g["mean"]
            both = {s: m for s, m in means.items() if s in HEADLINE and {low, high} <= set(m)}
            if both:
                add(f"{name}: {said}, every headline score",
                    ", ".join(f"{s} {f(m[low])} < {f(m[high])}" for s, m in both.items()),
                    all(m[low] < m[high] for m in both.values()))
    return "\n".join(rows)


def git_head() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--limit", type=int, default=None, help="first N judged responses of each set")
    ap.add_argument("--metrics", default=",".join(METRICS), help="metrics to score (default: %(default)s)")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--config", default=None, help="settings file (TOML); default: the built-in defaults")
    ap.add_argument("--objects-as-scene-graph", action="store_true",
                    help="also pass each object list as a scene graph of its objects (the issue's 'before' setup)")
    ap.add_argument("--cache", default=str(Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache") /
                                           "hallu-studio" / "bench_human_agreement"))
    ap.add_argument("--no-cache", action="store_true", help="score into a fresh temporary store")
    ap.add_argument("--write", action="store_true", help="write the output into docs/validity.md")
    ap.add_argument("--judge", choices=("reference", "vlm"), default="reference",
                    help="vlm: also score with the image judge (needs --vlm-model and --images)")
    ap.add_argument("--vlm-model", default=None, metavar="SPEC",
                    help="the image judge, as run --model takes it: transformers:<id or path>, openai:<model>@<url>")
    ap.add_argument("--vlm-template", default="faithscore", choices=("faithscore", "tri-he"),
                    help="the image judge's question (scoring.vlm_judge_template)")
    ap.add_argument("--images", default=None, metavar="DIR", help="the sets' images (COCO's for HaELM, "
                                                                  "M-HalDetect and FaithScore)")
    args = ap.parse_args()
    if args.judge == "vlm" and (not args.vlm_model or not args.images):
        ap.error("--judge vlm needs --vlm-model SPEC and --images DIR")
    if args.images and not Path(args.images).is_dir():
        ap.error(f"--images {args.images}: not a folder")
    args.metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in names if s not in SETS]
    if unknown:
        ap.error(f"unknown set {unknown[0]!r}; choose from {', '.join(SETS)}")
    if not shared_human().is_dir():
        print(f"skipped: {shared_human()} is not here (the human-judgement sets live in ../shared/datasets/human; "
              "set HALLU_STUDIO_SHARED to the folder holding datasets/ elsewhere)")
        return 0
    missing = [s for s in names if not (shared_human() / VARIANT_OF.get(s, s)).is_dir()]
    if missing:
        print(f"skipped sets not present in {shared_human()}: {', '.join(missing)}", file=sys.stderr)
        names = [s for s in names if s not in missing]
    settings = load_settings(args.config) if args.config else Settings()
    started = time.perf_counter()
    from hallu_studio.studies.fact_judging import FactJudge

    judges: list[Any] = []

    def fact_judges() -> list[Any]:
        if not judges:  # built for the first set, once: their models load once
            judges.append(FactJudge(settings))
            if "chair" in args.metrics:
                judges.append(FactJudge(settings, extractor=judges[0].extractor, metric="chair"))
        return judges

    with tempfile.TemporaryDirectory() as tmp:
        shared = {"tmp": tmp, "fact_judges": fact_judges}
        results = {}
        for name in names:
            print(f"{name} ...", file=sys.stderr)
            results[name] = run_set(name, args, settings_for(name, settings), shared)
            print(f"{name}: {', '.join(f'{k} {v:.0f} s' for k, v in results[name].seconds.items())}", file=sys.stderr)
    total = time.perf_counter() - started
    options = " ".join(x for x in (f"--sets {','.join(names)}", f"--limit {args.limit}" if args.limit else "",
                                   "--objects-as-scene-graph" if args.objects_as_scene_graph else "",
                                   f"--config {args.config}" if args.config else "",
                                   f"--judge vlm --vlm-model {args.vlm_model} --vlm-template {args.vlm_template}"
                                   if args.judge == "vlm" else "") if x)
    out = [f"_Produced by `python benchmarks/bench_human_agreement.py {options}` at commit {git_head()} "
           f"(metrics {', '.join(args.metrics)}, settings key {settings_key(settings)[:8]}, "
           f"{args.n_boot} bootstrap replicates by image); {total:.0f} s in all on this machine, "
           f"{sum(r.cached for r in results.values())} of {len(results)} sets from cached stores. "
           f"{install_note(settings)}_",
           "", "### The issue's targets", "", targets(results), "",
           "### Tri-HE's share at each weight of an unverifiable claim (`scoring.unverifiable_weight`)", "",
           "Recomputed from the stored verdicts; the default is 0.1. Against a scene graph the weight is not used "
           "(the papers count silence whole).", "", weight_sweep(results)]
    text = "\n".join(out) + "\n\n" + "\n\n".join(section(r) for r in results.values())
    print(text)
    if args.write:
        path = ROOT / "docs" / "validity.md"
        doc = path.read_text(encoding="utf-8")
        block = f"{MARK_BEGIN}\n{text}\n{MARK_END}"
        if MARK_BEGIN in doc:
            doc = doc[: doc.index(MARK_BEGIN)] + block + doc[doc.index(MARK_END) + len(MARK_END):]
        else:
            doc = doc.rstrip() + "\n\n## Agreement with people on real outputs (bench_human_agreement)\n\n" + block + "\n"
        path.write_text(doc, encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
