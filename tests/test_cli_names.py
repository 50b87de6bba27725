"""The CLI checks every name a person types against the store and the metric registry: a typo is
one clear line naming it, the closest name and the names that exist; nothing is dropped silently.
Read commands never create a store."""

import json

import pytest

from hallu_studio.cli import main
from hallu_studio.model import Benchmark, Response, Run, Sample, Score
from hallu_studio.store import Store


@pytest.fixture
def db(tmp_path):
    """A store holding benchmark ``tri-he`` with EMD and CHAIR scores of one model."""
    path = tmp_path / "names.duckdb"
    with Store(path) as st:
        st.add_samples(Benchmark("tri-he"), [Sample(id=f"tri-he/{i}", benchmark="tri-he", image_key=str(i),
                                                    task="caption") for i in range(3)])
        st.add_run(Run(id="run-a", benchmark="tri-he", model="a", backend="recorded"))
        responses = [Response("run-a", f"tri-he/{i}", "a cat") for i in range(3)]
        st.add_responses(responses)
        st.put_scores([Score(r.id, "emd", "k", {"total": 1.0 + i, "object": 0.5, "objects_list": ["cat"]})
                       for i, r in enumerate(responses)])
        st.put_scores([Score(r.id, "chair", "k", {"chair_i_item": 0.2}) for r in responses])
    return str(path)


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_a_misspelt_metric_is_named_with_the_closest_and_the_known_ones(db, capsys):
    assert main(["leaderboard", "--db", db, "--metrics", "emdd,trihe"]) == 2
    err = _error(capsys)
    assert "unknown metric 'emdd' (did you mean 'emd'?)" in err
    from hallu_studio.metrics.registry import METRIC_NAMES

    assert f"known metrics: {', '.join(METRIC_NAMES)}" in err
    # a real metric the store holds no scores of is not dropped either
    assert main(["leaderboard", "--db", db, "--metrics", "emd,trihe"]) == 2
    assert "no trihe scores in the store (scored: chair, emd)" in _error(capsys)
    assert main(["leaderboard", "--db", db, "--metrics", "emd", "--n-boot", "20", "--format", "jsonl"]) == 0
    assert {json.loads(line)["metric"] for line in capsys.readouterr().out.splitlines()} == {"emd"}


def test_an_unknown_benchmark_lists_the_ones_held(db, capsys):
    assert main(["leaderboard", "--db", db, "--benchmark", "trihe"]) == 2
    assert "unknown benchmark 'trihe' (did you mean 'tri-he'?); the store holds: tri-he" in _error(capsys)
    assert main(["leaderboard", "--db", db, "--benchmark", "tri-he", "--metrics", "chair", "--n-boot", "20"]) == 0
    capsys.readouterr()
    assert main(["study", "--db", db, "--analysis", "frequent-pairs", "--benchmark", "trihe"]) == 2
    assert "did you mean 'tri-he'?" in _error(capsys)
    assert main(["derive", "pope", "--db", db, "--benchmark", "trihe"]) == 2
    assert "did you mean 'tri-he'?" in _error(capsys)
    # checked before the model is built (which could load for minutes)
    assert main(["run", "--db", db, "--benchmark", "trihe", "--model", "probe:rate=0.1", "--quiet"]) == 2
    assert "unknown benchmark 'trihe'" in _error(capsys)


def test_study_value_names_a_value_the_metric_holds(db, capsys):
    assert main(["study", "--db", db, "--value", "emd=objects"]) == 2
    err = _error(capsys)
    # only numeric values can be correlated: the list of strings is not offered
    assert "unknown emd value 'objects' (did you mean 'object'?); emd's numeric values in the store: object, total" in err
    assert main(["study", "--db", db, "--value", "emdd=object"]) == 2
    assert "unknown metric 'emdd' (did you mean 'emd'?)" in _error(capsys)
    assert main(["study", "--db", db, "--value", "emd,chair=object"]) == 2
    assert "--value must look like METRIC=KEY" in _error(capsys)
    assert main(["study", "--db", db, "--value", "emd=object", "--n-boot", "20"]) == 0
    assert "no response has both a human rating and a metric score" in capsys.readouterr().out


def test_score_names_the_closest_metric_and_run(db, capsys):
    assert main(["score", "--db", db, "--metrics", "chiar"]) == 2
    assert "unknown metric 'chiar' (did you mean 'chair'?)" in _error(capsys)
    assert main(["score", "--db", db, "--metrics", "chair", "--run", "run-b"]) == 2
    assert "unknown run 'run-b' (did you mean 'run-a'?); runs in the store: run-a" in _error(capsys)


@pytest.mark.parametrize("argv", [
    ["info"], ["leaderboard"], ["study"], ["export", "--table", "ratings", "--output", "out.jsonl"],
    ["score", "--metrics", "chair"], ["derive", "pope", "--benchmark", "b"],
    ["run", "--benchmark", "b", "--model", "probe:rate=0.1"]])
def test_commands_never_create_a_store(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    typo = tmp_path / "typo.duckdb"
    assert main(argv + ["--db", str(typo)]) == 2
    err = _error(capsys)
    assert f"no store at {typo} (the file does not exist)" in err
    assert not typo.exists() and not (tmp_path / "out.jsonl").exists()


def test_import_creates_the_store(tmp_path, capsys):
    db = tmp_path / "new" / "s.duckdb"
    rows = tmp_path / "s.jsonl"
    rows.write_text('{"id": "b/1", "benchmark": "b", "image_key": "1", "task": "caption"}\n')
    assert main(["import", "--format", "jsonl", str(rows), "--db", str(db)]) == 0
    assert db.is_file()
    assert main(["info", "--db", str(db)]) == 0
    assert "b: 1 images (0 found), 1 questions" in capsys.readouterr().out


def test_options_a_mode_does_not_read_are_refused_not_dropped(db, tmp_path, capsys):
    assert main(["study", "--db", db, "--benchmark", "tri-he"]) == 2
    assert "--benchmark does not apply to the correlation study (no --analysis)" in _error(capsys)
    assert main(["study", "--db", db, "--analysis", "frequent-pairs", "--value", "emd=object"]) == 2
    assert "--value does not apply to --analysis frequent-pairs" in _error(capsys)
    assert main(["study", "--db", db, "--analysis", "lenght"]) == 2
    assert "unknown analysis 'lenght' (did you mean 'length'?); known analyses: frequent-pairs, length" in _error(capsys)
    assert main(["import", "--format", "tri-he", str(tmp_path), "--model", "llava", "--db", db]) == 2
    from hallu_studio.importers.registry import formats

    readers = [f.name for f in formats() if "model" in f.options]
    assert {"halfscore", "lmms-eval", "vlmevalkit", "jsonl"} <= set(readers)
    assert f"--format tri-he does not take --model (formats that do: {', '.join(readers)})" in _error(capsys)
    assert main(["import", "--format", "sample", str(tmp_path), "--db", db]) == 2
    assert "--format sample does not take a PATH" in _error(capsys)
