"""Run an LVLM (or a probe model) over a benchmark and store every response as it finishes.

Resumable by construction: the run id is a content key of its settings
(``Run.make_id``), samples already answered (``store.done_sample_ids``) are
skipped, and each finished chunk of responses is written in its own small
transaction. Killing the process at any moment loses no finished chunk and a
restart duplicates nothing. Failures are recorded per item and the run goes on.
"""

from __future__ import annotations

import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from .. import __version__
from ..backends.base import Backend, DetectThenCalibrate, GenerationRequest, GenerationResult, SignalRequest
from ..backends.mitigation import (
    PERTURBATIONS, TWO_STEP, check_mitigation, perturbed_prompt, two_step_plan,
)
from ..config import DecodingSettings
from ..llm.dispatch import live_progress
from ..model import Response, Run, Sample, TASKS
from ..prompts import answer_candidates, generation_preset, render_prompt
from ..store import Store

ProgressCallback = Callable[[int, int], None]  # (finished so far incl. earlier sessions, total)


@dataclass
class RunOptions:
    """Everything that shapes a run's responses (and therefore its id), plus how to execute it."""

    benchmark: str
    prompt: str | None = None  # a prompt name from ``prompts.PROMPTS``, free text, or None: per task default
    generation: str = "greedy"  # greedy | beam | nucleus (VISCON Table 6)
    max_new_tokens: int = 512
    mitigation: str = "none"
    seed: int = 0
    token_logprobs: bool = True
    logit_lens_top_k: int = 0
    decoding: DecodingSettings = field(default_factory=DecodingSettings)
    # execution only: not part of the run id
    tasks: Sequence[str] | None = None
    limit: int | None = None
    chunk_size: int = 8  # responses written per transaction

    def generation_settings(self) -> dict[str, Any]:
        g = generation_preset(self.generation, self.max_new_tokens)
        g["signals"] = {"token_logprobs": self.token_logprobs, "logit_lens_top_k": self.logit_lens_top_k}
        if self.mitigation == "dtc":
            g["dtc"] = DetectThenCalibrate(self.decoding.dtc_alpha, self.decoding.dtc_lambda,
                                           self.decoding.dtc_gamma, self.decoding.entropy_reading).to_dict()
        return g


@dataclass
class RunSummary:
    run_id: str
    total: int
    done: int = 0  # written in this session
    failed: int = 0
    skipped: int = 0  # already done before this session
    status: str = "running"

    def line(self) -> str:
        return (f"run {self.run_id}: {self.done} done, {self.failed} failed, {self.skipped} skipped "
                f"(of {self.total}) - {self.status}")


def make_run(backend: Backend, options: RunOptions) -> Run:
    check_mitigation(options.mitigation)
    generation = options.generation_settings()
    prompt = options.prompt or "auto"
    run_id = Run.make_id(options.benchmark, backend.model, backend.kind, prompt, generation, options.mitigation,
                         options.seed)
    return Run(id=run_id, benchmark=options.benchmark, model=backend.model, backend=backend.kind,
               checkpoint=backend.checkpoint(), prompt=prompt, generation=generation, mitigation=options.mitigation,
               seed=options.seed, tool_version=__version__, synthetic=backend.synthetic)


def select_samples(store: Store, options: RunOptions) -> list[Sample]:
    tasks = list(options.tasks) if options.tasks else [None]
    for t in tasks:
        if t is not None and t not in TASKS:
            raise ValueError(f"unknown task {t!r}; choose from {TASKS}")
    samples = [s for t in tasks for s in store.iter_samples(options.benchmark, task=t)]
    samples.sort(key=lambda s: s.id)
    if not samples and store.get_benchmark(options.benchmark) is None:
        raise ValueError(f"no benchmark named {options.benchmark!r} in the store")
    return samples[:options.limit] if options.limit is not None else samples


def execute_run(store: Store, backend: Backend, options: RunOptions, *,
                cancel: threading.Event | None = None, progress: bool = True,
                on_progress: ProgressCallback | None = None) -> RunSummary:
    """Run ``backend`` over the benchmark's samples; resume when the same run exists.

    A backend with ``check_endpoint`` (a server's) is checked first: a server that is not there is one
    error (``LLMConfigError``) before anything is stored or asked."""
    check = getattr(backend, "check_endpoint", None)
    if check is not None:
        check()
    run = make_run(backend, options)
    if options.mitigation == "dtc" and not getattr(backend, "supports_dtc", False):
        raise ValueError(f"Detect-then-Calibrate needs the model's hidden states; backend {backend.kind!r} "
                         "does not expose them (use a transformers: model)")
    existing = store.get_run(run.id)
    if existing is not None and existing.checkpoint != run.checkpoint:
        raise ValueError(f"run {run.id} was made with checkpoint {existing.checkpoint!r}, the model now loads "
                         f"{run.checkpoint!r}; refusing to mix them in one run")
    store.add_run(run)
    samples = select_samples(store, options)
    done_ids = store.done_sample_ids(run.id)
    todo = [s for s in samples if s.id not in done_ids]
    summary = RunSummary(run.id, total=len(samples), skipped=len(samples) - len(todo))
    store.set_run_status(run.id, "running")
    bar = _progress_bar(progress, len(samples), summary.skipped, run)
    others = {s.id: samples[(i + 1) % len(samples)] for i, s in enumerate(samples)} if samples else {}
    try:
        # A server-backed model's calls (done, in flight, retried, failed, concurrency) show on the bar.
        with live_progress(bar) if bar is not None else nullcontext():
            for start in range(0, len(todo), max(1, options.chunk_size)):
                if cancel is not None and cancel.is_set():
                    summary.status = "cancelled"
                    break
                chunk = todo[start:start + max(1, options.chunk_size)]
                ok, failed = _run_chunk(store, backend, run, options, chunk, others)
                summary.done += ok
                summary.failed += failed
                if bar is not None:
                    bar.update(len(chunk))
                if on_progress is not None:
                    on_progress(summary.skipped + summary.done + summary.failed, summary.total)
            else:
                summary.status = "completed_with_failures" if summary.failed else "completed"
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (the CLI): stopped, as by a cancel (whole chunks are stored)
        store.set_run_status(run.id, "cancelled")
        raise
    except BaseException:
        store.set_run_status(run.id, "error")
        raise
    finally:
        if bar is not None:
            bar.close()
    store.set_run_status(run.id, summary.status)
    return summary


def _progress_bar(enabled: bool, total: int, initial: int, run: Run) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=run.model[:40], unit="item", dynamic_ncols=True)


def _signal_request(options: RunOptions, sample: Sample) -> SignalRequest:
    return SignalRequest(token_logprobs=options.token_logprobs, answer_candidates=answer_candidates(sample.task),
                         logit_lens_top_k=options.logit_lens_top_k)


def _image_of(store: Store, sample: Sample) -> bytes:
    if not sample.image_sha256:
        reason = sample.meta.get("missing_reason") if isinstance(sample.meta, dict) else None
        raise ValueError(f"sample {sample.id}: its image {sample.image_key!r} is missing"
                         + (f" ({reason})" if reason else ""))
    found = store.get_image(sample.image_sha256)
    if found is None:
        raise ValueError(f"sample {sample.id}: image {sample.image_sha256[:12]} is not in the store")
    return found[0]


def _base_request(store: Store, run: Run, options: RunOptions, sample: Sample,
                  other: Sample | None) -> tuple[GenerationRequest, dict[str, Any]]:
    """The sample's request and the signals the pipeline itself adds (the perturbation used)."""
    prompt = render_prompt(options.prompt, question=sample.question, task=sample.task)
    image = None if run.backend == "probe" else _image_of(store, sample)
    dtc = None
    if options.mitigation == "dtc":
        d = options.decoding
        dtc = DetectThenCalibrate(d.dtc_alpha, d.dtc_lambda, d.dtc_gamma, d.entropy_reading)
    request = GenerationRequest(sample_id=sample.id, prompt=prompt, image=image,
                                generation=dict(run.generation), signals=_signal_request(options, sample),
                                dtc=dtc, sample=sample, seed=options.seed)
    extra: dict[str, Any] = {}
    if options.mitigation in PERTURBATIONS:
        request.prompt, text = perturbed_prompt(options.mitigation, prompt, sample, other, options.seed)
        extra["perturbation"] = {"variant": options.mitigation, "text": text}
    return request, extra


def _run_chunk(store: Store, backend: Backend, run: Run, options: RunOptions, chunk: list[Sample],
               others: dict[str, Sample]) -> tuple[int, int]:
    """Generate one chunk and write it: responses in one transaction, each failure recorded."""
    requests: list[GenerationRequest] = []
    extras: dict[str, dict[str, Any]] = {}
    failures: list[tuple[str, str, str]] = []
    for sample in chunk:
        try:
            request, extras[sample.id] = _base_request(store, run, options, sample, others.get(sample.id))
            if options.mitigation in TWO_STEP:
                two_step_plan(options.mitigation, sample.question, sample.id)  # fail early: no question
            requests.append(request)
        except ValueError as exc:
            failures.append((sample.id, "prepare", str(exc)))
    if options.mitigation in TWO_STEP:
        results = _two_step(backend, options.mitigation, requests, failures)
    else:
        results = _safe_generate(backend, requests)
    responses = []
    for request, result in zip(requests, results):
        if result is None:
            continue
        if not result.ok:
            failures.append((request.sample_id, "generate", result.error or "unknown error"))
            continue
        signals = {**result.signals, **extras.get(request.sample_id, {})}
        responses.append(Response(run_id=run.id, sample_id=request.sample_id, text=result.text, signals=signals))
    written = store.add_responses(responses) if responses else 0
    for sample_id, stage, error in failures:
        store.add_failure(run.id, sample_id, stage, error)
    return written, len(failures)


def _safe_generate(backend: Backend, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
    """A backend that raises (instead of returning per-item errors) fails the chunk's items, not the run."""
    if not requests:
        return []
    try:
        results = backend.generate(requests)
        if len(results) != len(requests):
            raise RuntimeError(f"backend returned {len(results)} results for {len(requests)} requests")
        return results
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # noqa: BLE001 - recorded as each item's failure
        return [GenerationResult(r.sample_id, error=f"{type(exc).__name__}: {exc}") for r in requests]


def _two_step(backend: Backend, name: str, requests: list[GenerationRequest],
              failures: list[tuple[str, str, str]]) -> list[GenerationResult | None]:
    """Tri-HE §5.4: describe (with the image), then answer from the description."""
    plans, first = [], []
    for r in requests:
        plan = two_step_plan(name, r.sample.question if r.sample else None, r.sample_id)
        plans.append(plan)
        first.append(GenerationRequest(r.sample_id, plan.describe_prompt, r.image, dict(r.generation),
                                       SignalRequest(), None, r.sample, r.seed))
    described = _safe_generate(backend, first)
    second, index = [], []
    for i, (r, plan, d) in enumerate(zip(requests, plans, described)):
        if not d.ok:
            failures.append((r.sample_id, "generate", f"description step: {d.error}"))
            continue
        question = r.sample.question if r.sample else ""
        second.append(GenerationRequest(r.sample_id, plan.answer_prompt(d.text, question or ""),
                                        r.image if plan.image_in_answer_step else None, dict(r.generation),
                                        r.signals, r.dtc, r.sample, r.seed))
        index.append(i)
    answered = _safe_generate(backend, second)
    out: list[GenerationResult | None] = [None] * len(requests)
    for i, res in zip(index, answered):
        if res.ok:
            res.signals = {**res.signals, "mitigation": {"name": name, "description": described[i].text}}
        out[i] = res
    return out


# --------------------------------------------------------------------------- probe suite (demo data)

def run_probe_suite(store: Store, benchmark: str, rates: Iterable[float] = (0.0, 0.1, 0.3, 0.5), *,
                    seed: int = 0, progress: bool = False, cancel: threading.Event | None = None) -> list[RunSummary]:
    """Probe runs at several hallucination rates: the offline demo's model runs. A set ``cancel`` ends the
    run in progress at its next chunk (its summary says "cancelled") and starts no other."""
    from ..backends.probe import ProbeBackend, ProbeOptions

    summaries = []
    for rate in rates:
        backend = ProbeBackend(ProbeOptions(rate=float(rate), seed=seed))
        summaries.append(execute_run(store, backend, RunOptions(benchmark=benchmark, seed=seed, chunk_size=64),
                                     progress=progress, cancel=cancel))
        if summaries[-1].status == "cancelled":
            break
    return summaries


# --------------------------------------------------------------------------- truncation study (Tri-HE Figure 3)

def truncate_words(text: str, k: int) -> str:
    """The first ``k`` whitespace tokens of ``text`` (Tri-HE Figure 3 cuts responses this way).

    >>> truncate_words("a cat  on the\\nmat", 3)
    'a cat on'
    """
    if k < 1:
        raise ValueError(f"truncation length must be at least 1, got {k}")
    return " ".join(text.split()[:k])


def truncated_responses(responses: Iterable[Response], k: int, run_id: str) -> list[Response]:
    """Pure: each response cut to its first ``k`` tokens, as a response of run ``run_id``."""
    return [Response(run_id=run_id, sample_id=r.sample_id, text=truncate_words(r.text, k),
                     signals={"truncated_from": r.id, "k": k}) for r in responses]


def truncated_run_id(run_id: str, k: int) -> str:
    return f"{run_id}-trunc{k}"


def derive_truncated_runs(store: Store, run_id: str, ks: Sequence[int]) -> list[str]:
    """Store ``<run>-trunc<K>`` runs (same sample ids) that the scoring pipelines score like any run."""
    source = store.get_run(run_id)
    if source is None:
        raise ValueError(f"no run {run_id!r} in the store")
    originals = list(store.iter_responses(run_id))
    made = []
    for k in ks:
        derived = Run(**{**source.to_dict(), "id": truncated_run_id(run_id, k),
                         "meta": {**source.meta, "derived_from": run_id, "truncated_to": int(k)}})
        store.add_run(derived)
        store.add_responses(truncated_responses(originals, int(k), derived.id))
        store.set_run_status(derived.id, "completed")
        made.append(derived.id)
    return made
