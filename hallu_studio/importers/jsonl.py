"""HalluStudio's own JSONL formats (what ``export --format jsonl`` writes), see ``docs/formats.md``.

* **samples**: one ``Sample.to_dict()`` per line, plus ``image``: the image file's path
  relative to the JSONL file (or ``image_sha256`` and an images folder holding
  ``<sha256>.<ext>``). Optional ``{"benchmark_info": {name, description, source, meta}}`` lines
  describe the benchmarks.
* **responses**: ``{sample_id, model, response}`` per line; optional ``signals``, ``id``,
  ``created_at`` and ``run`` (a full run manifest, kept as is; without it a
  ``recorded`` run is made per benchmark and model).
* **judgments**: the exported ``events`` rows ``{id, annotator, kind, response_id, target,
  value, undoes, created_at}``.

The kind of a file is told by its first record (:func:`detect_kind`).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from ..images import ImageFolder, ImageRejected, StoredImage, read_image
from ..model import APP_SOURCE, Benchmark, HumanEvent, Response, Run, Sample, ValidationError
from ..names import misspelt_name
from .base import ImportProblem, ParsedBenchmark, ParsedResponses
from .reading import FatalImportError, iter_jsonl
from .recorded import RecordedRuns, SampleIdResolver, benchmark_of

SAMPLE_KEYS = {"id", "benchmark"}
# What a stateless line (``score --input``) carries beside its sample: the response scored and, optionally, its
# concepts already extracted.
SCORING_KEYS: tuple[str, ...] = ("response", "mentioned", "image_path")
# What a samples line may name: Sample's fields and the image file it points to.
SAMPLE_FIELDS: frozenset[str] = frozenset(f.name for f in dataclasses.fields(Sample)) | {"image"}
JUDGMENT_KEYS = {"annotator", "kind"}
RESPONSE_KEYS = {"sample_id", "response"}


def detect_kind(path: str | os.PathLike[str]) -> str:
    """``samples``, ``responses`` or ``judgments``, from the keys of the file's first record."""
    for _, record in iter_jsonl(path, []):
        keys = set(record)
        if "benchmark_info" in keys or (SAMPLE_KEYS <= keys and "sample_id" not in keys):
            return "samples"  # a ``score --input`` line that names its benchmark too
        if JUDGMENT_KEYS <= keys:
            return "judgments"
        if RESPONSE_KEYS <= keys:
            return "responses"
        raise FatalImportError(f"{Path(path).name}: the first record has neither sample fields {sorted(SAMPLE_KEYS)}, "
                               f"response fields {sorted(RESPONSE_KEYS)} nor judgment fields {sorted(JUDGMENT_KEYS)}")
    raise FatalImportError(f"{Path(path).name}: no records")


def _image(record: dict[str, Any], sid: str, base: Path, folder: ImageFolder | None,
           parsed: ParsedBenchmark, where: str, cache: dict[str, StoredImage | ImageRejected]) -> str | None:
    """The sha256 of the sample's image once read and validated, else None (with a problem)."""
    rel, claimed = record.pop("image", None), record.get("image_sha256")
    if not rel and not claimed:
        return None
    try:
        if rel:
            # Many questions share one image: read and validate each file once.
            if str(rel) not in cache:
                try:
                    cache[str(rel)] = read_image(str(rel), base)
                except ImageRejected as exc:
                    cache[str(rel)] = exc
            found = cache[str(rel)]
            if isinstance(found, ImageRejected):
                raise found
            img = found
        elif folder is not None:
            img = folder.load(str(claimed))
        else:
            raise ImageRejected(f"image {claimed} named by sha256 but no image folder given")
    except ImageRejected as exc:
        parsed.problems.append(ImportProblem(where, f"sample {sid}: {exc}", fatal=False))
        return None
    if claimed and claimed != img.sha256:
        raise ValueError(f"the image file's sha256 {img.sha256[:12]}… differs from "
                         f"image_sha256 {str(claimed)[:12]}…")
    parsed.images.setdefault(img.sha256, img)
    return img.sha256


def extra_fields(record: dict[str, Any], also: tuple[str, ...] = ()) -> dict[str, Any]:
    """The record's fields that neither a sample nor the caller (``also``) reads: a user's own columns (an id of
    theirs, metadata, an ``expect``), which import keeps in the sample's ``meta`` and ``score --input`` passes
    through to the output line. A field within one or two edits of a known one is a misspelling, not an extra
    column: a ``ValidationError`` that names the likely field, so a misspelt reference is never silently dropped.

    >>> extra_fields({"id": "1", "response": "A cat.", "expect": 0.5}, also=SCORING_KEYS)
    {'expect': 0.5}
    >>> extra_fields({"id": "1", "refrence_text": "A dog."})
    Traceback (most recent call last):
    ...
    hallu_studio.model.base.ValidationError: sample '1': unknown field 'refrence_text' (did you mean `reference_text`?)
    """
    known = SAMPLE_FIELDS | set(also)
    extra = {k: v for k, v in record.items() if k not in known}
    for name in extra:
        guess = misspelt_name(name, sorted(known))
        if guess is not None:
            raise ValidationError(f"sample {record.get('id')!r}: unknown field {name!r} (did you mean `{guess}`?)")
    return extra


def sample_from_record(record: Any, *, benchmark: str | None = None, also: tuple[str, ...] = (),
                       image_sha256: str | None = None) -> Sample:
    """A sample from one JSONL record: the one reader of ``import --format jsonl`` and of ``score --input``.

    The record holds ``Sample``'s fields (``docs/formats.md``) and ``image``, the image it names. Required:
    ``id``; ``benchmark`` (the record's, else ``benchmark`` when the caller has one: ``score --input``'s lines are
    benchmark "jsonl"). ``image_key`` is the record's, else the ``image`` it names, else its ``id``. ``also`` are
    the other fields the caller reads itself (a stateless line's ``response``); any other field is kept in the
    sample's ``meta`` under its own name (``extra_fields``; a key the record's ``meta`` has too is an error), and a
    misspelt one is refused naming the likely field. Every problem is a ``ValidationError`` saying why.

    >>> sample_from_record({"id": "b/1", "benchmark": "b", "image": "cat.jpg", "reference_text": "A cat."}).image_key
    'cat.jpg'
    >>> sample_from_record({"id": "1", "response": "A cat."}, benchmark="jsonl", also=SCORING_KEYS).benchmark
    'jsonl'
    >>> sample_from_record({"id": "1", "response": "A cat.", "row": 7}, benchmark="jsonl", also=SCORING_KEYS).meta
    {'row': 7}
    >>> sample_from_record({"benchmark": "b"})
    Traceback (most recent call last):
    ...
    hallu_studio.model.base.ValidationError: missing field 'id'
    """
    if not isinstance(record, dict):
        raise ValidationError(f"expected a JSON object, got {type(record).__name__}")
    if not str(record.get("id") or "").strip():
        raise ValidationError("missing field 'id'")
    extra = extra_fields(record, also)
    fields = {k: v for k, v in record.items() if k not in also and k not in extra and k != "image"}
    if extra:
        meta = fields.get("meta") or {}
        if not isinstance(meta, dict):
            raise ValidationError(f"sample {record['id']!r}: 'meta' must be an object")
        clash = sorted(set(meta) & set(extra))
        if clash:
            raise ValidationError(f"sample {record['id']!r}: fields {clash} are in 'meta' too; keep one of each")
        fields["meta"] = {**meta, **extra}
    if not str(fields.get("benchmark") or "").strip():
        if benchmark is None:
            raise ValidationError("missing field 'benchmark'")
        fields["benchmark"] = benchmark
    if not str(fields.get("image_key") or "").strip():
        fields["image_key"] = str(record.get("image") or record["id"])
    fields["id"], fields["benchmark"] = str(fields["id"]), str(fields["benchmark"])
    if image_sha256 is not None:
        fields["image_sha256"] = image_sha256
    try:
        return Sample.from_dict(fields)
    except (TypeError, KeyError, AttributeError) as exc:
        # A malformed nested field (a scene graph that is not an object, say) fails this record only.
        raise ValidationError(f"sample {fields['id']!r}: malformed field: {exc}") from exc


def read_jsonl_samples(path: str | os.PathLike[str],
                       images_dir: str | os.PathLike[str] | None = None) -> list[ParsedBenchmark]:
    """One ParsedBenchmark per benchmark named in the file, in order of appearance."""
    p = Path(path)
    folder = ImageFolder(images_dir, depth=0) if images_dir is not None else None
    problems: list[ImportProblem] = []
    by_name: dict[str, ParsedBenchmark] = {}
    cache: dict[str, StoredImage | ImageRejected] = {}
    extras: set[str] = set()

    def bench(name: str) -> ParsedBenchmark:
        if name not in by_name:
            by_name[name] = ParsedBenchmark(Benchmark(name, source=str(p)))
        return by_name[name]

    for lineno, record in iter_jsonl(p, problems):
        where = f"{p.name} line {lineno}"
        try:
            if "benchmark_info" in record:
                info = record["benchmark_info"]
                if not isinstance(info, dict) or not str(info.get("name") or "").strip():
                    raise ValueError("benchmark_info needs a name")
                b = bench(str(info["name"])).benchmark
                b.description, b.source = str(info.get("description") or ""), str(info.get("source") or b.source)
                b.meta = dict(info.get("meta") or {})
                continue
            # every field checked before the image is read; a ``score --input`` line's response is not stored here
            sample = sample_from_record(record, also=SCORING_KEYS)
            extras.update(extra_fields(record, SCORING_KEYS))
            parsed = bench(sample.benchmark)
            sha = _image(dict(record), sample.id, p.parent, folder, parsed, where, cache)
            parsed.samples.append(dataclasses.replace(sample, image_sha256=sha))
        except (ValueError, ValidationError) as exc:
            problems.append(ImportProblem(where, str(exc)))
    if not by_name:
        if problems:
            # Nothing parsed: keep the problems visible under the file's name.
            return [ParsedBenchmark(Benchmark(p.stem, source=str(p)), problems=problems)]
        raise FatalImportError(f"{p.name}: no samples")
    if extras:  # one warning per file
        problems.append(ImportProblem(p.name, f"fields no sample reads, kept in each sample's meta: {sorted(extras)}",
                                      fatal=False))
    first = next(iter(by_name.values()))
    first.problems[:0] = problems
    return list(by_name.values())


def read_jsonl_responses(path: str | os.PathLike[str], known_ids: set[str], *, benchmark: str | None = None,
                         model: str | None = None) -> ParsedResponses:
    """Responses matched to stored samples (see ``recorded.SampleIdResolver``)."""
    p = Path(path)
    out = ParsedResponses()
    resolver = SampleIdResolver(benchmark, known_ids)
    recorded = RecordedRuns(f"jsonl:{p.name}")
    runs: dict[str, Run] = {}
    for lineno, record in iter_jsonl(p, out.problems):
        where = f"{p.name} line {lineno}"
        try:
            text = record.get("response")
            if not isinstance(text, str):
                raise ValueError("missing field 'response' (a string)")
            sid = resolver.resolve([record.get("sample_id")])
            if isinstance(record.get("run"), dict):
                run = Run.from_dict(record["run"])
            else:
                name = str(record.get("model") or model or "").strip()
                if not name:
                    raise ValueError("no model: give a 'model' field or --model")
                run = recorded.run_for(benchmark_of(sid), name)
            runs.setdefault(run.id, run)
            resp = Response(run.id, sid, text, signals=dict(record.get("signals") or {}))
            if record.get("id") and record["id"] != resp.id:
                raise ValueError(f"response id {record['id']!r} does not match its run and sample")
            if record.get("created_at"):
                out.created_at[resp.id] = str(record["created_at"])
            out.responses.append(resp)
        except (ValueError, TypeError) as exc:
            out.problems.append(ImportProblem(where, str(exc)))
    out.runs = list(runs.values())
    return out


def read_jsonl_judgments(path: str | os.PathLike[str]) -> tuple[list[HumanEvent], list[ImportProblem]]:
    p = Path(path)
    problems: list[ImportProblem] = []
    events: list[HumanEvent] = []
    for lineno, r in iter_jsonl(p, problems):
        try:
            events.append(HumanEvent(annotator=str(r.get("annotator") or ""), kind=str(r.get("kind")),
                                     response_id=r.get("response_id"), value=r.get("value"),
                                     target=str(r.get("target") or ""), undoes=r.get("undoes"), id=r.get("id"),
                                     created_at=r.get("created_at"), source=str(r.get("source") or APP_SOURCE),
                                     meta=dict(r.get("meta") or {})))
        except (ValueError, ValidationError, TypeError) as exc:
            problems.append(ImportProblem(f"{p.name} line {lineno}", str(exc)))
    return events, problems
