"""The nouns of a description as AMBER's evaluator reads them, and its word-similarity check: NLTK's ``word_tokenize`` and ``pos_tag`` (its
averaged perceptron tagger), the words tagged NN, NNS, NNP or NNPS, each lemmatized as NLTK's
``WordNetLemmatizer`` does (``lexicon.wordnet.WordNet.morphy_shortest``, read from WordNet 3.0's own files).

Two taggers, chosen by what is installed (``noun_reader()`` names the one in use; it enters the metric's config
key, so scores of the two are never mixed):

- ``nltk``: NLTK with its tagger data (``python -m nltk.downloader averaged_perceptron_tagger_eng``; the data is
  not on PyPI). Sentences are split by NLTK's punkt model when ``punkt_tab`` is installed too, else by punkt's
  untrained splitter (it misses only English abbreviations such as "Dr.", rare in image descriptions). This is
  AMBER's reading: on the released responses it gives AMBER's recorded numbers.
- ``spacy``: spaCy's small English pipeline (Penn tags too, hyphenated words kept whole as NLTK keeps them),
  when NLTK's tagger data is missing. Its tags differ on some words: CHAIR and Cover move by up to about half a
  point on 1,004 descriptions (``docs/toolkit-numbers.md``).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Sequence

SIMILAR_ABOVE = 0.8  # AMBER's --similarity_score default


@functools.lru_cache(maxsize=1)
def _nltk() -> tuple[Any, Any] | None:
    """(tokenize, tagger) from NLTK, or None when NLTK or its tagger data is not installed."""
    try:
        from nltk import word_tokenize
        from nltk.tag.perceptron import PerceptronTagger
        from nltk.tokenize import NLTKWordTokenizer
        from nltk.tokenize.punkt import PunktSentenceTokenizer
    except ImportError:
        return None
    try:
        tagger = PerceptronTagger()
    except (LookupError, OSError, ValueError):
        return None
    try:
        word_tokenize("A dog.")
        return word_tokenize, tagger
    except LookupError:  # no punkt model: punkt's untrained splitter, then NLTK's word tokenizer per sentence
        sentences, words = PunktSentenceTokenizer(), NLTKWordTokenizer()
        return (lambda text: [w for s in sentences.tokenize(text) for w in words.tokenize(s)]), tagger


def noun_reader() -> str:
    """Which tagger reads the nouns here: ``"nltk"`` or ``"spacy"``."""
    return "nltk" if _nltk() is not None else "spacy"


def _lemmatizer() -> Any:
    from ..lexicon.wordnet import WORDNET_MISSING, load_wordnet

    wn = load_wordnet()
    if wn is None:
        raise RuntimeError(f"AMBER's noun reading needs WordNet: {WORDNET_MISSING}")
    return wn


def tagged_words(texts: Sequence[str]) -> list[list[tuple[str, str]]]:
    """Each text's words with their Penn tags, as the tagger in use reads them."""
    found = _nltk()
    if found is not None:
        tokenize, tagger = found
        return [list(tagger.tag(tokenize(text))) for text in texts]
    from ..extraction.spacy_pipeline import load_english

    return [[(t.text, t.tag_) for t in doc] for doc in load_english().pipe(list(texts), disable=["parser"])]


def response_nouns(texts: Sequence[str]) -> list[list[str]]:
    """The nouns of each text, lemmatized, in order, every occurrence (see the module docstring)."""
    wn = _lemmatizer()
    return [[wn.morphy_shortest(w, "n") for w, tag in words if tag.startswith("NN")] for words in tagged_words(texts)]


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
