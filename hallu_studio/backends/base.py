"""The one interface every LVLM backend implements.

A backend turns a list of ``GenerationRequest`` into a list of
``GenerationResult`` of the same length and order. A result carries either text
(and the signals that were asked for) or an error; a backend never raises for
one bad item, so the run pipeline can record each failure and go on.

Signals shapes (what ``Response.signals`` holds):

- ``token_logprobs``: ``[{"token": str, "logprob": float}, ...]`` for the generated tokens.
- ``answer``: ``{"candidates": [...], "logits": [...], "probs": [...], "raw_probs": [...], "entropy": float,
  "entropy_unit": "bits", "position": 0}`` -- Reefknot eq. 2 over the candidates' first-token
  logits at the first generated position, softmax over the candidates only; ``raw_probs``: the candidates'
  probabilities out of the whole vocabulary, which Reefknot's released code takes the entropy over.
- ``logit_lens``: ``{"position": 0, "top_k": k, "layers": [{"layer": j, "tokens": [...],
  "probs": [...]}, ...]}`` -- final norm + lm_head applied to each layer's hidden state.
- ``dtc``: ``{"alpha", "lambda", "gamma", "steps": [{"step": i, "entropy": float,
  "calibrated": bool}, ...]}`` -- Detect-then-Calibrate decoding trace.
- ``injected`` / ``stated``: probe models only (see ``backends/probe.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from ..model import Sample


@dataclass(frozen=True)
class SignalRequest:
    """Which signals to record besides the text."""

    token_logprobs: bool = False
    answer_candidates: tuple[str, ...] | None = None  # e.g. ("yes", "no"); None: no answer entropy
    logit_lens_top_k: int = 0  # 0: no logit lens

    def to_dict(self) -> dict[str, Any]:
        return {"token_logprobs": self.token_logprobs,
                "answer_candidates": list(self.answer_candidates) if self.answer_candidates else None,
                "logit_lens_top_k": self.logit_lens_top_k}


@dataclass(frozen=True)
class DetectThenCalibrate:
    """Reefknot Algorithm 1 settings: contrast layer N with layer N-lambda when entropy >= gamma (bits);
    ``entropy`` "released" takes it over the answer candidates' raw probabilities (``decoding.entropy_reading``)."""

    alpha: float = 0.1
    lam: int = 2
    gamma: float = 0.9
    entropy: str = "studio"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"alpha": self.alpha, "lambda": self.lam, "gamma": self.gamma}
        if self.entropy != "studio":  # absent: renormalised, so runs made before the choice existed keep their ids
            out["entropy"] = self.entropy
        return out


@dataclass
class GenerationRequest:
    """One model call: an image (or none), a prompt, settings, and what to record."""

    sample_id: str
    prompt: str
    image: bytes | None = None
    generation: dict[str, Any] = field(default_factory=dict)  # see prompts.GENERATION_PRESETS
    signals: SignalRequest = field(default_factory=SignalRequest)
    dtc: DetectThenCalibrate | None = None
    sample: Sample | None = None  # probe models read the scene graph; real models ignore it
    seed: int = 0


@dataclass
class GenerationResult:
    sample_id: str
    text: str = ""
    signals: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Backend(Protocol):
    """What the run pipeline needs from a backend."""

    kind: str  # transformers | openai | probe
    model: str  # what the run is named after (hub id, served model name, probe spec)
    synthetic: bool

    def checkpoint(self) -> str:
        """The exact weights: hub commit, a hash of local files, or the server-reported model."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """One result per request, same order; failures are results with ``error`` set."""

    def close(self) -> None:
        """Free what the backend holds (GPU memory, HTTP clients)."""
