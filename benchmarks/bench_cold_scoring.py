"""Cold stateless scoring of real captions, stage by stage, beside the speed of its parts.

Two jobs (issue 21), built from ``../shared/datasets`` (read, never copied; the inputs are written to a
temporary folder):

* ``dci``: 2,100 dense captions, 7 "models" x 300 DCI images, each line carrying its image's DCI dense
  reference caption, ``--metrics emd,halfscore``. The shared folder holds one real caption file
  (LLaVA-1.5-7B), so the seven caption sets are that file's captions under seven model names, each
  rewritten by a fixed sentence-level edit so that no two lines are the same text (as seven models'
  captions are not): as written; sentences reversed; the first half; plus the next image's first sentence
  (an injected hallucination); every other sentence; rotated by one; the last sentence replaced by the next
  image's last. One file per model, one after the other (``m0`` on all images, then ``m1`` ...).
* ``coco``: 2,500 short COCO captions with reference captions, ``--metrics trihe,halfscore,emd,chair``, from
  the five COCO reference captions of each of HaELM's 300 images (``human/haelm``): each caption scored
  against the image's other four (1,500 lines), then the captions of the first 200 images scored against the
  five captions of the next image (1,000 lines whose references describe another picture). HaELM names no
  COCO image, so no object list comes with them. The landed code takes one reference text and no vocabulary:
  it is given the captions joined into one text (``as_landed_input``), so its outputs differ by design.

Each job is run by ``python -m hallu_studio score --input --output`` in a worker process, once per code
version, side by side in one run: ``--baseline DIR`` (a checkout of the landed code, e.g.
``git archive ab0afe8 | tar -x -C DIR``) and this checkout; then this checkout twice more with
``--cache FILE`` (cold, then warm). The worker times each stage by wrapping the functions that do it
(exclusive time: a stage's time excludes the stages it calls):

    startup   process start to the first line scored, minus model loading (imports, settings)
    load      loading spaCy and MiniLM
    parse     the concept extractor (spaCy + SceneGraphParser rules)
    encode    the embedding model's forward passes
    ground    grounding concepts on the reference graph (lexicon, WordNet; its encoder calls are "encode")
    transport exact EMD (POT's ``ot.emd``)
    judge     the metrics' own work (HalFscore counting, Tri-HE's judge, CHAIR, EMD's cost matrices)
    cache     reading and writing the persistent cache
    write     JSON-encoding the output lines
    other     the rest (the pipeline's bookkeeping, reading the input)

The parts' own speeds are measured in the same run, in a fresh process of this checkout: spaCy's
``nlp.pipe`` (tokens/s) and the whole parser extractor on a sample of the job's captions; MiniLM on a
sample of the job's concept phrases in batches of 64 with torch's default threads and with one
(phrases/s); warm EMD (captions/s, the same items scored a second time).

    python benchmarks/bench_cold_scoring.py --baseline /tmp/base [--jobs dci,coco] [--images 300]
    python benchmarks/bench_cold_scoring.py --images 40 --jobs dci      # a quick run: 280 lines

Prints the load average at the start and end: the machine is shared, read the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HALLU_STUDIO_SHARED") or ROOT.parent / "shared") / "datasets"
DCI = SHARED / "halfscore"
HAELM = SHARED / "human" / "haelm" / "eval_data.jsonl"
JOB_METRICS = {"dci": "emd,halfscore", "coco": "trihe,halfscore,emd,chair"}
MODELS = 7
STAGES = ("startup", "load", "parse", "encode", "ground", "transport", "judge", "cache", "write", "other")


# --------------------------------------------------------------------------- inputs

def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _variant(k: int, own: list[str], other: list[str]) -> list[str]:
    """Model k's caption: a fixed sentence-level edit of the real caption (the module docstring)."""
    return [own, own[::-1], own[:max(1, len(own) // 2)], own + other[:1], own[::2], own[1:] + own[:1],
            own[:-1] + other[-1:]][k]


def dci_lines(images: int) -> list[dict[str, Any]]:
    refs = {a["image"]: a["caption"] for a in json.loads((DCI / "annotation.json").read_text())}
    caps: dict[str, str] = {}
    for line in (DCI / "llava-1.5-7b_captions.jsonl").read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            caps[row["image"]] = row["caption"] if isinstance(row["caption"], str) else " ".join(row["caption"])
    names = sorted(set(refs) & set(caps))[:images]
    out = []
    for k in range(MODELS):
        for j, image in enumerate(names):
            text = " ".join(_variant(k, _sentences(caps[image]), _sentences(caps[names[(j + 1) % len(names)]])))
            out.append({"id": f"model{k}/{image}", "image": image, "task": "caption", "response": text,
                        "reference_text": refs[image], "reference_kind": "dense"})  # DCI's: a dense description
    return out


def coco_lines(images: int) -> list[dict[str, Any]]:
    """HaELM's lines are (COCO reference caption, LVLM caption) pairs, five per LVLM caption: one image each."""
    groups: dict[str, list[str]] = {}
    for line in HAELM.read_text().splitlines():
        if not line.strip():
            continue
        text = json.loads(line)["instruction"]
        ref, _, rest = text.partition("reference captions:\n")[2].partition("\nour caption:\n")
        caption = rest.rsplit(" Is our caption accurate?", 1)[0]
        groups.setdefault(caption, []).append(ref.strip())
    captions = [refs for refs in groups.values() if len(refs) >= 2][:images]
    out = []
    for i, refs in enumerate(captions):
        for k, own in enumerate(refs):
            out.append({"id": f"coco/{i}/{k}", "image": str(i), "task": "caption", "response": own,
                        "reference_text": refs[:k] + refs[k + 1:]})
    for i, refs in enumerate(captions[:len(captions) * 2 // 3]):
        other = captions[(i + 1) % len(captions)]
        for k, own in enumerate(refs):
            out.append({"id": f"other/{i}/{k}", "image": str(i + 1), "task": "caption", "response": own,
                        "reference_text": other})
    return out


def as_landed_input(path: Path) -> Path:
    """The same lines as the landed code (a7123d3) reads them: it takes one reference text per line and knows no
    vocabulary, so several reference captions are passed joined into one text (how a user of it passed them)."""
    out = path.with_name(path.stem + ".landed.jsonl")
    with path.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for line in src:
            if line.strip():
                x = json.loads(line)
                if isinstance(x.get("reference_text"), list):
                    x["reference_text"] = " ".join(x["reference_text"])
                x.pop("reference_vocabulary", None)
                dst.write(json.dumps(x, ensure_ascii=False) + "\n")
    return out


def write_job(job: str, images: int, folder: Path) -> Path:
    lines = dci_lines(images) if job == "dci" else coco_lines(images)
    path = folder / f"{job}_{len(lines)}.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the worker (one scoring run)

class StageClock:
    """Exclusive time per stage: a wrapped call's time, less the wrapped calls it made."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {s: 0.0 for s in STAGES}
        self.counts: dict[str, float] = {}
        self._stack: list[float] = []  # per open call: time spent in wrapped calls below it

    def wrap(self, owner: Any, attr: str, stage: str, count: Callable[..., dict[str, float]] | None = None) -> None:
        fn = getattr(owner, attr, None)
        if fn is None or getattr(fn, "_staged", False):
            return
        clock = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            clock._stack.append(0.0)
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                inner = clock._stack.pop()
                clock.seconds[stage] += elapsed - inner
                if clock._stack:
                    clock._stack[-1] += elapsed
                if count is not None:
                    for key, n in count(*args, **kwargs).items():
                        clock.counts[key] = clock.counts.get(key, 0.0) + n

        timed._staged = True  # type: ignore[attr-defined]
        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        setattr(owner, attr, timed)


def install_stage_clock(clock: StageClock) -> None:
    import importlib

    def module(name: str) -> Any:
        try:
            return importlib.import_module(name)
        except ImportError:
            return None

    import ot

    clock.wrap(ot, "emd", "transport", lambda *a, **k: {"transport_problems": 1})
    parser = module("hallu_studio.extraction.parser")
    clock.wrap(parser, "load_english", "load")  # spaCy, loaded when the first text is parsed
    clock.wrap(parser.ParserExtractor, "_concepts", "parse",
               lambda self, doc: {"parsed_texts": 1, "parsed_tokens": len(doc)})
    clock.wrap(parser.ParserExtractor, "extract", "parse")
    embedding = module("hallu_studio.embedding")
    clock.wrap(embedding.Embedder, "_encode_new", "encode",
               lambda self, texts: {"encoded_phrases": len(texts), "encoder_calls": 1})
    # MiniLM, loaded by the first phrase to encode (the property answers at once afterwards)
    holder = type("Holder", (), {"get": staticmethod(embedding.Embedder.model.fget)})
    clock.wrap(holder, "get", "load")
    embedding.Embedder.model = property(holder.get)
    for name, attrs, stage in [
        ("hallu_studio.grounding", ("ground",), "ground"),  # Grounder.ground
        ("hallu_studio.metrics.halfscore_graph", ("match", "warm"), "ground"),  # GraphConceptMatcher
        ("hallu_studio.metrics.emd_ground_cost", ("grounded_concepts",), "ground"),
    ]:
        mod = module(name)
        if mod is None:
            continue
        for attr in attrs:
            owner = getattr(mod, "Grounder", None) if attr == "ground" else (
                getattr(mod, "GraphConceptMatcher", None) if attr in ("match", "warm") else mod)
            if owner is not None:
                clock.wrap(owner, attr, stage)
    emd = module("hallu_studio.metrics.emd")
    if emd is not None and hasattr(emd, "grounded_concepts"):  # EMD imported the function by name
        clock.wrap(emd, "grounded_concepts", "ground")
    for name, cls in [("hallu_studio.metrics.emd", "EMDMetric"), ("hallu_studio.metrics.halfscore", "HalFscoreMetric"),
                      ("hallu_studio.metrics.trihe", "TriHEMetric"), ("hallu_studio.metrics.chair", "ChairMetric")]:
        mod = module(name)
        owner = getattr(mod, cls, None) if mod is not None else None
        if owner is not None:
            clock.wrap(owner, "update_many", "judge")
            clock.wrap(owner, "update", "judge")
    caching = module("hallu_studio.caching")
    if caching is not None:
        for cls_name in ("CacheFile", "MemoryCache"):
            owner = getattr(caching, cls_name, None)
            for attr in ("get_many", "put_many", "vectors", "put_vectors"):
                if owner is not None:
                    clock.wrap(owner, attr, "cache")
    store_caches = module("hallu_studio.store.caches")
    if store_caches is not None:
        owner = getattr(store_caches, "CacheTables", None)
        for attr in ("get_many", "put_many", "vectors", "put_vectors"):
            if owner is not None:
                clock.wrap(owner, attr, "cache")
    scoring = module("hallu_studio.pipelines.scoring_jsonl")

    class TimedJson:
        """``json`` as the scoring pipeline sees it, with its output encoding timed."""

        def __getattr__(self, name: str) -> Any:
            return getattr(json, name)

    timed_json = TimedJson()
    timed_json.dumps = json.dumps  # type: ignore[attr-defined]
    clock.wrap(timed_json, "dumps", "write")
    scoring.json = timed_json
    # When the first line starts being scored: startup ends there.
    for attr in ("score_records", "score_jsonl"):
        fn = getattr(scoring, attr, None)
        if fn is not None:
            def first(*args: Any, _fn: Callable[..., Any] = fn, **kwargs: Any) -> Any:
                clock.counts.setdefault("scoring_started", time.perf_counter())
                return _fn(*args, **kwargs)
            setattr(scoring, attr, first)


def worker(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    sys.path.insert(0, args.src)
    os.chdir(args.src)
    clock = StageClock()
    from hallu_studio.config import apply_offline_env_defaults

    apply_offline_env_defaults()
    import hallu_studio

    assert str(Path(hallu_studio.__file__).resolve()).startswith(str(Path(args.src).resolve())), hallu_studio.__file__
    install_stage_clock(clock)
    from hallu_studio.cli import main

    argv = ["score", "--input", args.input, "--output", args.output, "--metrics", args.metrics, "--no-progress"]
    if args.cache:
        argv += ["--cache", args.cache]
    status = main(argv)
    wall = time.perf_counter() - started
    scoring_started = clock.counts.pop("scoring_started", started)
    clock.seconds["startup"] = scoring_started - started
    clock.seconds["other"] = wall - sum(v for k, v in clock.seconds.items() if k != "other")
    Path(args.result).write_text(json.dumps({"wall": wall, "status": status, "seconds": clock.seconds,
                                             "counts": clock.counts}))


# --------------------------------------------------------------------------- the parts on their own

def parts(args: argparse.Namespace) -> None:
    """spaCy, the parser extractor, MiniLM (default threads and one) and warm EMD on a sample of the job."""
    sys.path.insert(0, str(ROOT))
    from hallu_studio.config import apply_offline_env_defaults

    apply_offline_env_defaults()
    import torch

    from hallu_studio.embedding import Embedder
    from hallu_studio.extraction import ParserExtractor
    from hallu_studio.extraction.spacy_pipeline import load_english
    from hallu_studio.metrics.base import ScoringItem
    from hallu_studio.metrics.emd import EMDMetric, concept_phrases
    from hallu_studio.model import Sample

    lines = [json.loads(x) for x in Path(args.input).read_text().splitlines() if x.strip()]
    sample = lines[:: max(1, len(lines) // args.sample)][: args.sample]
    texts = list(dict.fromkeys(x["response"] for x in sample))
    out: dict[str, Any] = {}
    nlp = load_english()
    list(nlp.pipe(texts[:8]))
    start = time.perf_counter()
    tokens = sum(len(doc) for doc in nlp.pipe(texts, batch_size=64))
    out["spacy_tokens_per_s"] = tokens / (time.perf_counter() - start)
    extractor = ParserExtractor()
    extractor.extract(texts[:8])
    from hallu_studio.lexicon.forms import plural

    plural("leaf")  # inflect loads on first use, which eight texts may not reach: not the extractor's rate
    extractor = ParserExtractor()
    extractor._nlp = nlp
    start = time.perf_counter()
    concepts = extractor.extract(texts)
    out["parser_tokens_per_s"] = tokens / (time.perf_counter() - start)
    phrases = list(dict.fromkeys(p for c in concepts for t in concept_phrases(c).values() for p in t.phrases))
    embedder = Embedder()
    model = embedder.model
    model.encode(phrases[:16], batch_size=64)
    default_threads = torch.get_num_threads()
    rates: dict[int, float] = {}
    for threads in (default_threads, 1, default_threads, 1):
        torch.set_num_threads(threads)
        start = time.perf_counter()
        model.encode(phrases, batch_size=64, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
        rates[threads] = max(rates.get(threads, 0.0), len(phrases) / (time.perf_counter() - start))
    torch.set_num_threads(default_threads)
    out["phrases"] = len(phrases)
    out["minilm_default_threads"] = default_threads
    out["minilm_phrases_per_s_default"] = rates[default_threads]
    out["minilm_phrases_per_s_1_thread"] = rates[1]
    metric = EMDMetric(Embedder(), extractor)
    metric.embedder._model = model
    items = [ScoringItem(x["id"], x["response"],
                         Sample(id=f"jsonl/{x['id']}", benchmark="jsonl", image_key=x["image"], task="caption",
                                reference_text=x["reference_text"], reference_kind=x.get("reference_kind") or "captions"),
                         c, {})
             for x, c in zip(sample, extractor.extract([x["response"] for x in sample]))]
    metric.update_many(items)
    start = time.perf_counter()
    metric.update_many(items)
    out["emd_warm_captions_per_s"] = len(items) / (time.perf_counter() - start)
    Path(args.result).write_text(json.dumps(out))


# --------------------------------------------------------------------------- the driver

def run_mode(kind: str, result: Path, script: str = __file__, **options: Any) -> dict[str, Any]:
    """Run ``script`` (this one, or another bench that reuses its stage clock) in its ``--kind`` mode in a fresh
    process, ``options`` as ``--key value`` (underscores as dashes), and read the JSON it writes to ``result``."""
    cmd = [sys.executable, str(Path(script).resolve()), f"--{kind}", "--result", str(result)]
    for key, value in options.items():
        if value is not None:
            cmd += [f"--{key.replace('_', '-')}", str(value)]
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0 or not result.exists():
        raise RuntimeError(f"{kind} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(result.read_text())


def plain_cache_runs(input_path: Path, cache: Path, metrics: str) -> tuple[float, float, str]:
    """Wall seconds of a first and a second ``score --cache`` run of this checkout, each a plain CLI process, and
    how their outputs compare."""
    cache.unlink(missing_ok=True)
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1",
               PYTHONPATH=str(ROOT))
    walls, outs = [], []
    for i in range(2):
        outs.append(cache.with_name(f"{cache.stem}.{i}.out.jsonl"))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hallu_studio", "score", "--input", str(input_path), "--output",
                        str(outs[i]), "--metrics", metrics, "--cache", str(cache), "--no-progress"],
                       env=env, cwd=ROOT, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
    return walls[0], walls[1], compare_outputs(outs[0], outs[1])


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}" if x >= 10 else f"{x:.2f}"


def compare_outputs(a: Path, b: Path) -> str:
    """Byte-for-byte, else how far the numbers are apart and whether anything but numbers differs."""
    if a.read_bytes() == b.read_bytes():
        return "byte-for-byte identical"
    worst = 0.0
    other = 0
    lines = 0

    def walk(x: Any, y: Any) -> None:
        nonlocal worst, other
        if isinstance(x, dict) and isinstance(y, dict) and x.keys() == y.keys():
            for k in x:
                walk(x[k], y[k])
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for u, v in zip(x, y):
                walk(u, v)
        elif isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
            worst = max(worst, abs(x - y))
        elif x != y:
            other += 1

    for la, lb in zip(a.read_text().splitlines(), b.read_text().splitlines()):
        if la != lb:
            lines += 1
            walk(json.loads(la), json.loads(lb))
    return f"{lines} lines differ: largest numeric difference {worst:.3g}, {other} non-numeric differences"


def report(job: str, n: int, runs: dict[str, dict[str, Any]], own: dict[str, Any]) -> None:
    print(f"\n## {job}: {n:,} lines, --metrics {JOB_METRICS[job]}\n")
    names = list(runs)
    print("| run | wall s | captions/s | " + " | ".join(STAGES) + " |")
    print("|---|---|---|" + "---|" * len(STAGES))
    for name in names:
        r = runs[name]
        shares = " | ".join(f"{100 * r['seconds'][s] / r['wall']:.0f}% ({_fmt(r['seconds'][s])} s)" for s in STAGES)
        print(f"| {name} | {_fmt(r['wall'])} | {_fmt(n / r['wall'])} | {shares} |")
    print()
    print("| run | texts parsed | tokens parsed | tokens/s in the run | phrases encoded | encoder calls "
          "| phrases/s in the run | EMD problems |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        r, c = runs[name], runs[name]["counts"]
        tok, ph = c.get("parsed_tokens", 0), c.get("encoded_phrases", 0)
        print(f"| {name} | {c.get('parsed_texts', 0):,.0f} | {tok:,.0f} | "
              f"{_fmt(tok / r['seconds']['parse']) if r['seconds']['parse'] else '-'} | {ph:,.0f} | "
              f"{c.get('encoder_calls', 0):,.0f} | {_fmt(ph / r['seconds']['encode']) if r['seconds']['encode'] else '-'}"
              f" | {c.get('transport_problems', 0):,.0f} |")
    print(f"\nThe parts on their own (this checkout, same run, a sample of the job): spaCy nlp.pipe "
          f"{_fmt(own['spacy_tokens_per_s'])} tokens/s; the parser extractor (spaCy + rules) "
          f"{_fmt(own['parser_tokens_per_s'])} tokens/s; MiniLM on {own['phrases']:,} of the job's phrases, batches "
          f"of 64: {_fmt(own['minilm_phrases_per_s_default'])} phrases/s with torch's {own['minilm_default_threads']} "
          f"threads, {_fmt(own['minilm_phrases_per_s_1_thread'])} with one; warm EMD "
          f"{_fmt(own['emd_warm_captions_per_s'])} captions/s.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", default="dci,coco", help="dci, coco or both")
    ap.add_argument("--images", type=int, default=300, help="DCI images (x7 lines); COCO images (x5 + x10/3)")
    ap.add_argument("--baseline", default=None, help="a checkout of the landed code to run side by side")
    ap.add_argument("--no-cache-runs", action="store_true", help="skip the two --cache runs of this checkout")
    ap.add_argument("--sample", type=int, default=200, help="captions the parts are timed on")
    ap.add_argument("--background-load", type=int, default=0,
                    help="keep N busy processes running through every run (a shared machine's load, the same for "
                         "each version); the runs start once the load average has risen to it")
    ap.add_argument("--keep", default=None, help="keep the inputs and outputs in this folder")
    # worker modes (internal)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--parts", action="store_true", help=argparse.SUPPRESS)
    for name in ("src", "input", "output", "metrics", "cache", "result"):
        ap.add_argument(f"--{name}", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if args.parts:
        return parts(args)
    if not (DCI / "annotation.json").exists() or not HAELM.exists():
        sys.exit(f"needs the real data in {SHARED}")
    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench-cold-"))
    folder.mkdir(parents=True, exist_ok=True)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.background_load)]
    try:
        if busy:
            # The load average is a one-minute mean: wait until it shows the busy processes, as it would on a
            # machine others keep busy (the encoder picks its threads from it).
            deadline = time.monotonic() + 180
            while os.getloadavg()[0] < 0.9 * args.background_load and time.monotonic() < deadline:
                time.sleep(5)
            print(f"{args.background_load} busy processes running through every run")
        run_jobs(args, folder)
    finally:
        for p in busy:
            p.kill()
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


def run_jobs(args: argparse.Namespace, folder: Path) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; inputs in {folder}")
    versions = {"landed": args.baseline, "this checkout": str(ROOT)} if args.baseline else {"this checkout": str(ROOT)}
    for job in [j.strip() for j in args.jobs.split(",") if j.strip()]:
        images = args.images if job == "dci" else min(args.images, 300)
        path = write_job(job, images, folder)
        n = sum(1 for line in path.read_text().splitlines() if line.strip())
        runs: dict[str, dict[str, Any]] = {}
        outputs: dict[str, Path] = {}
        plan: list[tuple[str, str, str | None]] = [(name, src, None) for name, src in versions.items()]
        if not args.no_cache_runs:
            cache = folder / f"{job}.cache.duckdb"
            cache.unlink(missing_ok=True)
            plan += [("--cache, first run", str(ROOT), str(cache)), ("--cache, second run", str(ROOT), str(cache))]
        for name, src, cache_file in plan:
            out = folder / f"{job}.{len(outputs)}.out.jsonl"
            load = os.getloadavg()[0]
            given = as_landed_input(path) if name == "landed" else path
            runs[name] = run_mode("worker", folder / f"{job}.{len(outputs)}.result.json", src=src, input=given,
                              output=out, metrics=JOB_METRICS[job], cache=cache_file)
            runs[name]["load"] = (load, os.getloadavg()[0])
            outputs[name] = out
            failed = sum("error" in json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()
                         if line.strip())
            runs[name]["failed"] = failed
            print(f"  {job}: {name}: {runs[name]['wall']:.1f} s (load {load:.1f} -> {os.getloadavg()[0]:.1f})"
                  + (f"; {failed} of {n} lines FAILED (see {out})" if failed else ""), flush=True)
        own = run_mode("parts", folder / f"{job}.parts.json", input=path, sample=args.sample)
        report(job, n, runs, own)
        first = "landed" if "landed" in runs else None
        if first:
            base = runs[first]["wall"]
            for name in runs:
                if name == first:
                    continue
                if runs[name]["failed"] or runs[first]["failed"]:
                    print(f"\n{name} / landed: no ratio: lines failed ({runs[first]['failed']} landed, "
                          f"{runs[name]['failed']} {name})")
                else:
                    print(f"\n{name} / landed: **{base / runs[name]['wall']:.2f}x** the captions/s; output vs landed: "
                          f"{compare_outputs(outputs[first], outputs[name])}")
        if "--cache, second run" in runs:
            a, b = runs["--cache, first run"]["wall"], runs["--cache, second run"]["wall"]
            print(f"\nsecond run with the cache / first: **{a / b:.1f}x** faster; output: "
                  f"{compare_outputs(outputs['--cache, first run'], outputs['--cache, second run'])}")
            plain = plain_cache_runs(path, folder / f"{job}.plain.cache.duckdb", JOB_METRICS[job])
            print(f"\nthe same two runs as a user makes them (`python -m hallu_studio score ... --cache FILE`, no "
                  f"stage clock: the worker's own imports of spaCy, torch and POT are in every run above): first "
                  f"{plain[0]:.1f} s, second {plain[1]:.2f} s, **{plain[0] / plain[1]:.1f}x** faster; output: {plain[2]}")
        print("\nload average per run: " + "; ".join(f"{k} {v['load'][0]:.1f} -> {v['load'][1]:.1f}"
                                                    for k, v in runs.items()))


if __name__ == "__main__":
    main()
