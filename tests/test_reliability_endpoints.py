"""Faulty endpoints: an OpenAI-compatible server that disappears in the middle of a run.

Both the LLM used by scoring (an LLM Tri-HE judge configured through ``Settings`` and run by
``score_store``) and the OpenAI LVLM backend (run by ``execute_run``): every item ends as a
result or a recorded failure, nothing that failed is cached, and once the server is back a
second pass finishes exactly the missing items without redoing (or re-asking) the finished ones.
Timeouts, 429s, 500s, truncated and non-JSON bodies are covered by ``test_llm_fake_server.py``,
``test_llm_client.py`` and ``test_backend_openai.py``.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reliability_helpers import free_port

from hallu_studio.backends import make_backend
from tiny_models import tiny_benchmark
from hallu_studio.config import LLMSettings, ScoringSettings, Settings
from hallu_studio.metrics.registry import not_applicable_reason
from hallu_studio.pipelines.running import RunOptions, execute_run
from hallu_studio.pipelines.scoring import score_store
from hallu_studio.store import Store


class VanishingServer:
    """Answers the first ``answer_first`` chat requests with ``answer(body)``; the next one has its
    connection dropped while the whole server shuts down (later connections are refused).
    ``start()`` again brings it back on the same port."""

    def __init__(self, answer: Callable[[dict[str, Any]], str], answer_first: int) -> None:
        self.answer, self.answer_first = answer, answer_first
        self.port = free_port()
        self.requests = 0
        self.answered: list[str] = []
        self.lock = threading.Lock()
        self.httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, answer_first: int | None = None) -> VanishingServer:
        if answer_first is not None:
            self.answer_first, self.requests = answer_first, 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with server.lock:
                    server.requests += 1
                    vanish = server.requests > server.answer_first
                if vanish:
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    server.stop_async()
                    return
                text = server.answer(body)
                with server.lock:
                    server.answered.append(text)
                data = json.dumps({"id": "x", "object": "chat.completion", "model": "fake", "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop_async(self) -> None:
        httpd, self.httpd = self.httpd, None
        if httpd is not None:
            def stop() -> None:
                httpd.shutdown()
                httpd.server_close()
            threading.Thread(target=stop, daemon=True).start()

    def stop(self) -> None:
        httpd, self.httpd = self.httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()


def _yes(body: dict[str, Any]) -> str:
    return '{"answer": "yes"}' if "response_format" in body else "Yes."


def test_llm_judge_server_vanishes_mid_scoring_then_comes_back(tmp_path):
    from synthetic_store import fill_synthetic_store

    store = Store(tmp_path / "llm.duckdb")
    fill_synthetic_store(store, n_samples=6, models=("probe-a",))
    server = VanishingServer(_yes, answer_first=4).start()
    try:
        settings = Settings(llm=LLMSettings(base_url=server.base_url, model="fake", max_retries=0, timeout_s=5,
                                            concurrency=2),
                            scoring=ScoringSettings(trihe_judge="llm", batch_size=2))
        report = score_store(store, settings, ["trihe"], progress=False)
        responses = {rid for rid in store.response_ids()  # those Tri-HE applies to
                     if not_applicable_reason("trihe", store.get_sample(store.get_response(rid).sample_id)) is None}
        assert report.not_applicable["trihe"] == len(store.response_ids()) - len(responses)
        key = next(c["config_key"] for c in store.score_configs() if c["metric"] == "trihe"
                   and c["config_key"] != "synthetic-ui") if report.scored["trihe"] else None
        scored = store.scored_response_ids("trihe", key) if key else set()
        failed = {f["sample_id"] for f in store.list_failures(stage="score:trihe")}
        failed_responses = {rid for rid in responses if store.get_response(rid).sample_id in failed}
        # every response: a score or a reported failure, never both, never neither
        assert scored | failed_responses == responses and not scored & failed_responses
        assert failed_responses, "the server vanished: some items must have failed"
        assert report.failed["score:trihe"] == len(failed_responses)
        assert all("LLM" in f["error"] or "Connection" in f["error"] for f in store.list_failures(stage="score:trihe"))
        # only answers the server gave are cached; nothing for the dropped requests
        cached = store.cache.values("trihe.supported")
        assert len(cached) == len(server.answered) and set(cached.values()) <= {'{"answer": "yes"}'}

        server.start(answer_first=10_000)  # back on the same port
        asked_before = len(server.answered)
        again = score_store(store, settings, ["trihe"], progress=False)
        key = key or next(c["config_key"] for c in store.score_configs() if c["metric"] == "trihe"
                          and c["config_key"] != "synthetic-ui")
        assert store.scored_response_ids("trihe", key) == responses
        assert again.not_applicable["trihe"] == report.not_applicable["trihe"]
        assert again.scored["trihe"] == len(failed_responses) and not again.failed
        # the finished items were neither re-scored nor re-asked: each new request is a new claim
        assert len(store.cache.values("trihe.supported")) == len(server.answered)
        assert len(server.answered) > asked_before
    finally:
        server.stop()
        store.close()


def _lvlm_answer(body: dict[str, Any]) -> str:
    return "A small scene with a few objects."


def test_openai_backend_server_vanishes_mid_run_then_comes_back(tmp_path):
    store = Store(tmp_path / "run.duckdb")
    bench, samples, images = tiny_benchmark(n_images=3)
    store.add_samples(bench, samples, images)
    server = VanishingServer(_lvlm_answer, answer_first=3).start()
    try:
        backend = make_backend(f"openai:served-model@{server.base_url}", concurrency=1, timeout_s=5.0,
                               max_retries=1)
        backend.backoff_base_s = 0.01
        options = RunOptions(benchmark=bench.name, chunk_size=2)
        first = execute_run(store, backend, options, progress=False)
        assert first.total == len(store.sample_ids(bench.name))
        assert first.done + first.failed == first.total - first.skipped
        assert 0 < first.failed and first.done >= 3 - 1
        done = store.done_sample_ids(first.run_id)
        failures = {f["sample_id"] for f in store.list_failures(first.run_id)}
        assert done | failures == store.sample_ids(bench.name) and not done & failures
        assert store.count_responses(first.run_id) == len(done)

        server.start(answer_first=10_000)
        second = execute_run(store, backend, options, progress=False)
        assert second.run_id == first.run_id and second.skipped == len(done)
        assert second.done == first.total - len(done) and second.failed == 0
        assert store.done_sample_ids(first.run_id) == store.sample_ids(bench.name)
        assert store.count_responses(first.run_id) == first.total  # nothing doubled
    finally:
        server.stop()
        store.close()
