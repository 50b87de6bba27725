"""Subject, relation and object out of Reefknot's prompt templates.

Reefknot stores no (s, r, o) fields; they live in the prompt text:

* MCQ: ``What is the relation with {s} and {o} in this photo? A. w B. x C. y D. z, please choose.``
* VQA: ``... Please answer in the following format:{s} is <relation> {o}.`` with label ``{s} is {r} {o}.``
* Y/N: ``Is|Are [the] {s} {r} [the] {o} in this photo? Please answer yes or no.``

MCQ and VQA are unambiguous. A Y/N body ("bus driver on bus") has no marked word
boundaries, so :class:`YesNoSplitter` picks the split that scores best against a
vocabulary gathered from the MCQ options, VQA labels and subject / object names,
preferring a split that agrees with the question's partner (Reefknot asks each fact
twice about the same image: once true, once with the relation swapped).

>>> parse_mcq("What is the relation with knife and apple in this photo? A. behind B. onto C. on D. into, please choose.")
('knife', 'apple', ['behind', 'onto', 'on', 'into'])
>>> parse_vqa("What is the relation with bag and ground in this photo? Please answer in the following format:bag is <relation> ground.", "bag is on ground.")
('bag', 'on', 'ground')
>>> yes_no_body("Is the bus driver on bus in this photo? Please answer yes or no.")
'bus driver on bus'
>>> sp = YesNoSplitter(relations={"on", "off"}, names={"bus driver", "bus"})
>>> sp.split_pair("bus driver on bus", "bus driver off the bus")
(('bus driver', 'on', 'bus'), ('bus driver', 'off', 'bus'))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Triplet = tuple[str, str, str]

_MCQ = re.compile(r"^What is the relation with (?P<pair>.+?) in this photo\?\s*A\.\s*(?P<a>.*?)\s+B\.\s*(?P<b>.*?)\s+"
                  r"C\.\s*(?P<c>.*?)\s+D\.\s*(?P<d>.*?),?\s*please choose\.?\s*$", re.S)
_VQA = re.compile(r"format:\s*(?P<s>.+?) (?P<cop>is|are) <relation> (?P<o>.+?)\.*\s*$", re.S)
_YES_NO = re.compile(r"^(?:Is|Are) (?:the )?(?P<body>.+?) (?:in|on|under|out of) this photo\?\s*"
                     r"Please answer yes or no\.?\s*$", re.S | re.I)


def parse_mcq(prompt: str, names: set[str] | frozenset[str] = frozenset()) -> tuple[str, str, list[str]]:
    """``(subject, object, options)``; ValueError when the prompt does not follow the template."""
    m = _MCQ.match(prompt.strip())
    if not m:
        raise ValueError("prompt does not follow the multiple-choice template")
    pair = m.group("pair")
    splits = [(pair[:i], pair[i + 5:]) for i in range(len(pair)) if pair.startswith(" and ", i)]
    if not splits:
        raise ValueError("cannot find '{subject} and {object}' in the prompt")
    # "A and B and C": prefer the split whose sides are known names.
    subject, obj = max(splits, key=lambda so: ((so[0] in names) + (so[1] in names), -len(so[0])))
    return subject.strip(), obj.strip(), [m.group(k).strip() for k in "abcd"]


def parse_vqa(prompt: str, label: str) -> Triplet:
    m = _VQA.search(prompt.strip())
    if not m:
        raise ValueError("prompt does not follow the VQA template")
    s, cop, o = m.group("s").strip(), m.group("cop"), m.group("o").strip()
    text = label.strip().rstrip(".").strip()
    head = f"{s} {cop} "
    if not text.startswith(head) or not text.endswith(f" {o}") or len(text) <= len(head) + len(o) + 1:
        raise ValueError(f"label {label!r} does not read '{s} {cop} <relation> {o}.'")
    return s, text[len(head):-len(o) - 1].strip(), o


def yes_no_body(prompt: str) -> str:
    m = _YES_NO.match(prompt.strip())
    if not m:
        raise ValueError("prompt does not follow the yes/no template")
    return m.group("body").strip()


_ARTICLES = {"the", "a", "an"}


def _splits(body: str) -> list[Triplet]:
    words = body.split()
    out = []
    for i in range(1, len(words) - 1):
        for j in range(i + 1, len(words)):
            obj = words[j:]
            if len(obj) > 1 and obj[0].lower() in _ARTICLES:
                obj = obj[1:]
            out.append((" ".join(words[:i]), " ".join(words[i:j]), " ".join(obj)))
    return out


@dataclass
class YesNoSplitter:
    """Splits a Y/N body into (s, r, o) using known relations and names."""

    relations: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)

    def _score(self, t: Triplet) -> int:
        return 3 * (t[1] in self.relations) + (t[0] in self.names) + (t[2] in self.names)

    def split(self, body: str) -> Triplet | None:
        """The best split, or None when nothing about it is recognised."""
        cands = _splits(body)
        if not cands:
            return None
        best = max(cands, key=lambda t: (self._score(t), -len(t[1].split())))
        return best if self._score(best) > 0 else None

    def split_pair(self, first: str, second: str) -> tuple[Triplet | None, Triplet | None]:
        """Split two bodies that should share subject and object; falls back to one at a time."""
        by_ends: dict[tuple[str, str], list[Triplet]] = {}
        for t in _splits(second):
            by_ends.setdefault((t[0], t[2]), []).append(t)
        best: tuple[tuple[int, int], Triplet, Triplet] | None = None
        for a in _splits(first):
            for b in by_ends.get((a[0], a[2]), []):
                key = (self._score(a) + 3 * (b[1] in self.relations), -len(a[1].split()) - len(b[1].split()))
                if best is None or key > best[0]:
                    best = (key, a, b)
        if best is not None and best[0][0] > 0:
            return best[1], best[2]
        return self.split(first), self.split(second)
