"""Finding the parts of a response a metric's evidence points at: the shared readers behind each metric's
``spec.flagged_spans`` (probe detection and span agreement with people call those, never these directly).

>>> text = "A dog on a red mat."
>>> find_phrase(text, "red"), spans_of([2, 5]), spans_of(None)
([(11, 14)], [(2, 5)], [])
>>> distinctive_word(["mat", "red"]), distinctive_word(["dog", "on", "mat"]), distinctive_word(["dog"])
('red', 'on', 'dog')
>>> [text[a:b] for a, b in edited_word_spans(text, [["equal", ["A", "dog", "on", "a"], ["A", "dog", "on", "a"]],
...                                                 ["substitute", ["red"], ["blue"]], ["equal", ["mat."], ["mat."]]])]
['red']
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

Span = tuple[int, int]
_WORD = re.compile(r"(?:[^\W_]|['’])*[^\W_](?:[^\W_]|['’])*")


def find_phrase(text: str, phrase: str) -> list[Span]:
    """Whole-word, case-insensitive occurrences of ``phrase`` in ``text``."""
    phrase = phrase.strip()
    if not phrase:
        return []
    pattern = re.compile(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])", re.IGNORECASE)
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


def spans_of(value: Any) -> list[Span]:
    """A stored ``[start, end]`` as a one-span list; anything else (None, a malformed pair) as none."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        return [(int(value[0]), int(value[1]))]
    return []


def concept_object_spans(concepts: Mapping[str, Any] | None, name: str) -> list[Span]:
    """Where the response's stored concept set (``ConceptSet.to_dict(with_spans=True)``) mentions object ``name``."""
    if not concepts:
        return []
    spans = concepts.get("object_spans") or []
    return [tuple(sp) for obj, sp in zip(concepts.get("objects") or [], spans)  # type: ignore[misc]
            if sp and str(obj).lower() == name.lower()]


def distinctive_word(parts: Sequence[str]) -> str:
    """The word that makes a concept itself: an object's name, an attribute, a relation's predicate."""
    if len(parts) in (2, 3):
        return parts[1]  # (object, attribute) or (subject, predicate, object)
    return parts[0] if parts else ""


def edited_word_spans(text: str, alignment: Sequence[Sequence[Any]]) -> list[Span]:
    """The words of ``text`` a word alignment (``[op, original_words, revised_words]`` steps) deletes or
    substitutes."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    out: list[Span] = []
    position = 0
    for step in alignment:
        op, original = step[0], list(step[1] or [])
        here = words[position:position + len(original)]
        if op in ("delete", "substitute"):
            out.extend(here)
        position += len(original)
    return out


def whole_answer_if(wrong: bool, text: str) -> list[Span]:
    """A short answer (yes/no, a letter) is flagged whole or not at all."""
    return [(0, len(text))] if wrong else []


def wrong_answer_spans(values: Mapping[str, Any], evidence: Mapping[str, Any], text: str,
                       concepts: Mapping[str, Any] | None = None) -> list[Span]:
    """The whole answer when a metric's ``correct`` value says it is wrong (yes/no, multiple choice, short answers).

    >>> wrong_answer_spans({"correct": False}, {}, "Yes"), wrong_answer_spans({"correct": None}, {}, "Yes")
    ([(0, 3)], [])
    """
    return whole_answer_if(values.get("correct") is False, text)
