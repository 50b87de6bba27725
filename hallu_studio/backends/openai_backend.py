"""An OpenAI-compatible chat endpoint: vLLM, SGLang, Ollama, llama.cpp server, OpenAI.

Images travel as data URLs. Requests run side by side through the dispatcher the LLM
scoring uses (``hallu_studio.llm.dispatch``): adaptive concurrency up to ``concurrency``,
timeouts that grow with the prompt and ``max_new_tokens``, several replicas
(``openai:<model>@<url1>,<url2>``). 408, 409, 429, 5xx, dropped connections, timeouts and
malformed bodies are retried with exponential backoff (honouring ``Retry-After``); other
errors fail the item at once. Log-probabilities are requested and, if the server refuses
them, the backend stops asking.

Serving a preset with vLLM::

    vllm serve llava-hf/llava-1.5-7b-hf --tensor-parallel-size 1 --max-model-len 4096 \\
        --chat-template <template.jinja>   # LLaVA-1.5 ships none in older vLLM releases
    hallu-studio run --model openai:llava-hf/llava-1.5-7b-hf@http://localhost:8000/v1 ...
"""

from __future__ import annotations

import base64
import math
import os
from typing import Any, Sequence
from urllib.parse import urlparse

import httpx

from ..config import parse_base_urls
from ..llm import endpoint
from ..llm.dispatch import (CHARS_PER_TOKEN, Dispatcher, GaveUp, Overloaded, ReplicaDown, Retryable,
                            request_timeout, shared_dispatcher)
from .base import GenerationRequest, GenerationResult

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
TOP_LOGPROBS = 20


IMAGE_TOKENS = 1000  # what an image adds to the prompt, for sizing timeouts (LLaVA-1.5: 576)


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


def image_data_url(data: bytes) -> str:
    """A data URL with the MIME type sniffed from the bytes (PNG, JPEG, GIF, WebP)."""
    mime = "image/jpeg"
    if data.startswith(b"\x89PNG"):
        mime = "image/png"
    elif data[:4] == b"GIF8":
        mime = "image/gif"
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        mime = "image/webp"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def answer_from_top_logprobs(first: dict[str, Any], candidates: Sequence[str]) -> dict[str, Any] | None:
    """Reefknot eq. 2 from the first token's top log-probabilities.

    A candidate's logit is the logsumexp of the top tokens that spell it (any case,
    any leading space); a candidate outside the server's top-k counts as probability 0.

    >>> sig = answer_from_top_logprobs({"top_logprobs": [{"token": "Yes", "logprob": -0.1},
    ...                                                  {"token": " no", "logprob": -2.4}]}, ["yes", "no"])
    >>> [round(p, 3) for p in sig["probs"]], sig["entropy_unit"]
    ([0.909, 0.091], 'bits')
    """
    tops = first.get("top_logprobs") or []
    logits = []
    for c in candidates:
        vals = [float(t["logprob"]) for t in tops if str(t.get("token", "")).strip().lower() == c.lower()]
        logits.append(max(vals) + math.log(sum(math.exp(v - max(vals)) for v in vals)) if vals else -math.inf)
    if all(v == -math.inf for v in logits):
        return None
    top = max(logits)
    weights = [math.exp(v - top) if v != -math.inf else 0.0 for v in logits]
    total = sum(weights)
    probs = [w / total for w in weights]
    entropy = -sum(p * math.log2(p) for p in probs if p > 0)
    return {"candidates": list(candidates), "logits": [v if v != -math.inf else None for v in logits],
            "probs": probs, "entropy": entropy, "entropy_unit": "bits", "position": 0, "source": "top_logprobs",
            "raw_probs": [math.exp(v) if v != -math.inf else 0.0 for v in logits]}


class OpenAIBackend:
    """``model`` served at ``base_url`` (one URL, or several replicas comma-separated or as a list).

    Requests go through ``hallu_studio.llm.dispatch`` (shared with LLM scoring): at most
    ``concurrency`` in flight, halved while the server answers 429 or times out; a try's
    timeout is ``timeout_s + timeout_per_token_s × (prompt tokens + max_new_tokens)`` (an
    image counts as ``IMAGE_TOKENS``), doubled after a timeout; replicas that fail are rested.
    """

    kind = "openai"
    synthetic = False

    def __init__(self, model: str, base_url: str | Sequence[str], *, api_key: str | None = None,
                 concurrency: int = 8, timeout_s: float = 120.0, max_retries: int = 4, backoff_base_s: float = 0.5,
                 timeout_per_token_s: float = 0.02) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.model = model
        self.base_urls = parse_base_urls(base_url)
        if not self.base_urls:
            raise ValueError("no base URL given")
        self.base_url = self.base_urls[0]
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"  # local servers take any key
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.timeout_per_token_s = timeout_per_token_s
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s  # doubling per try, up to 30 × this
        self.logprobs_supported = True
        # OpenAI's own API rejects top_k; vLLM, SGLang and llama.cpp accept it.
        self.send_top_k = "api.openai.com" not in (urlparse(self.base_url).hostname or "")
        self.dispatcher: Dispatcher | None = None  # built at the first generate() from the settings then

    def checkpoint(self) -> str:
        return f"{self.model}@{','.join(self.base_urls)}"

    def close(self) -> None:
        pass

    def check_endpoint(self) -> None:
        """Before a run: refuse a server that is not there or does not serve ``model`` (one line,
        ``LLMConfigError``), rather than failing every request after its retries."""
        timeout = min(endpoint.MODELS_TIMEOUT_S, self.timeout_s)
        endpoint.check_reachable(self.base_urls, self.api_key, timeout)
        endpoint.check_model(self.base_urls, self.model, self.api_key, timeout)

    # ----------------------------------------------------------------- public
    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """One result per request, in order; a request that fails for good carries its error."""
        # The process's dispatcher for these servers: a run and LLM scoring against them share its limit.
        self.dispatcher = shared_dispatcher(self.base_urls, concurrency=self.concurrency,
                                            max_retries=self.max_retries, backoff_s=self.backoff_base_s)
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        with httpx.Client(timeout=self.timeout_s, limits=limits) as client:
            out = self.dispatcher.map([lambda r=r: self._one(client, r) for r in requests])
        return [r if isinstance(r, GenerationResult) else GenerationResult(req.sample_id, error=f"{r}")
                for req, r in zip(requests, out)]

    # ----------------------------------------------------------------- one request
    def _body(self, r: GenerationRequest) -> dict[str, Any]:
        g = r.generation
        if int(g.get("num_beams", 1)) > 1:
            raise NotImplementedError("beam search over an OpenAI-compatible endpoint is not supported yet")
        if r.image is not None:
            content: Any = [{"type": "image_url", "image_url": {"url": image_data_url(r.image)}},
                            {"type": "text", "text": r.prompt}]
        else:
            content = r.prompt
        body: dict[str, Any] = {"model": self.model, "messages": [{"role": "user", "content": content}],
                                "max_tokens": int(g.get("max_new_tokens", 512)), "seed": r.seed}
        if g.get("do_sample"):
            body.update(temperature=float(g.get("temperature", 1.0)), top_p=float(g.get("top_p", 1.0)))
            if self.send_top_k and g.get("top_k"):
                body["top_k"] = int(g["top_k"])
        else:
            body["temperature"] = 0.0
        if self.logprobs_supported and (r.signals.token_logprobs or r.signals.answer_candidates):
            body["logprobs"] = True
            if r.signals.answer_candidates:
                body["top_logprobs"] = TOP_LOGPROBS
        return body

    def _timeout(self, r: GenerationRequest) -> float:
        chars = len(r.prompt) + (IMAGE_TOKENS * CHARS_PER_TOKEN if r.image is not None else 0)
        return request_timeout(self.timeout_s, self.timeout_per_token_s, chars,
                               int(r.generation.get("max_new_tokens", 512)))

    def _one(self, client: httpx.Client, r: GenerationRequest) -> GenerationResult:
        try:
            body = self._body(r)
        except NotImplementedError as exc:
            return GenerationResult(r.sample_id, error=str(exc))
        assert self.dispatcher is not None

        def attempt(url: str, timeout: float) -> GenerationResult:
            nonlocal body
            try:
                return self._parse(r, self._post(client, url, body, timeout))
            except _LogprobsRefused:  # ask again at once without them; later bodies leave them out
                self.logprobs_supported = False
                body = self._body(r)
                return self._parse(r, self._post(client, url, body, timeout))

        try:
            return self.dispatcher.call(attempt, timeout_s=self._timeout(r), what=r.sample_id)
        except PermanentError as exc:
            return GenerationResult(r.sample_id, error=str(exc))
        except GaveUp as exc:
            return GenerationResult(r.sample_id, error=f"gave up after {self.max_retries + 1} attempts: {exc.last}")

    def _post(self, client: httpx.Client, url: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            resp = client.post(f"{url}/chat/completions", json=body, timeout=timeout,
                               headers={"Authorization": f"Bearer {self.api_key}"})
        except httpx.TimeoutException as exc:
            raise Overloaded(f"{type(exc).__name__}: {exc or 'timed out'}", timed_out=True) from exc
        except httpx.TransportError as exc:
            raise ReplicaDown(f"{type(exc).__name__}: {exc or 'connection failed'}") from exc
        if resp.status_code in RETRY_STATUS:
            message = f"HTTP {resp.status_code}: {resp.text[:200]}"
            if resp.status_code in (408, 429):
                raise Overloaded(message, retry_after=_retry_after(resp.headers.get("retry-after")),
                                 timed_out=resp.status_code == 408)
            if resp.status_code >= 500:
                raise ReplicaDown(message)
            raise Retryable(message)
        if resp.status_code >= 400:
            text = resp.text[:300]
            if resp.status_code == 400 and "logprob" in text.lower() and "logprobs" in body:
                raise _LogprobsRefused(text)
            raise PermanentError(f"HTTP {resp.status_code}: {text}")
        try:
            data = resp.json()
        except ValueError as exc:
            raise Retryable(f"malformed response body (not JSON): {resp.text[:120]!r}") from exc
        if not isinstance(data, dict) or not data.get("choices"):
            raise Retryable(f"malformed response body (no choices): {str(data)[:120]}")
        return data

    def _parse(self, r: GenerationRequest, data: dict[str, Any]) -> GenerationResult:
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise Retryable(f"malformed response body (no message content): {str(data)[:120]}") from exc
        if not isinstance(text, str):
            raise Retryable(f"malformed response body (content is {type(text).__name__})")
        signals: dict[str, Any] = {}
        if data.get("model"):
            signals["served_model"] = data["model"]
        content = ((choice.get("logprobs") or {}).get("content")) or []
        if content and r.signals.token_logprobs:
            signals["token_logprobs"] = [{"token": t.get("token", ""), "logprob": float(t.get("logprob", 0.0))}
                                         for t in content]
        if content and r.signals.answer_candidates:
            answer = answer_from_top_logprobs(content[0], r.signals.answer_candidates)
            if answer is not None:
                signals["answer"] = answer
        if choice.get("finish_reason"):
            signals["finish_reason"] = choice["finish_reason"]
        return GenerationResult(r.sample_id, text=text.strip(), signals=signals)


class PermanentError(RuntimeError):
    pass


class _LogprobsRefused(RuntimeError):
    pass
