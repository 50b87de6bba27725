"""The NLI judge on a tiny checkpoint built at test time, and the LLM judge on a scripted server."""

from __future__ import annotations

import pytest
import torch

from hallu_studio.config import LLMSettings
from hallu_studio.judges import JudgeReference, LLMJudge, NLIJudge, NLIModel
from hallu_studio.judges.llm_judge import parse_supported, parse_wrong_part
from hallu_studio.llm import LLMClient, LLMError
from test_llm_fake_server import FakeChatServer
from test_trihe import REF, BagOfWordsEncoder

WORDS = ["cat", "on", "sofa", "dog", "near", "table", "bird", "under", "lake", "is", "on", "bus", "driver"]


def build_tiny_nli(path, favour: str = "entailment", labels=("contradiction", "neutral", "entailment")) -> str:
    """A 2-layer BERT saved like a real checkpoint; its classifier bias makes ``favour`` win."""
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(WORDS)]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=len(labels),
                        id2label=dict(enumerate(labels)), label2id={l: i for i, l in enumerate(labels)})
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.zero_()
        if favour in labels:
            model.classifier.bias[labels.index(favour)] = 5.0
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def entailing_model(tmp_path_factory):
    return build_tiny_nli(tmp_path_factory.mktemp("nli-yes"), "entailment")


@pytest.fixture(scope="module")
def contradicting_model(tmp_path_factory):
    return build_tiny_nli(tmp_path_factory.mktemp("nli-no"), "contradiction")


def test_nli_model_loads_a_checkpoint_and_reads_the_label_map(entailing_model):
    nli = NLIModel(entailing_model)
    probs = nli.probabilities([("cat on sofa", "cat on sofa"), ("dog near table", "bird under lake")])
    assert probs.shape == (2, 3)
    assert probs.sum(axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert nli.entailment_index == 2
    # bias 5 on entailment, zero weights: p = e^5 / (e^5 + 2)
    expected = float(torch.softmax(torch.tensor([0.0, 0.0, 5.0]), 0)[2])
    assert nli.entailment_probs([("a", "b")])[0] == pytest.approx(expected, abs=1e-5)
    assert nli.entails([("a", "b"), ("b", "a")]) == [True, True]


def test_nli_judge_verdicts(entailing_model, contradicting_model):
    claims = [("cat", "on", "sofa"), ("bird", "under", "lake"), ("cat", "under", "table")]
    yes = NLIJudge(NLIModel(entailing_model), BagOfWordsEncoder()).judge(claims, REF)
    assert [v.verdict for v in yes] == ["supported"] * 3
    no = NLIJudge(NLIModel(contradicting_model), BagOfWordsEncoder()).judge(claims, REF)
    # An NLI model that never entails: the typing step still tells the cases apart.
    assert [v.verdict for v in no] == ["prediction_error", "object", "relation"]
    assert all(v.score < 0.6 for v in no)


def test_nli_model_without_entailment_label_is_refused(tmp_path):
    path = build_tiny_nli(tmp_path, "LABEL_0", labels=("LABEL_0", "LABEL_1"))
    with pytest.raises(ValueError, match="entailment class"):
        NLIModel(path).probabilities([("a", "b")])


def test_nli_model_missing_path_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="cannot load the NLI model"):
        NLIModel(str(tmp_path / "nope")).probabilities([("a", "b")])


def llm_answer(user: str) -> str:
    statement = user.split("Statement triplet: ")[1].split("\n")[0]
    if "NOT supported" in user:  # the second question
        return {"(bird, under, lake)": "object1", "(cat, under, table)": "The relation is wrong.",
                "(dog, on, cat)": "hmm, hard to say"}[statement]
    return {"(cat, on, sofa)": "Yes.", "(bird, under, lake)": "No", "(cat, under, table)": "no, it is not",
            "(dog, on, cat)": "No.", "(cat, is, grey)": "I cannot tell"}[statement]


def test_llm_judge_two_questions(store):
    from hallu_studio.llm import LLMAnswerError

    claims = [("cat", "on", "sofa"), ("bird", "under", "lake"), ("cat", "under", "table"), ("dog", "on", "cat"),
              ("cat", "is", "grey")]
    ref = JudgeReference(REF.triplets, REF.objects, "Where?", "On the sofa.")
    with FakeChatServer([("by_content", llm_answer)], plain_text_only=True) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache, backoff_s=0.01)
        judge = LLMJudge(client)
        readable = claims[:3]
        out = judge.judge(readable, ref)
        assert [v.verdict for v in out] == ["supported", "object", "relation"]
        # Two answers name no choice: no verdict for the response; every question was still asked.
        with pytest.raises(LLMAnswerError) as info:
            judge.judge(claims, ref)
        message = str(info.value)
        assert "about 2 of 5 claims" in message
        assert "(dog, on, cat) which part is wrong?: unreadable: 'hmm, hard to say'" in message
        assert "(cat, is, grey) supported?: unreadable: 'I cannot tell'" in message
        n = len(server.requests)
        plain = [r for r in server.requests if "response_format" not in r]
        assert len(plain) == 5 + 3  # every claim once, the three "no" answers twice
        # The claims went out side by side, but until the server took a form of response_format they went one
        # at a time: each form was asked once.
        assert n - len(plain) == 2
        with pytest.raises(LLMAnswerError):
            judge.judge(claims, ref)
        assert len(server.requests) == n  # this judge's client knows those answers are unusable
        # The next pass: readable answers were cached; the two unreadable ones were not, so they are asked again.
        judge = LLMJudge(LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache, backoff_s=0.01))
        with pytest.raises(LLMAnswerError):
            judge.judge(claims, ref)
        assert len(server.requests) == n + 2
        assert "Reference answer: On the sofa." in plain[0]["messages"][1]["content"]
        assert all(v.verdict != "unparseable" for v in judge.judge(readable, ref))
        assert judge.config()["unusable_answer"] == "asked again"


def test_llm_judge_caps_its_answers_and_a_cut_answer_is_no_verdict(store):
    from hallu_studio.llm import LLMAnswerError
    from hallu_studio.llm.dispatch import JUDGE_ANSWER_TOKENS

    cut = {"on": True}

    def answer(user: str):  # structured answers, as from a server that takes the JSON schema
        statement = user.split("Statement triplet: ")[1].split("\n")[0]
        if "NOT supported" in user:
            return '{"wrong_part": "relation"}'
        if statement == "(cat, on, sofa)":
            return '{"answer": "yes"}'
        if statement == "(cat, is, grey)" and cut["on"]:  # whitespace until the cap after the JSON: it parses, but was cut
            return '{"answer": "no"}' + "\n" * 40, "length"
        return '{"answer": "no"}'

    claims = [("cat", "on", "sofa"), ("cat", "under", "table"), ("cat", "is", "grey")]
    with FakeChatServer([("by_content", answer)]) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache, backoff_s=0.01)
        judge = LLMJudge(client)
        with pytest.raises(LLMAnswerError, match=r"\(cat, is, grey\) supported\?: cut at its length limit") as info:
            judge.judge(claims, REF)
        assert info.value.truncated
        # Both questions are capped (three first questions, one second).
        assert [r["max_tokens"] for r in server.requests] == [JUDGE_ANSWER_TOKENS] * 4
        assert client.dispatcher.stats.parse_failures["trihe.supported"] == 1
        n = len(server.requests)
        cut["on"] = False  # the server now finishes the answer (a larger cap, say); the next pass asks again
        judge = LLMJudge(LLMClient(LLMSettings(base_url=server.base_url, model="fake"), store.cache, backoff_s=0.01))
        assert [v.verdict for v in judge.judge(claims, REF)] == ["supported", "relation", "relation"]
        assert len(server.requests) == n + 2  # only the cut claim's questions: the rest came from the cache


def test_llm_judge_raises_typed_error_when_llm_unreachable():
    with FakeChatServer([("status", 503)]) as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="fake", max_retries=1), None, backoff_s=0.01)
        with pytest.raises(LLMError):
            LLMJudge(client).judge([("cat", "on", "sofa")], REF)


@pytest.mark.parametrize("answer,expected", [("Yes.", True), ("no", False), ("NO, because", False),
                                             ("maybe", None), ("", None)])
def test_parse_supported(answer, expected):
    assert parse_supported(answer) is expected


@pytest.mark.parametrize("answer,expected", [("object1", "object"), ("Object 2", "object"),
                                             ("the relation", "relation"), ("both", None)])
def test_parse_wrong_part(answer, expected):
    assert parse_wrong_part(answer) == expected
