"""Does each offline score track hallucination? Probes with known injected errors, and real data, in one run.

Sections (each prints a Markdown table; ``--write`` puts those run into docs/validity.md, each between its own
``<!-- bench_validity:NAME -->`` markers inside the ``<!-- bench_validity -->`` block, with the command and date
that made it; a section not run keeps its table):

* ``sample``: the embedded sample's captions, probe at ``--rate`` (all four types), extracted with the
  offline parser. Per metric × injected type: injected, detected, detection rate; per metric: false
  alarms among the concepts the probe stated correctly (``studies.probe_detection``).
* ``trihe``: real Tri-HE (``../shared/datasets/tri-he``) through the product path, on every question: the
  benchmark imported into a temporary store as ``hallu-studio import --format tri-he`` does, the probe run at
  rates 0 (the gold answers), 0.1, 0.3 and 0.5 with the app's default probe (all four kinds: object,
  attribute, relation and count; seed 0) as ``hallu-studio run --model probe:rate=R`` does, scored as
  ``hallu-studio score --metrics trihe`` does under each judge, and read back as the leaderboard and the Study
  view's probe detection read it. Per judge, two rows side by side: the first ``--questions`` questions of
  the file (the ones the judge was tuned on) and the rest (not tuned on): Hallu_Q with a 95 % bootstrap CI by
  image per rate; detection of each injected kind at 0.3. About 15 minutes on 2 cores.

The output (and each section ``--write`` puts in the docs) first says which lexical resources it measured with
(``benchmarks/measured_with.py``): the README install's (``pip install`` alone, WordNet 3.0 shipped with the package),
or not (``$WORDNET_DIR`` set).
* ``dci``: real DCI references with LLaVA-1.5-7B's real captions (``../shared/datasets/halfscore``).
  Each caption against copies of itself made more wrong where the reference can tell
  (``benchmarks/reference_degradation.py``): a colour the reference gives that object changed, a
  number it states changed, a relation one of its edges supports given the contrary preposition, two
  objects it never names added (a sentence stating the concept wrongly where the caption states none),
  and one copy with all four together. Per kind: n (images left out have nothing the reference verifies),
  and the share of those where the real caption scores strictly better, with wins / ties / losses.
* ``speed``: responses per second of the graph judge and of the released embedding check on the same
  Tri-HE items, warm, side by side.

Judges compared: ``graph`` (the scene-graph alignment judge, the default), ``embedding`` (Tri-HE's
released embedding-similarity check); an LLM judge where ``--config`` names an endpoint.

    python benchmarks/bench_validity.py [--sections sample,trihe,dci,speed] [--write] [--config FILE]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.config import Settings, apply_offline_env_defaults, load_settings  # noqa: E402

apply_offline_env_defaults()

from hallu_studio.backends.probe import INJECTION_TYPES, ProbeOptions, describe  # noqa: E402
from hallu_studio.components import Components  # noqa: E402
from hallu_studio.extraction import ParserExtractor  # noqa: E402
from hallu_studio.metrics.base import ScoringItem  # noqa: E402
from hallu_studio.metrics.registry import make_metrics  # noqa: E402
from hallu_studio.metrics.trihe import TriHEMetric  # noqa: E402
from measured_with import install_note  # noqa: E402
from hallu_studio.studies.probe_detection import ProbeItem, detection_row  # noqa: E402

# ../shared beside the checkout, or $HALLU_STUDIO_SHARED (a git worktree one level deeper), as the tests read it.
SHARED = Path(os.environ.get("HALLU_STUDIO_SHARED") or ROOT.parent / "shared") / "datasets"
TYPES = INJECTION_TYPES
MARK_BEGIN, MARK_END = "<!-- bench_validity -->", "<!-- /bench_validity -->"


def _settings(args: argparse.Namespace, judge: str) -> Settings:
    settings = load_settings(args.config) if args.config else Settings()
    settings.scoring.trihe_judge = judge
    return settings


def judges(args: argparse.Namespace) -> list[str]:
    out = ["graph", "embedding"]
    if args.config and load_settings(args.config).llm.configured:
        out.append("llm")
    return out


def probe_items(samples: Sequence[Any], spec: str, extractor: ParserExtractor) -> list[tuple[ScoringItem, dict]]:
    options = ProbeOptions.parse(spec)
    rows = []
    for s in samples:
        text, signals = describe(s, options, random.Random(f"{spec}/{s.id}"))
        rows.append((text, signals, s))
    concepts = extractor.extract([t for t, _, _ in rows])
    return [(ScoringItem(f"{spec}/{s.id}", t, s, mentioned=c), sig) for (t, sig, s), c in zip(rows, concepts)]


def score(metric: Any, items: Sequence[ScoringItem]) -> list[Any]:
    out: list[Any] = []
    for k in range(0, len(items), 64):
        out.extend(metric.update_many(items[k:k + 64]) if hasattr(metric, "update_many")
                   else [metric.update(i) for i in items[k:k + 64]])
    return out


def detection(metric_name: str, items: Sequence[tuple[ScoringItem, dict]], results: Sequence[Any]) -> Any:
    probe = [ProbeItem(i.response, sig.get("injected", []), sig.get("stated", []), r.values, r.evidence, None,
                       i.mentioned.to_dict(with_spans=True) if i.mentioned else None)
             for (i, sig), r in zip(items, results)]
    return detection_row(metric_name, probe)


def _rate(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "n/a"


# ----------------------------------------------------------------------------- sections

def section_sample(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    from hallu_studio.sample.build import build_sample_benchmark

    samples = [s for s in build_sample_benchmark(with_variants=False).samples if s.task == "caption"]
    items = probe_items(samples, f"rate={args.rate},mix=object+attribute+relation+count,seed=1", extractor)
    lines = [f"### Sample captions: probe rate {args.rate}, all four types ({len(items)} captions, offline parser)",
             "", "| metric | " + " | ".join(f"{t} detected" for t in TYPES) + " | false alarms |",
             "|---|" + "---|" * (len(TYPES) + 1)]
    metrics: list[tuple[str, Any]] = [(f"trihe ({j})", TriHEMetric.from_settings(_settings(args, j)))
                                      for j in judges(args)]
    for name in ("halfscore", "emd", "edit"):
        metrics.append((name, make_metrics([name], _settings(args, "graph"), None, extractor)[0]))
    for label, metric in metrics:
        base = label.split(" ")[0]
        t0 = time.perf_counter()
        row = detection(base, items, score(metric, [i for i, _ in items]))
        cells = [f"{_rate(row.by_type.get(t, (0, 0))[1], row.by_type.get(t, (0, 0))[0])} "
                 f"({row.by_type.get(t, (0, 0))[1]}/{row.by_type.get(t, (0, 0))[0]})" for t in TYPES]
        lines.append(f"| {label} | " + " | ".join(cells) +
                     f" | {_rate(row.false_alarms, row.stated)} ({row.false_alarms}/{row.stated}) |")
        print(f"  {label}: {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return "\n".join(lines)


def _trihe_samples(n: int) -> list[Any]:
    from hallu_studio.importers.tri_he import read_tri_he

    return [s for s in read_tri_he(SHARED / "tri-he").samples if s.answer][:n]


TRIHE_RATES = (0.0, 0.1, 0.3, 0.5)
# The probe as the app runs it (the Run view's "probe:rate=0.0", "probe:rate=0.3"): the default mix and seed.
DEFAULT_PROBE = ProbeOptions()


def trihe_probe_spec(rate: float) -> str:
    """The ``run --model`` spec of the Tri-HE section's probe at ``rate``: the app's, every kind.

    >>> trihe_probe_spec(0.3)
    'probe:rate=0.3'
    """
    return f"probe:rate={rate:g}"


def _trihe_store(store: Any, args: argparse.Namespace) -> tuple[dict[float, str], dict[str, str]]:
    """Tri-HE in ``store`` as a user gets it: imported, the probe run at each rate, scored under each judge
    (the calls ``hallu-studio import``, ``run`` and ``score`` make). Returns the run id per rate and the
    trihe config key per judge."""
    from hallu_studio.backends import make_backend
    from hallu_studio.importers.tri_he import read_tri_he
    from hallu_studio.pipelines.importing import import_benchmark
    from hallu_studio.pipelines.running import RunOptions, execute_run
    from hallu_studio.pipelines.scoring import score_store

    import_benchmark(store, read_tri_he(SHARED / "tri-he"))
    runs = {}
    for rate in TRIHE_RATES:
        backend = make_backend(trihe_probe_spec(rate))
        runs[rate] = execute_run(store, backend, RunOptions(benchmark="tri-he"), progress=False).run_id
    keys = {}
    for j in judges(args):
        before = {c["config_key"] for c in store.score_configs() if c["metric"] == "trihe"}
        t0 = time.perf_counter()
        report = score_store(store, _settings(args, j), ["trihe"], progress=False)
        for warning in report.warnings:
            print(f"  warning: {warning}", file=sys.stderr)
        if report.failed:
            raise RuntimeError(f"scoring with the {j} judge failed: {report.failures[:3]}")
        new = {c["config_key"] for c in store.score_configs() if c["metric"] == "trihe"} - before
        if len(new) != 1:
            raise RuntimeError(f"the {j} judge's scores went under {len(new)} new config keys, expected 1")
        keys[j] = new.pop()
        print(f"  trihe ({j}): {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return runs, keys


def section_trihe(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    from hallu_studio.importers.tri_he import read_tri_he
    from hallu_studio.store import Store
    from hallu_studio.studies.collect import probe_detection_table
    from hallu_studio.studies.leaderboard import leaderboard, metric_computes

    if not (SHARED / "tri-he").exists():
        return "### Real Tri-HE\n\n(skipped: ../shared/datasets/tri-he is not here)"
    # The questions in the file's order: the first --questions are the ones the judge was tuned on.
    order = [s.id for s in read_tri_he(SHARED / "tri-he").samples if s.answer]
    splits = {f"first {args.questions} (tuned on)": set(order[:args.questions]),
              f"other {len(order) - args.questions} (not)": set(order[args.questions:])}
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "trihe.duckdb") as store:
        runs, keys = _trihe_store(store, args)
        lines = [f"### Real Tri-HE through the product path: all {len(order)} questions (gold answers = probe rate 0)",
                 "", "Imported, run and scored as `hallu-studio import --format tri-he`, `run --model "
                 f"{trihe_probe_spec(0.3).replace('0.3', 'R')}` (the app's probe: mix={'+'.join(DEFAULT_PROBE.mix)}, "
                 f"seed {DEFAULT_PROBE.seed}) and `score --metrics trihe` do, in a fresh store; the numbers are the "
                 "leaderboard's (`studies.leaderboard`, 95 % CI by image) and the Study view's probe detection "
                 "(`studies.collect.probe_detection_table`), reported separately for the file's first "
                 f"{args.questions} questions (the ones the judge was tuned on) and the other "
                 f"{len(order) - args.questions}.", "",
                 "| judge | questions | " + " | ".join(f"Hallu_Q rate {r:g}" for r in TRIHE_RATES) +
                 " | Hallu_Q (with inferences) gold | " + " | ".join(f"{t} detected @0.3" for t in TYPES) +
                 " | false alarms @0.3 |", "|---|---|" + "---|" * (len(TRIHE_RATES) + len(TYPES) + 2)]
        for j, key in keys.items():
            for label, ids in splits.items():
                board = [r for r in leaderboard(store, "tri-he", metrics=["trihe"], n_boot=args.n_boot,
                                                sample_ids=ids) if r["config_key"] == key]
                value = {(r["run_id"], r["key"]): r for r in board}
                cells = []
                for rate in TRIHE_RATES:
                    r = value.get((runs[rate], "hallu_q"))
                    cells.append(f"{r['value']:.1f} [{r['low']:.1f}, {r['high']:.1f}]" if r else "n/a")
                gold_stats = [r["stats"] for r in store.score_stat_rows("trihe", run_id=runs[0.0])
                              if r["config_key"] == key and r["sample_id"] in ids]
                strict_gold = metric_computes(["trihe"])["trihe"](gold_stats).get("hallu_q_with_inference")
                det = next((d for d in probe_detection_table(store, ["trihe"], [runs[0.3]], ids)
                            if d.config_key == key), None)
                bt = det.by_type if det else {}
                found = [f"{_rate(bt.get(t, (0, 0))[1], bt.get(t, (0, 0))[0])} "
                         f"({bt.get(t, (0, 0))[1]}/{bt.get(t, (0, 0))[0]})" for t in TYPES]
                lines.append(f"| {j} | {label} | " + " | ".join(cells) +
                             f" | {'n/a' if strict_gold is None else f'{strict_gold:.1f}'} | " + " | ".join(found) +
                             f" | {_rate(det.false_alarms, det.stated) if det else 'n/a'} |")
    return "\n".join(lines)


# ------------------------------------------------------------------ DCI degradations

def read_dci(folder: Path, n_images: int) -> tuple[list[str], dict[str, Any], dict[str, str]]:
    """The first ``n_images`` DCI images with a LLaVA-1.5-7B caption, through the HalFscore importers: their
    keys (image stems), the samples (reference captions) and the captions, by key."""
    from hallu_studio.importers.halfscore import image_stem, read_halfscore_annotations, read_halfscore_captions

    parsed = read_halfscore_annotations(folder / "annotation.json").samples
    recorded = read_halfscore_captions(folder / "llava-1.5-7b_captions.jsonl", {s.id for s in parsed})
    by_id = {r.sample_id: r.text for r in recorded.responses}
    samples = {image_stem(s.image_key): s for s in parsed}
    captions = {image_stem(s.image_key): by_id[s.id] for s in parsed if s.id in by_id}
    return [k for k in samples if k in captions][:n_images], samples, captions


def section_dci(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    """Each real caption against copies of itself made more wrong *where the reference can tell*
    (``studies.reference_degradation``): a copy per kind, and one with all four kinds together."""
    from reference_degradation import ALL, KINDS, degrade, summary, wins_ties_losses

    folder = SHARED / "halfscore"
    if not folder.exists():
        return "### Real DCI\n\n(skipped: ../shared/datasets/halfscore is not here)"
    keys, samples, captions = read_dci(folder, args.images)
    said = dict(zip(keys, extractor.extract([captions[k] for k in keys])))
    refs = dict(zip(keys, extractor.extract([samples[k].reference_text or "" for k in keys])))
    plans = {k: degrade(captions[k], said[k], refs[k], random.Random(f"dci/{k}")) for k in keys}
    kinds = [*KINDS, ALL]
    copies = {(k, kind): plans[k].copy(KINDS if kind == ALL else [kind]) for k in keys for kind in kinds}
    copies = {key: text for key, text in copies.items() if text is not None}
    copy_texts = list(dict.fromkeys(copies.values()))
    concepts = {captions[k]: said[k] for k in keys}
    concepts.update(zip(copy_texts, extractor.extract(copy_texts)))
    parsed_references = {samples[k].reference_text or "": refs[k] for k in keys}

    def extract_reference(text: str) -> Any:
        return parsed_references[text] if text in parsed_references else extractor.extract([text])[0]

    def items_for(kind: str | None) -> list[tuple[str, ScoringItem]]:
        out = []
        for k in keys:
            text = captions[k] if kind is None else copies.get((k, kind))
            if text is not None:
                out.append((k, ScoringItem(f"{k}/{kind}", text, samples[k], mentioned=concepts[text])))
        return out

    settings = _settings(args, "graph")
    value_of: dict[str, tuple[Callable[[], Any], str, bool]] = {
        "EMD total (lower is better)": (lambda: make_metrics(["emd"], settings, None, extractor)[0], "total", False),
        "HalFscore F (higher is better)": (lambda: make_metrics(["halfscore"], settings, None, extractor)[0], "f", True),
    }
    for j in judges(args):
        value_of[f"Tri-HE {j} hallucinated share (lower is better)"] = (
            lambda j=j: TriHEMetric.from_settings(_settings(args, j), reference_extract=extract_reference),
            "share", False)
    n = summary({k: plans[k] for k in keys})
    header = [f"{kind} (n={n[kind][0]}" + (f", {n[kind][1]} stated" if n[kind][1] else "") + ")" for kind in kinds]
    lines = [f"### Real DCI references, LLaVA-1.5-7B's real captions ({len(keys)} images)", "",
             "Each copy changes only what the DCI reference verifies and the caption states correctly: a colour the "
             "reference gives that object, a number it states, a spatial relation one of its edges supports (the "
             "contrary preposition); objects added are ones it never names. Where the caption states no such concept, "
             "a sentence stating it wrongly is added (*stated*); an image with neither is left out of that kind, so n "
             "is per kind. *all four*: one copy with every kind's changes, on images where all four apply. Cells: "
             "share of the n images where the real caption scores strictly better (wins / ties / losses).", "",
             "| score | " + " | ".join(header) + " |", "|---|" + "---|" * len(kinds)]
    for label, (build, key, higher) in value_of.items():
        metric = build()

        def values(kind: str | None) -> dict[str, float | None]:
            rows = items_for(kind)
            out: dict[str, float | None] = {}
            for (k, _), r in zip(rows, score(metric, [i for _, i in rows])):
                if key == "share":
                    t = r.stats.get("n_triplets", 0)
                    out[k] = r.stats.get("hallucinated", 0) / t if t else None
                else:
                    v = r.values.get(key)
                    out[k] = None if v is None else float(v)
            return out

        real = values(None)
        cells = []
        for kind in kinds:
            deg = values(kind)
            win, tie, loss = wins_ties_losses(real, deg, higher)
            cells.append(f"{_rate(win, len(deg))} ({win}/{tie}/{loss})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def section_speed(args: argparse.Namespace, extractor: ParserExtractor) -> str:
    if not (SHARED / "tri-he").exists():
        return "### Speed\n\n(skipped: ../shared/datasets/tri-he is not here)"
    items = [i for i, _ in probe_items(_trihe_samples(args.questions), "rate=0.3,mix=object+relation,seed=2",
                                       extractor)]
    lines = ["### Speed: Tri-HE judges on the same items, warm (phrase caches filled), same run", "",
             f"Best of {args.rounds} alternating rounds per judge (the machine is shared and noisy).", "",
             "| judge | responses/s | ratio to embedding |", "|---|---|---|"]
    metrics = {j: TriHEMetric.from_settings(_settings(args, j)) for j in ("embedding", "graph")}
    for metric in metrics.values():
        score(metric, items)  # warm: model loaded, phrases encoded
    best: dict[str, float] = {j: 0.0 for j in metrics}
    for _ in range(args.rounds):
        for j, metric in metrics.items():
            t0 = time.perf_counter()
            score(metric, items)
            best[j] = max(best[j], len(items) / (time.perf_counter() - t0))
    rates = best
    for j, r in rates.items():
        lines.append(f"| {j} | {r:.0f} | {r / rates['embedding']:.2f} |")
    return "\n".join(lines)


SECTIONS = {"sample": section_sample, "trihe": section_trihe, "dci": section_dci, "speed": section_speed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--rate", type=float, default=0.3)
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--images", type=int, default=100)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7, help="speed: alternating timed rounds per judge")
    ap.add_argument("--config", default=None, help="a hallu-studio.toml; with an LLM endpoint, the LLM judge joins")
    ap.add_argument("--write", action="store_true", help="write the tables into docs/validity.md")
    args = ap.parse_args()
    extractor = Components(Settings()).parser()
    produced = (f"_Produced by `python benchmarks/bench_validity.py --sections {args.sections}` on "
                f"{time.strftime('%Y-%m-%d')}. {install_note(Settings())}_")
    print(produced + "\n", flush=True)
    out: dict[str, str] = {}
    for name in args.sections.split(","):
        t0 = time.perf_counter()
        out[name] = SECTIONS[name](args, extractor)
        print(out[name] + "\n", flush=True)
        print(f"[{name}: {time.perf_counter() - t0:.0f}s]", file=sys.stderr)
    if args.write:
        path = ROOT / "docs" / "validity.md"
        path.write_text(write_sections(path.read_text(encoding="utf-8") if path.exists() else "# Validity\n",
                                       out, produced), encoding="utf-8")


def write_sections(text: str, tables: dict[str, str], produced: str) -> str:
    """``text`` with each section's table put between its own markers inside the bench_validity block (a section
    not run keeps the table an earlier run wrote, with the line that says which run that was).

    >>> doc = write_sections("# V\\n", {"trihe": "T1", "dci": "D1"}, "_run 1_")
    >>> doc = write_sections(doc, {"trihe": "T2"}, "_run 2_")
    >>> [line for line in doc.splitlines() if line and not line.startswith("<!--")]
    ['# V', '_run 2_', 'T2', '_run 1_', 'D1']
    """
    if MARK_BEGIN not in text:
        text = text.rstrip() + f"\n\n{MARK_BEGIN}\n{MARK_END}\n"
    head, rest = text.split(MARK_BEGIN, 1)
    block, tail = rest.split(MARK_END, 1)
    for name, table in tables.items():
        begin, end = f"<!-- bench_validity:{name} -->", f"<!-- /bench_validity:{name} -->"
        section = f"{begin}\n{produced}\n\n{table}\n{end}"
        if begin in block:
            block = block[: block.index(begin)] + section + block[block.index(end) + len(end):]
        else:
            block = block.rstrip("\n") + f"\n{section}\n"
    return head + MARK_BEGIN + block.rstrip("\n") + "\n" + MARK_END + tail


if __name__ == "__main__":
    main()
