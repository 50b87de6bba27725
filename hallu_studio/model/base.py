"""The data model's basics: validation errors, content keys, tasks, relation categories, reference kinds, spans."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, Literal

Task = Literal["caption", "vqa", "yes_no", "mcq"]
TASKS: tuple[str, ...] = ("caption", "vqa", "yes_no", "mcq")
# The object vocabularies a sample's reference_objects may be complete within, by name (their names and aliases:
# lexicon.vocabularies); a list of names is a vocabulary too.
NAMED_VOCABULARIES: tuple[str, ...] = ("coco-80",)
RelationCategory = Literal["perception", "cognition"]
RELATION_CATEGORIES: tuple[str, ...] = ("perception", "cognition")
# What a sample's human captions settle (``Sample.reference_kind``): short captions (COCO's five) each settle only
# what they mention; a dense description (DCI's, IIW's) names what is in the picture.
ReferenceKind = Literal["captions", "dense"]
REFERENCE_KINDS: tuple[str, ...] = ("captions", "dense")
Span = tuple[int, int]


class ValidationError(ValueError):
    """A record does not fit the data model; the message says which field and why."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the input of every content hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_key(*parts: Any) -> str:
    """A sha256 hex digest of the canonical JSON of ``parts``."""
    return hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).hexdigest()


def span_from(value: Any) -> Span | None:
    if value is None:
        return None
    start, end = value
    return (int(start), int(end))


def iter_chunks(items: Iterable[Any], size: int) -> Iterable[list[Any]]:
    chunk: list[Any] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
