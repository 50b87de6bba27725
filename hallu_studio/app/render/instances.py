"""Objects of one name that a response describes apart ("The roof is orange and tiled. The roof is orange and
blue."): the concept graph draws each as its own node, so that no node carries the attributes of two objects.

Extraction keeps one concept per name; the response's sentences tell the instances apart: each sentence that names
the object with some of its attributes describes one instance, and sentences giving the same attributes describe the
same one. Only a name the response counts as more than one, or relates to itself ("the roof is below the roof"), is
split.
"""

from __future__ import annotations

from typing import Any

from ...extraction.spans import sentence_spans
from ...metrics.flagging import find_phrase


def _names(sentence: str, name: str) -> bool:
    return any(find_phrase(sentence, form) for form in (name, f"{name}s", f"{name}es"))


def same_name_instances(concepts: dict[str, Any] | None, text: str | None) -> dict[str, list[frozenset[str]]]:
    """Lower-cased object name -> the attribute values of each instance the response describes, in order of mention;
    only names with two instances or more.

    >>> same_name_instances({"attributes": [["roof", "orange"], ["roof", "tiled"], ["roof", "blue"]],
    ...                      "counts": [["roof", 4]]},
    ...                     "Four roofs. The roof is orange and tiled. The roof is orange and blue. "
    ...                     "The roof is tiled and orange.")["roof"] == [frozenset({"orange", "tiled"}), frozenset({"orange", "blue"})]
    True
    >>> same_name_instances({"attributes": [["cat", "grey"]]}, "A grey cat. The cat is grey.")
    {}
    """
    if not concepts or not text:
        return {}
    values: dict[str, set[str]] = {}
    for pair in concepts.get("attributes") or []:
        if len(pair) == 2:
            values.setdefault(str(pair[0]).lower(), set()).add(str(pair[1]).lower())
    many = {str(c[0]).lower() for c in concepts.get("counts") or [] if len(c) == 2 and str(c[1]).isdigit()
            and int(c[1]) > 1}
    many |= {str(r[0]).lower() for r in concepts.get("relations") or [] if len(r) == 3
             and str(r[0]).lower() == str(r[2]).lower()}
    sentences = [text[a:b] for a, b in sentence_spans(text)]
    out: dict[str, list[frozenset[str]]] = {}
    for name in sorted(many & set(values)):
        groups: list[frozenset[str]] = []
        for sentence in sentences:
            found = frozenset(v for v in values[name] if find_phrase(sentence, v))
            if found and _names(sentence, name) and found not in groups:
                groups.append(found)
        if len(groups) > 1:
            out[name] = groups
    return out
