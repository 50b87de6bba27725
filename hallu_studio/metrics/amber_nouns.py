"""The nouns of a description as AMBER's evaluator reads them, and its word-similarity check: NLTK's ``word_tokenize`` and ``pos_tag`` (its
averaged perceptron tagger), the words tagged NN, NNS, NNP or NNPS, each lemmatized as NLTK's
``WordNetLemmatizer`` does (``lexicon.wordnet.WordNet.morphy_shortest``, read from WordNet 3.0's own files).

Two taggers, a setting (``scoring.amber_tagger``; the reader's name enters the metric's config key, so scores of
the two are never mixed):

- ``nltk`` (default): NLTK's averaged perceptron tagger with the English model that ships inside this package
  (``lexicon/perceptron_tagger_eng``, read here; NLTK's data path and downloader are never touched, so scores do
  not depend on what NLTK data a machine has). Sentences are split by punkt's untrained splitter (NLTK's trained
  English punkt parameters are not shipped: it differs only on English abbreviations such as "Dr.", rare in
  image descriptions), then NLTK's word tokenizer reads each sentence, as ``word_tokenize`` does. This is
  AMBER's reading: on the released responses it gives AMBER's recorded numbers (``docs/toolkit-numbers.md``).
- ``spacy``: spaCy's small English pipeline (Penn tags too, hyphenated words kept whole as NLTK keeps them), kept
  for comparison. Its tags differ on some words: CHAIR, Cover and Hal move by up to about half a point on 1,004
  descriptions.
"""

from __future__ import annotations

import functools
import gzip
import json
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

SIMILAR_ABOVE = 0.8  # AMBER's --similarity_score default
# NLTK's English tagger model (averaged_perceptron_tagger_eng) as the package ships it (see the README there).
TAGGER_DIR = Path(__file__).resolve().parent.parent / "lexicon" / "perceptron_tagger_eng"
TAGGER_PARTS = ("weights", "tagdict", "classes")  # NLTK's order (PerceptronTagger.decode_json_params)
NOUN_READERS: tuple[str, ...] = ("nltk", "spacy")


def _tagger_part(part: str) -> Any:
    with gzip.open(TAGGER_DIR / f"averaged_perceptron_tagger_eng.{part}.json.gz", "rt", encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=1)
def _nltk() -> tuple[Callable[[str], list[str]], Any]:
    """(tokenize, tagger): NLTK's word tokenizer over punkt's sentences, and its perceptron tagger loaded with the
    shipped English model."""
    try:
        from nltk.tag.perceptron import PerceptronTagger
        from nltk.tokenize import NLTKWordTokenizer
        from nltk.tokenize.punkt import PunktSentenceTokenizer
    except ImportError as exc:  # a dependency of hallu-studio: only a broken install lacks it
        raise RuntimeError("AMBER's noun reading needs NLTK (a dependency of hallu-studio): reinstall "
                           "hallu-studio, or set scoring.amber_tagger = spacy") from exc
    tagger = PerceptronTagger(load=False)
    tagger.decode_json_params([_tagger_part(part) for part in TAGGER_PARTS])
    sentences, words = PunktSentenceTokenizer(), NLTKWordTokenizer()
    return (lambda text: [w for s in sentences.tokenize(text) for w in words.tokenize(s)]), tagger


def noun_reader(tagger: str = "nltk") -> str:
    """The noun reader setting ``tagger`` names (``"nltk"`` or ``"spacy"``); any other is an error."""
    if tagger not in NOUN_READERS:
        raise ValueError(f"unknown AMBER noun tagger {tagger!r}: choose one of {', '.join(NOUN_READERS)}")
    return tagger


def _lemmatizer() -> Any:
    from ..lexicon.wordnet import WORDNET_MISSING, load_wordnet

    wn = load_wordnet()
    if wn is None:
        raise RuntimeError(f"AMBER's noun reading needs WordNet: {WORDNET_MISSING}")
    return wn


def tagged_words(texts: Sequence[str], tagger: str = "nltk") -> list[list[tuple[str, str]]]:
    """Each text's words with their Penn tags, as noun reader ``tagger`` reads them."""
    if noun_reader(tagger) == "nltk":
        tokenize, perceptron = _nltk()
        return [list(perceptron.tag(tokenize(text))) for text in texts]
    from ..extraction.spacy_pipeline import load_english

    return [[(t.text, t.tag_) for t in doc] for doc in load_english().pipe(list(texts), disable=["parser"])]


def response_nouns(texts: Sequence[str], tagger: str = "nltk") -> list[list[str]]:
    """The nouns of each text, lemmatized, in order, every occurrence (see the module docstring)."""
    wn = _lemmatizer()
    return [[wn.morphy_shortest(w, "n") for w, tag in words if tag.startswith("NN")]
            for words in tagged_words(texts, tagger)]


def word_similarity(model: str) -> Callable[[str, str], bool] | None:
    """AMBER's similarity check between two words: spaCy model ``model``'s ``nlp(a).similarity(nlp(b)) > 0.8``
    (the word vectors' cosine; 1.0 for the same word, 0.0 where a word has no vector). None for "same-word".
    A model that is not installed is an error naming it (spaCy's models are not on PyPI)."""
    if model == "same-word":
        return None
    import spacy

    try:
        nlp = spacy.load(model)
    except OSError as exc:
        raise RuntimeError(f"AMBER's similarity check needs spaCy's {model}, which is not installed here; set "
                           "scoring.amber_similarity = same-word to judge only a word and itself alike") from exc
    doc = functools.lru_cache(maxsize=None)(nlp)

    @functools.lru_cache(maxsize=None)
    def similar(a: str, b: str) -> bool:
        with warnings.catch_warnings():  # a word without a vector: similarity 0 and spaCy's warning, as in AMBER
            warnings.simplefilter("ignore", UserWarning)
            return bool(doc(a).similarity(doc(b)) > SIMILAR_ABOVE)

    return similar
