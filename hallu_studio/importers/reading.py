"""Reading JSON / JSONL files record by record, and attaching images to samples.

A malformed line is a problem for that line only; the good lines still go through.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Collection, Iterator

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


_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER_CHARS = re.compile(r"[0-9.eE+-]*")
_DECODER = json.JSONDecoder()


class _JsonText:
    """A JSON file's text read a chunk at a time, decoded one value at a time (``json``'s own scanner)."""

    def __init__(self, fh: Any, name: str, chunk_chars: int) -> None:
        self.fh, self.name, self.chunk = fh, name, chunk_chars
        self.buf, self.pos, self.eof = "", 0, False
        # Of the text already dropped from ``buf``, for error positions: its length, its newlines, and where
        # its last newline was (-1: none).
        self.dropped, self.lines_dropped, self.last_newline = 0, 0, -1

    def _more(self, at_least: int) -> None:
        newline = self.buf.rfind("\n", 0, self.pos)
        if newline >= 0:
            self.lines_dropped += self.buf.count("\n", 0, self.pos)
            self.last_newline = self.dropped + newline
        self.dropped += self.pos
        try:
            chunk = self.fh.read(max(at_least, self.chunk))
        except UnicodeDecodeError as exc:
            raise FatalImportError(f"{self.name}: not UTF-8 text ({exc})") from exc
        self.buf, self.pos, self.eof = self.buf[self.pos:] + chunk, 0, not chunk

    def fail(self, msg: str, at: int | None = None) -> FatalImportError:
        at = self.pos if at is None else at
        newline = self.buf.rfind("\n", 0, at)
        line = self.lines_dropped + self.buf.count("\n", 0, at) + 1
        column = at - newline if newline >= 0 else self.dropped + at - self.last_newline
        return FatalImportError(f"{self.name}: not valid JSON ({msg}: line {line} column {column})")

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            self.pos = _WHITESPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos:self.pos + 1]
            self._more(self.chunk)

    def expect(self, chars: str, what: str) -> str:
        ch = self.peek()
        if not ch or ch not in chars:
            raise self.fail(f"Expecting {what}")
        self.pos += 1
        return ch

    def value(self) -> Any:
        self.peek()
        want = self.chunk
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise self.fail(exc.msg, exc.pos) from exc
                self._more(want)  # the value runs past the text read so far: read more, twice as much each time
                want *= 2
                continue
            # A number cut by the chunk's end decodes as a shorter number ("1." as 1): make sure it is whole.
            if not self.eof and _NUMBER_CHARS.match(self.buf, end).end() == len(self.buf):  # type: ignore[union-attr]
                self._more(want)
                continue
            self.pos = end
            return value


def iter_json_members(path: str | os.PathLike[str], arrays: Collection[str] = (), *, what: str = "a JSON object",
                      chunk_chars: int = 1 << 20) -> Iterator[tuple[str, int | None, Any]]:
    """The members of a file whose top level is a JSON object, read without holding the file or its whole
    structure: ``(key, None, value)`` per member, except that a list under one of the keys in ``arrays`` comes one
    element at a time, ``(key, index, element)``, each dropped once the caller is done with it (COCO's
    annotation lists, hundreds of MB of polygons).

    Raises :class:`FatalImportError` (with the line and column) for malformed JSON, and when the top level
    is not an object (``what`` says what was expected, as in :func:`read_json`).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
    ...     _ = fh.write('{"info": {"year": 2014}, "images": [{"id": 1}, {"id": 2}], "n": 3}')
    >>> list(iter_json_members(fh.name, arrays={"images"}))
    [('info', None, {'year': 2014}), ('images', 0, {'id': 1}), ('images', 1, {'id': 2}), ('n', None, 3)]
    >>> os.unlink(fh.name)
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p} does not exist")
    with open(p, encoding="utf-8") as fh:
        text = _JsonText(fh, p.name, chunk_chars)
        first = text.peek()
        if first != "{":
            if first and first not in '["-0123456789tfn':
                raise text.fail("Expecting value")
            got = {"[": "a list", "": "an empty file"}.get(first, "a single value")
            raise FatalImportError(f"{p.name}: expected {what}, got {got}")
        text.pos += 1
        if text.peek() == "}":
            text.pos += 1
        else:
            while True:
                if text.peek() != '"':
                    raise text.fail("Expecting property name enclosed in double quotes")
                key = text.value()
                text.expect(":", "':' delimiter")
                if key in arrays and text.peek() == "[":
                    text.pos += 1
                    index = 0
                    if text.peek() == "]":
                        text.pos += 1
                    else:
                        while True:
                            yield key, index, text.value()
                            index += 1
                            if text.expect(",]", "',' delimiter") == "]":
                                break
                else:
                    yield key, None, text.value()
                if text.expect(",}", "',' delimiter") == "}":
                    break
        if text.peek():
            raise text.fail("Extra data")


def json_record(line: str) -> dict[str, Any]:
    """One JSONL line's object, or a ValueError saying why not (what every JSONL reader says of a bad line).

    >>> json_record('[1, 2]')
    Traceback (most recent call last):
    ...
    ValueError: expected a JSON object, got list
    """
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON at {json_error_text(exc, one_line=True)}") from None
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    return record


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
                record = json_record(line)
            except ValueError as exc:
                problems.append(ImportProblem(f"{p.name} line {lineno}", str(exc)))
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
