"""What a reader of human judgements produces, and the pieces every reader shares.

A human study brings three things: the benchmark's samples with the references the study has, the judged
outputs as recorded runs, and the people's judgements as events of the study's ``source`` (never "app").
``ParsedHumanStudy`` holds the three; ``pipelines.importing.import_human_study`` writes them.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from ...model import APP_SOURCE, Benchmark, HumanEvent, Response, Sample, ValidationError
from ..base import ImportProblem, ParsedBenchmark, ParsedResponses
from ..reading import FatalImportError, read_json
from ..recorded import RecordedRuns

COCO_OBJECTS_FILE = "coco_objects_for_these_images.json"
_COCO_FILE_ID = re.compile(r"(\d+)(?:\.\w+)?$")


@dataclass
class ParsedHumanStudy:
    """A human study read from files: samples, judged responses and judgements, with the problems met."""

    source: str  # ``HumanEvent.source`` of every judgement (the study's name)
    benchmark: ParsedBenchmark
    responses: ParsedResponses = field(default_factory=ParsedResponses)
    events: list[HumanEvent] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)  # about judgements (samples' are in benchmark)

    @property
    def records_failed(self) -> int:
        return sum(1 for p in self.problems if p.fatal) + self.benchmark.records_failed \
            + self.responses.records_failed


class StudyBuilder:
    """Collects one study's samples, responses and judgements, each once, with stable ids.

    A sample or response met again (a resampled row, one line per reference caption) must be the same as
    the first time; an event is checked against the data model when it is made.
    """

    def __init__(self, source: str, benchmark: Benchmark, recorded_from: str) -> None:
        if not source.strip() or source.strip() == APP_SOURCE:
            raise ValueError(f"an imported study needs a source name other than {APP_SOURCE!r}, got {source!r}")
        self.study = ParsedHumanStudy(source.strip(), ParsedBenchmark(benchmark))
        self._samples: dict[str, Sample] = {}
        self._responses: dict[str, Response] = {}
        self._runs = RecordedRuns(recorded_from)
        self.written_by: dict[str, str] = {}  # model -> "human" | "model", where a reader says (generic JSONL)

    @property
    def name(self) -> str:
        return self.study.benchmark.benchmark.name

    def sample(self, sample: Sample) -> Sample:
        """The stored sample of this id: ``sample`` the first time, the same one after (ValueError if it differs)."""
        seen = self._samples.get(sample.id)
        if seen is None:
            self._samples[sample.id] = sample
            self.study.benchmark.samples.append(sample)
            return sample
        if seen.to_dict() != sample.to_dict():
            raise ValueError(f"sample {sample.id} appears again with different content")
        return seen

    def response(self, sample: Sample, model: str, text: str, run_meta: Mapping[str, Any] | None = None) -> Response:
        """``model``'s recorded response to ``sample`` (one ``recorded`` run per model); the same text if met again."""
        run = self._runs.run_for(self.name, model, dict(run_meta or {}))
        response = Response(run.id, sample.id, text)
        seen = self._responses.get(response.id)
        if seen is None:
            self._responses[response.id] = response
            self.study.responses.responses.append(response)
            return response
        if seen.text != text:
            raise ValueError(f"model {model!r} answers sample {sample.id} twice with different texts")
        return seen

    def event(self, annotator: str, kind: str, response_id: str, value: Any, target: str = "",
              meta: Mapping[str, Any] | None = None) -> HumanEvent:
        """A judgement of this study (``ValidationError`` when it does not fit the data model)."""
        event = HumanEvent(annotator, kind, response_id, value, target=target, source=self.study.source,
                           meta=dict(meta or {}))
        self.study.events.append(event)
        return event

    def problem(self, record: str, reason: str, fatal: bool = True) -> None:
        self.study.problems.append(ImportProblem(record, reason, fatal))

    @contextmanager
    def record(self, where: str) -> Iterator[None]:
        """One record, all or nothing: a ValueError / ValidationError / TypeError / KeyError inside takes back
        the samples, responses and events it added and becomes a problem naming ``where``."""
        samples, responses, events = (len(self.study.benchmark.samples), len(self.study.responses.responses),
                                      len(self.study.events))
        try:
            yield
        except (ValueError, ValidationError, TypeError, KeyError) as exc:
            for sample in self.study.benchmark.samples[samples:]:
                del self._samples[sample.id]
            for response in self.study.responses.responses[responses:]:
                del self._responses[response.id]
            del self.study.benchmark.samples[samples:], self.study.responses.responses[responses:]
            del self.study.events[events:]
            # A KeyError's text is the quoted key: say which field is missing.
            self.problem(where, f"missing field {exc}" if isinstance(exc, KeyError) else str(exc))

    def sample_problem(self, record: str, reason: str, fatal: bool = True) -> None:
        self.study.benchmark.problems.append(ImportProblem(record, reason, fatal))

    def finish(self) -> ParsedHumanStudy:
        """The study read; runs without a response (every record of theirs failed) left out."""
        answered = {r.run_id for r in self.study.responses.responses}
        self.study.responses.runs = [r for r in self._runs.runs() if r.id in answered]
        return self.study


def study_files(path: str | os.PathLike[str], data_file: str) -> tuple[Path, Path]:
    """``(data file, folder)`` for a study given as its folder (holding ``data_file``) or as the data file itself;
    the folder is where the study's other files (a COCO object file) are looked for."""
    p = Path(path)
    return (p / data_file, p) if p.is_dir() else (p, p.parent)


def span_label(start: int, end: int, label: str, text: str | None = None) -> tuple[dict[str, Any], str]:
    """The value and target of a ``span_label`` event."""
    value: dict[str, Any] = {"start": start, "end": end, "label": label}
    if text is not None:
        value["text"] = text
    return value, f"span:{start}-{end}"


def fact_label(index: int, fact: str, label: str) -> tuple[dict[str, Any], str]:
    """The value and target of a ``fact_label`` event."""
    return {"fact": fact, "label": label}, f"fact:{index}"


def comparison(other: str, aspect: str, score: int, scale: str | None = None) -> tuple[dict[str, Any], str]:
    """The value and target of a ``comparison`` event."""
    value: dict[str, Any] = {"other": other, "aspect": aspect, "score": score}
    if scale is not None:
        value["scale"] = scale
    return value, f"vs:{other}:{aspect}"


def coco_image_id(name: str) -> str:
    """COCO's image id, without leading zeros, from a file name or a zero-padded id.

    >>> coco_image_id("COCO_val2014_000000007288.jpg"), coco_image_id("000000525439"), coco_image_id("42")
    ('7288', '525439', '42')
    """
    found = _COCO_FILE_ID.search(str(name).strip())
    if not found:
        raise ValueError(f"{name!r} names no COCO image id")
    return str(int(found.group(1)))


def read_coco_objects(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """``{COCO image id: [category names]}`` from a ``{"<id>": ["person", ...]}`` file (COCO-80 object sets).

    Every name must be one of COCO's 80 categories (or a listed alias of one); the file as a whole is
    refused otherwise, since the sets are read as complete within that vocabulary.
    """
    from ...lexicon.vocabularies import vocabulary

    p = Path(path)
    data = read_json(p, dict, "an object {image id: [COCO category names]}")
    coco = vocabulary("coco-80")
    out: dict[str, list[str]] = {}
    for key, names in data.items():
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise FatalImportError(f"{p.name}: image {key}: expected a list of category names")
        unknown = [n for n in names if coco.category_of(n) is None]
        if unknown:
            raise FatalImportError(f"{p.name}: image {key}: {unknown[:3]} are not COCO-80 categories")
        out[coco_image_id(key)] = list(dict.fromkeys(coco.category_of(n) for n in names))  # type: ignore[misc]
    return out
