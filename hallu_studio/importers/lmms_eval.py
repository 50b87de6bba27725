"""lmms-eval's ``--log_samples`` output, v0.3 to v0.6: the benchmark the file answers and the model's answers.

lmms-eval writes, per run, ``<output_path>/<model_name_sanitized>/<date>_samples_<task>.jsonl`` (one row per
question) and ``<date>_results.json`` (the task's configuration, the model's arguments, lmms-eval's version and
the numbers it computed). Given such a samples file, or a folder holding several, this module

- names the benchmark after the task (the file name's ``<task>``), or ``--benchmark``;
- when the store does not hold it yet, builds it from the rows (``lmms_eval_rows``: kind, question, options,
  gold, reference captions, split, image name) with ids ``<benchmark>/<doc_id>``;
- when the store holds it, checks every row against the stored sample of the same ``doc_id`` (its prompt or
  question, and its image name where both have one): a row that differs is refused by name, never paired;
- reads the model's answers into one ``recorded`` run, named by the model's hub id (``model_names``) and carrying
  the toolkit, its version, the results file and the samples file (``Run.meta``).

The results JSON that belongs to a samples file is the one with the same ``<date>`` prefix; failing that, the
one results file of the folder that covers the task; with several and none of the file's date, the import stops
and names them (``--model`` imports without one).

A benchmark stored by another importer (``--benchmark tri-he``) is matched as before: the row's ``doc.sample_id``,
``doc.id``, ``doc.question_id`` then ``doc_id`` (``recorded.SampleIdResolver``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from ..model import Benchmark, Response, Sample
from .base import ImportProblem, ParsedBenchmark, ParsedResponses
from .lmms_eval_rows import RowItem, response_text, task_kind
from .model_names import hub_model_id, pretrained_arg, recorded_model_name
from .reading import FatalImportError, iter_jsonl
from .recorded import RecordedRuns, SampleIdResolver, benchmark_of, same_text

TOOLKIT = "lmms-eval"
# lmms-eval's ``<date>_samples_<task>.jsonl``, and lm-eval-harness's ``samples_<task>_<ISO date>.jsonl``.
_SAMPLES = re.compile(r"^(?:(?P<stamp>.+?)_samples_(?P<task>.+)"
                      r"|samples_(?P<task2>.+?)_(?P<stamp2>\d{4}-\d\d-\d\dT[\d\-.]+))\.jsonl$")
_RESULTS = re.compile(r"^(?:(?P<stamp>.+)_results|results(?:_(?P<stamp2>.+))?)\.json$")


@dataclass
class SamplesFile:
    """One samples file and what its name and its results JSON say."""

    path: Path
    task: str
    stamp: str | None
    results_path: Path | None = None
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def config(self) -> Mapping[str, Any]:
        """The task's configuration as the results JSON records it (empty without one)."""
        configs = self.results.get("configs") or {}
        return configs.get(self.task) or {}

    @property
    def version(self) -> str | None:
        """lmms-eval's version: ``lmms_eval_version``, else the ``git_hash`` of the checkout that ran."""
        found = self.results.get("lmms_eval_version") or self.results.get("git_hash")
        return str(found) if found else None

    def recorded(self) -> dict[str, float]:
        """The numbers lmms-eval computed for the task (``"exact_match,none"`` ...), standard errors left out."""
        numbers = (self.results.get("results") or {}).get(self.task) or {}
        return {k: float(v) for k, v in numbers.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool) and "_stderr" not in k}

    def model(self, given: str | None) -> tuple[str, str | None]:
        """(the model's name, the raw ``pretrained=`` / ``model_name`` it came from)."""
        config = self.results.get("config") or {}
        pretrained = pretrained_arg(str(config.get("model_args") or ""))
        raw = pretrained or self.results.get("model_name")
        if given:
            return given, raw
        # The folder is lmms-eval's model_name_sanitized only when lmms-eval laid the files out: trusted for a hub
        # id ("org__name"), never as a name of its own ("logs", "lmms_eval").
        name = recorded_model_name(pretrained, self.results.get("model_name"),
                                   fallback=hub_model_id(self.path.parent.name) or self.path.stem)
        return name, raw


def _covers(results: Mapping[str, Any], task: str) -> bool:
    return task in (results.get("results") or {}) or task in (results.get("configs") or {})


def _read_results(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FatalImportError(f"{path.name}: not a readable lmms-eval results JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise FatalImportError(f"{path.name}: an lmms-eval results JSON is an object, got {type(data).__name__}")
    return data


def _other_results(path: Path) -> dict[str, Any] | None:
    """A results JSON of another date, or None when it is no readable results JSON (another tool's ``*_results.json``)."""
    try:
        return _read_results(path)
    except FatalImportError:
        return None


def _results_stamp(path: Path) -> str | None:
    m = _RESULTS.match(path.name)
    return (m.group("stamp") or m.group("stamp2")) if m else None


def samples_file(path: Path, *, model_given: bool = False) -> SamplesFile:
    """``path`` with its task, its date prefix and the results JSON that belongs to it (see the module docstring)."""
    m = _SAMPLES.match(path.name)
    task = (m.group("task") or m.group("task2")) if m else path.stem
    stamp = (m.group("stamp") or m.group("stamp2")) if m else None
    found = SamplesFile(path, task, stamp)
    others = sorted(p for p in path.parent.glob("*.json") if _RESULTS.match(p.name))
    own = [p for p in others if stamp and _results_stamp(p) == stamp]
    if own:
        found.results_path, found.results = own[0], _read_results(own[0])
        return found
    covering = [(p, r) for p, r in ((p, _other_results(p)) for p in others) if r is not None and _covers(r, task)]
    if len(covering) == 1:
        found.results_path, found.results = covering[0]
    elif len(covering) > 1 and not model_given:
        names = ", ".join(p.name for p, _ in covering)
        raise FatalImportError(f"{path.name}: no results JSON has its date ({stamp or 'none in the name'}) and "
                               f"several cover task {task}: {names}; keep the one of this run beside it, or name "
                               "the model with --model")
    return found


def samples_files(path: Path, *, model_given: bool = False) -> list[SamplesFile]:
    """The samples files at ``path`` (a file, or every ``*_samples_*.jsonl`` under a folder), each with its results."""
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.jsonl") if _SAMPLES.match(p.name))
        if not files:
            raise FatalImportError(f"{path}: no lmms-eval samples file (<date>_samples_<task>.jsonl) in this folder")
        return [samples_file(p, model_given=model_given) for p in files]
    if path.suffix.lower() == ".json":
        if "logs" in _read_results(path):
            raise FatalImportError(f"{path.name}: lmms-eval v0.2.0's <task>.json logs are not supported yet; "
                                   "lmms-eval v0.2.4 and later write <date>_samples_<task>.jsonl")
        raise FatalImportError(f"{path.name}: a results JSON holds no answers; give the "
                               "<date>_samples_<task>.jsonl beside it, or the folder")
    return [samples_file(path, model_given=model_given)]


@dataclass
class _Row:
    where: str
    item: RowItem
    text: str | None
    row: Mapping[str, Any]


def _rows(source: SamplesFile, problems: list[ImportProblem]) -> list[_Row]:
    rows: list[_Row] = []
    seen: set[int] = set()
    for lineno, rec in iter_jsonl(source.path, problems):
        where = f"{source.path.name} line {lineno}"
        try:
            item = RowItem.read(rec, source.task, source.config)
            text = response_text(rec)
        except ValueError as exc:
            problems.append(ImportProblem(where, str(exc)))
            continue
        if item.doc_id in seen:
            problems.append(ImportProblem(where, f"doc_id {item.doc_id} appears twice in the file; the first is kept"))
            continue
        seen.add(item.doc_id)
        rows.append(_Row(f"{where} (doc_id {item.doc_id})", item, text, rec))
    return rows


def _sample(benchmark: str, kind: str, item: RowItem, task: str) -> Sample:
    meta: dict[str, Any] = {"doc_id": item.doc_id, "lmms_eval_task": task}
    if item.prompt is not None:
        meta["prompt"] = item.prompt
    if item.source_id:
        meta["question_id"] = item.source_id
    if item.category:
        meta["category"] = item.category
    if item.split:
        meta["splits"] = [item.split]
    if item.image_key is None:
        meta["image_identity"] = "the file names no image: each question counts as its own image"
    gold = item.gold
    if kind == "yes_no" and gold:
        gold = gold.lower()
    if kind == "vqa" and len(item.golds) > 1:
        meta["answers"] = item.golds
    return Sample(id=f"{benchmark}/{item.doc_id}", benchmark=benchmark, task=kind,
                  image_key=item.image_key or f"{benchmark}/{item.doc_id}", question=item.question,
                  options=item.options if kind == "mcq" else [], answer=None if kind == "caption" else gold,
                  reference_text=item.golds if kind == "caption" and item.golds else None,
                  reference_kind="captions", meta=meta)  # a toolkit's gold captions: short, open-world


def _benchmark(name: str, source: SamplesFile, rows: Sequence[_Row]) -> ParsedBenchmark:
    kind = task_kind(source.task, [r.item for r in rows])
    meta = {"toolkit": TOOLKIT, "toolkit_version": source.version, "source_file": str(source.path),
            "lmms_eval_task": source.task, "dataset_path": source.config.get("dataset_path")}
    benchmark = Benchmark(name, f"lmms-eval task {source.task} ({kind})", str(source.path),
                          {k: v for k, v in meta.items() if v is not None})
    return ParsedBenchmark(benchmark, [_sample(name, kind, r.item, source.task) for r in rows],
                           label=f"{name} (from {source.path.name})")


def _difference(row: _Row, stored: Sample) -> str | None:
    """Why ``row`` is not the question ``stored`` is, or None when it is."""
    item, prompt = row.item, stored.meta.get("prompt")
    if item.prompt is not None and prompt is not None:
        if not same_text(item.prompt, prompt):
            return f"its prompt {item.prompt[:80]!r} differs from stored sample {stored.id}'s {prompt[:80]!r}"
    elif item.question and stored.question and not same_text(item.question, stored.question):
        return f"its question {item.question[:80]!r} differs from stored sample {stored.id}'s {stored.question[:80]!r}"
    if item.image_key and "image_identity" not in stored.meta and item.image_key != stored.image_key:
        return f"its image {item.image_key!r} is not stored sample {stored.id}'s {stored.image_key!r}"
    return None


def _match_stored(name: str, rows: list[_Row], stored: Mapping[str, Sample],
                  problems: list[ImportProblem]) -> list[tuple[_Row, str]]:
    """Each row paired with its stored sample, checked; rows that differ or match nothing are problems."""
    by_doc = {s.meta["doc_id"]: s for s in stored.values() if isinstance(s.meta.get("doc_id"), int)}
    resolver = None if by_doc else SampleIdResolver(name, stored)
    out: list[tuple[_Row, str]] = []
    taken: dict[str, str] = {}
    for row in rows:
        try:
            if resolver is not None:
                doc = row.row.get("doc") if isinstance(row.row.get("doc"), Mapping) else {}
                sid = resolver.resolve([doc.get("sample_id"), doc.get("id"), doc.get("question_id"), row.item.doc_id])
                sample = stored[sid]
            elif row.item.doc_id in by_doc:
                sample = by_doc[row.item.doc_id]
            else:
                raise ValueError(f"benchmark {name} holds no question of doc_id {row.item.doc_id}")
            reason = _difference(row, sample) if resolver is None else None
            if reason:
                raise ValueError(reason)
            if sample.id in taken:
                raise ValueError(f"it answers stored sample {sample.id}, which {taken[sample.id]} answers already")
            taken[sample.id] = row.where
            out.append((row, sample.id))
        except ValueError as exc:
            problems.append(ImportProblem(row.where, str(exc)))
    return out


def _responses(source: SamplesFile, pairs: list[tuple[_Row, str]], model: str | None,
               problems: list[ImportProblem]) -> ParsedResponses:
    name, raw = source.model(model)
    runs = RecordedRuns(f"{TOOLKIT}:{source.path.name}")
    meta = {"toolkit": TOOLKIT, "toolkit_version": source.version, "source_file": str(source.path),
            "results_file": str(source.results_path) if source.results_path else None,
            "lmms_eval_task": source.task, "model_args": raw, "recorded": source.recorded() or None}
    meta = {k: v for k, v in meta.items() if v is not None}
    if source.results_path is None:
        problems.append(ImportProblem(source.path.name, f"no results JSON of this run beside it: the model is named "
                                      f"{name!r} and lmms-eval's version is unknown", fatal=False))
    out = ParsedResponses(problems=problems, name=source.path.name)
    for row, sid in pairs:
        if row.text is None:
            problems.append(ImportProblem(row.where, "no answer in filtered_resps / resps"))
            continue
        run = runs.run_for(benchmark_of(sid), name, meta)
        out.responses.append(Response(run.id, sid, row.text))
    out.runs = runs.runs()
    return out


def read_samples(source: SamplesFile, stored: Any, *, benchmark: str | None = None,
                 model: str | None = None) -> Iterator[ParsedBenchmark | ParsedResponses]:
    """The benchmark ``source`` answers (when the store lacks it) and then its recorded answers; ``stored`` is
    what the reader may ask of the store (``registry.StoredCorpus``)."""
    name = benchmark or source.task
    problems: list[ImportProblem] = []
    rows = _rows(source, problems)
    if not rows:  # the folder's other files still go in
        problems.append(ImportProblem(source.path.name, "no readable lmms-eval row in the file"))
        yield ParsedResponses(problems=problems, name=source.path.name)
        return
    base = name.split("/")[0]  # --benchmark reefknot/vqa: a part of a stored benchmark
    if base in stored.benchmark_names():
        pairs = _match_stored(name, rows, stored.get_samples(sorted(stored.sample_ids(base))), problems)
    elif base != name:
        raise FatalImportError(f"--benchmark {name}: the store holds no benchmark {base!r}")
    else:
        parsed = _benchmark(name, source, rows)
        yield parsed
        pairs = [(row, sample.id) for row, sample in zip(rows, parsed.samples)]
    yield _responses(source, pairs, model, problems)
