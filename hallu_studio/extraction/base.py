"""What every concept extractor offers: a name, its config and a batch ``extract``."""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from ..model import ConceptSet


class ConceptExtractor(Protocol):
    """Turns response texts into concept sets (objects, attributes, relations, with spans)."""

    name: str

    def config(self) -> dict[str, Any]:
        """The settings that shape the extracted concepts (part of a score's config key)."""

    def extract(self, texts: Sequence[str]) -> list[ConceptSet]:
        """One concept set per text, in order."""
