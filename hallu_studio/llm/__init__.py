"""LLM access: an OpenAI-compatible chat client with a content-addressed cache, structured output and
retries (``client``), the dispatcher every server call goes through (``dispatch``), what is learnt once
per endpoint (``endpoint``) and the errors (``errors``).

The client's names are imported on first use: ``dispatch`` (used by pipelines and settings) must not
pay for importing the client and what it imports; the client itself imports the ``openai`` library
(seconds on a busy machine) only when it is built or calls a server.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the names are, for type checkers
    from .client import LLMClient, LLMRequest, strict_json
    from .errors import LLMAnswerError, LLMConfigError, LLMError, LLMUnreachableError
    from .parsing import parse_json_tolerant

_WHERE = {"LLMAnswerError": "errors", "LLMClient": "client", "LLMConfigError": "errors", "LLMError": "errors",
          "LLMUnreachableError": "errors", "LLMRequest": "client", "strict_json": "client", "parse_json_tolerant": "parsing"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_WHERE[name]}", __name__), name)
