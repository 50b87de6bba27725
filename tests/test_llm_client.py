"""The LLM client against a scripted local OpenAI-compatible server."""

from __future__ import annotations

import pytest

from hallu_studio.config import LLMSettings
from hallu_studio.llm import LLMClient, LLMError, LLMRequest, parse_json_tolerant
from test_llm_fake_server import FakeChatServer

MSG = [{"role": "user", "content": "hello"}]


def make_client(server: FakeChatServer, store=None, *, retries: int = 3, timeout: float = 5.0,
                concurrency: int = 4) -> LLMClient:
    settings = LLMSettings(base_url=server.base_url, model="fake", timeout_s=timeout, max_retries=retries,
                           concurrency=concurrency, timeout_per_token_s=0.0)
    return LLMClient(settings, store.cache if store is not None else None, backoff_s=0.01)


def test_answer_is_cached_and_second_call_sends_nothing(store):
    with FakeChatServer([("ok", "Hi there")]) as server:
        client = make_client(server, store)
        assert client.complete(MSG, namespace="t", prompt_version="1") == "Hi there"
        assert client.complete(MSG, namespace="t", prompt_version="1") == "Hi there"
        assert len(server.requests) == 1
        # A new prompt version is a new key: no stale answer is reused.
        client.complete(MSG, namespace="t", prompt_version="2")
        assert len(server.requests) == 2
        # A fresh client on the same store hits the store cache.
        assert make_client(server, store).complete(MSG, namespace="t", prompt_version="1") == "Hi there"
        assert len(server.requests) == 2


def test_retries_429_and_500_then_succeeds(store):
    with FakeChatServer([("status", 429), ("status", 500), ("status", 503), ("ok", "fine")]) as server:
        client = make_client(server, store, retries=3)
        assert client.complete(MSG, namespace="t", prompt_version="1") == "fine"
        assert len(server.requests) == 4


def test_gives_up_with_llm_error_and_caches_nothing(store):
    with FakeChatServer([("status", 500)]) as server:
        client = make_client(server, store, retries=2)
        with pytest.raises(LLMError, match="after 3 tries"):
            client.complete(MSG, namespace="t", prompt_version="1")
        assert len(server.requests) == 3
        key = client.cache_key(MSG, namespace="t", prompt_version="1")
        assert not store.cache.get_many([key])


def test_client_error_is_not_retried(store):
    with FakeChatServer([("status", 401)]) as server:
        with pytest.raises(LLMError, match="HTTP 401"):
            make_client(server, store).complete(MSG, namespace="t", prompt_version="1")
        assert len(server.requests) == 1


def test_malformed_body_is_retried_then_reported(store):
    with FakeChatServer([("malformed", "this is not json {")]) as server:
        client = make_client(server, store, retries=1)
        with pytest.raises(LLMError):
            client.complete(MSG, namespace="t", prompt_version="1")
        assert len(server.requests) == 2
        assert not store.cache.get_many([client.cache_key(MSG, namespace="t", prompt_version="1")])


def test_slow_answer_times_out_and_is_retried(store):
    with FakeChatServer([("slow", 1.0, "late"), ("ok", "on time")]) as server:
        client = make_client(server, store, timeout=0.3, retries=2)
        assert client.complete(MSG, namespace="t", prompt_version="1") == "on time"


def test_empty_answer_is_an_error_and_not_cached(store):
    with FakeChatServer([("ok", "   "), ("ok", "now")]) as server:
        client = make_client(server, store)
        with pytest.raises(LLMError, match="empty"):
            client.complete(MSG, namespace="t", prompt_version="1")
        assert client.complete(MSG, namespace="t", prompt_version="1") == "now"


def test_complete_json_tolerant_and_unparseable_not_cached(store):
    with FakeChatServer([("ok", "I think:\n```json\n{\"a\": 1}\n```"), ("ok", "no idea, sorry"),
                         ("ok", "{'b': 2}")]) as server:
        client = make_client(server, store)
        assert client.complete_json(MSG, namespace="j", prompt_version="1") == {"a": 1}
        with pytest.raises(LLMError, match="not usable"):
            client.complete_json(MSG, namespace="j", prompt_version="2")
        # The client that got the junk answer does not ask for it twice (one scoring pass waits once) ...
        with pytest.raises(LLMError, match="not usable"):
            client.complete_json(MSG, namespace="j", prompt_version="2")
        assert len(server.requests) == 2
        # ... and it was not cached: the next pass's client asks the server again.
        assert make_client(server, store).complete_json(MSG, namespace="j", prompt_version="2") == {"b": 2}


def test_json_schema_falls_back_to_plain_text_on_400(store):
    schema = {"type": "object", "properties": {"v": {"type": "string"}}}
    with FakeChatServer([("reject_format", '{"v": "yes"}')]) as server:
        client = make_client(server, store)
        assert client.complete_json(MSG, namespace="s", prompt_version="1", json_schema=schema) == {"v": "yes"}
        assert server.requests[0]["response_format"]["type"] == "json_schema"
        assert server.requests[1]["response_format"] == {"type": "json_object", "schema": schema}  # llama-cpp-python's
        assert "response_format" not in server.requests[2]
        # Later calls skip the rejected structured output straight away.
        client.complete_json([{"role": "user", "content": "again"}], namespace="s", prompt_version="1",
                             json_schema=schema)
        assert "response_format" not in server.requests[3]


def test_batch_runs_concurrently_and_reports_failures_in_place(store):
    with FakeChatServer([("slow", 0.3, "x")]) as server:
        client = make_client(server, store, concurrency=4)
        reqs = [LLMRequest([{"role": "user", "content": f"q{i}"}], "b", "1") for i in range(4)]
        out = client.complete_many(reqs)
        assert out == ["x"] * 4
        assert server.max_in_flight >= 2  # answered side by side, not one after another
    with FakeChatServer([("slow", 0.1, "y")]) as server:
        client = make_client(server, store, concurrency=1)
        client.complete_many([LLMRequest([{"role": "user", "content": f"p{i}"}], "b", "1") for i in range(3)])
        assert server.max_in_flight == 1  # the concurrency setting is the limit
    with FakeChatServer([("status", 500)]) as server:
        client = make_client(server, None, retries=0)
        out = client.complete_many([LLMRequest(MSG, "b", "1")])
        assert isinstance(out[0], LLMError)


def test_unconfigured_settings_are_refused():
    with pytest.raises(LLMError, match="no LLM configured"):
        LLMClient(LLMSettings())


@pytest.mark.parametrize("text,expected", [
    ('{"a": 1}', {"a": 1}),
    ("Here you go: [1, 2, 3] hope it helps", [1, 2, 3]),
    ("```\n{\"k\": \"v\"}\n```", {"k": "v"}),
    ("{'x': 'single'}", {"x": "single"}),
])
def test_parse_json_tolerant(text, expected):
    assert parse_json_tolerant(text) == expected


@pytest.mark.parametrize("text", ["", "no json here", "{broken: ", "!!!"])
def test_parse_json_tolerant_refuses_junk(text):
    with pytest.raises(ValueError):
        parse_json_tolerant(text)


def test_async_batch_inside_a_running_event_loop(store):
    import asyncio

    with FakeChatServer([("slow", 0.2, "z")]) as server:
        client = make_client(server, store, concurrency=3)
        reqs = [LLMRequest([{"role": "user", "content": f"a{i}"}], "b", "1") for i in range(3)]

        async def main():
            return await client.acomplete_many(reqs), client.complete_many(reqs)  # the sync twin too

        got_async, got_sync = asyncio.run(main())
        assert got_async == ["z"] * 3 and got_sync == ["z"] * 3
        assert server.max_in_flight >= 2
        assert len(server.requests) == 3  # the sync batch was all cache hits


def test_complete_checked_caches_only_accepted_answers(store):
    from hallu_studio.llm import LLMAnswerError

    def number(text: str) -> int:
        if not text.strip().isdigit():
            raise ValueError("not a number")
        return int(text)

    with FakeChatServer([("ok", "seven"), ("ok", "7")]) as server:
        client = make_client(server, store)
        with pytest.raises(LLMAnswerError) as info:
            client.complete_checked(MSG, namespace="n", prompt_version="1", check=number)
        assert info.value.answer == "seven"
        client = make_client(server, store)  # the next pass
        assert client.complete_checked(MSG, namespace="n", prompt_version="1", check=number) == 7
        assert client.complete_checked(MSG, namespace="n", prompt_version="1", check=number) == 7
        assert len(server.requests) == 2


def test_max_tokens_is_sent_and_is_part_of_the_cache_key(store):
    with FakeChatServer([("ok", "a"), ("ok", "b")]) as server:
        client = make_client(server, store)
        assert client.complete(MSG, namespace="m", prompt_version="1", max_tokens=16) == "a"
        assert server.requests[0]["max_tokens"] == 16
        assert client.complete(MSG, namespace="m", prompt_version="1", max_tokens=16) == "a"  # cached
        assert len(server.requests) == 1
        # A changed cap is another request: an answer made under the old cap is not returned.
        assert client.complete(MSG, namespace="m", prompt_version="1", max_tokens=32) == "b"
        assert len(server.requests) == 2 and server.requests[1]["max_tokens"] == 32
        keys = {client.cache_key(MSG, namespace="m", prompt_version="1", max_tokens=n) for n in (16, 32)}
        assert len(keys) == 2 and client.cache_key(MSG, namespace="m", prompt_version="1") not in keys


def test_answer_cut_at_max_tokens_is_a_parse_failure_and_not_cached(store):
    from hallu_studio.llm import LLMAnswerError

    schema = {"type": "object", "properties": {"items": {"type": "array"}}}
    # The cut answer would even read (plain text, parsed leniently): being cut is what makes it unusable.
    with FakeChatServer([("length", "7"), ("length", '{"items": [1, 1, 1, 1'), ("ok", "8")]) as server:
        client = make_client(server, store)
        stats = client.dispatcher.stats
        with pytest.raises(LLMAnswerError, match=r"cut at max_tokens=4 \(finish_reason 'length'\)") as info:
            client.complete_checked(MSG, namespace="cut", prompt_version="1", check=int, max_tokens=4)
        assert info.value.truncated and info.value.answer == "7"
        assert stats.parse_failures["cut"] == 1 and stats.answered_by_kind["cut"] == 0
        assert not store.cache.get_many([client.cache_key(MSG, namespace="cut", prompt_version="1", max_tokens=4)])
        with pytest.raises(LLMAnswerError, match="cut at"):
            client.complete_json(MSG, namespace="cut-json", prompt_version="1", json_schema=schema, max_tokens=4)
        assert stats.parse_failures["cut-json"] == 1
        # This client does not wait for the cut answer twice ...
        with pytest.raises(LLMAnswerError, match="cut at"):
            client.complete_checked(MSG, namespace="cut", prompt_version="1", check=int, max_tokens=4)
        assert len(server.requests) == 2 and stats.parse_failures["cut"] == 1
        # ... and nothing was cached: the next pass's client asks the server again and keeps the finished answer.
        client = make_client(server, store)
        assert client.complete_checked(MSG, namespace="cut", prompt_version="1", check=int, max_tokens=4) == 8
        assert client.complete_checked(MSG, namespace="cut", prompt_version="1", check=int, max_tokens=4) == 8
        assert len(server.requests) == 3
