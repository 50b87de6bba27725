"""Mitigations as run options: how a sample's request(s) change.

- ``trihe-general`` / ``trihe-triplet``: Tri-HE §5.4 two-step prompting. Step one
  describes the image guided by the question (a general or a triplet
  description); step two answers the question from that description WITHOUT the
  image ("eyes closed").
- ``trihe-triplet-eyes-open``: the ablation "Triplet" variant: step two also gets the image.
- ``dtc``: Reefknot's Detect-then-Calibrate decoding (transformers backend only).
- ``perturbo-v1`` / ``-v2`` / ``-v3`` / ``-random``: PerturboLLaVA Table 4 perturbation prompts,
  used here at inference time as a probe of reliance on language priors. The
  perturbation text is a plausible but wrong description of the same image
  (objects that co-occur but are absent, wrong attributes and relations), made by
  the probe describer at rate 1; ``-random`` uses another image's text instead.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from ..model import Sample, content_key
from ..prompts import (
    PERTURBATION_TEMPLATES, TRIHE_ANSWER_FROM_DESCRIPTION, TRIHE_GENERAL_DESCRIPTION, TRIHE_TRIPLET_DESCRIPTION,
)
from .probe import ProbeOptions, describe

TWO_STEP = {"trihe-general": (TRIHE_GENERAL_DESCRIPTION, False),
            "trihe-triplet": (TRIHE_TRIPLET_DESCRIPTION, False),
            "trihe-triplet-eyes-open": (TRIHE_TRIPLET_DESCRIPTION, True)}
PERTURBATIONS = {f"perturbo-{v}": v for v in PERTURBATION_TEMPLATES}
MITIGATIONS: tuple[str, ...] = ("none", *TWO_STEP, "dtc", *PERTURBATIONS)


def check_mitigation(name: str) -> str:
    if name not in MITIGATIONS:
        raise ValueError(f"unknown mitigation {name!r}; choose from {', '.join(MITIGATIONS)}")
    return name


@dataclass(frozen=True)
class TwoStepPlan:
    describe_prompt: str
    image_in_answer_step: bool

    def answer_prompt(self, description: str, question: str) -> str:
        return TRIHE_ANSWER_FROM_DESCRIPTION.replace("{description}", description.strip()).replace(
            "{question}", question)


def two_step_plan(name: str, question: str | None, sample_id: str) -> TwoStepPlan:
    template, eyes_open = TWO_STEP[name]
    if not question:
        raise ValueError(f"sample {sample_id}: mitigation {name} answers a question, and the sample has none")
    return TwoStepPlan(template.replace("{question}", question), eyes_open)


def perturbation_text(sample: Sample, seed: int) -> str:
    """A plausible but wrong description of ``sample``'s image (every concept slot corrupted)."""
    if sample.scene_graph.is_empty():
        raise ValueError(f"sample {sample.id}: a perturbation text needs a scene graph, and it is empty")
    options = ProbeOptions(rate=1.0, seed=seed)
    text, _ = describe(dataclasses.replace(sample, task="caption"), options,
                       random.Random(content_key("perturbation", seed, sample.id)))
    return text


def perturbed_prompt(name: str, prompt: str, sample: Sample, other: Sample | None, seed: int) -> tuple[str, str]:
    """The Table 4 prompt around ``prompt`` and the perturbation text used."""
    variant = PERTURBATIONS[name]
    source = sample
    if variant == "random":
        if other is None:
            raise ValueError(f"sample {sample.id}: the random perturbation needs another sample's text")
        source = other
    text = perturbation_text(source, seed)
    filled = PERTURBATION_TEMPLATES[variant].replace("{perturbation}", text).replace("{question}", prompt)
    return filled, text
