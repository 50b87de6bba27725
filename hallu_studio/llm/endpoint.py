"""What this process has learnt about each LLM endpoint, keyed by its base URL and shared by every client.

Two things are learnt once per endpoint, whichever client object (extractor, judge, reviser, matcher)
meets the server first:

- **How it takes structured output.** OpenAI's ``{"type": "json_schema", ...}`` first; after a
  rejection (an HTTP 400, 422 or 500 naming ``response_format``), llama-cpp-python's
  ``{"type": "json_object", "schema": ...}``; after a rejection of that too, plain text, read leniently
  (logged once per endpoint). Every later call to that endpoint starts from what was learnt.
- **Which models it serves.** ``GET <base_url>/models`` is asked once; a configured model the list
  does not hold is refused (``LLMConfigError``, one line naming the models the server lists). A server
  that answers that route with an OpenAI-style error (``{"error": ...}``), a server error or an empty
  list is not checked (llama.cpp and Ollama list their models; a proxy may not). Ollama's ``name`` for
  ``name:latest`` is accepted, as Ollama itself accepts it.
- **Whether it is there at all.** The same request says so: refused, timed out, no such host, or an
  answer that is not the OpenAI API's (a web page, a 404 of another server: often a base URL without
  its ``/v1``). ``check_reachable`` turns that into one line before any work (``LLMUnreachableError``);
  a client built for a server that is down meanwhile is not refused (its calls retry and say so).

>>> facts("http://127.0.0.1:9/v1").format_style
'json_schema'
>>> model_listed("qwen2.5:7b", ("qwen2.5:7b", "llama3:latest")), model_listed("llama3", ("llama3:latest",))
(True, True)
>>> model_listed("model", ("model.gguf",))
False
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from ..names import closest_name
from .errors import LLMConfigError, LLMUnreachableError

if TYPE_CHECKING:
    from ..config import LLMSettings, Settings

log = logging.getLogger(__name__)

FORMAT_STYLES = ("json_schema", "json_object")
MODELS_TIMEOUT_S = 10.0  # the model list is small: a server that takes longer is not checked
_LISTED_AT_MOST = 20  # models named in the error message


@dataclass
class EndpointFacts:
    """What is known of one base URL. ``format_style``: how to ask for JSON (None: plain text);
    ``settled``: the endpoint answered a call in that form (until then the client sends such calls one
    at a time, holding ``probe``); ``models``: what ``GET /models`` listed (None: not asked yet, or the
    server does not list)."""

    url: str
    format_style: str | None = FORMAT_STYLES[0]
    settled: bool = False
    probe: threading.Lock = field(default_factory=threading.Lock, repr=False)
    models: tuple[str, ...] | None = None
    models_asked: bool = False
    problem: str | None = None  # why the last GET /models showed no OpenAI-compatible server (asked again)


_FACTS: dict[str, EndpointFacts] = {}
_LOCK = threading.Lock()


def facts(url: str) -> EndpointFacts:
    """The process's facts about ``url`` (created on first use)."""
    key = url.rstrip("/")
    with _LOCK:
        if key not in _FACTS:
            _FACTS[key] = EndpointFacts(key)
        return _FACTS[key]


def forget(url: str | None = None) -> None:
    """Forget what was learnt about ``url`` (every endpoint when None): a server restarted with other
    software or models behind the same URL (and tests, whose servers reuse ports)."""
    with _LOCK:
        if url is None:
            _FACTS.clear()
        else:
            _FACTS.pop(url.rstrip("/"), None)


def format_style(urls: Sequence[str]) -> str | None:
    """How a call to these replicas asks for JSON: the first one's learnt style (replicas of one model
    run the same server software; each call still uses its own replica's style, ``facts(url)``)."""
    return facts(urls[0]).format_style if urls else FORMAT_STYLES[0]


def format_rejected(url: str, rejected: str, what: str, error: BaseException) -> str | None:
    """``url`` rejected the ``rejected`` form: the next form to ask it with (None: plain text), remembered
    for every later call to it. Falling back to plain text is logged once per endpoint."""
    following = FORMAT_STYLES[FORMAT_STYLES.index(rejected) + 1:]
    style = following[0] if following else None
    endpoint = facts(url)
    with _LOCK:
        if endpoint.format_style == rejected:
            endpoint.format_style = style
            if style is None:
                log.warning("%s: the LLM server at %s rejected response_format (%s); asking it in plain text and "
                            "parsing leniently from now on", what, url, error)
        return endpoint.format_style


def model_listed(model: str, listed: Sequence[str]) -> bool:
    """Whether ``model`` is among the ``listed`` ids (Ollama serves ``name`` as ``name:latest``)."""
    return model in listed or f"{model}:latest" in listed


def listed_models(url: str, api_key: str, timeout_s: float = MODELS_TIMEOUT_S) -> tuple[str, ...] | None:
    """The model ids ``GET <url>/models`` lists, asked once per endpoint; None when the server does not
    list them (an OpenAI-style error, a server error, an empty list) or is not there (``facts(url).problem``
    says why; asked again by the next caller)."""
    endpoint = facts(url)
    if endpoint.models_asked:
        return endpoint.models
    import httpx

    try:
        resp = httpx.get(f"{endpoint.url}/models", headers={"Authorization": f"Bearer {api_key}"},
                         timeout=timeout_s)
    except httpx.HTTPError as exc:
        log.debug("GET %s/models: %r", endpoint.url, exc)
        with _LOCK:
            endpoint.problem = _connection_problem(exc, timeout_s)
            # A server that does not answer is not waited for again by this process; one that refused is asked again.
            endpoint.models, endpoint.models_asked = None, isinstance(exc, httpx.TimeoutException)
        return None
    ids, problem = _read_model_list(resp, f"GET {endpoint.url}/models")
    with _LOCK:
        endpoint.problem = problem
        endpoint.models, endpoint.models_asked = ids, problem is None
    return ids


def _connection_problem(exc: BaseException, timeout_s: float) -> str:
    """What a failed request says about the server, in words."""
    import httpx

    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        return f"did not accept a connection within {timeout_s:g} s (a firewall, or the wrong host?)"
    if isinstance(exc, httpx.TimeoutException):
        return f"accepted the connection but did not answer GET /models within {timeout_s:g} s"
    lowered = text.lower()
    if isinstance(exc, httpx.ConnectError) and "refused" in lowered:
        return "refused the connection: nothing listens there (is the server started, on that port?)"
    if isinstance(exc, httpx.ConnectError) and any(w in lowered for w in (
            "name or service not known", "nodename nor servname", "name resolution", "getaddrinfo",
            "no address associated")):
        return f"has a host name that does not resolve (DNS: {text})"
    if isinstance(exc, httpx.UnsupportedProtocol):
        return f"is not an http:// or https:// URL ({text})"
    return f"could not be reached ({type(exc).__name__}: {text})"


def _read_model_list(resp: Any, what: str) -> tuple[tuple[str, ...] | None, str | None]:
    """``(ids or None, problem or None)`` from the answer to ``GET <url>/models``.

    An OpenAI-compatible server answers JSON: the list (200), or an error object (``{"error": ...}``, a
    server that does not list its models). Anything else (a web page, another server's 404 such as
    FastAPI's ``{"detail": "Not Found"}``) means the URL does not lead to the API.
    """
    status = resp.status_code
    if status in (401, 403):
        return None, (f"refused the API key (HTTP {status} at {what}): set the key in the environment variable "
                      "that [llm] api_key_env names")
    if status >= 500:
        log.debug("%s: HTTP %d (models not checked)", what, status)
        return None, None
    try:
        body: Any = resp.json()
    except ValueError:
        body = None
    if status == 200 and isinstance(body, dict) and isinstance(body.get("data"), list):
        ids = tuple(str(m["id"]) for m in body["data"] if isinstance(m, dict) and m.get("id"))
        return ids or None, None
    if status != 200 and isinstance(body, dict) and "error" in body:
        return None, None  # the API, without a model list
    kind = (resp.headers.get("content-type") or "no content type").split(";")[0]
    shown = " ".join(resp.text.split())[:60]
    return None, (f"is not an OpenAI-compatible server: {what} answered HTTP {status} ({kind}: {shown!r}), not "
                  "the API's model list (does the base URL end in /v1?)")


def check_reachable(urls: Sequence[str], api_key: str, timeout_s: float = MODELS_TIMEOUT_S) -> None:
    """Refuse, before any work, an endpoint that is not there: ``LLMUnreachableError`` naming the URL and
    what failed (refused, timed out, no such host, not an OpenAI-compatible server). One ``GET /models``
    per endpoint, which ``check_model`` then reads."""
    for url in urls:
        listed_models(url, api_key, timeout_s)
        problem = facts(url).problem
        if problem is not None:
            raise LLMUnreachableError(facts(url).url, problem)


def check_model(urls: Sequence[str], model: str, api_key: str, timeout_s: float = MODELS_TIMEOUT_S) -> None:
    """Refuse ``model`` where an endpoint lists its models and ``model`` is not among them (once per endpoint).

    Raises ``LLMConfigError``: ``llm.model 'qwen' is not served at http://h/v1 (did you mean 'qwen2'?);
    GET http://h/v1/models lists: qwen2, ...; set [llm] model (or HALLU_STUDIO_LLM_MODEL) to one of them``.
    """
    for url in urls:
        listed = listed_models(url, api_key, timeout_s)
        if listed and not model_listed(model, listed):
            where = facts(url).url
            guess = closest_name(model, listed)
            hint = f" (did you mean {guess!r}?)" if guess else ""
            shown = ", ".join(listed[:_LISTED_AT_MOST]) + (f", ... ({len(listed)} in all)"
                                                          if len(listed) > _LISTED_AT_MOST else "")
            raise LLMConfigError(f"llm.model {model!r} is not served at {where}{hint}; GET {where}/models lists: "
                                 f"{shown}; set [llm] model (or HALLU_STUDIO_LLM_MODEL) to one of them")


def check_served(llm: "LLMSettings", *, reachable: bool = False) -> None:
    """``check_model`` for the endpoint and model of ``llm`` (a configured ``LLMSettings``); with
    ``reachable``, ``check_reachable`` first (the check before work; a client's own is lenient)."""
    timeout = min(MODELS_TIMEOUT_S, float(llm.timeout_s))
    if reachable:
        check_reachable(llm.base_urls, llm.api_key(), timeout)
    check_model(llm.base_urls, str(llm.model), llm.api_key(), timeout)


def in_force(settings: "Settings") -> str:
    """The LLM endpoint and model in force and where each came from, as one line (``info``, ``score``, the
    Settings view).

    >>> from hallu_studio.config import load_settings
    >>> in_force(load_settings(env={"HALLU_STUDIO_CONFIG": "/none.toml", "OPENAI_BASE_URL": "http://h:1/v1"}))
    'LLM endpoint http://h:1/v1 (from environment variable OPENAI_BASE_URL); LLM model not set'
    """
    urls = ", ".join(settings.llm.base_urls)
    if not urls and not settings.llm.model:
        return "LLM: none configured (the offline methods are used)"
    where = f"{urls} (from {settings.origin('llm.base_url')})" if urls else "not set"
    model = f"{settings.llm.model} (from {settings.origin('llm.model')})" if settings.llm.model else "not set"
    return f"LLM endpoint {where}; LLM model {model}"
