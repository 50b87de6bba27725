"""POPE's released question files (``docs/formats.md``, "pope").

* **Split files** ``<dataset>_pope_<split>.json`` (AoiDragon/POPE ``output/coco/``; paper repositories keep copies
  such as ``coco_pope_<split>.gt.jsonl``): JSON lines ``{question_id, image, text, label}``, the split from the file
  name. Question ids restart at 1 in each split file, and the same question (image and text) asked in two splits is
  two questions with two answers: each split's question is its own sample ``pope/<split>/<question_id>`` with
  ``meta["splits"] = [split]``; ``image_key`` is the COCO file name, so intervals resample by image across splits.
* **LLaVA's question file** ``llava_pope_test.jsonl`` (``{question_id, image, text, category}``, 8,910 lines, no
  labels): LLaVA asks the split files' questions in their order, numbered adversarial 1–3,000, random
  10,000,001–…, popular 20,000,001–… (``LLAVA_OFFSETS``), with an instruction after the question; its evaluator
  pairs the k-th answer of a category with the k-th label of that split's file. Each sample records that number
  (``meta["llava_question_id"]``), so LLaVA's answer files resolve; with the question file beside the split files,
  each of its questions is checked against the split file's question at the same place.

Benchmark ``pope`` for COCO's files (``pope-<dataset>`` for A-OKVQA's or GQA's). Where the store already holds a
question of the same id, a file asking something else there is refused row by row, never paired silently.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..images import ImageFolder
from ..model import Benchmark, Sample
from .base import ImportProblem, ParsedBenchmark
from .reading import FatalImportError, attach_images, iter_jsonl, require_str

BENCHMARK = "pope"
SPLITS: tuple[str, ...] = ("random", "popular", "adversarial")
SPLIT_FILE = re.compile(r"^(?P<dataset>[a-z0-9]+)_pope_(?P<split>random|popular|adversarial)(?:\.gt)?"
                        r"\.jsonl?$")
LLAVA_FILE = re.compile(r"^llava_pope_(?:test|val)\.jsonl$")
# How LLaVA numbers POPE's questions in llava_pope_test.jsonl (split question id + offset).
LLAVA_OFFSETS = {"adversarial": 0, "random": 10_000_000, "popular": 20_000_000}
_EXAMPLES = 3


def split_of(file_name: str) -> tuple[str, str] | None:
    """``(dataset, split)`` named by a POPE split file's name, else None.

    >>> split_of("coco_pope_adversarial.json"), split_of("coco_pope_random.gt.jsonl"), split_of("answers.jsonl")
    (('coco', 'adversarial'), ('coco', 'random'), None)
    """
    match = SPLIT_FILE.match(file_name)
    return (match["dataset"], match["split"]) if match else None


def benchmark_name(dataset: str) -> str:
    return BENCHMARK if dataset == "coco" else f"{BENCHMARK}-{dataset}"


def sample_id(benchmark: str, split: str, question_id: int | str) -> str:
    return f"{benchmark}/{split}/{question_id}"


@dataclass(frozen=True)
class _Files:
    splits: dict[tuple[str, str], Path]  # (dataset, split) -> file
    llava: Path | None


def _files(p: Path) -> _Files:
    """The split files (and LLaVA's question file) at ``p``: a folder of them or one file."""
    if p.is_dir():
        found = sorted(f for f in p.iterdir() if f.is_file())
    elif p.is_file():
        found = [p]
    else:
        raise FileNotFoundError(f"{p} does not exist")
    splits: dict[tuple[str, str], Path] = {}
    llava = None
    for f in found:
        named = split_of(f.name)
        if named is not None:
            if named in splits:
                raise FatalImportError(f"{p}: {splits[named].name} and {f.name} are both POPE's {named[1]} split of "
                                       f"{named[0]}; keep one")
            splits[named] = f
        elif LLAVA_FILE.match(f.name):
            llava = f
    if llava is not None and not splits:
        # LLaVA's question file holds no labels: they are in the split files beside it.
        beside = sorted(f for f in llava.parent.iterdir() if f.is_file() and split_of(f.name))
        if not beside:
            raise FatalImportError(f"{llava.name}: LLaVA's POPE questions carry no labels; they are in POPE's "
                                   f"coco_pope_<split>.json files, and none is beside it in {llava.parent}")
        splits = {split_of(f.name): f for f in beside}  # type: ignore[misc]
    if not splits:
        raise FatalImportError(f"{p}: no POPE question file (<dataset>_pope_<random|popular|adversarial>.json, "
                               "as POPE's output/coco/ names them)")
    if len({d for d, _ in splits}) > 1:
        raise FatalImportError(f"{p}: holds POPE files of several datasets ({', '.join(sorted({d for d, _ in splits}))});"
                               " import each dataset's files on their own")
    return _Files(splits, llava)


def _read_split(path: Path, dataset: str, split: str, benchmark: str, problems: list[ImportProblem]) -> list[Sample]:
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for lineno, record in iter_jsonl(path, problems):
        where = f"{path.name} line {lineno}"
        try:
            qid = require_str(record, "question_id", where)
            image = require_str(record, "image", where).strip()
            text = require_str(record, "text", where).strip()
            label = require_str(record, "label", where).strip().lower()
            if label not in ("yes", "no"):
                raise ValueError(f"{where}: label must be yes or no, got {record.get('label')!r}")
            if qid in seen:
                raise ValueError(f"{where}: question_id {qid} is also on line {seen[qid]}")
        except ValueError as exc:
            problems.append(ImportProblem(where, str(exc).removeprefix(f"{where}: ")))
            continue
        seen[qid] = lineno
        meta: dict[str, Any] = {"splits": [split], "question_id": int(qid) if qid.isdigit() else qid,
                                "dataset": dataset, "source_file": path.name}
        if dataset == "coco" and qid.isdigit():
            meta["llava_question_id"] = int(qid) + LLAVA_OFFSETS[split]
        samples.append(Sample(id=sample_id(benchmark, split, qid), benchmark=benchmark, image_key=image,
                              task="yes_no", question=text, answer=label, meta=meta))
    return samples


def _check_llava(path: Path, by_split: dict[str, list[Sample]], problems: list[ImportProblem]) -> None:
    """Check LLaVA's question file against the split files, question by question in each split's order (as its
    evaluator pairs them), and take its numbers; a question it asks differently is one warning per split."""
    from .llava import same_question, strip_instruction

    position: dict[str, int] = defaultdict(int)
    differ: dict[str, list[str]] = defaultdict(list)
    for lineno, record in iter_jsonl(path, problems):
        split = str(record.get("category") or "").strip().lower()
        if split not in by_split:
            continue
        k = position[split]
        position[split] += 1
        asked = strip_instruction(str(record.get("text") or ""))
        if k >= len(by_split[split]):
            differ[split].append(f"line {lineno}: no {k + 1}th question in the split file")
            continue
        sample = by_split[split][k]
        if not same_question(asked, sample.question or "") or record.get("image") != sample.image_key:
            differ[split].append(f"line {lineno} asks {asked!r} of {record.get('image')}, the split file's "
                                 f"{k + 1}th question {sample.question!r} of {sample.image_key}")
            sample.meta.pop("llava_question_id", None)
            continue
        sample.meta["llava_question_id"] = record.get("question_id")
    for split, found in sorted(differ.items()):
        problems.append(ImportProblem(path.name, f"{len(found)} {split} questions differ from the split file's, and "
                                      f"LLaVA's answers to them cannot be matched ({'; '.join(found[:_EXAMPLES])})",
                                      fatal=False))


def read_pope(path: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None,
              benchmark: str | None = None) -> ParsedBenchmark:
    """POPE's question files at ``path`` (one split file, LLaVA's question file with the split files beside it, or
    a folder of them) as one benchmark; images by file name from ``images_dir`` (COCO val2014), optional."""
    p = Path(path)
    files = _files(p)
    [dataset] = {d for d, _ in files.splits}
    name = benchmark or benchmark_name(dataset)
    problems: list[ImportProblem] = []
    by_split = {split: _read_split(f, dataset, split, name, problems)
                for (_, split), f in sorted(files.splits.items(), key=lambda kv: SPLITS.index(kv[0][1]))}
    if files.llava is not None:
        _check_llava(files.llava, by_split, problems)
    used = [files.splits[(dataset, s)].name for s in by_split] + ([files.llava.name] if files.llava else [])
    meta = {"toolkit": "AoiDragon/POPE", "dataset": dataset, "splits": list(by_split), "source_file": used}
    parsed = ParsedBenchmark(Benchmark(name, f"POPE ({dataset}): object-existence yes/no questions, "
                                             f"{', '.join(by_split)} negatives", str(p), meta),
                             [s for samples in by_split.values() for s in samples], problems=problems,
                             label=f"{name} ({' + '.join(used)})")
    attach_images(parsed, ImageFolder(images_dir, depth=1) if images_dir is not None else None, name)
    return parsed


def refuse_changed_questions(parsed: ParsedBenchmark, stored: dict[str, Sample]) -> None:
    """Refuse, as a problem naming its file and question, each parsed question whose id the store holds with another
    question, image or label (a different release of the split files): never paired silently. The rest of such a
    file is held back too (one problem saying so), so that a split never mixes two releases."""
    from .llava import same_question

    changed: dict[str, int] = defaultdict(int)
    for s in parsed.samples:
        old = stored.get(s.id)
        if old is not None and not (same_question(old.question or "", s.question or "")
                                    and (old.image_key, old.answer) == (s.image_key, s.answer)):
            changed[str(s.meta.get("source_file"))] += 1
            parsed.problems.append(ImportProblem(
                f"{s.meta.get('source_file')} question_id {s.meta.get('question_id')}",
                f"the store's {s.id} asks {old.question!r} of {old.image_key} (label {old.answer}); this file asks "
                f"{s.question!r} of {s.image_key} (label {s.answer}): import it under another --benchmark"))
    held = [s for s in parsed.samples if str(s.meta.get("source_file")) in changed]
    for name, n in sorted(changed.items()):
        rest = sum(1 for s in held if s.meta.get("source_file") == name) - n
        if rest:
            parsed.problems.append(ImportProblem(name, f"its other {rest} questions are held back too: the file is "
                                                       f"another release of the split than the store's"))
    parsed.samples = [s for s in parsed.samples if str(s.meta.get("source_file")) not in changed]
