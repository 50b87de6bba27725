"""An OpenAI-compatible chat client with a content-addressed cache, structured output and retries.

Any server speaking the OpenAI chat API works (OpenAI, vLLM, SGLang, Ollama,
llama.cpp), one or several replicas of it (``LLMSettings.base_url`` as a list). Every
successful answer is cached (``caching.ScoringCache``: a store's, a cache file's or one run's) under
``content_key(model, namespace, prompt_version, messages, params)``, so re-scoring costs
nothing, a prompt change (a new ``prompt_version``) never reuses stale answers, and the
replicas of one model share the cache. Failures, empty and unusable answers are never cached.
An answer the server cut short (``finish_reason`` "length": it reached the call's ``max_tokens``,
each call kind's cap in ``dispatch``, or the context) is unusable: ``LLMAnswerError``, counted as
a parse failure of its kind, not cached, even when what came back happens to parse. The client
remembers the unusable answers it got: asked again, it raises the same error without a call (a
scoring pass builds its clients, so it never waits twice for the same cut answer; the next pass,
with new clients, asks the server again).

Structured output: a call with a ``json_schema`` sends ``response_format`` (a strict JSON
schema; after a rejection, llama-cpp-python's ``{"type": "json_object", "schema": ...}``) and
parses the answer as JSON strictly. A server that rejects both forms of ``response_format``
(an HTTP error naming it: 400, or 422 / 500 from some llama.cpp builds) is asked in plain text from
then on, with the caller's lenient parser. What a server takes is learnt once per endpoint for the
whole process (``endpoint``), as is the check of the configured model against the models the server
lists (at construction: an unknown model is an ``LLMConfigError``). Unusable answers are counted per
call kind (the namespace) in the dispatcher's ``CallStats`` and shown in the score summary.

Sending, retries, adaptive concurrency and replica health live in ``dispatch``. After the
last try an ``LLMError`` says what went wrong. Callers (metrics, extractors) let ``LLMError``
propagate: the scoring pipeline records it in ``failures`` for that item and moves on.

>>> from hallu_studio.config import LLMSettings
>>> client = LLMClient(LLMSettings(base_url="http://127.0.0.1:8000/v1", model="m"))  # doctest: +SKIP
>>> client.complete([{"role": "user", "content": "Say hi"}], namespace="demo", prompt_version="1")  # doctest: +SKIP
'Hi!'
"""

from __future__ import annotations

import asyncio
import json
import threading
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ..caching import cached_value, keep
from ..config import LLMSettings
from ..model import content_key
from . import endpoint
from .dispatch import Dispatcher, GaveUp, Overloaded, ReplicaDown, Retryable, request_timeout, shared_dispatcher
from .errors import LLMAnswerError, LLMConfigError, LLMError, not_configured
from .parsing import parse_json_tolerant

if TYPE_CHECKING:
    from ..caching import ScoringCache


# Words of a 400 that says the server does not take response_format.
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "structured output")


def response_format(style: str, name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` asking for JSON that follows ``schema``, in one server family's form."""
    if style == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    return {"type": "json_object", "schema": schema}


@dataclass
class LLMRequest:
    """One call for :meth:`LLMClient.complete_many`.

    With a ``json_schema``, ``check`` reads the parsed JSON value and ``lenient`` the raw text
    of a server without structured output (see :meth:`LLMClient.complete_checked`).
    """

    messages: list[dict[str, Any]]
    namespace: str
    prompt_version: str
    json_schema: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    check: Callable[[Any], Any] | None = None
    lenient: Callable[[str], Any] | None = None


def _status(exc: BaseException) -> int | None:
    return getattr(exc, "status_code", None)


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        return float(headers.get("retry-after")) if headers.get("retry-after") else None
    except ValueError:
        return None


def strict_json(text: str) -> Any:
    """The answer of a structured-output call: exactly one JSON value (``ValueError`` otherwise)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the answer is not valid JSON ({exc.msg}): {text.strip()[:160]!r}") from exc


class LLMClient:
    """Chat completions against ``settings.base_url`` (one or more replicas) with caching and retries.

    ``backoff_s`` is the first retry delay (doubled each try); tests make it tiny.
    ``client`` replaces the ``openai.OpenAI`` instances (for tests of odd servers).
    """

    def __init__(self, settings: LLMSettings, cache: "ScoringCache | None" = None, *, backoff_s: float = 1.0,
                 client: Any | None = None) -> None:
        if not settings.configured:
            raise LLMConfigError(not_configured(settings))
        self.settings = settings
        self.cache = cache
        self.backoff_s = backoff_s
        self.dispatcher: Dispatcher = shared_dispatcher(settings.base_urls, concurrency=int(settings.concurrency),
                                                        max_retries=int(settings.max_retries), backoff_s=backoff_s)
        import openai  # on first use: importing the library takes a noticeable part of a second

        # We retry ourselves (with our own accounting), so the library must not.
        self._clients = {url: client or openai.OpenAI(base_url=url, api_key=settings.api_key(),
                                                      timeout=settings.timeout_s, max_retries=0)
                         for url in settings.base_urls}
        # A model the server does not list is refused here, before any work (once per endpoint).
        endpoint.check_served(settings)
        self._lock = threading.Lock()
        # Cache keys of the answers this client found unusable (cut, unreadable): asked once per client, so a
        # scoring pass (which builds its clients) never asks a failed question twice, and the next pass asks again.
        self._unusable: dict[str, LLMAnswerError] = {}
        self.calls = 0  # requests this client sent (cache hits excluded); tests and progress read it

    @property
    def format_style(self) -> str | None:
        """How this client's endpoint takes a JSON schema now (learnt once per endpoint, ``endpoint``):
        ``json_schema``, ``json_object``, or None (plain text)."""
        return endpoint.format_style(self.settings.base_urls)

    @property
    def name(self) -> str:
        """The model: where it is served (one replica or several) changes no score and no cache key."""
        return str(self.settings.model)

    def cache_key(self, messages: Sequence[dict[str, Any]], *, namespace: str, prompt_version: str,
                  json_schema: dict[str, Any] | None = None, structured: bool = True, **params: Any) -> str:
        full = {"temperature": self.settings.temperature, **params}
        if json_schema is not None:
            full["json_schema"] = json_schema
            if not structured:  # a plain-text answer to the same prompt is another answer
                full["structured"] = False
        return content_key(self.name, namespace, prompt_version, list(messages), full)

    # ----------------------------------------------------------------- public API
    def complete(self, messages: list[dict[str, Any]], *, namespace: str, prompt_version: str,
                 json_schema: dict[str, Any] | None = None, **params: Any) -> str:
        """The model's answer text (cached). Raises ``LLMError`` when the call fails for good."""
        return self._complete(messages, namespace, prompt_version, json_schema, params, None, None)[0]

    def complete_json(self, messages: list[dict[str, Any]], *, namespace: str, prompt_version: str,
                      json_schema: dict[str, Any] | None = None, **params: Any) -> Any:
        """The answer parsed as JSON: strictly under a schema, else tolerantly. Unusable: ``LLMError``, not cached."""
        return self.complete_checked(messages, namespace=namespace, prompt_version=prompt_version,
                                     check=(lambda v: v) if json_schema is not None else parse_json_tolerant,
                                     json_schema=json_schema, **params)

    def complete_checked(self, messages: list[dict[str, Any]], *, namespace: str, prompt_version: str,
                         check: Callable[[Any], Any], json_schema: dict[str, Any] | None = None,
                         lenient: Callable[[str], Any] | None = None, **params: Any) -> Any:
        """The answer read by ``check``; it is cached only when readable.

        Without a ``json_schema``, ``check(text)``. With one, the server is asked for JSON
        following it and ``check(json_value)`` reads the strictly parsed answer; a server that
        cannot do structured output answers in text, read by ``lenient(text)`` (default:
        ``check(parse_json_tolerant(text))``). A reader raises ``ValueError`` for an unusable
        answer; the caller then gets an ``LLMAnswerError`` carrying the answer, the call kind's
        parse-failure count grows, and another client (the next scoring pass) asks the server again.
        """
        return self._complete(messages, namespace, prompt_version, json_schema, params, check, lenient)[1]

    async def acomplete_many(self, requests: Sequence[LLMRequest], *,
                             as_json: bool = False) -> list[Any | LLMError]:
        """:meth:`complete_many` for callers inside an event loop (runs in a worker thread)."""
        return await asyncio.to_thread(self.complete_many, requests, as_json=as_json)

    def complete_many(self, requests: Sequence[LLMRequest], *, as_json: bool = False) -> list[Any | LLMError]:
        """Run many requests side by side (as many at once as the dispatcher allows).

        Results come back in request order; a failed request yields its ``LLMError``
        instead of raising, so one bad item never sinks the batch.
        """
        out = self.dispatcher.map([lambda r=r: self._one(r, as_json) for r in requests])
        for value in out:
            if isinstance(value, BaseException) and not isinstance(value, LLMError):
                raise value
        return out

    def _one(self, req: LLMRequest, as_json: bool) -> Any | LLMError:
        """One request of a batch: its result, or its ``LLMError`` returned rather than raised."""
        check = req.check
        if check is None and as_json:
            check = (lambda v: v) if req.json_schema is not None else parse_json_tolerant
        try:
            if check is not None:
                return self.complete_checked(req.messages, namespace=req.namespace,
                                             prompt_version=req.prompt_version, check=check,
                                             json_schema=req.json_schema, lenient=req.lenient, **req.params)
            return self.complete(req.messages, namespace=req.namespace, prompt_version=req.prompt_version,
                                 json_schema=req.json_schema, **req.params)
        except LLMError as exc:
            return exc

    # ----------------------------------------------------------------- internals
    def _reader(self, json_schema: dict[str, Any] | None, structured: bool, check: Callable[[Any], Any] | None,
                lenient: Callable[[str], Any] | None) -> Callable[[str], Any] | None:
        if check is None or json_schema is None:
            return check
        if structured:
            return lambda text: check(strict_json(text))
        return lenient or (lambda text: check(parse_json_tolerant(text)))

    def _complete(self, messages: list[dict[str, Any]], namespace: str, prompt_version: str,
                  json_schema: dict[str, Any] | None, params: dict[str, Any],
                  check: Callable[[Any], Any] | None, lenient: Callable[[str], Any] | None) -> tuple[str, Any]:
        if not messages:
            raise LLMError(f"{namespace}: no messages to send")
        structured = self.format_style is not None
        key = self.cache_key(messages, namespace=namespace, prompt_version=prompt_version,
                             json_schema=json_schema, structured=structured, **params)
        text: str | None = None
        cached = cached_value(self.cache, key)
        if isinstance(cached, str) and cached.strip():
            text = cached
        fresh = text is None
        asked = key
        if text is None:
            if asked in self._unusable:  # asked by this client already: the same (temperature 0) answer again
                known = self._unusable[asked]
                raise LLMAnswerError(str(known), known.answer, truncated=known.truncated)
            text, structured, cut = self._send(messages, namespace, json_schema, params)
            key = self.cache_key(messages, namespace=namespace, prompt_version=prompt_version,
                                 json_schema=json_schema, structured=structured, **params)
            if cut:  # an unfinished answer: a model looping until its cap, or one that needed more room
                self.dispatcher.stats.parse_failed(namespace)
                limit = f"max_tokens={params['max_tokens']}" if params.get("max_tokens") else "the length limit"
                raise self._remember(asked, LLMAnswerError(
                    f"{namespace}: the model's answer is not usable: it was cut at {limit} (finish_reason 'length'): "
                    f"...{text.strip()[-120:]!r}", text, truncated=True))
        read = self._reader(json_schema, structured, check, lenient)
        value: Any = text
        if read is not None:
            try:
                value = read(text)
            except ValueError as exc:
                if not fresh:  # only a cached answer of an unchecked call can get here
                    raise LLMAnswerError(f"{namespace}: the cached answer is not usable: {exc}", text) from exc
                self.dispatcher.stats.parse_failed(namespace)
                raise self._remember(asked, LLMAnswerError(f"{namespace}: the model's answer is not usable: {exc}",
                                                           text)) from exc
        if fresh:
            self.dispatcher.stats.answered(namespace)
            keep(self.cache, key, namespace, text)
        return text, value

    def _remember(self, key: str, error: LLMAnswerError) -> LLMAnswerError:
        self._unusable[key] = error
        return error

    def _send(self, messages: list[dict[str, Any]], namespace: str, json_schema: dict[str, Any] | None,
              params: dict[str, Any]) -> tuple[str, bool, bool]:
        """The answer text, whether it was asked for as structured output, and whether it was cut short."""
        prompt_chars = sum(len(str(m.get("content", ""))) for m in messages)
        output_tokens = int(params.get("max_tokens") or self.settings.expected_output_tokens)
        timeout = request_timeout(self.settings.timeout_s, self.settings.timeout_per_token_s, prompt_chars,
                                  output_tokens)
        try:
            return self.dispatcher.call(lambda url, t: self._call_once(url, t, messages, namespace, json_schema,
                                                                       params),
                                        timeout_s=timeout, what=f"{namespace}: the LLM call")
        except GaveUp as exc:
            raise self._at(LLMError(str(exc))) from exc.last
        except LLMError as exc:
            raise self._at(exc)

    def _at(self, error: LLMError) -> LLMError:
        """``error`` naming this client's endpoint (a report names it beside the failure)."""
        if error.url is None:
            error.url = ", ".join(self.settings.base_urls)
        return error

    def _call_once(self, url: str, timeout: float, messages: list[dict[str, Any]], namespace: str,
                   json_schema: dict[str, Any] | None, params: dict[str, Any]) -> tuple[str, bool, bool]:
        import openai

        kwargs: dict[str, Any] = {"model": self.settings.model, "messages": messages,
                                  "temperature": self.settings.temperature, "timeout": timeout, **params}
        name = namespace.replace(".", "_").replace("-", "_")[:64] or "answer"
        facts = endpoint.facts(url)
        # Until the endpoint has taken one form of structured output, its calls asking for one go one at a
        # time, so that a server refusing json_schema is asked that way once, not by every call of a batch.
        probing = json_schema is not None and not facts.settled
        with self._lock:
            self.calls += 1
        with _classified(namespace), (facts.probe if probing else nullcontext()):
            style = facts.format_style if json_schema is not None else None
            while True:
                if style is not None:
                    kwargs["response_format"] = response_format(style, name, json_schema or {})
                try:
                    resp = self._clients[url].chat.completions.create(**kwargs)
                    facts.settled = facts.settled or json_schema is not None
                    break
                except openai.APIStatusError as exc:
                    # 400 from most servers; 422 (request validation) or even 500 from some llama.cpp builds.
                    if style is None or not any(w in str(exc).lower() for w in _FORMAT_WORDS):
                        raise
                    style = endpoint.format_rejected(url, style, namespace, exc)
                    kwargs.pop("response_format")
                    with self._lock:
                        self.calls += 1
        try:
            text = _answer_text(resp)
        except ValueError as exc:  # a body that is not the chat-completion JSON
            raise Retryable(f"ValueError: {exc}") from exc
        if not text.strip():
            raise LLMError(f"{namespace}: the model returned an empty answer")
        return text, style is not None, _finish_reason(resp) == "length"

    def embed(self, texts: Sequence[str], *, batch_size: int = 64) -> list[list[float]]:
        """Embeddings of ``texts`` from the server's ``/v1/embeddings``, ``batch_size`` texts per call.

        Not cached here: ``hallu_studio.embedding.Embedder`` caches each phrase's vector.
        """
        out: list[list[float]] = []
        for start in range(0, len(texts), max(1, batch_size)):
            batch = list(texts[start:start + max(1, batch_size)])
            timeout = request_timeout(self.settings.timeout_s, self.settings.timeout_per_token_s,
                                      sum(len(t) for t in batch), 0)

            def attempt(url: str, t: float, batch: list[str] = batch) -> list[list[float]]:
                with self._lock:
                    self.calls += 1
                with _classified("embeddings"):
                    resp = self._clients[url].embeddings.create(model=str(self.settings.model), input=batch,
                                                                timeout=t)
                rows = sorted(getattr(resp, "data", None) or [], key=lambda d: d.index)
                if len(rows) != len(batch):
                    raise Retryable(f"the server sent {len(rows)} embeddings for {len(batch)} texts")
                return [list(map(float, d.embedding)) for d in rows]

            try:
                out += self.dispatcher.call(attempt, timeout_s=timeout, what="embeddings: the call")
            except GaveUp as exc:
                raise self._at(LLMError(str(exc))) from exc.last
        return out


@contextmanager
def _classified(namespace: str) -> Iterator[None]:
    """The OpenAI library's errors as the dispatcher's retry classes (or a final ``LLMError``)."""
    import openai

    try:
        yield
    except openai.APITimeoutError as exc:
        raise Overloaded(f"APITimeoutError: {exc}", timed_out=True) from exc
    except openai.RateLimitError as exc:
        raise Overloaded(f"RateLimitError: {exc}", retry_after=_retry_after(exc)) from exc
    except openai.APIConnectionError as exc:
        raise ReplicaDown(f"APIConnectionError: {exc}") from exc
    except openai.APIResponseValidationError as exc:
        raise Retryable(f"APIResponseValidationError: {exc}") from exc
    except openai.APIStatusError as exc:
        if (_status(exc) or 0) >= 500:
            raise ReplicaDown(f"{type(exc).__name__}: {exc}") from exc
        raise LLMError(f"{namespace}: the LLM server refused the request (HTTP {_status(exc)}): {exc}") from exc
    except ValueError as exc:  # the library could not decode the body
        raise Retryable(f"malformed response body: {exc}") from exc


def _finish_reason(resp: Any) -> str | None:
    """Why the server stopped the first choice ("stop", "length", ...), where it says."""
    reason = getattr(resp.choices[0], "finish_reason", None)
    return str(reason) if reason is not None else None


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
