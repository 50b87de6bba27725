"""The transformers backend on CUDA against its CPU path, with tiny random models built from configs.

Run it as ``bash scripts/gpu_check.sh`` (from a checkout: the tiny models come from ``tests/tiny_models.py``).
For each family (LLaVA, Qwen2-VL, Idefics3) the CPU float32 path is the reference; on CUDA the same requests run in
float32, bfloat16 and float16, and each check is compared with the reference:

- ``generate``: batched greedy generation (4 requests of different images and prompts): the tokens must equal the
  reference's, and the generated tokens' log-probabilities are compared (max diff);
- ``batch = one by one``: on the same device and dtype, the batch's texts equal each request sent alone;
- ``entropy``: the yes/no answer entropy in bits (Reefknot eq. 2);
- ``logit lens``: every layer's top-1 probability at the answer position (its top-1 tokens must agree);
- ``DTC``: Detect-then-Calibrate's decoded tokens (gamma 0: every step calibrated), and their text;
- ``image judge``: ``judges.vlm_judge.VLMJudge`` asking claims of the images: same yes/no readings, its
  yes-probabilities compared.

Tolerances (probabilities, entropies in bits, log-probabilities): float32 1e-3, bfloat16 8e-2, float16 2e-2. Random
weights give text that is gibberish but peaked logits (``initializer_range=0.2``), so greedy ties are rare: a token
that differs in bf16 is reported, with its diff, as a failure rather than hidden. Without CUDA the CPU half runs (so
this script is exercised anywhere), the table says so, and the exit status is 0.
"""

from __future__ import annotations

import io
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

TOLERANCE = {"float32": 1e-3, "bfloat16": 8e-2, "float16": 2e-2}
PROMPTS = ["is there a cat ?", "describe the image in detail .", "is the dog on the table next to the chair ?",
           "is the man near a large white table ?"]
CLAIMS = [("cat", "on", "table"), ("dog", "is", "red"), ("man", "near", "chair"), ("table", "is", "white")]
NEW_TOKENS = 6


@dataclass
class Row:
    family: str
    check: str
    device: str
    dtype: str
    result: str  # "ok", "FAIL: ...", "reference"
    max_diff: float | None
    seconds: float


def _png(i: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40 + 7 * i, 30 + 5 * i), (60 * i % 256, 90 + 30 * i, 200 - 40 * i)).save(buf, "PNG")
    return buf.getvalue()


def _requests(signals: Any, dtc: Any = None) -> list[Any]:
    from hallu_studio.backends.base import GenerationRequest
    from hallu_studio.prompts import generation_preset

    return [GenerationRequest(f"s{i}", p, _png(i), generation_preset("greedy", NEW_TOKENS), signals, dtc)
            for i, p in enumerate(PROMPTS)]


def _outputs(backend: Any) -> dict[str, Any]:
    """What each check reads from one backend: plain values, comparable across devices."""
    from hallu_studio.backends.base import DetectThenCalibrate, SignalRequest
    from hallu_studio.judges.vlm_judge import VLMJudge

    out: dict[str, Any] = {}
    signals = SignalRequest(token_logprobs=True, answer_candidates=("yes", "no"), logit_lens_top_k=2)
    timed: dict[str, float] = {}
    start = time.perf_counter()
    batched = backend.generate(_requests(signals))
    timed["generate"] = time.perf_counter() - start
    _raise_failed(batched)
    out["generate"] = ([[t["token"] for t in r.signals["token_logprobs"]] for r in batched],
                       [t["logprob"] for r in batched for t in r.signals["token_logprobs"]])
    start = time.perf_counter()
    single = [backend.generate([r])[0] for r in _requests(signals)]
    timed["batch = one by one"] = time.perf_counter() - start
    out["batch = one by one"] = ([r.text for r in batched], [r.text for r in single])
    out["entropy"] = ([], [r.signals["answer"]["entropy"] for r in batched])
    lens = [r.signals["logit_lens"]["layers"] for r in batched]
    out["logit lens"] = ([[layer["tokens"][0] for layer in layers] for layers in lens],
                         [layer["probs"][0] for layers in lens for layer in layers])
    timed["entropy"] = timed["logit lens"] = timed["generate"]  # read from the same batched call
    start = time.perf_counter()
    dtc = backend.generate(_requests(SignalRequest(answer_candidates=("yes", "no")), DetectThenCalibrate(0.1, 1, 0.0)))
    timed["DTC"] = time.perf_counter() - start
    _raise_failed(dtc)
    out["DTC"] = ([[s["token"] for s in r.signals["dtc"]["steps"]] + [r.text] for r in dtc], [])
    start = time.perf_counter()
    answers = VLMJudge(backend, "gpu-check").ask([(c, _png(i), f"img{i}") for i, c in enumerate(CLAIMS)])
    timed["image judge"] = time.perf_counter() - start
    _raise_failed(answers)
    out["image judge"] = ([a.yes for a in answers], [a.probability for a in answers])
    return {check: (value, timed[check]) for check, value in out.items()}


def _raise_failed(results: list[Any]) -> None:
    failed = [str(getattr(r, "error", r)) for r in results if getattr(r, "error", None) or isinstance(r, Exception)]
    if failed:
        raise RuntimeError("; ".join(failed[:3]))


def _compare(check: str, got: Any, reference: Any | None, tolerance: float) -> tuple[str, float | None]:
    exact, numbers = got
    if check == "batch = one by one":
        batched, alone = exact, numbers
        return ("ok" if batched == alone else f"FAIL: batched {batched} != alone {alone}"), None
    if reference is None:
        return "reference", None
    ref_exact, ref_numbers = reference
    if exact != ref_exact:
        return f"FAIL: differs from CPU ({exact} vs {ref_exact})", None
    if len(numbers) != len(ref_numbers):
        return f"FAIL: {len(numbers)} values vs {len(ref_numbers)} on CPU", None
    diffs = [abs(a - b) for a, b in zip(numbers, ref_numbers) if a is not None and b is not None]
    worst = max(diffs, default=0.0)
    if math.isnan(worst) or worst > tolerance:
        return f"FAIL: max diff {worst:.2g} > {tolerance:g}", worst
    return "ok", worst if diffs else None


def _run(family: str, model_dir: Path, device: str, dtype: str, reference: dict[str, Any] | None) -> list[Row]:
    from hallu_studio.backends.transformers_backend import TransformersBackend

    backend = TransformersBackend(str(model_dir), batch_size=4, device=device, dtype=dtype)
    try:
        start = time.perf_counter()
        backend.load()
        loaded = time.perf_counter() - start
        outputs = _outputs(backend)
    except Exception as exc:  # noqa: BLE001 - reported in the table, the other rows still run
        return [Row(family, "load + run", device, dtype, f"FAIL: {type(exc).__name__}: {exc}"[:160], None, 0.0)]
    finally:
        backend.close()
    rows = [Row(family, "load", device, dtype, "ok", None, loaded)]
    for check, (value, seconds) in outputs.items():
        result, diff = _compare(check, value, None if reference is None else reference[check][0], TOLERANCE[dtype])
        rows.append(Row(family, check, device, dtype, result, diff, seconds))
    if reference is None:
        _run.reference = outputs  # type: ignore[attr-defined]
    return rows


FAMILIES: dict[str, str] = {"llava": "build_tiny_llava", "qwen2-vl": "build_tiny_qwen2_vl",
                            "idefics3": "build_tiny_idefics3"}


def _table(rows: list[Row]) -> str:
    head = ("family", "check", "device", "dtype", "result", "max diff", "time s")
    cells = [head] + [(r.family, r.check, r.device, r.dtype, r.result,
                       "-" if r.max_diff is None else f"{r.max_diff:.2e}", f"{r.seconds:.2f}") for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    return "\n".join("  ".join(c[i].ljust(widths[i]) for i in range(len(head))).rstrip() for c in cells)


def main(argv: list[str] | None = None, print_: Callable[[str], None] = print) -> int:
    import torch

    import tiny_models

    args = argv if argv is not None else sys.argv[1:]
    cpu_only = "--cpu-only" in args or not torch.cuda.is_available()
    families = [a for a in args if a in FAMILIES] or list(FAMILIES)
    started = time.perf_counter()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        for family in families:
            model_dir = getattr(tiny_models, FAMILIES[family])(Path(tmp) / family)
            _run.reference = None  # type: ignore[attr-defined]
            rows += _run(family, model_dir, "cpu", "float32", None)
            reference = _run.reference  # type: ignore[attr-defined]
            if cpu_only or reference is None:
                continue
            for dtype in ("float32", "bfloat16", "float16"):
                rows += _run(family, model_dir, "cuda", dtype, reference)
    print_(_table(rows))
    failed = [r for r in rows if r.result.startswith("FAIL")]
    if cpu_only:
        name = "--cpu-only given" if torch.cuda.is_available() else "no CUDA"
        print_(f"skipped: {name} (the CPU half ran: {len(rows)} rows, {len(failed)} failed; "
               f"{time.perf_counter() - started:.0f} s)")
        return 1 if failed else 0
    print_(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}: {len(rows)} rows, {len(failed)} failed, "
           f"{time.perf_counter() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
