"""The papers' prompts and generation presets, in one place.

Prompts are plain strings with an optional ``{question}`` / ``{description}`` /
``{perturbation}`` slot. Where a paper prints its prompt only inside a figure
that the plain-text release does not carry (Tri-HE Figure 4), the wording here
paraphrases the paper's description and says so.

>>> render_prompt("viscon", question=None)
'Describe the image in detail.'
>>> render_prompt("question", question="What is on the table?")
'What is on the table?'
>>> generation_preset("beam")["num_beams"]
5
"""

from __future__ import annotations

from typing import Any

# --------------------------------------------------------------------------- caption prompts

CAPTION_PROMPTS: dict[str, str] = {
    # VISCON: the default prompt and the length-control variants of Table 8.
    "viscon": "Describe the image in detail.",
    "viscon-great-detail": "Describe the image in great detail.",
    "viscon-concise": "Describe the image concisely.",
    "viscon-80-words": "Describe this image in 80 words.",
    # PerturboLLaVA / HalFscore (appendix: Object HalBench and HalFscore evaluation).
    "halfscore": "Please describe this image in detail.",
}

# Question-answering prompts: Tri-HE feeds the question itself (appendix A.4);
# Reefknot's query_prompt already holds its template (Y/N, MCQ, VQA) filled in.
QUESTION_PROMPTS: dict[str, str] = {
    "question": "{question}",
}

PROMPTS: dict[str, str] = {**CAPTION_PROMPTS, **QUESTION_PROMPTS}

# The prompt each task gets when none is named.
DEFAULT_PROMPT_FOR_TASK: dict[str, str] = {"caption": "viscon", "vqa": "question", "yes_no": "question",
                                          "mcq": "question"}

# --------------------------------------------------------------------------- Tri-HE two-step mitigation (§5.4)
# Tri-HE prints these prompts only in Figure 4; the wording below follows §5.4's
# description: step one describes the image guided by the question, step two
# answers from that description.
TRIHE_GENERAL_DESCRIPTION = (
    "Describe the image in detail, focusing on the content that helps to answer the question: {question}")
TRIHE_TRIPLET_DESCRIPTION = (
    "Describe the image as a list of (object, relation, object) triplets, focusing on the objects and "
    "relations that help to answer the question: {question}")
TRIHE_ANSWER_FROM_DESCRIPTION = (
    "Here is a description of an image:\n{description}\n"
    "Based on this description, answer the question: {question}")

# --------------------------------------------------------------------------- PerturboLLaVA Table 4
# ``<image>`` is placed by the chat template; these are the text parts after it.
PERTURBATION_TEMPLATES: dict[str, str] = {
    "v1": ("What follows presents incorrect guidance based on the image. {perturbation} "
           "Please ignore any false guidance and focus on the image to answer the question below. {question}"),
    "v2": "{perturbation} Please examine the image and respond to the question below. {question}",
    "v3": "{perturbation} {question}",
    "random": ("Coming up is a portion of non-visual text. {perturbation} "
               "Ignore the previous perturbation text and focus on the image to complete the task. {question}"),
}

# --------------------------------------------------------------------------- generation (VISCON Table 6)

GENERATION_PRESETS: dict[str, dict[str, Any]] = {
    "greedy": {"strategy": "greedy", "do_sample": False, "num_beams": 1},
    "beam": {"strategy": "beam", "do_sample": False, "num_beams": 5},
    "nucleus": {"strategy": "nucleus", "do_sample": True, "num_beams": 1, "temperature": 0.9, "top_p": 0.9,
                "top_k": 50},
}
DEFAULT_MAX_NEW_TOKENS = 512
YES_NO_CANDIDATES: tuple[str, ...] = ("yes", "no")
MCQ_CANDIDATES: tuple[str, ...] = ("A", "B", "C", "D")


def generation_preset(name: str, max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS) -> dict[str, Any]:
    """The generation settings of a VISCON Table 6 preset, plus ``max_new_tokens``."""
    if name not in GENERATION_PRESETS:
        raise ValueError(f"unknown generation preset {name!r}; choose from {sorted(GENERATION_PRESETS)}")
    return {**GENERATION_PRESETS[name], "max_new_tokens": int(max_new_tokens)}


def resolve_prompt(name_or_text: str | None, task: str) -> str:
    """A prompt name (``viscon``, ``question`` ...) becomes its template; other text is used as written."""
    if not name_or_text:
        return PROMPTS[DEFAULT_PROMPT_FOR_TASK.get(task, "question")]
    return PROMPTS.get(name_or_text, name_or_text)


def render_prompt(name_or_text: str | None, *, question: str | None, task: str = "caption") -> str:
    """Fill ``{question}`` of a prompt; a question prompt without a question is an error."""
    template = resolve_prompt(name_or_text, task)
    if "{question}" in template:
        if not question:
            raise ValueError(f"prompt {template!r} needs a question, and the sample has none")
        return template.replace("{question}", question)
    return template


def answer_candidates(task: str) -> tuple[str, ...] | None:
    """The answer set Reefknot's entropy (eq. 2) is computed over, for the tasks that have one."""
    return {"yes_no": YES_NO_CANDIDATES, "mcq": MCQ_CANDIDATES}.get(task)
