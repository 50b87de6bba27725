"""What this process has learnt about each LLM endpoint, keyed by its base URL and shared by every client.

Two things are learnt once per endpoint, whichever client object (extractor, judge, reviser, matcher)
meets the server first:

- **How it takes structured output.** OpenAI's ``{"type": "json_schema", ...}`` first; after a
  rejection (an HTTP 400, 422 or 500 naming ``response_format``), llama-cpp-python's
  ``{"type": "json_object", "schema": ...}``; after a rejection of that too, plain text, read leniently
  (logged once per endpoint). Every later call to that endpoint starts from what was learnt.
- **Which models it serves.** ``GET <base_url>/models`` is asked once; a configured model the list
  does not hold is refused (``LLMConfigError``, one line naming the models the server lists). A server
  that does not answer that route, answers it with an error or an empty list, or cannot be reached is
  not checked (llama.cpp and Ollama list their models; a proxy may not). Ollama's ``name`` for
  ``name:latest`` is accepted, as Ollama itself accepts it.

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
from .errors import LLMConfigError

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
    list them (no such route, an error, an empty list, no answer within ``timeout_s``) or cannot be
    reached (asked again by the next client)."""
    endpoint = facts(url)
    if endpoint.models_asked:
        return endpoint.models
    import httpx

    try:
        resp = httpx.get(f"{endpoint.url}/models", headers={"Authorization": f"Bearer {api_key}"},
                         timeout=timeout_s)
    except httpx.TimeoutException as exc:  # a busy server: not checked, and not waited for again
        log.debug("GET %s/models: %s", endpoint.url, exc)
        with _LOCK:
            endpoint.models, endpoint.models_asked = None, True
        return None
    except httpx.HTTPError as exc:  # not reachable now (asked again by the next client): the calls say so
        log.debug("GET %s/models: %s", endpoint.url, exc)
        return None
    ids: tuple[str, ...] | None = None
    if resp.status_code == 200:
        try:
            data: Any = resp.json().get("data")
        except (ValueError, AttributeError):
            data = None
        if isinstance(data, list):
            ids = tuple(str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")) or None
    with _LOCK:
        endpoint.models, endpoint.models_asked = ids, True
    return ids


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


def check_served(llm: "LLMSettings") -> None:
    """``check_model`` for the endpoint and model of ``llm`` (a configured ``LLMSettings``)."""
    check_model(llm.base_urls, str(llm.model), llm.api_key(), min(MODELS_TIMEOUT_S, float(llm.timeout_s)))


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
