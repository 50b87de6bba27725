"""Stateless scoring: a JSONL file of responses and their references in, one JSONL record per line out.

Nothing is stored: each line is read as a sample (``importers.jsonl.sample_from_record``, as
``import --format jsonl`` reads a sample), scored by ``scoring.score_units`` in batches and written as it finishes; a bad line gets an ``error`` record naming it and the other lines still go through.
A line's fields that no sample reads (a user's own columns: ids, metadata, an ``expect``) come back in its
output line untouched, and one warning of the run names them; a field within one or two edits of a known one is
that line's error, naming the likely field (``importers.jsonl.extra_fields``).
``score_jsonl`` is ``hallu-studio score --input``; ``score_records`` is its core, over ``(line number, text)``.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from tqdm import tqdm

from ..caching import MemoryCache, keep_drained
from ..config import Settings
from ..importers.jsonl import SCORING_KEYS, extra_fields, sample_from_record
from ..importers.reading import json_record
from ..llm.dispatch import all_stats, live_progress, stats_since
from ..llm.errors import llm_failure
from ..metrics.base import Metric
from ..model import ConceptSet, Sample, Score, ValidationError, iter_chunks
from .reports import LLMUsage
from .scoring import (KeptResults, Unit, scoring_parts, error_text, observe_benchmarks, resolve, lexicon_warnings,
                      score_units)

# The benchmark of every stateless line: its lines are one benchmark (CHAIR's vocabulary is gathered over them).
BENCHMARK = "jsonl"
# The fields of an output line besides the metrics' own: an input field of the same name cannot pass through.
OUTPUT_FIELDS = frozenset({"line", "id", "error", "errors", "mentioned", "evidence"})

if TYPE_CHECKING:
    from ..caching import ScoringCache
    from ..extraction.base import ConceptExtractor


@dataclass
class JsonlReport(LLMUsage):
    lines: int = 0
    scored: int = 0
    errors: list[str] = field(default_factory=list)  # "line N (id X): reason": the input's fault
    llm_failures: list[str] = field(default_factory=list)  # "line N (id X): trihe: LLM call to URL failed: ..."
    warnings: list[str] = field(default_factory=lexicon_warnings)  # what shaped the scores unusually (no WordNet)
    passed_through: set[str] = field(default_factory=set)  # the lines' fields no sample reads, given back as they are

    def summary(self) -> str:
        text = f"{self.scored} of {self.lines} lines scored"
        if self.errors:
            text += f"; {len(self.errors)} problems (see the 'error' / 'errors' fields)"
        text += f"; {len(self.llm_failures)} LLM failures (not the input's fault)" if self.llm_failures else ""
        if self.llm_summary():
            text += f"; {self.llm_summary()}"
        return text


def _line_sample(record: dict[str, Any]) -> Sample:
    """A stateless line's sample (``importers.jsonl.sample_from_record``, as ``import --format jsonl`` reads one):
    benchmark "jsonl" whatever the line says (the lines are one benchmark), its id ``jsonl/<the line's id>``."""
    sample = sample_from_record(record, benchmark=BENCHMARK, also=SCORING_KEYS)
    if "response" not in record:
        raise ValidationError("missing field 'response'")
    if not isinstance(record["response"], str):
        raise ValidationError("'response' must be a string")
    return dataclasses.replace(sample, id=f"{BENCHMARK}/{sample.id}", benchmark=BENCHMARK)


def _line_image(record: dict[str, Any], sample: Sample, root: Path | None) -> bytes | None:
    """The image a line's ``image_path`` names (relative to the input file's folder), validated; its sha256 set on
    the sample (what an image judge's answers are cached under). None when the line names none."""
    path = record.get("image_path")
    if path is None:
        return None
    if not isinstance(path, str) or not path.strip():
        raise ValidationError("'image_path' must be a path to an image file")
    from ..images import ImageRejected, read_image

    target = Path(path) if Path(path).is_absolute() or root is None else root / path
    try:
        image = read_image(target)
    except ImageRejected as exc:
        raise ValidationError(f"image_path: {exc}") from exc
    sample.image_sha256 = image.sha256
    return image.data


def _readable_samples(records: Iterable[tuple[int, str]]) -> list[Sample]:
    """The samples of the records that parse (the others get their error when they are scored)."""
    out = []
    for line_no, text in records:
        try:
            out.append(_line_sample(json_record(text)))
        except ValueError:
            continue
    return out


def _jsonl_numbers(metric: Metric, score: Score) -> dict[str, Any]:
    numbers = dict(score.values)
    if metric.name == "edit" and "revised" not in numbers:
        numbers["revised"] = score.evidence.get("revised")  # the revision is the edit metric's main output
    if score.undefined_reason is not None:
        numbers["undefined_reason"] = score.undefined_reason
    return numbers


def _passed_through(record: dict[str, Any], metric_names: Sequence[str]) -> dict[str, Any]:
    """The line's fields no sample reads, to be given back in its output line; one named as an output field is an
    error (it would be overwritten)."""
    extra = extra_fields(record, SCORING_KEYS)
    clash = sorted(set(extra) & (OUTPUT_FIELDS | set(metric_names)))
    if clash:
        raise ValidationError(f"fields {clash} are names the output line uses (its own fields and the metrics'); "
                              "rename them to have them passed through")
    return extra


def _parse_line(line_no: int, text: str, root: Path | None = None, metric_names: Sequence[str] = ()
                ) -> tuple[dict[str, Any], Sample, ConceptSet | None, bytes | None]:
    """A line's record, its sample and the concepts it gives; ``_LineError`` naming the record and the reason."""
    record_id = None
    try:
        record = json_record(text)
        record_id = record.get("id")
        sample = _line_sample(record)
        _passed_through(record, metric_names)
        given = ConceptSet.from_dict(record["mentioned"]) if record.get("mentioned") is not None else None
        image = _line_image(record, sample, root)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a malformed 'mentioned' too
        raise _LineError(record_id, str(exc)) from exc
    return record, sample, given, image


class _LineError(ValueError):
    def __init__(self, record_id: Any, error: str) -> None:
        super().__init__(error)
        self.record_id, self.error = record_id, error


@dataclass
class LineScorer:
    """What scoring a chunk of lines needs: the extractor, the metrics, the results kept between runs (or None),
    the folder image paths are read from."""

    extractor: Any
    metrics: list[Metric]
    kept: KeptResults | None
    image_root: Path | None


@dataclass
class LinesTask:
    """What an engine scoring JSONL chunks elsewhere needs: the settings, metrics and extractor its workers build
    from, the scorer built here, the whole benchmark CHAIR observes, whether results are kept (``--cache``)."""

    settings: Settings
    metrics: Sequence[Any]
    extractor: Any
    scorer: LineScorer
    benchmarks: dict[str, list[Sample]]
    keeps_results: bool


@dataclass
class LinesOutput:
    """A chunk's output records (in line order), its report (counts, errors) and a worker's new cache entries."""

    lines: list[dict[str, Any]]
    report: JsonlReport
    cache_entries: list[tuple[str, str, Any]] = field(default_factory=list)
    vectors: dict[str, dict[str, Any]] = field(default_factory=dict)


def score_records(records: Iterable[tuple[int, str]], settings: Settings, metrics: Sequence[str | Metric], *,
                  extractor: "ConceptExtractor | None" = None, batch_size: int | None = None,
                  report: JsonlReport | None = None, cache: "ScoringCache | None" = None,
                  image_root: Path | None = None, engine: Any = None) -> Iterable[dict[str, Any]]:
    """Score ``(line number, JSON text)`` records; yields one output record per input line, a batch at a time.

    ``cache`` keeps concepts, phrase vectors, LLM answers and each line's results between runs (``KeptResults``: a
    line scored before under the same settings is read back). Without one they are kept for this run only, so
    each distinct text (a reference caption that several lines carry) is extracted and each question asked once.
    A line's ``image_path`` (for an image judge) is read relative to ``image_root`` (the input file's folder).
    ``engine`` (a ``pipelines.engines.Engine``; None: this process) scores the chunks elsewhere (worker processes,
    Ray actors): each worker is given the results this cache keeps for its chunk's lines and returns what it
    computed, kept here; the output stays in line order.
    """
    keeps_results = cache is not None
    cache = cache if cache is not None else MemoryCache()
    parts = scoring_parts(settings, cache, extractor, None)
    resolved = resolve(metrics, parts)
    kept = KeptResults.for_metrics(cache, resolved, parts.extractor()) if keeps_results else None
    scorer = LineScorer(parts.extractor(), resolved, kept, image_root)
    report = report if report is not None else JsonlReport()
    benchmarks: dict[str, list[Sample]] = {}
    if any(getattr(m, "needs_benchmark", False) for m in resolved):
        # The lines of one input are one benchmark; its object names are known only once every line is read.
        records = list(records)
        benchmarks[BENCHMARK] = _readable_samples(records)
        observe_benchmarks(resolved, [BENCHMARK], benchmarks.__getitem__, set())
    llm_before = all_stats()
    chunks = iter_chunks(records, batch_size or settings.scoring.batch_size)
    task = LinesTask(settings, metrics, extractor, scorer, benchmarks, keeps_results)
    outputs = engine.score_lines(((chunk, kept_results(chunk, scorer)) for chunk in chunks), task) if engine \
        else (score_lines(chunk, scorer) for chunk in chunks)  # this process: kept results read from its cache
    try:
        for output in outputs:
            keep_drained(cache, output.cache_entries, output.vectors)
            report.lines += output.report.lines
            report.scored += output.report.scored
            report.errors.extend(output.report.errors)
            report.llm_failures.extend(output.report.llm_failures)
            report.passed_through.update(output.report.passed_through)
            report.llm = stats_since(llm_before, all_stats())
            yield from output.lines
    finally:
        getattr(outputs, "close", lambda: None)()
    if report.passed_through:  # one warning per run
        report.warnings.append(f"fields no metric reads, passed through to the output lines as they are: "
                               f"{sorted(report.passed_through)}")


def kept_results(chunk: list[tuple[int, str]], scorer: LineScorer) -> dict[str, Any]:
    """The results ``scorer.kept`` holds for the lines of ``chunk`` (by key): what a worker is given to read back."""
    if scorer.kept is None:
        return {}
    keys = []
    for line_no, text in chunk:
        try:
            record, sample, given, _ = _parse_line(line_no, text, None, [m.name for m in scorer.metrics])
        except _LineError:
            continue
        unit = Unit(str(record["id"]), record["response"], sample, given, scorer.metrics, record=record)
        keys += [k for m in scorer.metrics if (k := scorer.kept.key(m, unit))]
    return scorer.kept.cache.get_many(list(dict.fromkeys(keys))) if keys else {}


def score_lines(chunk: list[tuple[int, str]], scorer: LineScorer) -> LinesOutput:
    """Score one chunk of lines, without writing anything but ``scorer``'s cache: one output record per line."""
    report = JsonlReport(warnings=[])
    results: dict[int, dict[str, Any]] = {}
    units: list[tuple[int, dict[str, Any], Unit]] = []
    pictures: dict[int, bytes | None] = {}  # by the sample object: two lines may share an id
    for line_no, text in chunk:
        report.lines += 1
        try:
            record, sample, given, image = _parse_line(line_no, text, scorer.image_root,
                                                       [m.name for m in scorer.metrics])
        except _LineError as exc:
            message = f"line {line_no}" + (f" (id {exc.record_id!r})" if exc.record_id is not None else "") + \
                      f": {exc.error}"
            report.errors.append(message)
            results[line_no] = {"line": line_no, "id": exc.record_id, "error": exc.error}
            continue
        pictures[id(sample)] = image
        units.append((line_no, record, Unit(str(record["id"]), record["response"], sample, given, scorer.metrics,
                                            record=record)))
    outcomes = score_units([u for _, _, u in units], scorer.extractor, extract_all=True, kept=scorer.kept,
                           images=lambda sample: pictures.get(id(sample)))
    for (line_no, record, unit), outcome in zip(units, outcomes):
        results[line_no] = _line_output(line_no, record, unit, outcome, scorer.metrics, report)
    return LinesOutput([results[line_no] for line_no, _ in chunk], report)


def _line_output(line_no: int, record: dict[str, Any], unit: Unit, outcome: Any, metrics: list[Metric],
                 report: JsonlReport) -> dict[str, Any]:
    mentioned = outcome.concepts
    where = f"line {line_no} (id {record['id']!r})"
    if isinstance(mentioned, BaseException):
        error = f"extraction: {llm_failure(mentioned) or f'failed: {mentioned}'}"
        (report.llm_failures if llm_failure(mentioned) else report.errors).append(f"{where}: {error}")
        return {"line": line_no, "id": record["id"], "error": error}
    extra = _passed_through(record, [m.name for m in metrics])
    report.passed_through.update(extra)
    out: dict[str, Any] = {"id": record["id"], **extra, "mentioned": mentioned.to_dict(), "evidence": {}}
    for metric in metrics:
        if metric.name in outcome.not_applicable:
            out[metric.name] = {"undefined_reason": outcome.not_applicable[metric.name]}
            continue
        result = outcome.results[metric.name]
        if isinstance(result, BaseException):
            out.setdefault("errors", {})[metric.name] = error_text(result)
            (report.llm_failures if llm_failure(result) else report.errors).append(
                f"{where}: {metric.name}: {error_text(result)}")
            continue
        score = Score(unit.key, metric.name, "", dict(result.values), dict(result.evidence), result.undefined_reason)
        out[metric.name] = _jsonl_numbers(metric, score)
        out["evidence"][metric.name] = score.evidence
    report.scored += "errors" not in out
    return out


def score_jsonl(in_path: str | Path, out_path: str | Path, settings: Settings, metrics: Sequence[str | Metric], *,
                extractor: "ConceptExtractor | None" = None, cache: "ScoringCache | None" = None,
                progress: bool = False, engine: Any = None) -> JsonlReport:
    """Score a JSONL file line by line into another; a bad line gets an ``error`` record naming it.

    Lines are written (and flushed) as each batch finishes; ``progress`` shows the lines done on stderr.
    """
    in_path, out_path = Path(in_path), Path(out_path)
    if not in_path.exists():
        raise FileNotFoundError(f"input file {in_path} does not exist")
    report = JsonlReport()
    with open(in_path, encoding="utf-8") as src:
        total = sum(1 for line in src if line.strip())
    if total <= settings.scoring.batch_size:
        engine = None  # one chunk: no workers to start
    with open(in_path, encoding="utf-8") as src, open(out_path, "w", encoding="utf-8") as dst, \
            tqdm(total=total, desc="scoring", unit="line", disable=not progress, file=sys.stderr) as bar, \
            live_progress(bar) if progress else nullcontext():
        records = ((n, line) for n, line in enumerate(src, start=1) if line.strip())
        written = 0
        for out in score_records(records, settings, metrics, extractor=extractor, report=report, cache=cache,
                                 image_root=in_path.resolve().parent, engine=engine):
            dst.write(json.dumps(out, ensure_ascii=False) + "\n")
            written += 1
            bar.update(1)
            if written == report.lines:  # a batch's last line: what is written can be read now
                dst.flush()
    return report
