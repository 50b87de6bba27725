"""The one lexicon of the library: word forms, WordNet, attribute families, word lists, predicates.

- ``forms``: singular / plural nouns, articles in agreement, ``normalize_name`` (the one name normaliser);
- ``wordnet``: WordNet 3.0, shipped with the package (synsets, hypernyms, antonyms, lexicographer files);
  ``$WORDNET_DIR`` overrides it; ``load_wordnet()`` is None only where that folder holds none, and every caller
  then falls back to ``forms``' rules and says so; ``lexicon_key_parts()`` keeps scores made without it, or
  with other WordNet files, under keys of their own; ``wordnet_source()`` says which is in force;
- ``attributes``: colour, material, size, shape, count, state and pattern families and their conflicts;
- ``words``: framing, non-visual, counting, hedging and mass nouns;
- ``predicates``: canonical predicates, synonyms, passives, inverses, entailment;
- ``nouns``: object synonyms, hypernyms and visual / non-visual nouns.
"""

from .attributes import attribute_family, same_attribute, shares_scale
from .forms import (count_of, head_noun, indefinite_article, is_countable, normalize_name, noun_phrase, number_word,
                    plural, singular, singular_phrase)
from .predicates import Predicate, entails, inverse, is_symmetric, parse_predicate
from .wordnet import WORDNET_MISSING, lexicon_key_parts, lexicon_note, load_wordnet, wordnet_source

__all__ = ["Predicate", "WORDNET_MISSING", "attribute_family", "count_of", "entails",
           "head_noun", "indefinite_article", "inverse", "is_countable", "is_symmetric", "lexicon_key_parts",
           "lexicon_note", "load_wordnet", "normalize_name", "noun_phrase", "number_word", "parse_predicate", "plural",
           "same_attribute", "shares_scale", "singular", "singular_phrase", "wordnet_source"]
