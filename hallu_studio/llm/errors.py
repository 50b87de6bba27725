"""The LLM errors, in a module that imports nothing heavy: the settings check before scoring raises them
without importing the ``openai`` library.

- ``LLMError``: a call failed for good (after retries), or its answer was unusable.
- ``LLMAnswerError``: the server answered, but the answer cannot be used (cut short, or unreadable).
- ``LLMConfigError``: the settings cannot work (no endpoint, a model the server does not serve). It is also
  a ``ValueError``, so the command line prints it as one line and exits with status 2.
- ``LLMUnreachableError``: the endpoint is not there, checked before any work (refused, timed out, no such
  host, not an OpenAI-compatible server): a ``LLMConfigError``, so also one line and status 2.
"""

from __future__ import annotations

from typing import Any, Sequence


class LLMError(RuntimeError):
    """An LLM call failed for good (after retries), or its answer was unusable. ``url``: the endpoint asked
    (the client sets it; None where no call was made)."""

    url: str | None = None


def llm_failure(exc: BaseException) -> str | None:
    """``exc`` as an LLM failure, naming the endpoint (None when no LLM call is behind it): what a scoring
    report prints instead of blaming the input.

    >>> error = LLMError("trihe.judge: the LLM call failed after 3 tries: Connection error.")
    >>> error.url = "http://127.0.0.1:9/v1"
    >>> llm_failure(ValueError("judging failed")) is None
    True
    >>> try:
    ...     raise ValueError("judging failed") from error
    ... except ValueError as wrapped:
    ...     llm_failure(wrapped)
    'LLM call to http://127.0.0.1:9/v1 failed: trihe.judge: the LLM call failed after 3 tries: Connection error.'
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, LLMError) and not isinstance(current, LLMConfigError):
            where = f" to {current.url}" if current.url else ""
            return f"LLM call{where} failed: {current}"
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


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


class LLMUnreachableError(LLMConfigError):
    """The endpoint cannot serve at all (``llm.endpoint.check_reachable``): no connection, no answer, or not an
    OpenAI-compatible server. ``url``: the base URL; ``problem``: what failed, in words."""

    def __init__(self, url: str, problem: str) -> None:
        super().__init__(f"the LLM endpoint {url} {problem}")
        self.url, self.problem = url, problem


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
