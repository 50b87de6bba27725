"""Tolerant parsing of the JSON an LLM returns.

Chat models wrap JSON in code fences, put a sentence before it or write Python
literals with single quotes. This module accepts those and nothing looser: an
answer it cannot read raises ``ValueError`` naming what it saw.

>>> parse_json_tolerant('Sure! Here it is:\\n```json\\n{"a": [1, 2]}\\n```')
{'a': [1, 2]}
>>> parse_json_tolerant("{'verdict': 'yes', 'ok': True}")
{'verdict': 'yes', 'ok': True}
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON|python)?\s*\n?(.*?)```", re.DOTALL)


def _candidates(text: str) -> list[str]:
    """Substrings that may hold the JSON value, most specific first."""
    out = [m.group(1).strip() for m in _FENCE.finditer(text)]
    out.append(text.strip())
    # Leading or trailing prose: cut from the first opening bracket to its last closer.
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            out.append(text[start:end + 1])
    return out


def parse_json_tolerant(text: str) -> Any:
    """Parse the first JSON (or Python-literal) value found in ``text``; ``ValueError`` when none is."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the answer is empty")
    for candidate in _candidates(text):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
        try:
            # Single quotes and True/False/None: a Python literal, evaluated safely.
            value = ast.literal_eval(candidate)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, (dict, list)):
            return value
    snippet = text.strip().replace("\n", " ")
    raise ValueError(f"no JSON value found in the answer: {snippet[:160]!r}")
