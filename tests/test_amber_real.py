"""AMBER against its released evaluator and the numbers recorded with real responses (``../shared``; each test
skips without it).

The oracle: AMBER's ``inference.py`` is loaded from ``../shared`` and run as released. It needs NLTK with its
tokenizer, tagger and WordNet data and spaCy's ``en_core_web_lg`` (none of which can be installed offline); where
they are missing, ``nltk`` and ``spacy`` are replaced for that run by stand-ins giving HalluStudio's own tags and
lemmas (``metrics.amber_nouns``) and a similarity both sides share (a word and itself only, HalluStudio's default;
or a stand-in for word vectors that calls many words alike, so that the script's similarity branches run), so the
released script's own bookkeeping (which noun marks which object, the counters, the yes/no comparison, the
rounding) is what gets compared, on every description of a real run and on a yes/no answer to each of AMBER's
14,216 questions.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import sys
import types
from argparse import Namespace
from contextlib import redirect_stdout
from pathlib import Path
from typing import Callable

import pytest

from conftest import shared_dataset
from hallu_studio.importers.amber import read_amber
from hallu_studio.metrics.amber import AmberMetric
from hallu_studio.metrics.base import ScoringItem

TRACY = ("toolkits", "tracyzhao-vcd", "amber")
# file -> AMBER's CHAIR, Cover, Hal, Cog as recorded beside it (one decimal)
RECORDED = {
    "ensemble4": (TRACY + ("vcd_blur15_blur35_colorjitterv1_ensemble4_ensemble.jsonl",), (7.5, 53.7, 32.0, 3.2)),
    "prompt3": (TRACY + ("vcd_blur15_blur35_colorjitterv1_segment_prompt3_ensemble.jsonl",), (7.0, 52.9, 31.1, 2.9)),
    "haoming-166": (("toolkits", "haoming-vlm-benchmarks", "amber", "amber_llava-v1.5-7b.partial166.jsonl"),
                    (7.5, 50.9, 37.3, 3.2)),
}
# The yes/no answers given to each question in the oracle run: AMBER's two words, and what it counts as neither.
ANSWERS = ("Yes", "No", "No", "Yes", "yes", "No.", "")
SECTIONS = {"Generative Task": "", "Descriminative Task": "", "Exsitence": "existence.", "Attribute": "attribute.",
            "State": "state.", "Number": "number.", "Action": "action.", "Relation": "relation."}
NAMES = {"CHAIR": "chair", "Cover": "cover", "Hal": "hal", "Cog": "cog", "Accuracy": "accuracy",
         "Precision": "precision", "Recall": "recall", "F1": "f1"}


def _as_amber_json(jsonl: Path, out: Path) -> Path:
    """A LLaVA answer file (``question_id``, ``text``) written as AMBER's response list, for this test only."""
    rows = [json.loads(line) for line in jsonl.read_text().splitlines() if line.strip()]
    out.write_text(json.dumps([{"id": r["question_id"], "response": r["text"]} for r in rows]))
    return out


def _released_dependencies_usable() -> bool:
    try:
        import nltk
        import spacy
        from nltk.stem import WordNetLemmatizer

        nltk.pos_tag(nltk.word_tokenize("A dog."))
        WordNetLemmatizer().lemmatize("dogs")
        spacy.load("en_core_web_lg")
        return True
    except Exception:  # noqa: BLE001 - any missing model or data means: use the stand-ins
        return False


class _Tokens(list):
    tags: list[str]


def same_prefix(a: str, b: str) -> bool:
    """A stand-in for word vectors that calls many words alike ("tree" and "tress", "person" and "pers..."), so
    that AMBER's similarity branches run often: the same word, or the same first three letters."""
    return a == b or a[:3] == b[:3]


def _stand_ins(texts: list[str], similar: Callable[[str, str], bool] | None) -> dict[str, types.ModuleType]:
    from hallu_studio.lexicon.wordnet import load_wordnet
    from hallu_studio.metrics.amber_nouns import tagged_words

    wn = load_wordnet()
    if wn is None:
        pytest.skip("WordNet is not installed")
    # Tagged in one pass, before the stand-ins replace the real NLTK (which HalluStudio's tagger may be).
    tagged = dict(zip(texts, tagged_words(texts)))

    def word_tokenize(text: str) -> _Tokens:
        words = tagged[text] if text in tagged else tagged_words([text])[0]
        tokens = _Tokens(w for w, _ in words)
        tokens.tags = [t for _, t in words]
        return tokens

    class WordNetLemmatizer:
        def lemmatize(self, word: str, pos: str = "n") -> str:
            return wn.morphy_shortest(word, pos)

    class Doc:
        def __init__(self, text: str) -> None:
            self.text = text

        def similarity(self, other: "Doc") -> float:
            if self.text == other.text:
                return 1.0
            return 0.9 if similar is not None and similar(self.text, other.text) else 0.0

    nltk = types.ModuleType("nltk")
    nltk.word_tokenize = word_tokenize  # type: ignore[attr-defined]
    nltk.pos_tag = lambda tokens: list(zip(tokens, tokens.tags))  # type: ignore[attr-defined]
    stem = types.ModuleType("nltk.stem")
    stem.WordNetLemmatizer = WordNetLemmatizer  # type: ignore[attr-defined]
    nltk.stem = stem  # type: ignore[attr-defined]
    spacy = types.ModuleType("spacy")
    spacy.load = lambda name: Doc  # type: ignore[attr-defined]
    return {"nltk": nltk, "nltk.stem": stem, "spacy": spacy}


def run_released(data: Path, responses: Path, monkeypatch,
                 similar: Callable[[str, str], bool] | None = None) -> tuple[dict[str, float], dict[str, float]]:
    """AMBER's inference.py on ``responses`` (evaluation type "a"): what it prints, and its counters. With the
    stand-ins, ``similar`` is what their word vectors call alike (None: a word and itself only)."""
    script = data.parent / "inference.py"
    if not script.is_file():
        pytest.skip(f"{script} is not available")
    if not _released_dependencies_usable():
        texts = [r["response"] for r in json.loads(responses.read_text())]
        for name, module in _stand_ins(texts, similar).items():
            monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location("amber_released_inference", script)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    module.args = Namespace(word_association=str(data / "relation.json"), safe_words=str(data / "safe_words.txt"),
                            inference_data=str(responses), annotation=str(data / "annotations.json"),
                            metrics=str(data / "metrics.txt"), similarity_score=0.8, evaluation_type="a")
    counters: dict[str, float] = {}
    released_init = module.init
    module.init = lambda: counters.update(released_init()) or counters
    out = io.StringIO()
    with redirect_stdout(out):
        module.main(module.args)
    printed: dict[str, float] = {}
    prefix = ""
    for line in out.getvalue().splitlines():
        head = line.strip().rstrip(":")
        if head in SECTIONS:
            prefix = SECTIONS[head]
        elif (m := re.match(r"\s*(\w+):\s+([\d.]+)", line)) and m.group(1) in NAMES:
            printed[prefix + NAMES[m.group(1)]] = float(m.group(2))
    return printed, counters


@pytest.mark.slow
@pytest.mark.parametrize("similar", [None, same_prefix], ids=["same-word", "same-prefix"])
def test_hallu_studio_counts_what_ambers_released_evaluator_counts(tmp_path, monkeypatch, similar):
    data = shared_dataset("toolkits", "amber", "data")
    captions = _as_amber_json(shared_dataset(*RECORDED["ensemble4"][0]), tmp_path / "captions.json")
    samples = {s.id: s for s in read_amber(data).samples}
    records = json.loads(captions.read_text())
    records += [{"id": int(sid.split("/")[1]), "response": ANSWERS[n % len(ANSWERS)]}
                for n, sid in enumerate(sorted(s.id for s in samples.values() if s.task == "yes_no"))]
    responses = tmp_path / "responses.json"
    responses.write_text(json.dumps(records))
    real = _released_dependencies_usable()
    if real and similar is not None:
        pytest.skip("the released dependencies are installed: AMBER's own word vectors are compared (same-word run)")
    printed, counters = run_released(data, responses, monkeypatch, similar)

    metric = AmberMetric(similarity="en_core_web_lg") if real else AmberMetric(similar=similar)
    results = metric.update_many([ScoringItem(str(r["id"]), r["response"], samples[f"amber/{r['id']}"])
                                  for r in records])
    ours = metric.compute([r.stats for r in results])
    total = {k: sum(r.stats.get(k, 0.0) for r in results) for k in {k for r in results for k in r.stats}}
    # AMBER's counters start at 0.001 where they divide.
    assert counters["chair_score"] == total["hallucinated"]
    assert counters["chair_num"] - 0.001 == pytest.approx(total["nouns"])
    assert counters["safe_cover_score"] == total["covered"] and counters["hallu_cover_score"] == total["marked"]
    assert counters["non_hallu_score"] == total["responses"] - total["any_hallucinated"]
    for prefix, scope in (("qa_", "all"), ("ha_qa_", "existence"), ("as_qa_", "state"), ("an_qa_", "number"),
                          ("aa_qa_", "action"), ("asso_qa_", "relation")):
        assert (counters[prefix + "correct_score"], counters[prefix + "no_score"], counters[prefix + "ans_no_score"]) \
            == (total[f"{scope}.correct"], total[f"{scope}.correct_no"], total[f"{scope}.correct_no"])
        assert [counters[prefix + k] - 0.001 for k in ("correct_num", "no_num", "ans_no_num")] == pytest.approx(
            [total[f"{scope}.n"], total[f"{scope}.gold_no"], total[f"{scope}.said_no"]])
    assert len(printed) == 4 + 7 * 4  # CHAIR, Cover, Hal, Cog; four numbers overall and per dimension or kind
    assert {k: round(ours[k], 1) for k in printed} == printed


def _product_path(tmp_path: Path, capsys) -> dict[str, dict[str, float]]:
    """import amber, import each real LLaVA answer file, score --metrics amber, leaderboard: model -> key -> value."""
    from hallu_studio.cli import main

    db = str(tmp_path / "amber.duckdb")
    assert main(["import", "--db", db, "--format", "amber", str(shared_dataset("toolkits", "amber", "data"))]) == 0
    for name, (parts, _) in RECORDED.items():  # LLaVA's answer files as they are
        path = shared_dataset(*parts)
        assert main(["import", "--db", db, "--format", "llava", str(path), "--benchmark", "amber", "--model", name]) == 0
    assert main(["score", "--db", db, "--metrics", "amber"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--benchmark", "amber", "--format", "jsonl", "--n-boot", "50"]) == 0
    board: dict[str, dict[str, float]] = {}
    for line in capsys.readouterr().out.splitlines():
        row = json.loads(line)
        board.setdefault(row["model"], {})[row["key"]] = row["value"]
    return board


@pytest.mark.slow
def test_the_leaderboard_shows_the_numbers_recorded_with_real_amber_responses(tmp_path, capsys):
    """On a README install (the tagger model shipped in the package, no NLTK download), the default settings give
    AMBER's recorded numbers at its one decimal."""
    board = _product_path(tmp_path, capsys)
    for name, (_, recorded) in RECORDED.items():
        ours = tuple(board[name][k] for k in ("chair", "cover", "hal", "cog"))
        assert tuple(round(o, 1) for o in ours) == recorded, (name, ours, recorded)
