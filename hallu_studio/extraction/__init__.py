"""Concept extraction: response text -> ``ConceptSet`` (objects, attributes, relations, with spans).

``ParserExtractor`` is the offline default (SceneGraphParser on spaCy with repairs);
``LLMExtractor`` follows VISCON's three-step prompts or Tri-HE's triplet prompt.
"""

from .base import ConceptExtractor
from .llm import LLMExtractor
from .parser import ParserExtractor

__all__ = ["ConceptExtractor", "LLMExtractor", "ParserExtractor"]
