"""LVLM backends behind one interface (``base.Backend``), and ``make_backend`` for model specs.

A model spec is one of:

- ``transformers:<hub id or local path>``: any image-text-to-text checkpoint
- ``openai:<model>@<base url>``: an OpenAI-compatible chat endpoint (key from ``OPENAI_API_KEY``)
- ``probe:<options>``: a synthetic probe model, e.g. ``probe:rate=0.3,mix=object+relation,seed=1``
- a preset name from ``hf_presets.PRESETS`` (e.g. ``llava-1.5-7b``): transformers with that hub id

>>> make_backend("probe:rate=0.2").model
'probe rate=0.2 mix=object+attribute+relation+count seed=0 [synthetic]'
"""

from __future__ import annotations

from .base import Backend, DetectThenCalibrate, GenerationRequest, GenerationResult, SignalRequest

__all__ = ["Backend", "DetectThenCalibrate", "GenerationRequest", "GenerationResult", "SignalRequest",
           "make_backend"]


def make_backend(spec: str, *, batch_size: int = 8, concurrency: int = 8, timeout_s: float = 120.0,
                 max_retries: int = 4) -> Backend:
    """Build the backend a model spec names (heavy imports happen only for the chosen kind)."""
    kind, sep, rest = spec.partition(":")
    if sep and kind == "probe":
        from .probe import ProbeBackend, ProbeOptions

        return ProbeBackend(ProbeOptions.parse(rest))
    if sep and kind == "transformers":
        if not rest:
            raise ValueError("transformers: needs a hub id or a local path, e.g. transformers:llava-hf/llava-1.5-7b-hf")
        from .transformers_backend import TransformersBackend

        return TransformersBackend(rest, batch_size=batch_size)
    if sep and kind == "openai":
        model, at, base_url = rest.rpartition("@")
        if not at or not model or not base_url:
            raise ValueError(f"openai spec must be openai:<model>@<base url>, got {spec!r}")
        from .openai_backend import OpenAIBackend

        return OpenAIBackend(model, base_url, concurrency=concurrency, timeout_s=timeout_s, max_retries=max_retries)
    from .hf_presets import PRESETS

    if spec in PRESETS:
        from .transformers_backend import TransformersBackend

        return TransformersBackend(PRESETS[spec].hub_id, batch_size=batch_size, preset=PRESETS[spec])
    raise ValueError(f"unknown model spec {spec!r}: use transformers:<id>, openai:<model>@<url>, probe:<options> "
                     f"or a preset ({', '.join(sorted(PRESETS))})")
