"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the LLM tests.

Each POST to ``/v1/chat/completions`` takes the next step of the script:
``("ok", text)``, ``("status", code)``, ``("malformed", body)``, ``("slow", seconds, text)``,
``("length", text)`` (``text`` with finish_reason "length", as an answer cut at ``max_tokens``),
``("reject_format", text)`` (400 when the request asks for ``response_format``,
else answer ``text``) or ``("by_content", fn)`` (answer ``fn(last user message)``: a text, or a
``(text, finish_reason)`` pair) or ``("vision", fn)`` (an image question: answer ``fn(question text, number of
images)``, a text or a ``(text, yes-probability)`` pair, whose probability comes back as the first token's top
log-probabilities when the request asks for them, as vLLM and SGLang give them). When the script runs out, the
last step repeats.
``plain_text_only=True`` (or an HTTP status): every request asking for ``response_format`` gets a
400 (that status) naming it, as from a server without structured output (the step is not used up). ``capacity=N``: a request
beyond N in flight gets a 429 at once. ``slots=N``: requests beyond N wait for a free slot
(llama.cpp's queue; ``slots=1`` is a one-slot server). ``kill()``: the server dies, dropping the
connections it is answering and refusing new ones. ``embed=fn``: ``/v1/embeddings`` answers
``fn(list of texts)`` (a list of vectors); ``embedding_inputs`` records each call's texts.
``models=[ids]``: ``GET /v1/models`` lists them (``models_asked`` counts the requests); without it that
route answers 404, as from a server that does not list its models. Leaving the ``with`` block forgets
what the process learnt about the server's URL (``hallu_studio.llm.endpoint``): a later server may get
the same port.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion_body(text: str | None, finish_reason: str = "stop") -> dict[str, Any]:
    return {"id": "cmpl-1", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def vision_body(answer: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """The completion ``answer(question, images)`` gives to the last user message (its text parts and images)."""
    import math

    content = [m["content"] for m in payload.get("messages", []) if m.get("role") == "user"][-1]
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    text = " ".join(p.get("text", "") for p in parts if p.get("type") == "text")
    images = sum(p.get("type") == "image_url" for p in parts)
    got = answer(text, images)
    reply, p_yes = got if isinstance(got, tuple) else (got, None)
    body = completion_body(reply)
    if payload.get("logprobs") and p_yes is not None:
        tops = [{"token": "Yes", "logprob": math.log(max(p_yes, 1e-9))},
                {"token": "No", "logprob": math.log(max(1 - p_yes, 1e-9))}]
        first = reply.split()[0] if reply.split() else reply
        body["choices"][0]["logprobs"] = {"content": [{"token": first, "logprob": tops[0 if p_yes >= 0.5 else 1][
            "logprob"], "top_logprobs": tops}]}
    return body


class FakeChatServer:
    def __init__(self, script: list[tuple[Any, ...]], *, plain_text_only: bool | int = False,
                 capacity: int | None = None,
                 slots: int | None = None, embed: Any = None, models: list[str] | None = None) -> None:
        self.script = list(script)
        self.models = models
        self.models_asked = 0
        self.embed = embed
        self.embedding_inputs: list[list[str]] = []
        self.plain_text_only = plain_text_only
        self.capacity = capacity
        self.rejected = 0  # 429s for being over capacity
        self.answered = 0  # 200s sent
        self.dead = False
        self._slots = threading.Semaphore(slots) if slots else None
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests the server was answering at once
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path.endswith("/models") and server.models is not None:
                    with server._lock:
                        server.models_asked += 1
                    self._send(200, json.dumps({"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "me"} for m in server.models]}))
                else:
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}))

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                if self.path.endswith("/embeddings") and server.embed is not None:
                    texts = payload["input"] if isinstance(payload["input"], list) else [payload["input"]]
                    with server._lock:
                        server.embedding_inputs.append(texts)
                    data = [{"object": "embedding", "index": i, "embedding": [float(x) for x in v]}
                            for i, v in enumerate(server.embed(texts))]
                    self._send(200, json.dumps({"object": "list", "data": data[::-1], "model": payload["model"],
                                                "usage": {"prompt_tokens": 1, "total_tokens": 1}}))
                    return
                if server.plain_text_only and "response_format" in payload:
                    with server._lock:
                        server.requests.append(payload)
                    code = 400 if server.plain_text_only is True else int(server.plain_text_only)
                    self._send(code, json.dumps({"error": {"message": "response_format type must be one of "
                                                                     "'text' or 'json_object'"}}))
                    return
                with server._lock:
                    if server.capacity is not None and server.in_flight >= server.capacity:
                        server.rejected += 1
                        over = True
                    else:
                        over = False
                        server.requests.append(payload)
                        step = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                        server.in_flight += 1
                        server.max_in_flight = max(server.max_in_flight, server.in_flight)
                if over:
                    self._send(429, json.dumps({"error": {"message": "too many requests"}}))
                    return
                try:
                    if server._slots is not None:
                        with server._slots:
                            self._answer(step, payload)
                    else:
                        self._answer(step, payload)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, step: tuple[Any, ...], payload: dict[str, Any]) -> None:
                kind = step[0]
                if kind == "ok":
                    self._send(200, json.dumps(completion_body(step[1])))
                elif kind == "length":
                    self._send(200, json.dumps(completion_body(step[1], "length")))
                elif kind == "status":
                    self._send(step[1], json.dumps({"error": {"message": f"status {step[1]}"}}))
                elif kind == "malformed":
                    self._send(200, step[1])
                elif kind == "slow":
                    time.sleep(step[1])
                    self._send(200, json.dumps(completion_body(step[2])))
                elif kind == "by_content":
                    user = [m["content"] for m in payload.get("messages", []) if m.get("role") == "user"]
                    got = step[1](user[-1] if user else "")
                    text, reason = got if isinstance(got, tuple) else (got, "stop")
                    self._send(200, json.dumps(completion_body(text, reason)))
                elif kind == "vision":
                    self._send(200, json.dumps(vision_body(step[1], payload)))
                elif kind == "reject_format":
                    if "response_format" in payload:
                        self._send(400, json.dumps({"error": {"message": "response_format not supported"}}))
                    else:
                        self._send(200, json.dumps(completion_body(step[1])))
                else:  # pragma: no cover - a typo in a test script
                    raise AssertionError(f"unknown script step {step!r}")

            def _send(self, code: int, body: str) -> None:
                if server.dead:  # drop the connection without an answer
                    self.close_connection = True
                    self.connection.close()
                    return
                if code == 200:
                    with server._lock:
                        server.answered += 1
                data = body.encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and hung up

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "FakeChatServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        from hallu_studio.llm import endpoint

        if not self.dead:
            self.kill()
        endpoint.forget(self.base_url)

    def kill(self) -> None:
        self.dead = True
        self.httpd.shutdown()
        self.httpd.server_close()


def test_fake_server_follows_its_script():
    import urllib.request

    with FakeChatServer([("ok", "a"), ("ok", "b")]) as server:
        bodies = []
        for _ in range(3):
            req = urllib.request.Request(server.base_url + "/chat/completions", data=b"{}", method="POST")
            with urllib.request.urlopen(req) as resp:
                bodies.append(json.loads(resp.read())["choices"][0]["message"]["content"])
        assert bodies == ["a", "b", "b"]
