"""The OpenAI-compatible backend against a local misbehaving server (127.0.0.1 only).

Every request ends recorded either as a response or as a reported failure,
whatever the server does: slow answers, 429s, 500s, dropped connections,
malformed bodies.
"""

import json
import socket
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hallu_studio.backends import make_backend
from hallu_studio.backends.base import GenerationRequest, SignalRequest
from hallu_studio.backends.openai_backend import OpenAIBackend, answer_from_top_logprobs, image_data_url
from tiny_models import tiny_benchmark
from hallu_studio.pipelines.running import RunOptions, execute_run
from hallu_studio.prompts import generation_preset


class FakeServer:
    """Behaviour per prompt: the prompt names a mode (``mode:429x2`` ...)."""

    def __init__(self):
        self.attempts = Counter()
        self.bodies = []
        self.inflight = 0
        self.max_inflight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                counted = server.prompt_of(body).startswith("slow-c")
                with server.lock:
                    server.inflight += counted
                    server.max_inflight = max(server.max_inflight, server.inflight)
                try:
                    server.handle(self, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left: that is the point of the test
                finally:
                    with server.lock:
                        server.inflight -= counted

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @staticmethod
    def prompt_of(body):
        content = body["messages"][0]["content"]
        return content if isinstance(content, str) else content[-1]["text"]

    def handle(self, h, body):
        prompt = self.prompt_of(body)
        with self.lock:
            self.attempts[prompt] += 1
            n = self.attempts[prompt]
            self.bodies.append(body)

        def send(status, payload, headers=()):
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            h.send_response(status)
            for k, v in headers:
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)

        ok = {"model": "served-model", "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": f" answer to {prompt} "}, "logprobs": {"content": [
                {"token": "Yes", "logprob": -0.2, "top_logprobs": [{"token": "Yes", "logprob": -0.2},
                                                                   {"token": " no", "logprob": -1.8}]},
                {"token": "!", "logprob": -0.5, "top_logprobs": []}]}}]}
        if "slow" in prompt:
            time.sleep(0.2)
        if "429x2" in prompt and n <= 2:
            return send(429, {"error": "rate limited"}, [("Retry-After", "0")])
        if "500x1" in prompt and n <= 1:
            return send(500, {"error": "boom"})
        if "always500" in prompt:
            return send(503, {"error": "down"})
        if "drop" in prompt and n <= 1:
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return None
        if "malformed" in prompt and (n <= 1 or "always" in prompt):
            return send(200, b"{not json")
        if "nochoices" in prompt and n <= 1:
            return send(200, {"choices": []})
        if "bad400" in prompt:
            return send(400, {"error": "invalid model"})
        if "nologprobs" in prompt and "logprobs" in body:
            return send(400, {"error": "logprobs are not supported by this server"})
        if "hang" in prompt:
            time.sleep(1.5)
        return send(200, ok)


@pytest.fixture(scope="module")
def server():
    s = FakeServer()
    yield s
    s.httpd.shutdown()


def _backend(server, **kw):
    kw = {"concurrency": 4, "timeout_s": 1.0, "max_retries": 3, "backoff_base_s": 0.01, "timeout_per_token_s": 0.0,
          **kw}
    return OpenAIBackend("served-model", server.url, **kw)


def _req(prompt, image=b"\x89PNG fake", signals=SignalRequest(token_logprobs=True, answer_candidates=("yes", "no"))):
    return GenerationRequest(prompt, prompt, image, generation_preset("greedy", 16), signals)


def test_every_request_ends_as_a_response_or_a_failure(server):
    prompts = ["plain", "slow-1", "slow-2", "429x2 a", "500x1 b", "drop c", "malformed d", "nochoices e",
               "always500 f", "malformed always g", "bad400 h", "hang i"]
    results = _backend(server, max_retries=2, timeout_s=0.6).generate([_req(p) for p in prompts])
    by = {r.sample_id: r for r in results}
    assert [r.sample_id for r in results] == prompts
    for p in ["plain", "slow-1", "slow-2", "429x2 a", "500x1 b", "drop c", "malformed d", "nochoices e"]:
        assert by[p].ok and by[p].text == f"answer to {p}", (p, by[p].error)
    assert "503" in by["always500 f"].error and "gave up after 3 attempts" in by["always500 f"].error
    assert "malformed" in by["malformed always g"].error
    assert "HTTP 400" in by["bad400 h"].error and server.attempts["bad400 h"] == 1  # not retried
    # A timed-out try is retried with twice the timeout: 0.6 s, 1.2 s, then 2.4 s outlasts the 1.5 s hang.
    assert by["hang i"].ok and server.attempts["hang i"] == 3
    assert server.attempts["429x2 a"] == 3


def test_a_request_that_outlasts_every_timeout_fails_with_it(server):
    res = _backend(server, max_retries=1, timeout_s=0.3).generate([_req("hang j")])[0]
    assert "Timeout" in res.error and "gave up after 2 attempts" in res.error


def test_request_body_data_url_and_signals(server):
    res = _backend(server).generate([_req("signals")])[0]
    body = [b for b in server.bodies if FakeServer.prompt_of(b) == "signals"][-1]
    image = body["messages"][0]["content"][0]["image_url"]["url"]
    assert image.startswith("data:image/png;base64,")
    assert body["temperature"] == 0.0 and body["logprobs"] is True and body["top_logprobs"] == 20
    assert res.signals["token_logprobs"][0] == {"token": "Yes", "logprob": -0.2}
    assert res.signals["answer"]["probs"][0] > 0.8 and res.signals["served_model"] == "served-model"
    text_only = _backend(server).generate([_req("no image", image=None)])[0]
    assert text_only.ok
    assert [b for b in server.bodies if FakeServer.prompt_of(b) == "no image"][-1]["messages"][0]["content"] == "no image"


def test_nucleus_settings_and_beam_refused(server):
    b = _backend(server)
    r = GenerationRequest("nuc", "nuc", None, generation_preset("nucleus", 8))
    assert b.generate([r])[0].ok
    body = [x for x in server.bodies if FakeServer.prompt_of(x) == "nuc"][-1]
    assert (body["temperature"], body["top_p"], body["top_k"]) == (0.9, 0.9, 50)
    beam = b.generate([GenerationRequest("beam", "beam", None, generation_preset("beam", 8))])[0]
    assert not beam.ok and "not supported yet" in beam.error


def test_server_without_logprobs_is_remembered(server):
    b = _backend(server)
    res = b.generate([_req("nologprobs 1")])[0]
    assert res.ok and b.logprobs_supported is False
    last = [x for x in server.bodies if FakeServer.prompt_of(x) == "nologprobs 1"][-1]
    assert "logprobs" not in last and server.attempts["nologprobs 1"] == 2


def test_concurrency_is_bounded(server):
    server.max_inflight = 0
    _backend(server, concurrency=3).generate([_req(f"slow-c{i}") for i in range(9)])
    assert 1 < server.max_inflight <= 3


def test_pipeline_records_failures_and_responses(server, store):
    bench, samples, images = tiny_benchmark(n_images=2)
    store.add_samples(bench, samples, images)
    backend = make_backend(f"openai:served-model@{server.url}", concurrency=4, timeout_s=1.0, max_retries=1)
    backend.backoff_base_s = 0.01
    # MCQ questions ("... A. ...") hit a server that is always down for them
    summary = execute_run(store, backend, RunOptions(benchmark=bench.name, prompt="{question} always500",
                                                     tasks=["mcq", "yes_no"], chunk_size=4), progress=False)
    assert summary.done == 0 and summary.failed == summary.total == 4
    summary = execute_run(store, backend, RunOptions(benchmark=bench.name, tasks=["yes_no", "vqa"]), progress=False)
    assert summary.done == summary.total == 4 and summary.failed == 0
    assert store.get_run(summary.run_id).checkpoint == f"served-model@{server.url}"


def test_spec_parsing_and_helpers():
    b = make_backend("openai:gpt-4o@https://api.openai.com/v1")
    assert b.model == "gpt-4o" and b.send_top_k is False
    with pytest.raises(ValueError, match="openai:<model>@<base url>"):
        make_backend("openai:gpt-4o")
    assert image_data_url(b"\xff\xd8\xff rest").startswith("data:image/jpeg;base64,")
    assert answer_from_top_logprobs({"top_logprobs": [{"token": "maybe", "logprob": -0.1}]}, ["yes", "no"]) is None
    sig = answer_from_top_logprobs({"top_logprobs": [{"token": "B", "logprob": -0.1}]}, ["A", "B", "C", "D"])
    assert sig["probs"] == [0.0, 1.0, 0.0, 0.0] and sig["entropy"] == 0.0
