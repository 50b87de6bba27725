"""Model presets: hub ids and the prompt handling each family needs.

Every preset goes through ``AutoProcessor`` + ``AutoModelForImageTextToText``.
What differs is whether the processor has a chat template (PaliGemma has none:
the prompt is passed as is, and its processor adds the image tokens) and a few
processor keyword arguments that bound the number of image tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelPreset:
    name: str
    hub_id: str
    family: str
    chat_template: bool = True  # False: the prompt goes to the processor as plain text
    processor_kwargs: dict[str, Any] = field(default_factory=dict)  # passed to AutoProcessor.from_pretrained
    notes: str = ""


def _p(name: str, hub_id: str, family: str, **kw: Any) -> ModelPreset:
    return ModelPreset(name=name, hub_id=hub_id, family=family, **kw)


# Qwen2-VL's dynamic resolution can turn one large photo into thousands of image
# tokens; capping the pixel count keeps batches predictable (1280 * 28 * 28 is Qwen's own suggestion).
_QWEN_PIXELS = {"min_pixels": 256 * 28 * 28, "max_pixels": 1280 * 28 * 28}

PRESETS: dict[str, ModelPreset] = {p.name: p for p in [
    _p("llava-1.5-7b", "llava-hf/llava-1.5-7b-hf", "llava"),
    _p("llava-1.5-13b", "llava-hf/llava-1.5-13b-hf", "llava"),
    _p("llava-onevision-0.5b", "llava-hf/llava-onevision-qwen2-0.5b-ov-hf", "llava-onevision"),
    _p("llava-onevision-7b", "llava-hf/llava-onevision-qwen2-7b-ov-hf", "llava-onevision"),
    _p("qwen2-vl-2b", "Qwen/Qwen2-VL-2B-Instruct", "qwen2-vl", processor_kwargs=_QWEN_PIXELS),
    _p("qwen2-vl-7b", "Qwen/Qwen2-VL-7B-Instruct", "qwen2-vl", processor_kwargs=_QWEN_PIXELS),
    _p("qwen2.5-vl-3b", "Qwen/Qwen2.5-VL-3B-Instruct", "qwen2-vl", processor_kwargs=_QWEN_PIXELS),
    _p("qwen2.5-vl-7b", "Qwen/Qwen2.5-VL-7B-Instruct", "qwen2-vl", processor_kwargs=_QWEN_PIXELS),
    _p("idefics3-8b", "HuggingFaceM4/Idefics3-8B-Llama3", "idefics3"),
    _p("smolvlm-256m", "HuggingFaceTB/SmolVLM-256M-Instruct", "idefics3"),
    _p("smolvlm-2b", "HuggingFaceTB/SmolVLM-Instruct", "idefics3"),
    _p("internvl3-1b", "OpenGVLab/InternVL3-1B-hf", "internvl"),
    _p("internvl3-8b", "OpenGVLab/InternVL3-8B-hf", "internvl"),
    _p("llama-3.2-11b-vision", "meta-llama/Llama-3.2-11B-Vision-Instruct", "mllama",
       notes="gated on the hub: accept the licence and log in before downloading"),
    _p("paligemma-3b", "google/paligemma-3b-mix-224", "paligemma", chat_template=False,
       notes="no chat template; mix checkpoints follow task prefixes such as 'caption en' or 'answer en <q>'"),
]}


def preset_for(model_id: str) -> ModelPreset | None:
    """The preset whose hub id is ``model_id`` (so ``transformers:<hub id>`` gets the same handling)."""
    for p in PRESETS.values():
        if p.hub_id == model_id:
            return p
    return None


def uses_chat_template(model_id: str, model_type: str | None, preset: ModelPreset | None) -> bool:
    if preset is not None:
        return preset.chat_template
    return model_type != "paligemma" and "paligemma" not in model_id.lower()
