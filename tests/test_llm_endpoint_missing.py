"""An LLM endpoint that is not there is found before any work, in one line naming the URL and what failed,
with exit status 2 (issue 27): nothing listening, no such host, a web server that is not the OpenAI API
(an HTML page or another server's 404 at ``/v1/models``), a refused API key. And a line whose LLM call
fails during a run is reported as an LLM failure naming the URL, never as bad input.

Before, ``score`` with ``trihe_judge = "llm"`` and nothing listening made 35 calls for 3 lines and
reported each line as "bad input: ... LLMError ... Connection error".
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from reliability_helpers import free_port

import hallu_studio.metrics.registry as registry
from hallu_studio.cli import main
from hallu_studio.llm import LLMClient, LLMUnreachableError, endpoint
from hallu_studio.config import LLMSettings
from hallu_studio.store import Store
from test_llm_fake_server import FakeChatServer
from test_llm_server_defects import _cli_store

LINES = [{"id": f"c{i}", "response": "A cat is on the mat.", "scene_graph": {
    "objects": [{"id": "1", "name": "cat"}, {"id": "2", "name": "mat"}],
    "relations": [{"subject": "1", "predicate": "on", "object": "2"}]}} for i in range(3)]


class OtherServer:
    """Answers every request with ``status``, ``content_type`` and ``body``; records what it was asked."""

    def __init__(self, status: int, content_type: str, body: str) -> None:
        self.asked: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                server.asked.append(f"{self.command} {self.path}")
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer  # noqa: N815 - http.server's naming

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "OtherServer":
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        endpoint.forget(self.url)


def _config(tmp_path, url: str, **scoring: str) -> str:
    path = tmp_path / "llm.toml"
    path.write_text("\n".join(["[llm]", f'base_url = "{url}"', 'model = "fake"', "max_retries = 0",
                               "timeout_per_token_s = 0.0", "[scoring]", *(f'{k} = "{v}"' for k, v in scoring.items())])
                    + "\n")
    return str(path)


def _jsonl(tmp_path) -> str:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    return str(path)


@pytest.fixture
def no_work(monkeypatch):
    """Building the extractor or a metric (the start of per-line work) fails the test."""
    def too_late(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("per-line work started before the endpoint was checked")

    monkeypatch.setattr(registry, "make_extractor", too_late)
    monkeypatch.setattr(registry, "make_metrics", too_late)


def _refused_in_one_line(tmp_path, capsys, config: str) -> str:
    """``score`` on a store and on a JSONL file: status 2, one line on stderr, nothing written; that line."""
    db = _cli_store(tmp_path)
    out = tmp_path / "out.jsonl"
    lines = []
    for extra in (["--db", db], ["--input", _jsonl(tmp_path), "--output", str(out)]):
        assert main(["score", "--metrics", "trihe", "--config", config, "--no-progress", *extra]) == 2
        captured = capsys.readouterr()
        err = [line for line in captured.err.splitlines() if not line.startswith("note: ")]
        assert len(err) == 1 and err[0].startswith("error: the LLM endpoint ") and "Traceback" not in captured.err, \
            captured.err
        lines.append(err[0])
    assert not out.exists(), "nothing is written for a run that cannot start"
    with Store(db, read_only=True) as store:
        assert store.counts()["scores"] == 0 and store.counts()["failures"] == 0
    assert lines[0] == lines[1]
    return lines[0]


def test_nothing_listening_is_one_line_exit_2_and_no_call(tmp_path, capsys, no_work):
    url = f"http://127.0.0.1:{free_port()}/v1"
    line = _refused_in_one_line(tmp_path, capsys, _config(tmp_path, url, trihe_judge="llm"))
    assert line == f"error: the LLM endpoint {url} refused the connection: nothing listens there " \
                   "(is the server started, on that port?)"


def test_a_host_that_does_not_resolve_is_named(tmp_path, capsys, no_work):
    line = _refused_in_one_line(tmp_path, capsys, _config(tmp_path, "http://no-such-host.invalid/v1",
                                                          halfscore_matcher="llm", trihe_judge="llm"))
    assert line.startswith("error: the LLM endpoint http://no-such-host.invalid/v1 has a host name that does not "
                           "resolve (DNS"), line


@pytest.mark.parametrize("status,kind,body", [
    (404, "text/html", "<html><body><h1>Not Found</h1></body></html>"),  # a web server
    (200, "text/html", "<!doctype html><title>Gradio</title>"),  # a web app's page
    (404, "application/json", '{"detail":"Not Found"}'),  # an API server without /v1 in the URL (FastAPI's 404)
], ids=["html-404", "html-200", "other-api-404"])
def test_a_server_that_is_not_openai_compatible_is_named_so(tmp_path, capsys, no_work, status, kind, body):
    with OtherServer(status, kind, body) as server:
        line = _refused_in_one_line(tmp_path, capsys, _config(tmp_path, server.url, trihe_judge="llm"))
        assert line.startswith(f"error: the LLM endpoint {server.url} is not an OpenAI-compatible server: GET "
                               f"{server.url}/models answered HTTP {status} ({kind}: "), line
        assert "does the base URL end in /v1?" in line
        assert all(asked == "GET /v1/models" for asked in server.asked), server.asked  # no chat call


def test_a_refused_api_key_is_named(tmp_path, capsys, no_work):
    with OtherServer(401, "application/json", '{"error": {"message": "invalid key"}}') as server:
        line = _refused_in_one_line(tmp_path, capsys, _config(tmp_path, server.url, extractor="llm", trihe_judge="llm"))
    assert f"{server.url} refused the API key (HTTP 401 at GET {server.url}/models)" in line


def test_an_openai_server_that_lists_no_models_still_serves():
    # The OpenAI API's own error shape at /models: the API is there, it does not list (a proxy): not refused.
    with FakeChatServer([("ok", "hi")]) as server:
        endpoint.check_reachable([server.base_url], "k")
        client = LLMClient(LLMSettings(base_url=server.base_url, model="m"), backoff_s=0.01)
        assert client.complete([{"role": "user", "content": "x"}], namespace="t", prompt_version="1") == "hi"
    with pytest.raises(LLMUnreachableError) as refused:
        endpoint.check_reachable([server.base_url], "k")  # the server is gone now
    assert refused.value.url == server.base_url and "refused the connection" in refused.value.problem


def test_run_against_an_openai_url_with_nothing_listening_is_one_line_and_stores_no_run(tmp_path, capsys):
    db = _cli_store(tmp_path)
    url = f"http://127.0.0.1:{free_port()}/v1"
    with Store(db, read_only=True) as store:
        runs = len(store.list_runs())
    assert main(["run", "--benchmark", "b", "--model", f"openai:fake@{url}", "--db", db, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: the LLM endpoint {url} refused the connection"), err
    with Store(db, read_only=True) as store:
        assert len(store.list_runs()) == runs and store.counts()["failures"] == 0


def test_an_llm_call_that_fails_during_a_run_is_an_llm_failure_not_bad_input(tmp_path, capsys):
    # The server lists its model (so the check passes), then every chat call fails for good.
    with FakeChatServer([("status", 503)], models=["fake"]) as server:
        config = _config(tmp_path, server.base_url, trihe_judge="llm")
        out = tmp_path / "out.jsonl"
        assert main(["score", "--metrics", "trihe", "--config", config, "--no-progress",
                     "--input", _jsonl(tmp_path), "--output", str(out)]) == 1
    captured = capsys.readouterr()
    assert "bad input" not in captured.err, captured.err
    failed = [line for line in captured.err.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 3, captured.err
    for i, line in enumerate(failed):
        assert line.startswith(f"failed: line {i + 1} (id 'c{i}'): trihe: LLM call to {server.base_url} failed: "), line
    assert "0 of 3 lines scored; 3 LLM failures (not the input's fault)" in captured.out
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert all(r["errors"]["trihe"].startswith(f"LLM call to {server.base_url} failed: ") for r in records)
