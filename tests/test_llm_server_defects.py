"""The LLM paths where a real server broke them (issue 22), each against the scripted fake server.

- a cut or unreadable answer (judge, HalFscore's A.8 matcher, reviser, extractor) is a failure of its
  response, never a stored score, and the next ``score`` asks exactly it again; ``info`` stops counting
  the failure once the response is scored;
- a missing ``[llm]`` and an unknown model are one line and exit status 2, before any work;
- ``OPENAI_BASE_URL`` is a fallback, and the settings say which URL is in force and where it came from;
- the ``json_schema`` -> ``json_object`` fallback is learnt once per endpoint;
- the reviser's prompt depends on the response alone, and its caps on what each answer holds.
"""

from __future__ import annotations

import doctest
import importlib
import json
import re
from typing import Any, Sequence

import pytest

from hallu_studio.cli import main
from hallu_studio.config import LLMSettings, Settings, load_settings, overriding_env
from hallu_studio.config_edit import describe_settings
from hallu_studio.extraction.spans import find_span
from hallu_studio.llm import LLMClient, LLMConfigError, LLMRequest, endpoint
from hallu_studio.model import (Benchmark, ConceptSet, ObjectConcept, RelationConcept, Response, Run, Sample,
                                SceneGraph)
from hallu_studio.pipelines.scoring import CONCEPTS, score_store
from hallu_studio.store import Store
from test_llm_fake_server import FakeChatServer

# Two images, each with its response; every prompt about the second one names a dog, and its answers go wrong.
GRAPHS = [{"objects": [{"id": "1", "name": "cat"}, {"id": "2", "name": "mat"}],
           "relations": [{"subject": "1", "predicate": "on", "object": "2"}]},
          {"objects": [{"id": "1", "name": "dog"}, {"id": "2", "name": "table"}],
           "relations": [{"subject": "1", "predicate": "under", "object": "2"}]}]
TEXTS = ["A cat is on the mat.", "A dog is under the table."]


class ThreeWordExtractor:
    """'A cat is on the mat.' -> objects cat, mat and the relation (cat, on, mat): no LLM, no parser."""

    name = "three-words"

    def config(self) -> dict[str, Any]:
        return {}

    def extract(self, texts: Sequence[str]) -> list[ConceptSet]:
        out = []
        for text in texts:
            m = re.match(r"A (\w+) is (\w+) the (\w+)\.", text)
            assert m, text
            s, p, o = m.groups()
            out.append(ConceptSet(objects=[ObjectConcept(s, find_span(text, [s])), ObjectConcept(o, find_span(text, [o]))],
                                  relations=[RelationConcept(s, p, o, find_span(text, [s, p, o]))]))
        return out


def _seed(store: Store) -> list[str]:
    store.add_samples(Benchmark("b"), [Sample(id=f"b/{i}", benchmark="b", image_key=str(i), task="caption",
                                              scene_graph=SceneGraph.from_dict(GRAPHS[i])) for i in range(len(TEXTS))])
    store.add_run(Run(id="r", benchmark="b", model="m", backend="recorded"))
    responses = [Response("r", f"b/{i}", t) for i, t in enumerate(TEXTS)]
    store.add_responses(responses)
    return [r.id for r in responses]


def _kind(prompt: str) -> str:
    """Which LLM step a user prompt belongs to."""
    if "Statement triplet:" in prompt:
        return "judge"
    if "Incorrect Serial Numbers" in prompt:
        return "matcher"
    if "[BEGIN API]" in prompt:
        return "reviser"
    if "ONLY output the caption" in prompt:
        return "revision"
    if prompt.startswith("Extract the object entity words"):
        return "objects"
    if prompt.startswith("Identify the attributes"):
        return "attributes"
    if prompt.startswith("List the object relations"):
        return "relations"
    raise AssertionError(f"unexpected prompt {prompt[:80]!r}")


class Scripted:
    """Answers every LLM step well, except the step ``broken`` about the dog while ``failing`` is set: there
    it answers cut at the cap (``how="cut"``) or with words that name no choice (``how="junk"``)."""

    def __init__(self, broken: str, how: str) -> None:
        self.broken, self.how, self.failing = broken, how, True

    def __call__(self, prompt: str) -> Any:
        kind = _kind(prompt)
        if self.failing and kind == self.broken and "dog" in prompt.lower():
            return ('{"answer": "y', "length") if self.how == "cut" else "I would rather not say."
        return json.dumps({
            "judge": {"answer": "yes"},
            "matcher": {"incorrect_serial_numbers": []},
            "reviser": {"api_calls": ["GetDescription(<object cat_0>)"]},
            "revision": {"caption": "A cat is on the mat."},
            "objects": {"objects": ["dog", "table"] if "dog" in prompt else ["cat", "mat"]},
            "attributes": {"attributes": []},
            "relations": {"relations": [{"subject": "dog", "predicate": "under", "object": "table"}]
                          if "dog" in prompt else [{"subject": "cat", "predicate": "on", "object": "mat"}]},
        }[kind])


# step -> (the setting that sends it to the LLM, the metric scored, the stage a failure is recorded under)
STEPS = {"judge": (("trihe_judge", "llm"), "chair", "trihe", "score:trihe"),
         "matcher": (("halfscore_matcher", "llm"), "chair", "halfscore", "score:halfscore"),
         "reviser": (("reviser", "llm"), "chair", "edit", "score:edit"),
         "objects": (("extractor", "llm"), "chair", "chair", f"score:{CONCEPTS}")}


@pytest.mark.parametrize("how", ["cut", "junk"])
@pytest.mark.parametrize("step", list(STEPS))
def test_a_cut_or_unreadable_answer_is_a_failure_and_the_next_score_asks_only_it_again(store, step, how):
    (key, value), _, metric, stage = STEPS[step]
    ids = _seed(store)
    script = Scripted(step, how)
    with FakeChatServer([("by_content", script)]) as server:
        settings = Settings()
        settings.llm = LLMSettings(base_url=server.base_url, model="fake", max_retries=0, timeout_per_token_s=0.0)
        setattr(settings.scoring, key, value)
        extractor = None if step == "objects" else ThreeWordExtractor()
        first = score_store(store, settings, [metric], progress=False, extractor=extractor)
        # The dog's response failed as a whole: no score (not even part of one), a failure naming the stage
        # and the reason; the cat's response was scored.
        assert first.failed == {stage: 1}, first.summary()
        assert store.get_scores(ids[0], metric) and not store.get_scores(ids[1], metric)
        failure, = store.list_failures(run_id="r")
        assert (failure["sample_id"], failure["stage"]) == ("b/1", stage)
        reason = "cut at" if how == "cut" else ("unreadable" if step == "judge" else "not usable")
        assert reason in failure["error"], failure["error"]
        assert store.list_runs()[0]["failures"] == 1
        asked = len(server.requests)

        script.failing = False  # the server now answers in full (a larger cap, a better model)
        second = score_store(store, settings, [metric], progress=False, extractor=extractor)
        assert second.scored[metric] == 1 and not second.failed, second.summary()
        # Only what failed was asked again: the cat's answers and the dog's good ones came from the cache.
        again = [_kind(r["messages"][-1]["content"]) for r in server.requests[asked:]]
        assert again and set(again) <= {step, "judge", "revision", "attributes", "relations"}, again
        assert all("dog" in r["messages"][-1]["content"].lower() for r in server.requests[asked:])
        # The failure is history now: it stays in the log, but the run no longer counts it.
        assert store.list_runs()[0]["failures"] == 0 and not store.list_failures(run_id="r", open_only=True)
        assert len(store.list_failures(run_id="r")) == 1
        if metric == "trihe":
            verdicts = [t["verdict"] for t in store.get_scores(ids[1], "trihe")[0].evidence["triplets"]]
            assert verdicts == ["supported"]
        third = score_store(store, settings, [metric], progress=False, extractor=extractor)
        assert sum(third.scored.values()) == 0 and not third.failed


def _cli_store(tmp_path) -> str:
    db = tmp_path / "s.duckdb"
    with Store(db) as st:
        _seed(st)
    return str(db)


def _toml(tmp_path, server: FakeChatServer | None, model: str = "fake", **scoring: str) -> str:
    lines = []
    if server is not None:
        lines += ["[llm]", f'base_url = "{server.base_url}"', f'model = "{model}"', "max_retries = 0",
                  "timeout_per_token_s = 0.0"]
    lines += ["[scoring]"] + [f'{k} = "{v}"' for k, v in scoring.items()]
    path = tmp_path / "llm.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_cli_a_cut_judge_answer_fails_exits_1_and_is_asked_again_and_info_forgets_it(tmp_path, capsys):
    db = _cli_store(tmp_path)
    script = Scripted("judge", "cut")
    with FakeChatServer([("by_content", script)]) as server:
        config = _toml(tmp_path, server, trihe_judge="llm")
        args = ["score", "--metrics", "trihe", "--db", db, "--config", config, "--no-progress"]
        assert main(args) == 1  # some item failed: status 1, as docs/guide/llm-judge.md says
        out = capsys.readouterr()
        assert "scored 1 (trihe 1)" in out.out and "FAILED 1 (score:trihe 1)" in out.out
        assert "parse failures: trihe.supported 1" in out.out
        assert "failed: " in out.err and "(dog, under, table) supported?: cut at its length limit" in out.err
        assert "note: scoring.trihe_judge = llm: LLM endpoint " + server.base_url in out.err
        assert main(["info", "--db", db]) == 0
        assert "2 responses, 1 failures" in capsys.readouterr().out

        script.failing = False
        asked = len(server.requests)
        assert main(args) == 0
        assert "scored 1 (trihe 1)" in capsys.readouterr().out
        assert len(server.requests) == asked + 1  # the dog's question alone
        assert main(args) == 0
        assert "scored 0 (nothing missing)" in capsys.readouterr().out
        assert main(["info", "--db", db]) == 0
        assert "2 responses, 0 failures" in capsys.readouterr().out


@pytest.mark.parametrize("setting,metrics", [("extractor", "chair"), ("trihe_judge", "trihe"),
                                             ("reviser", "edit"), ("halfscore_matcher", "halfscore"),
                                             ("trihe_extraction", "trihe")])
def test_an_llm_step_without_llm_settings_is_one_line_before_any_work(tmp_path, capsys, monkeypatch, setting,
                                                                      metrics):
    import hallu_studio.metrics.registry as registry

    def too_late(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the extractor or a metric was built before the settings were checked")

    monkeypatch.setattr(registry, "make_extractor", too_late)
    monkeypatch.setattr(registry, "make_metrics", too_late)
    db = _cli_store(tmp_path)
    config = _toml(tmp_path, None, **{setting: "llm-trihe" if setting == "trihe_extraction" else "llm"})
    for extra in ([], ["--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "out.jsonl")]):
        assert main(["score", "--metrics", metrics, "--db", db, "--config", config, *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"error: scoring.{setting} = ") and "Traceback" not in err
        assert "needs an LLM, but llm.base_url and llm.model are not set" in err and config in err


def test_a_model_the_server_does_not_list_is_refused_once_per_endpoint(tmp_path, capsys):
    with FakeChatServer([("ok", '{"answer": "yes"}')], models=["qwen2.5-0.5b-instruct", "llama3:latest"]) as server:
        with pytest.raises(LLMConfigError, match=r"llm.model 'qwen2.5-0.5b' is not served at .* \(did you mean "
                                                 r"'qwen2.5-0.5b-instruct'\?\); GET .*/models lists: "
                                                 r"qwen2.5-0.5b-instruct, llama3:latest"):
            LLMClient(LLMSettings(base_url=server.base_url, model="qwen2.5-0.5b"))
        LLMClient(LLMSettings(base_url=server.base_url, model="qwen2.5-0.5b-instruct"))
        LLMClient(LLMSettings(base_url=server.base_url, model="llama3"))  # Ollama's name for llama3:latest
        assert server.models_asked == 1  # once per endpoint, whatever the clients
        # Through the command line: one line, status 2, and no chat request at all.
        db = _cli_store(tmp_path)
        config = _toml(tmp_path, server, model="qwen-typo", trihe_judge="llm")
        assert main(["score", "--metrics", "trihe", "--db", db, "--config", config, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith("error: llm.model 'qwen-typo' is not served at")
        assert not server.requests


@pytest.mark.parametrize("models", [None, []])
def test_a_server_that_lists_no_models_is_not_checked(models):
    with FakeChatServer([("ok", "hi")], models=models) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="anything"), backoff_s=0.01)
        assert client.complete([{"role": "user", "content": "x"}], namespace="t", prompt_version="1") == "hi"
    # An endpoint that cannot be reached is not checked either: its calls say so, with retries.
    LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", model="anything"))


def test_the_json_schema_fallback_is_learnt_once_per_endpoint(store):
    schema = {"type": "object", "properties": {"v": {"type": "string"}}}
    msg = [{"role": "user", "content": "hello"}]
    with FakeChatServer([("ok", '{"v": "yes"}')], plain_text_only=500) as server:
        settings = LLMSettings(base_url=server.base_url, model="fake", timeout_per_token_s=0.0)
        first = LLMClient(settings, store.cache, backoff_s=0.01)
        assert first.complete_json(msg, namespace="a", prompt_version="1", json_schema=schema) == {"v": "yes"}
        forms = [r.get("response_format", {}).get("type") for r in server.requests]
        assert forms == ["json_schema", "json_object", None]
        # Another client object (another step: the judge after the extractor) starts from what was learnt.
        other = LLMClient(settings, store.cache, backoff_s=0.01)
        assert other.format_style is None
        assert other.complete_json(msg, namespace="b", prompt_version="1", json_schema=schema) == {"v": "yes"}
        assert len(server.requests) == 4 and "response_format" not in server.requests[3]
    assert endpoint.facts(server.base_url).format_style == "json_schema"  # forgotten with the server
    # A first batch side by side: each form is still asked once (the calls wait for the first to settle it).
    with FakeChatServer([("slow", 0.05, '{"v": "yes"}')], plain_text_only=400) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake", timeout_per_token_s=0.0, concurrency=4),
                           store.cache, backoff_s=0.01)
        got = client.complete_many([LLMRequest([{"role": "user", "content": f"q{i}"}], "c", "1", json_schema=schema,
                                               check=lambda v: v) for i in range(6)])
        assert got == [{"v": "yes"}] * 6
        forms = [r.get("response_format", {}).get("type") for r in server.requests]
        assert forms.count("json_schema") == 1 and forms.count("json_object") == 1 and forms.count(None) == 6


def test_openai_base_url_is_a_fallback_and_the_settings_say_which_url_is_in_force(tmp_path):
    from hallu_studio.llm.endpoint import in_force

    config = tmp_path / "s.toml"
    config.write_text('[llm]\nbase_url = "http://file:1/v1"\nmodel = "m"\n')
    base = {"HALLU_STUDIO_CONFIG": str(config)}
    cases = [({}, "http://file:1/v1", f"settings file {config}"),
             ({"OPENAI_BASE_URL": "http://openai:2/v1"}, "http://file:1/v1", f"settings file {config}"),
             ({"OPENAI_BASE_URL": "http://openai:2/v1", "HALLU_STUDIO_LLM_BASE_URL": "http://ours:3/v1"},
              "http://ours:3/v1", "environment variable HALLU_STUDIO_LLM_BASE_URL")]
    for env, url, origin in cases:
        settings = load_settings(env={**base, **env})
        assert (settings.llm.base_url, settings.origin("llm.base_url")) == (url, origin), env
        assert f"LLM endpoint {url} (from {origin}); LLM model m (from settings file {config})" == in_force(settings)
    # Without a file setting it, OPENAI_BASE_URL is used, and says so.
    settings = load_settings(env={"HALLU_STUDIO_CONFIG": str(tmp_path / "none.toml"), "OPENAI_BASE_URL": "http://o/v1"})
    assert settings.llm.base_url == "http://o/v1"
    assert settings.origin("llm.base_url") == "environment variable OPENAI_BASE_URL"
    info = {i.name: i for i in describe_settings(env={**base, "OPENAI_BASE_URL": "http://openai:2/v1"})}
    assert (info["llm.base_url"].value, info["llm.base_url"].source) == ("http://file:1/v1", "file")
    assert info["llm.base_url"].env_vars == ("HALLU_STUDIO_LLM_BASE_URL", "OPENAI_BASE_URL")
    # The Settings view's "still overridden by the environment" never names the fallback.
    assert "llm.base_url" not in overriding_env({"OPENAI_BASE_URL": "http://openai:2/v1"})
    assert overriding_env({"HALLU_STUDIO_LLM_BASE_URL": "http://x/v1"}) == {"llm.base_url": "HALLU_STUDIO_LLM_BASE_URL"}


def test_info_and_score_say_which_llm_is_in_force(tmp_path, capsys, monkeypatch):
    db = _cli_store(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("HALLU_STUDIO_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("HALLU_STUDIO_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["info", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "LLM endpoint http://127.0.0.1:9/v1 (from environment variable OPENAI_BASE_URL); LLM model not set" in out


def test_the_reviser_prompt_depends_on_the_response_alone(store):
    from hallu_studio.revision.llm_reviser import LLMReviser
    from hallu_studio.revision.matching import ObjectMatcher

    graphs = [SceneGraph.from_dict(g) for g in GRAPHS]
    script = Scripted("none", "cut")
    with FakeChatServer([("by_content", script)]) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake", timeout_per_token_s=0.0), store.cache,
                           backoff_s=0.01)
        reviser = LLMReviser(client, ObjectMatcher())
        reviser.revise_many(TEXTS, graphs)
        asked = len(server.requests)
        # The dog's response alone, then in another batch at another position: its prompts are the same,
        # so its answers come from the cache.
        reviser.revise_many([TEXTS[1]], [graphs[1]])
        reviser.revise_many([TEXTS[1], TEXTS[0]], graphs[::-1])
        assert len(server.requests) == asked == 4
        assert all("<CASE 1>" in r["messages"][1]["content"] for r in server.requests)


def test_the_reviser_caps_fit_each_answer_not_ten_times_the_caption():
    from hallu_studio.llm.dispatch import CHARS_PER_TOKEN, revise_caption_tokens, revise_queries_tokens

    caption = "A brown dog sits under a wooden table next to a red ball and a small grey cat. " * 12  # ~1,000 chars
    tokens = len(caption) / CHARS_PER_TOKEN
    # The revised caption is an edit of the caption: about its length, with room for its JSON.
    assert tokens < revise_caption_tokens(caption) <= 1.25 * tokens + 32 + 1
    # The calls: at most ~12 tokens for each concept, a few per sentence (measured: bench_reviser_caps.py).
    assert revise_queries_tokens(caption) <= 2 * tokens + 256
    # Before: 512 + 4 per caption token for both, ~10 times a typical caption's tokens.
    assert revise_caption_tokens(caption) < 512 + 4 * tokens


@pytest.mark.parametrize("name", ["hallu_studio.llm.endpoint", "hallu_studio.llm.errors", "hallu_studio.llm.dispatch",
                                  "hallu_studio.metrics.registry", "hallu_studio.config"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def test_judge_agreement_leaves_out_responses_the_llm_judge_could_not_judge(store):
    """Before, an unreadable answer was the verdict 'unparseable' (not hallucinated); now it is no verdict: the
    analysis leaves that response out at both levels and says so, instead of losing the whole LLM judge."""
    from hallu_studio.judges.llm_judge import LLMJudge
    from hallu_studio.studies.analyses.judge_agreement import sentence_level, triplet_level
    from hallu_studio.studies.analyses.rescoring import Answer

    samples = [Sample(id=f"b/{i}", benchmark="b", image_key=str(i), task="caption",
                      scene_graph=SceneGraph.from_dict(GRAPHS[i])) for i in range(2)]
    answers = [Answer(Response("r", s.id, t), s, "m") for s, t in zip(samples, TEXTS)]
    with FakeChatServer([("by_content", Scripted("judge", "junk"))]) as server:
        judge = LLMJudge(LLMClient(LLMSettings(base_url=server.base_url, model="fake", timeout_per_token_s=0.0),
                                   store.cache, backoff_s=0.01))
        unjudged: list[str] = []
        shares = triplet_level(judge, answers, ThreeWordExtractor().extract(TEXTS), unjudged)
        assert shares == {answers[0].response.id: 0.0} and unjudged == [answers[1].response.id]
        assert sentence_level(judge, answers, unjudged) == {answers[0].response.id: 0.0}
        assert unjudged == [answers[1].response.id] * 2
