"""Reefknot (``YESNO.jsonl``, ``Multichoice.jsonl``, ``VQA.jsonl`` in one folder).

Each line: ``image_id, query_prompt, label, type, mllm_name, response, relation_type``.
Samples get ids ``reefknot/<task>/<n>`` (``n``: the record's 0-based position in its
file, like an lmms-eval ``doc_id``), task ``yes_no`` / ``mcq`` / ``vqa``, the prompt as
``question``, the label as ``answer`` and ``relation_type`` perception / cognitive as
``relation_category`` perception / cognition.

The asked triplet (parsed out of the prompt, see :mod:`.reefknot_prompts`) goes in
``meta["subject" / "relation" / "object"]``. ``gold_triplets`` hold the TRUE fact:

* VQA: the label's triplet; MCQ: subject, the option named by the label, object;
* Y/N "yes": the asked triplet; Y/N "no": the asked triplet of its "yes" partner
  (same image, adjacent line) when both share subject and object, else nothing.

Images are looked up by image id in an optional folder (``<id>.jpg`` / ``.png``, also one
level down: Visual Genome's ``VG_100K`` layout). Non-empty ``mllm_name`` + ``response``
are recorded model answers, returned as a :class:`ParsedResponses` (one run per model).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..images import ImageFolder
from ..model import Benchmark, Response, Sample
from .base import ImportProblem, ParsedBenchmark, ParsedResponses
from .reading import attach_images, iter_jsonl
from .recorded import RecordedRuns
from .reefknot_prompts import Triplet, YesNoSplitter, parse_mcq, parse_vqa, yes_no_body

BENCHMARK = "reefknot"
FILES = {"yes_no": "YESNO.jsonl", "mcq": "Multichoice.jsonl", "vqa": "VQA.jsonl"}
CATEGORIES = {"perception": "perception", "cognitive": "cognition", "cognition": "cognition"}
MCQ_LETTERS = "ABCD"
REQUIRED = ("image_id", "query_prompt", "label")


@dataclass
class _Row:
    task: str
    index: int
    where: str
    record: dict[str, Any]


def _read_rows(folder: Path, problems: list[ImportProblem]) -> list[_Row]:
    rows: list[_Row] = []
    for task, name in FILES.items():
        path = folder / name
        if not path.is_file():
            problems.append(ImportProblem(str(path), "file not found; task skipped"))
            continue
        for index, (lineno, record) in enumerate(iter_jsonl(path, problems)):
            where = f"{name} line {lineno}"
            missing = [k for k in REQUIRED if not str(record.get(k) or "").strip()]
            if missing:
                problems.append(ImportProblem(where, f"missing field(s) {missing}"))
                continue
            wrong = [k for k in REQUIRED if not isinstance(record[k], (str, int))]
            if wrong:  # a list or object where the prompt text belongs: refuse it here, by name
                problems.append(ImportProblem(where, f"field(s) {wrong} must be text"))
                continue
            rows.append(_Row(task, index, where, record))
    return rows


def _vocabulary(rows: list[_Row]) -> tuple[set[str], set[str]]:
    """Relations and subject / object names seen in the unambiguous MCQ and VQA prompts."""
    relations: set[str] = set()
    names: set[str] = set()
    for r in rows:
        try:
            if r.task == "mcq":
                s, o, options = parse_mcq(r.record["query_prompt"])
                relations.update(options)
                names.update((s, o))
            elif r.task == "vqa":
                s, rel, o = parse_vqa(r.record["query_prompt"], str(r.record["label"]))
                relations.add(rel)
                names.update((s, o))
        except ValueError:
            continue  # reported when the row itself is parsed
    return relations, names


def _partners(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Adjacent Y/N questions on one image, one true and one false: Reefknot's question pair."""
    return a["image_id"] == b["image_id"] and {str(a["label"]).lower(), str(b["label"]).lower()} == {"yes", "no"}


def _yes_no_triplets(rows: list[_Row], splitter: YesNoSplitter,
                     problems: list[ImportProblem]) -> dict[int, tuple[Triplet | None, int | None]]:
    """For each Y/N row (by list position): its asked triplet and its partner's position."""
    out: dict[int, tuple[Triplet | None, int | None]] = {}
    yn = [i for i, r in enumerate(rows) if r.task == "yes_no"]
    bodies: dict[int, str | None] = {}
    for i in yn:
        try:
            bodies[i] = yes_no_body(rows[i].record["query_prompt"])
        except ValueError as exc:
            bodies[i] = None
            problems.append(ImportProblem(rows[i].where, f"{exc}; no triplet", fatal=False))
    k = 0
    while k < len(yn):
        i = yn[k]
        j = yn[k + 1] if k + 1 < len(yn) else None
        body_i, body_j = bodies[i], (bodies[j] if j is not None else None)
        if j is not None and body_i and body_j and _partners(rows[i].record, rows[j].record):
            ta, tb = splitter.split_pair(body_i, body_j)
            out[i], out[j] = (ta, j), (tb, i)
            k += 2
            continue
        out[i] = (splitter.split(body_i) if body_i else None, None)
        k += 1
    for i, (t, _) in out.items():
        if t is None and bodies[i]:
            problems.append(ImportProblem(rows[i].where, "cannot split the question into subject, relation and "
                                          "object; no triplet", fatal=False))
    return out


def _sample(row: _Row, asked: Triplet | None, gold: list[Triplet], options: list[str],
            problems: list[ImportProblem], benchmark: str) -> Sample:
    rec = row.record
    category = CATEGORIES.get(str(rec.get("relation_type") or "").strip().lower())
    if category is None:
        problems.append(ImportProblem(row.where, f"unknown relation_type {rec.get('relation_type')!r}", fatal=False))
    label = str(rec["label"]).strip()
    meta: dict[str, Any] = {"type": rec.get("type")}
    if asked is not None:
        meta.update(subject=asked[0], relation=asked[1], object=asked[2])
    return Sample(id=f"{benchmark}/{row.task}/{row.index}", benchmark=benchmark, image_key=str(rec["image_id"]),
                  task=row.task, question=str(rec["query_prompt"]).strip(), options=options,
                  answer=label.lower() if row.task == "yes_no" else label, gold_triplets=gold,
                  relation_category=category, meta=meta)


def _build_samples(rows: list[_Row], problems: list[ImportProblem], benchmark: str) -> list[Sample]:
    relations, names = _vocabulary(rows)
    yes_no = _yes_no_triplets(rows, YesNoSplitter(relations, names), problems)
    samples: list[Sample] = []
    for pos, row in enumerate(rows):
        rec = row.record
        try:
            if row.task == "mcq":
                s, o, options = parse_mcq(rec["query_prompt"], names)
                letter = str(rec["label"]).strip().upper()[:1]
                if letter not in MCQ_LETTERS:
                    raise ValueError(f"label {rec['label']!r} is not one of A-D")
                triplet: Triplet = (s, options[MCQ_LETTERS.index(letter)], o)
                samples.append(_sample(row, triplet, [triplet], options, problems, benchmark))
            elif row.task == "vqa":
                triplet = parse_vqa(rec["query_prompt"], str(rec["label"]))
                samples.append(_sample(row, triplet, [triplet], [], problems, benchmark))
            else:
                label = str(rec["label"]).strip().lower()
                if label not in ("yes", "no"):
                    raise ValueError(f"label {rec['label']!r} is not yes or no")
                asked, partner = yes_no[pos]
                truth = asked if label == "yes" else (yes_no[partner][0] if partner is not None else None)
                if truth is not None and asked is not None and (truth[0], truth[2]) != (asked[0], asked[2]):
                    truth = None  # the partner asks about something else: no safe gold fact
                samples.append(_sample(row, asked, [truth] if truth else [], [], problems, benchmark))
        except ValueError as exc:
            problems.append(ImportProblem(row.where, str(exc)))
    return samples


def _recorded(rows: list[_Row], benchmark: str) -> ParsedResponses:
    out = ParsedResponses()
    runs = RecordedRuns(benchmark)
    for row in rows:
        model = str(row.record.get("mllm_name") or "").strip()
        text = row.record.get("response")
        if model and isinstance(text, str) and text.strip():
            run = runs.run_for(benchmark, model)
            out.responses.append(Response(run.id, f"{benchmark}/{row.task}/{row.index}", text))
    out.runs = runs.runs()
    return out


def read_reefknot(folder: str | os.PathLike[str], images_dir: str | os.PathLike[str] | None = None,
                  benchmark: str = BENCHMARK) -> tuple[ParsedBenchmark, ParsedResponses]:
    """Parse the three Reefknot files in ``folder``; images (optional) from ``images_dir``."""
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(f"Reefknot folder {root} does not exist (it should hold {', '.join(FILES.values())})")
    parsed = ParsedBenchmark(Benchmark(benchmark, "Reefknot: relation hallucination (Y/N, MCQ, VQA)", str(root)))
    rows = _read_rows(root, parsed.problems)
    if not rows and not any(p.fatal for p in parsed.problems):
        raise FileNotFoundError(f"{root} holds no Reefknot records")
    parsed.samples = _build_samples(rows, parsed.problems, benchmark)
    attach_images(parsed, ImageFolder(images_dir, depth=1) if images_dir is not None else None, root.name)
    kept = {s.id for s in parsed.samples}
    recorded = _recorded(rows, benchmark)
    recorded.responses = [r for r in recorded.responses if r.sample_id in kept]
    return parsed, recorded
