"""Reading JSON / JSONL files record by record, and attaching images to samples.

A malformed line is a problem for that line only; the good lines still go through.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

from tqdm import tqdm

from ..images import ImageFolder, ImageRejected
from .base import ImportProblem, ParsedBenchmark


class FatalImportError(ValueError):
    """The file as a whole cannot be read (missing, not JSON, wrong top-level shape)."""


def json_error_text(exc: json.JSONDecodeError, one_line: bool = False) -> str:
    r"""Where JSON went wrong and what was there, for a person to find it: the line (left out when the text was
    ``one_line`` of a file, whose number the caller gives), the column, the parser's reason and the text found.

    >>> try:
    ...     json.loads('{"text": "a\tb"}')
    ... except json.JSONDecodeError as exc:
    ...     print(json_error_text(exc, one_line=True))
    column 12: invalid control character; found '\t' in '{"text": "a\tb"}'
    """
    reason = exc.msg.removesuffix(" at").rstrip(":")
    reason = reason[:1].lower() + reason[1:]
    start = exc.doc.rfind("\n", 0, exc.pos) + 1
    end = exc.doc.find("\n", exc.pos)
    end = len(exc.doc) if end < 0 else end
    left, right = max(start, exc.pos - 30), min(end, exc.pos + 30)
    shown = ("…" if left > start else "") + repr(exc.doc[left:right]) + ("…" if right < end else "")
    found = repr(exc.doc[exc.pos]) if exc.pos < len(exc.doc) else "the end of the text"
    where = f"column {exc.colno}" if one_line else f"line {exc.lineno}, column {exc.colno}"
    return f"{where}: {reason}; found {found} in {shown}"


def read_json(path: str | os.PathLike[str], expect: type | None = None, what: str = "") -> Any:
    """The file's JSON; with ``expect``, its top level must be of that type (``what`` says what was
    expected in the error, e.g. "a list of scene graphs")."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p} does not exist")
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise FatalImportError(f"{p.name}: not valid JSON at {json_error_text(exc)}") from exc
    except UnicodeDecodeError as exc:
        raise FatalImportError(f"{p.name}: not UTF-8 text ({exc})") from exc
    if expect is not None and not isinstance(data, expect):
        raise FatalImportError(f"{p.name}: expected {what or expect.__name__}, got {type(data).__name__}")
    return data


def iter_jsonl(path: str | os.PathLike[str], problems: list[ImportProblem]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, record)`` for each good line; bad lines become problems."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p} does not exist")
    with open(p, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(ImportProblem(f"{p.name} line {lineno}",
                                              f"not valid JSON at {json_error_text(exc, one_line=True)}"))
                continue
            if not isinstance(record, dict):
                problems.append(ImportProblem(f"{p.name} line {lineno}",
                                              f"expected a JSON object, got {type(record).__name__}"))
                continue
            yield lineno, record


def require_str(record: dict[str, Any], key: str, where: str) -> str:
    """A non-empty string field, or a ValueError naming the record and the field."""
    value = record.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"{where}: missing field {key!r}")
    if not isinstance(value, (str, int)):
        raise ValueError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    return str(value)


def attach_images(parsed: ParsedBenchmark, folder: ImageFolder | None, source_name: str) -> None:
    """Look each sample's ``image_key`` up in ``folder`` and attach what is found.

    Missing or unreadable images are non-fatal problems, one per image (not per question).
    """
    keys = sorted({s.image_key for s in parsed.samples})
    if folder is None:
        if keys:
            parsed.problems.append(ImportProblem(
                source_name, f"no image folder given: {len(keys)} images not attached", fatal=False))
        return
    found: dict[str, str] = {}
    # Reading and validating thousands of images is the slow part of an import: show progress
    # (on stderr, and only on a terminal: disable=None).
    for key in tqdm(keys, desc=f"{source_name}: images", unit="img", disable=None, leave=False, file=sys.stderr):
        try:
            img = folder.load(key)
        except ImageRejected as exc:
            parsed.problems.append(ImportProblem(f"{source_name} image {key}", str(exc), fatal=False))
            continue
        parsed.images.setdefault(img.sha256, img)
        found[key] = img.sha256
    for s in parsed.samples:
        s.image_sha256 = found.get(s.image_key)
