"""The LLM errors, in a module that imports nothing heavy: the settings check before scoring raises them
without importing the ``openai`` library.

- ``LLMError``: a call failed for good (after retries), or its answer was unusable.
- ``LLMAnswerError``: the server answered, but the answer cannot be used (cut short, or unreadable).
- ``LLMConfigError``: the settings cannot work (no endpoint, a model the server does not serve). It is also
  a ``ValueError``, so the command line prints it as one line and exits with status 2.
"""

from __future__ import annotations

from typing import Any, Sequence


class LLMError(RuntimeError):
    """An LLM call failed for good (after retries), or its answer was unusable."""


class LLMAnswerError(LLMError):
    """The server answered, but the answer failed the caller's check or was cut short (it was not cached).

    ``truncated``: the server stopped at the length limit (finish_reason "length").
    """

    def __init__(self, message: str, answer: str, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.answer = answer
        self.truncated = truncated


class LLMConfigError(LLMError, ValueError):
    """The LLM settings cannot work: no endpoint or model where a step needs one, or a model the server does
    not list. Raised before any scoring work, never recorded as an item's failure."""


def not_configured(llm: Any, needed_by: Sequence[str] = (), settings_file: str | None = None) -> str:
    """Why ``llm`` (an ``LLMSettings``) cannot serve the steps ``needed_by``, as one line.

    >>> from hallu_studio.config import LLMSettings
    >>> not_configured(LLMSettings(), ["scoring.trihe_judge = llm"])
    'scoring.trihe_judge = llm needs an LLM, but llm.base_url and llm.model are not set: add an [llm] section with base_url and model to the settings file (or set HALLU_STUDIO_LLM_BASE_URL and HALLU_STUDIO_LLM_MODEL)'
    """
    missing = [name for name, value in (("llm.base_url", llm.base_urls), ("llm.model", llm.model)) if not value]
    verb = "are" if len(missing) > 1 else "is"
    who = f"{', '.join(needed_by)} needs an LLM, but " if needed_by else "no LLM configured: "
    where = settings_file or "the settings file"
    return (f"{who}{' and '.join(missing) or 'nothing'} {verb} not set: add an [llm] section with base_url and model "
            f"to {where} (or set HALLU_STUDIO_LLM_BASE_URL and HALLU_STUDIO_LLM_MODEL)")
