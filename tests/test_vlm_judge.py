"""The image judge (``judges.vlm_judge``) against a scripted OpenAI-compatible server that looks at no image but
answers image questions from a script (``test_llm_fake_server.FakeChatServer``'s "vision" step, with logprobs).

The script: a scene of a grey cat on a wooden table with chairs (what ``tiny_models.tiny_benchmark``'s first graph
holds); any statement naming a dog, a horse or "under" is false, the rest true.
"""

from __future__ import annotations

import io
import json
import threading

import pytest

from hallu_studio.config import Settings
from hallu_studio.judges.base import JudgeReference
from hallu_studio.components import Components
from hallu_studio.judges.vlm_judge import ReferenceThenImage, VLMJudge, statement
from hallu_studio.model import Benchmark, Response, Run, Sample
from test_llm_fake_server import FakeChatServer
from tiny_models import tiny_benchmark

FALSE_WORDS = ("dog", "horse", "under")


def _one(store, response_id: str, metric: str):
    """The response's one score of ``metric`` (None when it has none)."""
    got = store.get_scores(response_id, metric)
    assert len(got) <= 1
    return got[0] if got else None


def scene_answer(question: str, images: int):
    assert images == 1, "every image-judge question carries the image"
    statement_part = question.split("?")[0].lower()
    if any(w in statement_part for w in FALSE_WORDS):
        return "No, it is not.", 0.1
    return "Yes.", 0.9


def _png(colour=(200, 30, 30)) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40, 32), colour).save(buf, "PNG")
    return buf.getvalue()


def _settings(server: FakeChatServer, **scoring) -> Settings:
    s = Settings()
    s.scoring.vlm_judge_model = f"openai:judge-vl@{server.base_url}"
    s.scoring.vlm_judge_concurrency = 4
    for k, v in scoring.items():
        setattr(s.scoring, k, v)
    return s


def test_claims_become_questions_with_the_image_and_answers_become_verdicts():
    from hallu_studio.caching import MemoryCache

    with FakeChatServer([("vision", scene_answer)]) as server:
        judge = Components(_settings(server, trihe_judge="vlm"), MemoryCache()).triplet_judge()
        assert isinstance(judge, VLMJudge) and judge.name == "vlm:openai:judge-vl"
        ref = JudgeReference(source="none", image=_png())
        claims = [("cat", "on", "table"), ("dog", "is in", "the image"), ("cat", "under", "table"),
                  ("dog", "on", "table")]
        got = judge.judge(claims, ref)
        assert [j.verdict for j in got] == ["supported", "object", "relation", "object"]
        assert [j.kind for j in got] == ["relation", "object", "relation", "object"]
        assert got[0].probability == pytest.approx(0.9) and got[1].probability == pytest.approx(0.1)
        assert "answered 'Yes.'" in got[0].reason and got[0].judge == "vlm:openai:judge-vl"
        assert "not in the image: dog" in got[3].reason
        questions = [r["messages"][0]["content"][1]["text"] for r in server.requests]
        assert ("Statement: The cat is on the table. Is this statement is right according to the image? Please "
                "answer yes or no.") in questions
        assert all(r["logprobs"] and r["max_tokens"] == 32 for r in server.requests)
        asked = len(server.requests)
        # the same claims again: every answer from the cache, no call
        assert [j.verdict for j in judge.judge(claims, ref)] == [j.verdict for j in got]
        assert len(server.requests) == asked


def test_templates_and_config_key_follow_model_and_template():
    from hallu_studio.metrics.keys import current_config_keys

    with FakeChatServer([("vision", scene_answer)]) as server:
        base = _settings(server, trihe_judge="vlm")
        trihe_wording = _settings(server, trihe_judge="vlm", vlm_judge_template="tri-he")
        other_model = _settings(server, trihe_judge="vlm")
        other_model.scoring.vlm_judge_model = f"openai:other-vl@{server.base_url}"
        keys = [current_config_keys(s).get("trihe") for s in (base, trihe_wording, other_model, Settings())]
        assert len(set(keys)) == 4 and None not in keys
        halfscore = [current_config_keys(s).get("halfscore") for s in (base, other_model, Settings())]
        assert len(set(halfscore)) == 3
        judge = Components(trihe_wording).triplet_judge()
        assert judge.question(("cat", "on", "table")).startswith("Statement triplet: (cat, on, table)")


def test_unreadable_answers_and_server_errors_fail_and_are_not_cached():
    from hallu_studio.caching import MemoryCache
    from hallu_studio.judges.vlm_judge import ImageJudgeError

    cache = MemoryCache()
    with FakeChatServer([("vision", lambda q, n: "I cannot tell.")]) as server:
        judge = Components(_settings(server, trihe_judge="vlm"), cache).triplet_judge()
        with pytest.raises(ImageJudgeError, match="answered neither yes nor no"):
            judge.judge([("cat", "on", "table")], JudgeReference(source="none", image=_png()))
    assert cache.values() == {}
    with FakeChatServer([("status", 400)]) as server:
        judge = Components(_settings(server, trihe_judge="vlm"), cache).triplet_judge()
        with pytest.raises(ImageJudgeError, match="HTTP 400"):
            judge.judge([("cat", "on", "table")], JudgeReference(source="none", image=_png()))
    assert cache.values() == {}


def test_which_samples_the_image_judge_takes():
    from hallu_studio.metrics.trihe import TriHEMetric

    with FakeChatServer([("vision", scene_answer)]) as server:
        alone = TriHEMetric.from_settings(_settings(server, trihe_judge="vlm"))
        combined = TriHEMetric.from_settings(_settings(server))
    bare = Sample(id="own/1", benchmark="own", image_key="1", image_sha256="ab" * 32)
    assert alone.not_applicable(bare) is None and combined.not_applicable(bare) is None
    assert "needs the image" in alone.not_applicable(Sample(id="own/2", benchmark="own", image_key="2"))
    assert "needs a scene graph" in combined.not_applicable(Sample(id="own/2", benchmark="own", image_key="2"))
    question = Sample(id="own/3", benchmark="own", image_key="3", image_sha256="ab" * 32, task="yes_no",
                      question="Is there a cat?", answer="yes")
    assert alone.not_applicable(question) is not None  # Tri-HE's tasks stay its own


def test_reference_settles_what_it_can_and_the_image_judge_the_rest():
    with FakeChatServer([("vision", scene_answer)]) as server:
        judge = Components(_settings(server)).triplet_judge()  # graph judge, image judge for what it leaves open
        assert isinstance(judge, ReferenceThenImage) and judge.name == "graph+vlm:openai:judge-vl"
        assert Components(_settings(server, vlm_judge_unsettled="reference")).triplet_judge().name == "graph"


def _store_with_responses(store, texts: dict[str, str]):
    bench, samples, images = tiny_benchmark(n_images=2)
    captions = [s for s in samples if s.task == "caption"]
    # a benchmark of the same images with no reference at all (the user's own images)
    own = [Sample(id=f"own/{i}", benchmark="own", image_key=s.image_key, image_sha256=s.image_sha256)
           for i, s in enumerate(captions)]
    store.add_samples(bench, captions, images)
    store.add_samples(Benchmark(name="own"), own, images)
    run = Run(id="run-t", benchmark=bench.name, model="m", backend="recorded")
    store.add_run(run)
    responses = [Response(run.id, s.id, texts[s.image_key]) for s in [*captions, *own]]
    store.add_responses(responses)
    return responses


TEXTS = {"img0": "A grey cat is on a wooden table. A dog sits under the table.",
         "img1": "A tall man is riding a brown horse."}


def test_score_store_end_to_end_cached_and_concurrent(store):
    from hallu_studio.pipelines.scoring import score_store

    import time

    responses = _store_with_responses(store, TEXTS)

    def slow(q, n):  # long enough for questions to overlap
        time.sleep(0.05)
        return scene_answer(q, n)

    with FakeChatServer([("vision", slow)]) as server:
        settings = _settings(server, trihe_judge="vlm")
        report = score_store(store, settings, ["trihe", "halfscore"], progress=False)
        assert not report.failures, report.failures
        asked = len(server.requests)
        assert asked > 0 and server.max_in_flight > 1  # questions side by side
        own = _one(store, responses[2].id, "trihe")
        assert own is not None and own.undefined_reason is None
        rows = own.evidence["triplets"]
        assert own.evidence["judge"] == "vlm:openai:judge-vl"
        dog = [t for t in rows if t["triplet"][0] == "dog"]
        assert dog and all(t["verdict"] == "object" and "not in the image: dog" in t["reason"] for t in dog), rows
        assert all(t["judge"] == "vlm:openai:judge-vl" and 0 <= t["probability"] <= 1 for t in rows)
        assert own.values["hallucinated"] >= 1
        half = _one(store, responses[2].id, "halfscore")
        assert half.values["precision"] is not None and half.values["recall"] is None
        assert "recall" in (half.undefined_reason or "") or half.evidence.get("recall_undefined")
        assert half.evidence["judge"] == "vlm:openai:judge-vl"
        # settings changed elsewhere (template): rescored; the same settings: nothing asked again
        report = score_store(store, _settings(server, trihe_judge="vlm"), ["trihe", "halfscore"], progress=False)
        assert sum(report.scored.values()) == 0 and len(server.requests) == asked


def test_score_store_with_partial_references_names_each_verdicts_judge(store):
    from hallu_studio.pipelines.scoring import score_store

    responses = _store_with_responses(store, TEXTS)
    with FakeChatServer([("vision", scene_answer)]) as server:
        report = score_store(store, _settings(server), ["trihe"], progress=False)
        assert not report.failures, report.failures
    judged = _one(store, responses[0].id, "trihe")
    assert judged.evidence["judge"] == "graph+vlm:openai:judge-vl"
    judges = {t.get("judge") for t in judged.evidence["triplets"]}
    assert "graph" in judges
    own = _one(store, responses[2].id, "trihe")
    assert own.undefined_reason is None
    assert all(t["judge"] == "vlm:openai:judge-vl" and t["reason"].startswith("no reference")
               for t in own.evidence["triplets"])


def test_failures_are_recorded_not_scored_and_asked_again(store):
    from hallu_studio.pipelines.scoring import score_store

    responses = _store_with_responses(store, TEXTS)
    flaky = {"fail": True}

    def answer(q, n):
        if flaky["fail"] and "horse" in q:
            return "hmm"
        return scene_answer(q, n)

    with FakeChatServer([("vision", answer)]) as server:
        report = score_store(store, _settings(server, trihe_judge="vlm"), ["trihe"], progress=False)
        failed = {f.split(":")[0] for f in report.failures}
        assert report.failures and _one(store, responses[1].id, "trihe") is None
        assert _one(store, responses[0].id, "trihe") is not None
        flaky["fail"] = False
        asked = len(server.requests)
        report = score_store(store, _settings(server, trihe_judge="vlm"), ["trihe"], progress=False)
        assert not report.failures and _one(store, responses[1].id, "trihe") is not None
        # only the failed responses' questions that had failed went out again
        assert 0 < len(server.requests) - asked <= 4
        assert failed


def test_stateless_score_input_with_images(tmp_path):
    from hallu_studio.pipelines.scoring_jsonl import score_jsonl
    from hallu_studio.store import CacheFile

    (tmp_path / "imgs").mkdir()
    (tmp_path / "imgs" / "a.png").write_bytes(_png())
    lines = [{"id": "a", "response": TEXTS["img0"], "image_path": "imgs/a.png"},
             {"id": "b", "response": TEXTS["img0"], "image_path": "imgs/a.png",
              "reference_text": ["A grey cat on a wooden table."]},
             {"id": "c", "response": "A cat.", "image_path": "imgs/missing.png"}]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with FakeChatServer([("vision", scene_answer)]) as server, CacheFile(tmp_path / "cache.duckdb") as cache_file:
        report = score_jsonl(src, tmp_path / "out.jsonl", _settings(server), ["trihe", "halfscore"],
                             cache=cache_file.cache)
        out = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
        assert report.scored == 2 and "missing.png" in out[2]["error"]
        assert out[0]["evidence"]["trihe"]["judge"] == "graph+vlm:openai:judge-vl"
        assert out[0]["trihe"]["hallucinated"] >= 1 and out[0]["halfscore"]["recall"] is None
        assert out[1]["halfscore"]["recall"] is not None
        asked = len(server.requests)
        score_jsonl(src, tmp_path / "out2.jsonl", _settings(server), ["trihe", "halfscore"], cache=cache_file.cache)
        assert len(server.requests) == asked  # the second run makes no call


def test_transformers_path_with_a_tiny_random_vision_language_model(store, tmp_path, monkeypatch):
    """The same judge through the transformers backend: a tiny random LLaVA built from a config (no hub). Its words
    are gibberish; its yes / no token probabilities are real, and the verdicts are read from them."""
    pytest.importorskip("torch")
    from hallu_studio.backends.transformers_backend import TransformersBackend
    from hallu_studio.pipelines.scoring import score_store
    from tiny_models import build_tiny_llava

    model_dir = build_tiny_llava(tmp_path / "tiny-llava")
    calls = []
    generate = TransformersBackend.generate
    monkeypatch.setattr(TransformersBackend, "generate", lambda self, reqs: calls.append(len(reqs)) or generate(self, reqs))
    responses = _store_with_responses(store, TEXTS)
    settings = Settings()
    settings.scoring.trihe_judge = "vlm"
    settings.scoring.vlm_judge_model = f"transformers:{model_dir}"
    report = score_store(store, settings, ["trihe", "halfscore"], progress=False)
    assert not report.failures, report.failures
    assert calls and sum(calls) > 0
    score = _one(store, responses[2].id, "trihe")
    assert score.evidence["judge"] == f"vlm:transformers:{model_dir}"
    assert all(0.0 <= t["probability"] <= 1.0 and t["verdict"] in ("supported", "object", "relation")
               for t in score.evidence["triplets"])
    calls.clear()
    settings.scoring.unverifiable = "ignore"  # re-keys HalFscore; it asks the questions Tri-HE asked
    report = score_store(store, settings, ["trihe", "halfscore"], progress=False)
    assert report.scored["halfscore"] == len(responses) and sum(calls) == 0  # every answer from the store's cache


def test_settings_view_lists_and_checks_the_image_judge(store):
    from hallu_studio.app.tabs import settings as view
    from hallu_studio.app.toasts import Mistake
    from hallu_studio.config_edit import setting_infos

    infos = {i.name: i for i in setting_infos(Settings())}
    assert infos["scoring.vlm_judge_template"].choices == ("faithscore", "tri-he")
    assert "vlm" in infos["scoring.trihe_judge"].choices and "image" in infos["scoring.vlm_judge_model"].help
    assert {"scoring.vlm_judge_model", "scoring.vlm_judge_template", "scoring.vlm_judge_unsettled"} <= set(view.EDITABLE)
    assert view._shapes("scoring.vlm_judge_model") == "Tri-HE, Evaluate-by-Edit, HalFscore"
    candidate = Settings()
    candidate.scoring.trihe_judge = "vlm"
    with pytest.raises(Mistake, match="needs scoring.vlm_judge_model"):
        view.check_buildable(candidate, store)
    candidate.scoring.vlm_judge_model = "probe:rate=0.1"
    with pytest.raises(Mistake, match="probe model"):
        view.check_buildable(candidate, store)
    candidate.scoring.vlm_judge_model = "openai:m@http://127.0.0.1:9/v1"
    view.check_buildable(candidate, store)  # nothing is asked until the first claim


def test_judge_accuracy_table_has_the_image_judge_beside_the_reference_judges(store, tmp_path):
    """People's fact labels on a sample with no scene graph: the configured judge (graph, and the image for what
    the captions leave open) and the image judge alone each get their balanced accuracy row."""
    import hashlib

    from hallu_studio.importers.human.generic import read_generic_judgements
    from hallu_studio.images import image_from_bytes
    from hallu_studio.pipelines.importing import import_human_study
    from hallu_studio.studies.human_sources import human_agreement

    facts = [{"fact": "There is a cat.", "label": "accurate"}, {"fact": "There is a dog.", "label": "hallucinated"},
             {"fact": "The cat is grey.", "label": "accurate"}, {"fact": "A horse is on the table.",
                                                                 "label": "hallucinated"}]
    line = {"source": "pilot", "sample_id": "img-1", "reference_text": ["A cat on a table."], "model": "m",
            "response": "A grey cat. A dog. A horse on the table.", "facts": facts}
    path = tmp_path / "study.jsonl"
    path.write_text(json.dumps(line) + "\n")
    study = read_generic_judgements(path)
    picture = image_from_bytes(_png(), "a.png")
    for s in study.benchmark.samples:
        s.image_sha256 = picture.sha256
    study.benchmark.images[picture.sha256] = picture
    import_human_study(store, study)
    with FakeChatServer([("vision", scene_answer)]) as server:
        report = human_agreement(store, "pilot", settings=_settings(server), metrics=["trihe"], n_boot=50,
                                 baseline=False)
    rows = {r["judge"]: r for r in report.facts}
    assert set(rows) == {"graph+vlm:openai:judge-vl", "vlm:openai:judge-vl"}, report.facts
    alone = rows["vlm:openai:judge-vl"]
    assert alone["facts"] == 4 and alone["settled"] == 4 and alone["balanced_accuracy"] == pytest.approx(1.0)
    assert hashlib.sha256(_png()).hexdigest() == picture.sha256


def test_score_refuses_an_image_judge_server_that_is_not_there(tmp_path, monkeypatch, capsys):
    from hallu_studio.cli import main
    from hallu_studio.llm.errors import llm_failure
    from hallu_studio.judges.vlm_judge import ImageJudgeError

    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "a", "response": "A cat.", "reference_text": ["A cat."]}) + "\n")
    monkeypatch.setenv("HALLU_STUDIO_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("HALLU_STUDIO_VLM_JUDGE_MODEL", "openai:m@http://127.0.0.1:9/v1")
    assert main(["score", "--input", str(src), "--output", str(tmp_path / "out.jsonl"), "--metrics", "trihe",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "note: image judge openai:m@http://127.0.0.1:9/v1" in err and "refused the connection" in err
    assert not (tmp_path / "out.jsonl").exists()
    assert llm_failure(ImageJudgeError("the image judge vlm:m failed: HTTP 500")) is not None  # not the input's fault


def test_the_reviser_asks_the_image_judge_what_the_reference_leaves_open(store):
    from hallu_studio.pipelines.scoring import score_store

    responses = _store_with_responses(store, TEXTS)
    with FakeChatServer([("vision", scene_answer)]) as server:
        report = score_store(store, _settings(server), ["edit"], progress=False)
        assert not report.failures, report.failures
        assert any("dog" in r["messages"][0]["content"][1]["text"] for r in server.requests)
    own = _one(store, responses[2].id, "edit")  # no reference: revised against the image alone
    assert own.evidence["image_judge"] == "vlm:openai:judge-vl"
    assert "dog" not in own.evidence["revised"].lower() and "cat" in own.evidence["revised"].lower()
    assert own.values["distance"] > 0
    graph = _one(store, responses[0].id, "edit")  # a complete scene graph settles it: no question needed
    assert "dog" not in graph.evidence["revised"].lower()
