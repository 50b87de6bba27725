"""Object names to the groups an analysis counts: WordNet synsets when available, else lemmas.

>>> simple_lemma("the Red Cars")
'car'
>>> simple_lemma("glasses"), simple_lemma("puppies"), simple_lemma("grass")
('glasses', 'puppy', 'grass')
"""

from __future__ import annotations

from typing import Callable

from ...lexicon.forms import head_noun
from ...lexicon.wordnet import WORDNET_MISSING, load_wordnet, wordnet_source

def simple_lemma(phrase: str) -> str:
    """The head word of a noun phrase (its last word), lower-cased and singular (``lexicon.head_noun``)."""
    return head_noun(phrase) or phrase.strip().lower()


def object_grouper() -> tuple[Callable[[str], str], str]:
    """A function naming each object's group, and a note saying how objects were grouped."""
    wn = load_wordnet()
    if wn is None:
        return simple_lemma, f"objects grouped by lemma (head word, singular): {WORDNET_MISSING}"

    def synset(phrase: str) -> str:
        text = phrase.strip().lower()
        found = wn.synset_name(text) or wn.synset_name(simple_lemma(text))
        return found or simple_lemma(text)

    return synset, (f"objects grouped by WordNet synset (first sense; {wordnet_source().describe()}); "
                    "names WordNet does not know are grouped by lemma")
