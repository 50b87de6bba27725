"""MME's eval-tool answer files: one ``<subtask>.txt`` per subtask (``existence.txt``, ``OCR.txt`` … the 14 of
MME's release), each line ``image \\t question \\t gold (Yes / No) \\t model's answer``, an image's two questions on
consecutive lines. LLaVA's ``convert_answer_to_mme.py`` writes this shape, and MME's ``calculation.py`` reads it.

PATH is the folder of those files (or one of them). One ``yes_no`` sample per line, id
``<benchmark>/<subtask>/<image>/<n>`` (``n``: the question's place among the image's, from 0), ``image_key``
``<subtask>/<image>``, ``meta["category"]`` the subtask (what the ``mme`` metric reads), ``meta["questions_of_image"]``;
and one recorded run of the model (``--model``, else the folder's name). The benchmark is ``mme-eval-tool`` unless
``--benchmark``. A line whose sample the store holds with another question or gold answer is refused by name.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from ..model import Benchmark, Response, Sample
from .base import ImportProblem, ParsedBenchmark, ParsedResponses
from .reading import FatalImportError
from .recorded import RecordedRuns
from .vlmevalkit import conflict

DEFAULT_BENCHMARK = "mme-eval-tool"
# MME's 14 subtasks, as its release names its folders and the eval tool its files.
SUBTASKS: tuple[str, ...] = tuple("""existence count position color posters celebrity scene landmark artwork OCR
    commonsense_reasoning numerical_calculation text_translation code_reasoning""".split())


def _files(path: Path) -> list[Path]:
    if path.is_file():
        files = [path]
    else:
        files = [path / f"{s}.txt" for s in SUBTASKS if (path / f"{s}.txt").is_file()]
    if not files or any(f.stem not in SUBTASKS for f in files):
        raise FatalImportError(f"{path.name}: no MME eval-tool file (<subtask>.txt, the subtask one of "
                               f"{', '.join(SUBTASKS)})")
    return files


def _lines(files: list[Path], benchmark: str, problems: list[ImportProblem]) -> list[tuple[str, Sample, str]]:
    """(where, sample, answer) per good line."""
    out: list[tuple[str, Sample, str]] = []
    for f in files:
        seen: Counter = Counter()
        for lineno, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{f.name} line {lineno}"
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 4:
                problems.append(ImportProblem(where, f"{len(parts)} tab-separated fields, not 4 (image, question, "
                                                     "gold, answer)"))
                continue
            image, question, gold, answer = (p.strip() for p in parts)
            if gold.lower() not in ("yes", "no"):
                problems.append(ImportProblem(where, f"gold answer {gold!r} is not Yes or No"))
                continue
            n = seen[image]
            seen[image] += 1
            sample = Sample(id=f"{benchmark}/{f.stem}/{image}/{n}", benchmark=benchmark, image_key=f"{f.stem}/{image}",
                            task="yes_no", question=question, answer=gold.lower(), meta={"category": f.stem})
            out.append((where, sample, answer))
        for where, sample, _ in out:
            if sample.meta["category"] == f.stem:
                sample.meta["questions_of_image"] = seen[sample.image_key.split("/", 1)[1]]
    return out


def read_mme_eval_tool(path: str | os.PathLike[str], stored: Any, *, benchmark: str | None = None,
                       model: str | None = None) -> Iterator[ParsedBenchmark | ParsedResponses]:
    """Yield the benchmark's new samples (if any), then the model's answers."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p} does not exist")
    bench = benchmark or DEFAULT_BENCHMARK
    files = _files(p)
    run_model = model or (p.parent.name if p.is_file() else p.name)
    problems: list[ImportProblem] = []
    lines = _lines(files, bench, problems)
    held = stored.sample_ids(bench) if bench in stored.benchmark_names() else set()
    old = stored.get_samples(sorted({s.id for _, s, _ in lines} & held)) if held else {}
    good = []
    for where, sample, answer in lines:
        reason = conflict(sample, old[sample.id]) if sample.id in old else None
        if reason:
            problems.append(ImportProblem(where, f"refused: {reason}"))
        else:
            good.append((sample, answer))
    new = [s for s, _ in good if s.id not in held]
    if new or bench not in stored.benchmark_names():
        meta = {"toolkit": "mme-eval-tool", "source_file": p.name}
        yield ParsedBenchmark(Benchmark(bench, "MME (its eval tool's answer files)", str(p), meta), new,
                              problems=problems, label=f"{bench} (MME eval-tool files, {p.name})")
        problems = []
    runs = RecordedRuns(f"mme-eval-tool:{p.name}")
    run = runs.run_for(bench, run_model, {"toolkit": "mme-eval-tool", "source_file": p.name})
    yield ParsedResponses([run], [Response(run.id, s.id, answer) for s, answer in good], problems,
                          name=f"{run_model} on {bench} ({p.name})")
