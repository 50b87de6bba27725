"""What a benchmark's output says of the lexical resources it measured with (``resources.lexical_resources``)."""

from __future__ import annotations

from hallu_studio.config import Settings
from hallu_studio.lexicon.wordnet import wordnet_source
from hallu_studio.resources import lexical_resources


def install_note(settings: Settings) -> str:
    """One sentence for a benchmark's output: the lexical resources it measured with, and whether they are what
    the README's ``pip install`` alone brings (the shipped WordNet; no system package, no override)."""
    listed = "; ".join(f"{name}: {what}" for name, what in lexical_resources(settings, paths=False))
    if wordnet_source().origin == "shipped" and wordnet_source().root is not None:
        return f"Measured as the README install is (`pip install`, no system package): {listed}."
    return f"**Not the README install** (WORDNET_DIR is set): {listed}."
