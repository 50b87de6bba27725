import json

import pytest

from hallu_studio.cli import main
from hallu_studio.model import Benchmark, Response, Run, Sample
from hallu_studio.store import Store


def _yes_no_store(path) -> list[str]:
    with Store(path) as st:
        st.add_samples(Benchmark("rk"), [
            Sample(id=f"rk/{i}", benchmark="rk", image_key=f"img{i // 2}", task="yes_no",
                   answer="yes" if i % 2 else "no", question="Is the cat on the mat?",
                   relation_category="perception") for i in range(6)])
        st.add_run(Run(id="r1", benchmark="rk", model="m", backend="recorded"))
        responses = [Response("r1", f"rk/{i}", "Yes, it is." if i < 3 else "No.") for i in range(6)]
        st.add_responses(responses)
        return [r.id for r in responses]


def test_score_store_is_resumable_and_study_prints_tables(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    ids = _yes_no_store(db)
    assert main(["score", "--metrics", "reefknot,pope", "--db", str(db), "--no-progress"]) == 0
    assert "scored 12 (pope 6, reefknot 6)" in capsys.readouterr().out
    assert main(["score", "--metrics", "reefknot,pope", "--db", str(db), "--no-progress"]) == 0
    assert "scored 0 (nothing missing)" in capsys.readouterr().out

    from hallu_studio import annotation as ann
    from hallu_studio.studies.leaderboard import leaderboard
    with Store(db) as st:
        board = {(r["metric"], r["key"]): r for r in leaderboard(st, n_boot=50)}
        # Real computes over stored statistics: 2 of 6 answers right (rk/1, rk/4), in 3 images.
        pope, halr = board[("pope", "accuracy")], board[("reefknot", "halr.yes_no")]
        assert pope["value"] == pytest.approx(1 / 3) and pope["aggregation"] == "metric"
        assert halr["value"] == pytest.approx(200 / 3) and halr["images"] == 3 and halr["low"] <= halr["high"]
        for i, rid in enumerate(ids):
            correct = (i < 3) == bool(i % 2)
            ann.rate(st, "alice", rid, 5 if correct else 2)
            ann.rate(st, "bob", rid, 4 if correct else 1)
    assert main(["study", "--db", str(db), "--n-boot", "50"]) == 0
    out = capsys.readouterr().out
    assert "Correlation with human 1-5 ratings" in out
    lines = [line for line in out.splitlines() if line.strip().startswith(("pope", "reefknot"))]
    assert len(lines) == 2 and all("-1 [-1, -1]" in line for line in lines)  # hallucinated <-> low rating
    assert "Krippendorff's alpha (ordinal)" in out and "6 of 6 items" in out


def test_score_errors_are_one_clear_line(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    _yes_no_store(db)
    assert main(["score", "--metrics", "bleu", "--db", str(db)]) == 2
    assert "unknown metric 'bleu'" in capsys.readouterr().err
    assert main(["score", "--metrics", "pope", "--run", "nope", "--db", str(db)]) == 2
    assert "unknown run 'nope'" in capsys.readouterr().err
    assert main(["score", "--metrics", "pope", "--input", str(tmp_path / "x.jsonl")]) == 2
    assert "--input and --output" in capsys.readouterr().err


def test_score_warns_when_wordnet_is_missing(tmp_path, capsys, monkeypatch):
    db = tmp_path / "s.duckdb"
    _yes_no_store(db)
    assert main(["score", "--metrics", "pope", "--db", str(db), "--no-progress"]) == 0
    assert "warning" not in capsys.readouterr().err
    monkeypatch.setenv("WORDNET_DIR", str(tmp_path))  # an empty folder: no WordNet there
    assert main(["score", "--metrics", "pope", "--db", str(db), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "warning: WordNet is not available (WORDNET_DIR names a folder" in captured.err and "scored 6 (pope 6)" in captured.out


@pytest.mark.slow
def test_stateless_jsonl_with_the_real_metrics(tmp_path, capsys):
    graph = {"objects": [{"id": "1", "name": "cat", "attributes": ["grey"]},
                         {"id": "2", "name": "mat", "attributes": ["blue"]}],
             "relations": [{"subject": "1", "predicate": "on", "object": "2"}]}
    lines = [{"id": "a", "response": "A grey cat sits on a red mat next to a dog.", "scene_graph": graph},
             {"id": "b", "response": "A cat on a mat.", "scene_graph": graph,
              "mentioned": {"objects": ["cat", "mat"], "attributes": [], "relations": [["cat", "on", "mat"]]}},
             {"id": "c", "scene_graph": graph}]
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    # line c is bad: the exit status says not every line went through (the good ones are written)
    assert main(["score", "--input", str(src), "--output", str(dst), "--metrics", "emd,edit,halfscore,chair"]) == 1
    captured = capsys.readouterr()
    assert "2 of 3 lines scored" in captured.out and "line 3 (id 'c'): missing field 'response'" in captured.err
    a, b, c = [json.loads(x) for x in dst.read_text().splitlines()]
    assert set(a["emd"]) >= {"object", "attribute", "relation", "total"}
    assert set(a["edit"]) >= {"revised", "distance", "per_word"} and "red" not in a["edit"]["revised"]
    assert set(a["halfscore"]) >= {"precision", "recall", "f"} and a["halfscore"]["precision"] < 1
    assert "dog" in a["mentioned"]["objects"] and a["evidence"]["chair"]["hallucinated"] == ["dog"]
    assert b["mentioned"]["relations"] == [["cat", "on", "mat"]] and b["halfscore"]["precision"] == 1.0
    assert c == {"line": 3, "id": "c", "error": "missing field 'response'"}


@pytest.mark.slow
def test_score_gives_a_dci_sample_trihe_values_against_its_reference_caption(tmp_path, capsys):
    """A DCI-like sample (no scene graph, a dense caption, as ``import --format halfscore`` stores it) through
    ``hallu-studio score`` with the default settings: the real parser reads caption and response."""
    db = tmp_path / "dci.duckdb"
    with Store(db) as st:
        st.add_samples(Benchmark("dci"), [
            Sample(id="dci/1", benchmark="dci", image_key="1", task="caption",
                   reference_text="Two dogs on a red sofa."),
            Sample(id="dci/2", benchmark="dci", image_key="2", task="caption")])  # nothing to judge against
        st.add_run(Run(id="r1", benchmark="dci", model="m", backend="recorded"))
        dci, bare = Response("r1", "dci/1", "Three dogs under the sofa."), Response("r1", "dci/2", "A dog.")
        st.add_responses([dci, bare])
    assert main(["score", "--metrics", "trihe", "--db", str(db), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "scored 1 (trihe 1)" in out and "not applicable 1" in out
    with Store(db) as st:
        [score] = st.get_scores(dci.id, "trihe")
        assert not st.get_scores(bare.id, "trihe")
    assert score.undefined_reason is None and score.evidence["reference"] == "reference caption"
    verdicts = {tuple(t["triplet"]): t["verdict"] for t in score.evidence["triplets"]}
    assert verdicts == {("dog", "under", "sofa"): "relation", ("dog", "is", "three"): "object"}
    assert score.values["hallucinated"] == score.values["n_triplets"] == 2


def test_a_pass_where_everything_failed_does_not_say_nothing_is_missing():
    from hallu_studio.pipelines.scoring import ScoreReport

    report = ScoreReport()
    report.failed["score:trihe"] = 2
    assert report.summary().startswith("scored 0; FAILED 2")
    assert ScoreReport().summary() == "scored 0 (nothing missing)"
