"""Object names to the groups an analysis counts: WordNet synsets when available, else lemmas.

>>> simple_lemma("the Red Cars")
'car'
>>> simple_lemma("glasses"), simple_lemma("puppies"), simple_lemma("grass")
('glass', 'puppy', 'grass')
"""

from __future__ import annotations

import re
from typing import Callable

from .wordnet import WORDNET_MISSING, load_wordnet

_ARTICLES = {"a", "an", "the", "some", "two", "three", "several", "many"}


def simple_lemma(phrase: str) -> str:
    """The head word of a noun phrase (its last word), lower-cased and made singular by rule."""
    words = [w for w in re.findall(r"[a-z0-9'-]+", phrase.lower()) if w not in _ARTICLES]
    if not words:
        return phrase.strip().lower()
    head = words[-1]
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("shes", "sh"), ("ches", "ch"), ("xes", "x")):
        if head.endswith(suffix) and len(head) > len(suffix) + 1:
            return head[: -len(suffix)] + repl
    if head.endswith("s") and not head.endswith(("ss", "us", "is")) and len(head) > 3:
        return head[:-1]
    return head


def object_grouper() -> tuple[Callable[[str], str], str]:
    """A function naming each object's group, and a note saying how objects were grouped."""
    wn = load_wordnet()
    if wn is None:
        return simple_lemma, f"objects grouped by lemma (head word, singular by rule): {WORDNET_MISSING}"

    def synset(phrase: str) -> str:
        text = phrase.strip().lower()
        found = wn.synset_name(text) or wn.synset_name(simple_lemma(text))
        return found or simple_lemma(text)

    return synset, (f"objects grouped by WordNet synset (first sense, WordNet 3.0 at {wn.root}); "
                    "names WordNet does not know are grouped by lemma")
