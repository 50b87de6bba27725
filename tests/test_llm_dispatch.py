"""Calls under load against local fake servers (127.0.0.1 only): adaptive concurrency, timeouts that
grow, replicas that die, servers without structured output, malformed JSON. Nothing may be lost or
counted twice, failures are never cached, and a re-run completes."""

from __future__ import annotations

import json
import logging
import threading
import time

import pytest

from hallu_studio.config import LLMSettings
from hallu_studio.judges.base import JudgeReference
from hallu_studio.judges.llm_judge import LLMJudge
from hallu_studio.llm import LLMAnswerError, LLMClient, LLMError, LLMRequest
from hallu_studio.llm.dispatch import AdaptiveLimit, Replicas, request_timeout, stats_since
from hallu_studio.pipelines.scoring import ScoreReport
from test_llm_fake_server import FakeChatServer


def _client(urls, store=None, **kw) -> LLMClient:
    settings = {"model": "fake", "timeout_s": 5.0, "timeout_per_token_s": 0.0, "max_retries": 4, "concurrency": 4,
                **kw}
    return LLMClient(LLMSettings(base_url=urls, **settings), store.cache if store is not None else None, backoff_s=0.01)


def _echo(delay: float):
    def answer(content: str) -> str:
        time.sleep(delay)
        return f"answer to {content}"
    return answer


def _requests(n: int, tag: str = "q") -> list[LLMRequest]:
    return [LLMRequest([{"role": "user", "content": f"{tag}{i}"}], "load", "1") for i in range(n)]


def test_concurrency_settles_at_what_the_server_takes():
    # The server answers 4 calls at once and sends 429 to any beyond; the client is configured at 32.
    with FakeChatServer([("by_content", _echo(0.05))], capacity=4) as server:
        client = _client(server.base_url, concurrency=32, max_retries=30)
        n = 200
        start = time.monotonic()
        out = client.complete_many(_requests(n))
        end = time.monotonic()
        assert out == [f"answer to q{i}" for i in range(n)], [o for o in out if isinstance(o, LLMError)][:2]
        assert server.answered == n  # each item answered once
        assert server.rejected > 0  # it really was pushed past what the server takes
        limit = client.dispatcher.limit
        # While there is more work than room (before the last few calls drain), the level stays near 4.
        settled = limit.mean_level(start + (end - start) * 0.3, start + (end - start) * 0.8)
        assert 3.0 <= settled <= 5.0, (settled, limit.history[-12:])
        assert client.dispatcher.stats.failed == 0


def test_two_replicas_one_killed_mid_run_the_survivor_takes_the_load():
    with FakeChatServer([("by_content", _echo(0.02))]) as a, FakeChatServer([("by_content", _echo(0.02))]) as b:
        client = _client(f"{a.base_url},{b.base_url}", concurrency=4, max_retries=6)
        n = 120
        killer = threading.Timer(0.4, a.kill)
        killer.start()
        out = client.complete_many(_requests(n, "r"))
        killer.join()
        assert out == [f"answer to r{i}" for i in range(n)], [o for o in out if isinstance(o, LLMError)][:2]
        answered = client.dispatcher.replicas.answered()
        assert sum(answered.values()) == n  # every item answered once, none twice
        assert 0 < answered[a.base_url] < answered[b.base_url]  # both served, then the survivor took over
        assert a.answered == answered[a.base_url] and b.answered == answered[b.base_url]


def test_one_slot_server_queue_with_growing_timeouts_loses_nothing(store):
    # Eight calls at once queue on a one-slot server; the short first timeout fires for the late
    # ones, the concurrency drops and the retries wait twice as long: all come back, each once.
    with FakeChatServer([("by_content", _echo(0.08))], slots=1) as server:
        client = _client(server.base_url, store, concurrency=8, timeout_s=0.3, max_retries=6)
        n = 16
        out = client.complete_many(_requests(n, "s"))
        assert out == [f"answer to s{i}" for i in range(n)], [o for o in out if isinstance(o, LLMError)][:2]
        assert client.dispatcher.limit.level < 8 and client.dispatcher.stats.retried > 0
        before = len(server.requests)
        assert client.complete_many(_requests(n, "s")) == out  # a re-run is answered from the cache
        assert len(server.requests) == before


REF = JudgeReference([("cat", "on", "sofa")], ["cat", "sofa"])


def test_structured_judge_counts_malformed_json_per_kind_and_never_caches_it(store):
    broken = {"first": True}

    def answer(content: str) -> str:
        if "NOT supported" in content:
            return json.dumps({"wrong_part": "object1"})
        if "Statement triplet: (dog" in content and broken["first"]:
            broken["first"] = False
            return '{"answer": "no"'  # cut off: not JSON
        return json.dumps({"answer": "yes" if "Statement triplet: (cat" in content else "no"})

    with FakeChatServer([("by_content", answer)]) as server:
        client = _client(server.base_url, store)
        before = client.dispatcher.stats.snapshot()
        judge = LLMJudge(client)
        claims = [("cat", "on", "sofa"), ("dog", "on", "sofa"), ("bird", "on", "sofa")]
        with pytest.raises(LLMAnswerError, match=r"\(dog, on, sofa\) supported\?: unreadable"):
            judge.judge(claims, REF)
        body = server.requests[0]["response_format"]
        assert body["type"] == "json_schema" and body["json_schema"]["strict"] is True
        assert body["json_schema"]["schema"]["properties"]["answer"]["enum"] == ["yes", "no"]
        diff = stats_since(before, client.dispatcher.stats.snapshot())
        assert diff["parse_failures"] == {"trihe.supported": 1}
        # The next pass asks only for the broken answer again (the others are cached), and completes.
        n = len(server.requests)
        judge = LLMJudge(_client(server.base_url, store))
        assert [j.verdict for j in judge.judge(claims, REF)] == ["supported", "object", "object"]
        assert len(server.requests) == n + 2  # the broken claim's two questions


@pytest.mark.parametrize("status", [400, 422, 500])
def test_server_without_response_format_falls_back_and_says_so_once(caplog, status):
    with FakeChatServer([("by_content", lambda c: "Yes." if "Statement triplet: (cat" in c else "No. object2")],
                        plain_text_only=status) as server:
        client = _client(server.base_url, concurrency=1)
        with caplog.at_level(logging.WARNING, logger="hallu_studio.llm.endpoint"):
            out = LLMJudge(client).judge([("cat", "on", "sofa"), ("dog", "on", "sofa")], REF)
        assert [j.verdict for j in out] == ["supported", "object"]
        assert sum("rejected response_format" in r.getMessage() for r in caplog.records) == 1
        forms = [r["response_format"]["type"] for r in server.requests if "response_format" in r]
        assert forms == ["json_schema", "json_object"]  # each form asked once, then plain text


def test_timeout_formula_and_replica_rest():
    assert request_timeout(10.0, 0.05, 400, 100) == pytest.approx(10.0 + 0.05 * (100 + 100))
    replicas = Replicas(["http://a", "http://b"])
    first, second = replicas.pick(), replicas.pick()
    assert {first, second} == {"http://a", "http://b"}  # least in flight: spread
    replicas.done("http://a", False)  # a failed: rested
    replicas.done("http://b", True)
    assert [replicas.pick() for _ in range(3)] == ["http://b"] * 3


def test_aimd_halves_once_per_window_and_climbs_back():
    limit = AdaptiveLimit(8)
    tokens = [limit.acquire() for _ in range(8)]
    for t in tokens:  # eight 429s of the same window: one cut
        limit.release(t, "overloaded")
    assert limit.level == 4
    held = [limit.acquire() for _ in range(4)]

    def answer_one() -> None:  # the oldest call answered; the freed room filled again at once (a busy queue)
        limit.release(held.pop(0), "ok")
        while limit.in_flight < limit.level:
            held.append(limit.acquire())

    levels = []
    for _ in range(12):
        answer_one()
        levels.append(limit.level)
    # Up by one per answer of a call that filled the limit, back to just below the level that was
    # overloaded; calls sent while there was room left do not count.
    assert levels[:3] == [4, 4, 4] and levels[-1] == 7 and sorted(levels) == levels
    for _ in range(40):
        answer_one()
    assert limit.level == 8  # then slowly, probing (4 × 7 answers)
    limit.release(held.pop(0), "overloaded")
    assert limit.level == 4


def test_score_summary_shows_llm_calls_and_parse_failures():
    report = ScoreReport()
    report.llm = {"calls": 12, "done": 10, "retried": 2, "failed": 0, "seconds": 5.0,
                  "parse_failures": {"trihe.supported": 1}, "answered_by_kind": {"trihe.supported": 9}}
    text = report.summary()
    assert "LLM 12 calls (2 retried, 0 failed), 0.50 s per answer; parse failures: trihe.supported 1" in text


def test_replica_lists_from_toml_env_and_model_spec_keep_the_score_key(tmp_path):
    from hallu_studio.backends import make_backend
    from hallu_studio.config import Settings, load_settings

    toml = tmp_path / "hs.toml"
    toml.write_text('[llm]\nmodel = "m"\nbase_url = ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1/"]\n')
    from_toml = load_settings(toml, env={})
    assert from_toml.llm.base_urls == ["http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"]
    from_env = load_settings(None, env={"HALLU_STUDIO_CONFIG": str(tmp_path / "none.toml"),
                                        "HALLU_STUDIO_LLM_MODEL": "m",
                                        "HALLU_STUDIO_LLM_BASE_URL": "http://127.0.0.1:8001/v1,http://127.0.0.1:8002/v1"})
    assert from_env.llm.base_urls == from_toml.llm.base_urls
    one = Settings()
    one.llm.model, one.llm.base_url = "m", "http://127.0.0.1:8001/v1"
    from hallu_studio.metrics.keys import current_config_keys

    for s in (one, from_toml, from_env):
        s.scoring.trihe_judge = "llm"
    assert current_config_keys(one).keys == current_config_keys(from_toml).keys == current_config_keys(from_env).keys
    backend = make_backend("openai:m@http://127.0.0.1:8001/v1,http://127.0.0.1:8002/v1")
    assert backend.base_urls == from_toml.llm.base_urls


class AskingMetric:
    """A metric that asks the LLM one structured question per response (to test the pipeline's accounting)."""

    name = "asking"

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    def config(self):
        return {}

    def update(self, item):
        from hallu_studio.metrics.base import ItemResult

        schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
        answer = self.client.complete_checked([{"role": "user", "content": item.response}], namespace="asking.q",
                                              prompt_version="1", json_schema=schema, check=lambda v: v["answer"])
        return ItemResult({"n": 1}, {"answer": answer})


def test_score_store_reports_the_llm_calls_of_the_pass(store):
    from hallu_studio.config import Settings
    from hallu_studio.pipelines.scoring import score_store
    from test_scoring_pipeline import WordExtractor, _seed

    _seed(store, ["cat mat", "cat dog", "dog BROKEN"])
    with FakeChatServer([("by_content", lambda c: "not json" if "BROKEN" in c else '{"answer": "ok"}')]) as server:
        client = _client(server.base_url, store, max_retries=1)
        report = score_store(store, Settings(), [AskingMetric(client)], progress=False, extractor=WordExtractor())
        assert report.scored["asking"] == 2 and report.failed["score:asking"] == 1
        assert report.llm["calls"] == len(server.requests) == 3
        assert report.llm["parse_failures"] == {"asking.q": 1}
        assert report.llm["answered_by_kind"] == {"asking.q": 2}
        assert "LLM 3 calls (0 retried, 0 failed)" in report.summary()
        assert "parse failures: asking.q 1" in report.summary()
        # The unreadable answer was not cached: the re-run asks only for it.
        client = _client(server.base_url, store, max_retries=1)  # a pass builds its clients
        again = score_store(store, Settings(), [AskingMetric(client)], progress=False, extractor=WordExtractor())
        assert again.llm["calls"] == 1 and len(server.requests) == 4
