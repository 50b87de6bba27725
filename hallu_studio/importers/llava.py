"""LLaVA's answer files (``docs/formats.md``, "llava"): what LLaVA's ``model_vqa_loader`` writes, and what paper
repositories keep for POPE, AMBER and MME: JSON lines ``{question_id, prompt, text, answer_id, model_id,
metadata}`` (any subset holding ``question_id`` and ``text``), answers to a benchmark the store holds.

Rows are matched to stored samples by ``question_id``: within the split the file answers when there is one
(``--benchmark pope/adversarial``, or the file name ``coco_pope_adversarial_answers*.jsonl``: POPE's question ids
restart in each split), else by LLaVA's own number for the question (``meta["llava_question_id"]``, which the POPE
importer records), else as ``importers.recorded.SampleIdResolver`` reads ids (``amber/17`` for ``17``). A key that
names no single sample (MME's image path, asked twice) is matched by the row's question on that image. A row's
``prompt`` is checked against the stored question (case and spacing aside, and without the instruction LLaVA
appends, ``INSTRUCTIONS``), and its ``image`` against the sample's: a row that asks something else is refused by
line, never paired. The model is ``--model``, else ``model_id`` (LLaVA's releases by their hub id:
``llava-v1.5-7b`` is ``liuhaotian/llava-v1.5-7b``), else the file name.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..model import Response, Sample
from .base import ImportProblem, ParsedResponses
from .reading import FatalImportError, iter_jsonl
from .model_names import recorded_model_name
from .recorded import RecordedRuns, SampleIdResolver

# Instructions LLaVA's evaluation scripts append to a benchmark's question (model_vqa_loader's question files:
# POPE, MME, GQA, VQAv2; ScienceQA, MMBench, SEED), and the one MME's own questions end with.
INSTRUCTIONS: tuple[str, ...] = ("Answer the question using a single word or phrase.",
                                 "Answer with the option's letter from the given choices directly.",
                                 "Please answer yes or no.")
POPE_ANSWERS = re.compile(r"_pope_(?P<split>random|popular|adversarial)[_.]")
# LLaVA's released checkpoints: its model_id is the checkpoint's folder name, on the hub under liuhaotian/.
LLAVA_RELEASE = re.compile(r"^llava-v1\.[56]-(?:7b|13b|34b|mistral-7b|vicuna-7b|vicuna-13b)(?:-lora)?$")


def strip_instruction(text: str) -> str:
    """The question without LLaVA's ``<image>`` token and the instructions appended to it.

    >>> strip_instruction("<image>\\nIs there a dog in the image?\\nAnswer the question using a single word or phrase.")
    'Is there a dog in the image?'
    >>> strip_instruction("Is this a cat? Please answer yes or no.")
    'Is this a cat?'
    """
    text = text.replace("<image>", " ").strip()
    changed = True
    while changed:
        changed = False
        for instruction in INSTRUCTIONS:
            if text.lower().endswith(instruction.lower()):
                text = text[: -len(instruction)].rstrip()
                changed = True
    return text


def same_question(prompt: str, question: str) -> bool:
    """Whether a LLaVA prompt asks the stored question (case, spacing and appended instructions aside).

    >>> same_question("Is there a snowboard in the image?\\nAnswer the question using a single word or phrase.",
    ...               "Is there a snowboard in the image?"), same_question("Is there a car?", "Is there a cat?")
    (True, False)
    """
    return _key(prompt) == _key(question)


def _key(text: str) -> str:
    return " ".join(strip_instruction(text).lower().split())


def llava_model_name(model_id: str) -> str:
    """A LLaVA ``model_id`` as the leaderboard names it: the hub id of LLaVA's own releases, a snapshot path's
    ``models--org--name`` as ``org/name``, else as written.

    >>> llava_model_name("llava-v1.5-7b"), llava_model_name("llava-v1.6-mistral-7b"), llava_model_name("my-llava")
    ('liuhaotian/llava-v1.5-7b', 'liuhaotian/llava-v1.6-mistral-7b', 'my-llava')
    """
    name = model_id.strip()
    if LLAVA_RELEASE.match(name):
        return f"liuhaotian/{name}"
    return recorded_model_name(name, fallback=name)


def _target(path: Path, benchmark: str | None) -> tuple[str, str | None]:
    """The benchmark the file answers and the split, from ``--benchmark NAME[/SPLIT]`` or a POPE file name."""
    named = POPE_ANSWERS.search(path.name)
    if benchmark:
        name, _, split = benchmark.partition("/")
        return name, split or (named["split"] if named and name.startswith("pope") else None)
    if named:
        return "pope", named["split"]
    raise FatalImportError(f"{path.name}: give --benchmark NAME (the benchmark these answers are to; the file name "
                           "names none)")


class _Matcher:
    """Row -> stored sample, by id within the split, LLaVA's number, the resolver, then question on the image."""

    def __init__(self, benchmark: str, split: str | None, samples: dict[str, Sample]) -> None:
        self.split = split
        self.samples = samples
        self.resolver = SampleIdResolver(benchmark, samples)
        self.llava = {str(s.meta["llava_question_id"]): sid for sid, s in samples.items()
                      if s.meta.get("llava_question_id") is not None}
        self.by_question: dict[str, list[str]] = defaultdict(list)
        for sid, s in samples.items():
            if s.question:
                self.by_question[_key(s.question)].append(sid)

    def match(self, qid: str, prompt: str | None, image: str | None) -> str:
        try:
            if self.split:
                return self.resolver.resolve([f"{self.split}/{qid}"])
            if qid in self.llava:
                return self.llava[qid]
            return self.resolver.resolve([qid])
        except ValueError as exc:
            if prompt is None:
                raise
            # MME's question id is its image's path, shared by the image's questions: the prompt tells them apart.
            on_image = [sid for sid in self.by_question.get(_key(prompt), [])
                        if _same_image(self.samples[sid].image_key, image or qid)]
            if len(on_image) == 1:
                return on_image[0]
            raise ValueError(f"{exc}, and {len(on_image)} stored questions ask {strip_instruction(prompt)!r} of "
                             f"{image or qid}") from None


def _same_image(stored: str, named: str) -> bool:
    a, b = stored.replace("\\", "/").strip("/"), str(named).replace("\\", "/").strip("/")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a) or Path(a).name == Path(b).name


def _check(row: dict[str, Any], sample: Sample) -> None:
    prompt, image = row.get("prompt"), row.get("image")
    if isinstance(prompt, str) and sample.question and not same_question(prompt, sample.question):
        raise ValueError(f"its prompt asks {strip_instruction(prompt)!r}, but {sample.id} asks {sample.question!r}")
    if isinstance(image, str) and image.strip() and sample.image_key and not _same_image(sample.image_key, image):
        raise ValueError(f"its image is {image}, but {sample.id}'s is {sample.image_key}")


def read_llava_answers(path: str | os.PathLike[str], samples: dict[str, Sample], *, benchmark: str,
                       split: str | None = None, model: str | None = None) -> ParsedResponses:
    """LLaVA answers in ``path`` to ``samples`` (the stored benchmark's), one recorded run per model."""
    p = Path(path)
    out = ParsedResponses(name=p.name)
    matcher = _Matcher(benchmark, split, samples)
    runs = RecordedRuns(f"llava:{p.name}")
    meta = {"toolkit": "LLaVA", "source_file": p.name}
    answered: dict[str, int] = {}
    for lineno, row in iter_jsonl(p, out.problems):
        where = f"{p.name} line {lineno}"
        try:
            qid, text = row.get("question_id"), row.get("text")
            if qid is None or not str(qid).strip():
                raise ValueError("no question_id")
            if not isinstance(text, str):
                raise ValueError("no answer text ('text')")
            prompt = row.get("prompt") if isinstance(row.get("prompt"), str) else None
            sid = matcher.match(str(qid).strip(), prompt, row.get("image") if isinstance(row.get("image"), str)
                                else None)
            _check(row, samples[sid])
            if sid in answered:
                raise ValueError(f"answers {sid} again (line {answered[sid]} answers it)")
            answered[sid] = lineno
            name = model or (llava_model_name(str(row["model_id"])) if str(row.get("model_id") or "").strip()
                             else p.name.split(".")[0])
            out.responses.append(Response(runs.run_for(benchmark, name, meta).id, sid, text))
        except ValueError as exc:
            out.problems.append(ImportProblem(where, str(exc)))
    out.runs = runs.runs()
    return out


def read_llava(path: str | os.PathLike[str], stored: Any, *, benchmark: str | None,
               model: str | None = None) -> ParsedResponses:
    """``read_llava_answers`` against the store's benchmark, named by ``--benchmark`` or the file name."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p} does not exist")
    name, split = _target(p, benchmark)
    if name not in stored.benchmark_names():
        from ..names import unknown_name

        raise FatalImportError(unknown_name("benchmark", name, stored.benchmark_names(), listing="the store holds"))
    known = sorted(stored.sample_ids(name))
    if not known:
        raise FatalImportError(f"the store holds no samples of benchmark {name!r}; import it first")
    samples = stored.get_samples(known)
    if split is not None and not any(sid.startswith(f"{name}/{split}/") for sid in samples):
        raise FatalImportError(f"{p.name}: answers POPE's {split} split, which benchmark {name!r} does not hold; "
                               f"import coco_pope_{split}.json first")
    return read_llava_answers(p, samples, benchmark=name, split=split, model=model)
