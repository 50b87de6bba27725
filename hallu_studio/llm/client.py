"""An OpenAI-compatible chat client with a content-addressed cache and retries.

Any server speaking the OpenAI chat API works (OpenAI, vLLM, SGLang, Ollama,
llama.cpp). Every successful answer is cached in the store under
``content_key(base_url-model, namespace, prompt_version, messages, params)``, so
re-scoring costs nothing and a prompt change (a new ``prompt_version``) never
reuses stale answers. Failures and empty answers are never cached.

Transient errors (timeouts, 429, 5xx, dropped connections, malformed bodies) are
retried with exponential backoff; after the last try an ``LLMError`` says what
went wrong. Callers (metrics, extractors) let ``LLMError`` propagate: the scoring
pipeline records it in ``failures`` for that item and moves on.

>>> from hallu_studio.config import LLMSettings
>>> client = LLMClient(LLMSettings(base_url="http://127.0.0.1:8000/v1", model="m"))  # doctest: +SKIP
>>> client.complete([{"role": "user", "content": "Say hi"}], namespace="demo", prompt_version="1")  # doctest: +SKIP
'Hi!'
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import openai

from ..config import LLMSettings
from ..model import content_key
from .parsing import parse_json_tolerant

if TYPE_CHECKING:
    from ..store import Store

log = logging.getLogger(__name__)

# Errors worth another try: the server or the network may recover.
_TRANSIENT = (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
              openai.InternalServerError, openai.APIResponseValidationError)


class LLMError(RuntimeError):
    """An LLM call failed for good (after retries), or its answer was unusable."""


class LLMAnswerError(LLMError):
    """The server answered, but the answer failed the caller's check (it was not cached)."""

    def __init__(self, message: str, answer: str) -> None:
        super().__init__(message)
        self.answer = answer


@dataclass
class LLMRequest:
    """One call for :meth:`LLMClient.acomplete_many`."""

    messages: list[dict[str, Any]]
    namespace: str
    prompt_version: str
    json_schema: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    check: Callable[[str], Any] | None = None  # see LLMClient.complete_checked


def _status(exc: BaseException) -> int | None:
    return getattr(exc, "status_code", None)


class LLMClient:
    """Chat completions against ``settings.base_url`` with caching and retries.

    ``backoff_s`` is the first retry delay (doubled each try); tests make it tiny.
    ``client`` replaces the ``openai.OpenAI`` instance (for tests of odd servers).
    """

    def __init__(self, settings: LLMSettings, store: "Store | None" = None, *, backoff_s: float = 1.0,
                 client: Any | None = None) -> None:
        if not settings.configured:
            raise LLMError("no LLM configured: set llm.base_url and llm.model (or HALLU_STUDIO_LLM_BASE_URL "
                           "and HALLU_STUDIO_LLM_MODEL)")
        self.settings = settings
        self.store = store
        self.backoff_s = backoff_s
        # We retry ourselves (with our own accounting), so the library must not.
        self._client = client or openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key(),
                                               timeout=settings.timeout_s, max_retries=0)
        self._structured_output = True  # cleared when the server rejects response_format
        self._lock = threading.Lock()
        self.calls = 0  # requests actually sent (cache hits excluded); tests and progress read it

    @property
    def name(self) -> str:
        return f"{self.settings.base_url}-{self.settings.model}"

    def cache_key(self, messages: Sequence[dict[str, Any]], *, namespace: str, prompt_version: str,
                  json_schema: dict[str, Any] | None = None, **params: Any) -> str:
        full = {"temperature": self.settings.temperature, **params}
        if json_schema is not None:
            full["json_schema"] = json_schema
        return content_key(self.name, namespace, prompt_version, list(messages), full)

    # ----------------------------------------------------------------- public API
    def complete(self, messages: list[dict[str, Any]], *, namespace: str, prompt_version: str,
                 json_schema: dict[str, Any] | None = None, **params: Any) -> str:
        """The model's answer text (cached). Raises ``LLMError`` when the call fails for good."""
        return self._complete(messages, namespace, prompt_version, json_schema, params, validate=None)

    def complete_json(self, messages: list[dict[str, Any]], *, namespace: str, prompt_version: str,
                      json_schema: dict[str, Any] | None = None, **params: Any) -> Any:
        """The answer parsed as JSON (tolerantly). An unparseable answer raises ``LLMError`` and is not cached."""
        return self.complete_checked(messages, namespace=namespace, prompt_version=prompt_version,
                                     check=parse_json_tolerant, json_schema=json_schema, **params)

    def complete_checked(self, messages: list[dict[str, Any]], *, namespace: str, prompt_version: str,
                         check: Callable[[str], Any], json_schema: dict[str, Any] | None = None,
                         **params: Any) -> Any:
        """``check(answer)``; the answer is cached only when ``check`` accepts it.

        ``check`` raises ``ValueError`` for an unusable answer; the caller then gets an
        ``LLMAnswerError`` carrying the answer, and a later call asks the server again.
        """
        text = self._complete(messages, namespace, prompt_version, json_schema, params, validate=check)
        try:
            return check(text)
        except ValueError as exc:  # only a cached answer of an unchecked call can get here
            raise LLMAnswerError(f"{namespace}: the cached answer is not usable: {exc}", text) from exc

    async def acomplete_many(self, requests: Sequence[LLMRequest], *,
                             as_json: bool = False) -> list[Any | LLMError]:
        """Run many requests, at most ``settings.concurrency`` at a time.

        Results come back in request order; a failed request yields its ``LLMError``
        instead of raising, so one bad item never sinks the batch.
        """
        limit = asyncio.Semaphore(max(1, int(self.settings.concurrency)))

        async def one(req: LLMRequest) -> Any | LLMError:
            async with limit:
                # The sync path (cache, retries, fallback) runs in a worker thread.
                return await asyncio.to_thread(self._one, req, as_json)

        return list(await asyncio.gather(*(one(r) for r in requests)))

    def complete_many(self, requests: Sequence[LLMRequest], *, as_json: bool = False) -> list[Any | LLMError]:
        """The synchronous twin of :meth:`acomplete_many`: a thread pool of ``concurrency`` workers.

        Threads rather than ``asyncio.run`` so that it also works when the caller already
        runs an event loop (the Gradio app, notebooks).
        """
        if len(requests) <= 1:
            return [self._one(r, as_json) for r in requests]
        with ThreadPoolExecutor(max_workers=max(1, int(self.settings.concurrency))) as pool:
            return list(pool.map(lambda r: self._one(r, as_json), requests))

    def _one(self, req: LLMRequest, as_json: bool) -> Any | LLMError:
        """One request of a batch: its result, or its ``LLMError`` returned rather than raised."""
        check = req.check or (parse_json_tolerant if as_json else None)
        try:
            if check is not None:
                return self.complete_checked(req.messages, namespace=req.namespace,
                                             prompt_version=req.prompt_version, check=check,
                                             json_schema=req.json_schema, **req.params)
            return self.complete(req.messages, namespace=req.namespace, prompt_version=req.prompt_version,
                                 json_schema=req.json_schema, **req.params)
        except LLMError as exc:
            return exc

    # ----------------------------------------------------------------- internals
    def _complete(self, messages: list[dict[str, Any]], namespace: str, prompt_version: str,
                  json_schema: dict[str, Any] | None, params: dict[str, Any],
                  validate: Callable[[str], Any] | None) -> str:
        if not messages:
            raise LLMError(f"{namespace}: no messages to send")
        key = self.cache_key(messages, namespace=namespace, prompt_version=prompt_version,
                             json_schema=json_schema, **params)
        if self.store is not None:
            cached = self.store.cache_get(key)
            if isinstance(cached, str) and cached.strip():
                return cached
        text = self._call_with_retries(messages, namespace, json_schema, params)
        if validate is not None:
            try:
                validate(text)
            except ValueError as exc:
                raise LLMAnswerError(f"{namespace}: the model's answer is not usable: {exc}", text) from exc
        if self.store is not None and not self.store.read_only:
            self.store.cache_put(key, namespace, text)
        return text

    def _call_with_retries(self, messages: list[dict[str, Any]], namespace: str,
                           json_schema: dict[str, Any] | None, params: dict[str, Any]) -> str:
        attempts = max(1, int(self.settings.max_retries) + 1)
        last: BaseException | None = None
        for attempt in range(attempts):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                return self._call_once(messages, namespace, json_schema, params)
            except _TRANSIENT as exc:
                last = exc
                log.warning("%s: LLM call failed (try %d of %d): %s", namespace, attempt + 1, attempts, exc)
            except openai.APIStatusError as exc:
                if (_status(exc) or 0) >= 500:
                    last = exc
                    continue
                raise LLMError(f"{namespace}: the LLM server refused the request "
                               f"(HTTP {_status(exc)}): {exc}") from exc
            except ValueError as exc:  # a body that is not the chat-completion JSON
                last = exc
        raise LLMError(f"{namespace}: the LLM call failed after {attempts} tries: "
                       f"{type(last).__name__}: {last}") from last

    def _call_once(self, messages: list[dict[str, Any]], namespace: str, json_schema: dict[str, Any] | None,
                   params: dict[str, Any]) -> str:
        kwargs: dict[str, Any] = {"model": self.settings.model, "messages": messages,
                                  "temperature": self.settings.temperature, **params}
        if json_schema is not None and self._structured_output:
            kwargs["response_format"] = {"type": "json_schema",
                                         "json_schema": {"name": namespace.replace(".", "_")[:64] or "answer",
                                                         "schema": json_schema}}
        with self._lock:
            self.calls += 1
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except openai.BadRequestError as exc:
            if "response_format" not in kwargs:
                raise
            # The server does not do structured output: ask for plain text and parse tolerantly.
            log.info("%s: server rejected response_format (%s); falling back to plain text", namespace, exc)
            self._structured_output = False
            kwargs.pop("response_format")
            with self._lock:
                self.calls += 1
            resp = self._client.chat.completions.create(**kwargs)
        text = _answer_text(resp)
        if not text.strip():
            raise LLMError(f"{namespace}: the model returned an empty answer")
        return text


def _answer_text(resp: Any) -> str:
    """The first choice's text; ``ValueError`` for a body that is not a chat completion."""
    choices = getattr(resp, "choices", None)
    if not choices:
        raise ValueError(f"the server's answer has no choices: {str(resp)[:200]!r}")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if content is None:
        return ""
    if not isinstance(content, str):
        raise ValueError(f"the answer content is not text: {type(content).__name__}")
    return content
