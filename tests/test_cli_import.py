"""``hallu-studio import / export / info``: output lines and exit statuses (0 ok, 1 some failed, 2 fatal)."""

import json

import pytest

from conftest import shared_dataset
from hallu_studio.cli import main


def _jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _samples(tmp_path, rows):
    return _jsonl(tmp_path / "bench.jsonl", rows)


GOOD = {"id": "b/1", "benchmark": "b", "image_key": "1", "task": "caption"}


def test_all_good_exits_0_with_a_summary_line(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "jsonl", str(_samples(tmp_path, [GOOD])), "--db", db]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == "b: 1 images (0 found), 1 questions; 1 added, 0 already present; 0 problems"
    assert main(["import", "--format", "jsonl", str(tmp_path / "bench.jsonl"), "--db", db]) == 0
    assert "0 added, 1 already present" in capsys.readouterr().out
    assert main(["info", "--db", db]) == 0
    assert "b: 1 images (0 found), 1 questions [caption 1]" in capsys.readouterr().out


def test_some_records_failed_exits_1_listing_each_capped(tmp_path, capsys):
    rows = [GOOD] + ["{bad"] * 25
    assert main(["import", "--format", "jsonl", str(_samples(tmp_path, rows)), "--db", str(tmp_path / "s.duckdb")]) == 1
    out = capsys.readouterr()
    errors = out.err.strip().splitlines()
    assert errors[0] == ("error: bench.jsonl line 2: not valid JSON at column 2: expecting property name enclosed "
                         "in double quotes; found 'b' in '{bad'")
    assert len(errors) == 21 and errors[-1] == "… 5 more"
    assert "1 added" in out.out and "25 problems" in out.out


@pytest.mark.parametrize("argv, message", [
    (["import", "--format", "tri-he", "/no/such/dir/tri-he.json"], "does not exist"),
    (["import", "--format", "reefknot"], "needs a PATH"),
    (["import", "--format", "lmms-eval", "/no/such/logs"], "does not exist"),
    (["import", "--format", "vlmevalkit", "x.tsv", "--benchmark", "nothing"], "x.tsv: cannot read the table"),
    (["import", "--format", "vg", "scene_graphs.json", "--images", "/no/such/images"], "--images /no/such/images does not exist"),
])
def test_fatal_errors_exit_2_with_one_line_and_create_no_store(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    for name in ("x.jsonl", "x.tsv", "scene_graphs.json"):
        (tmp_path / name).write_text("")
    assert main(argv + ["--db", str(tmp_path / "s.duckdb")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err
    assert not (tmp_path / "s.duckdb").exists() and not (tmp_path / "s.duckdb.wal").exists()


def test_import_of_a_missing_path_creates_no_store(tmp_path, capsys):
    """A typo in the path is one line and nothing on disk: no empty store is left behind."""
    db = tmp_path / "new" / "studio.duckdb"
    assert main(["import", "--format", "jsonl", str(tmp_path / "nope.jsonl"), "--db", str(db)]) == 2
    assert capsys.readouterr().err.strip() == (f"error: PATH {tmp_path / 'nope.jsonl'} does not exist; nothing was "
                                               "imported and no store was created")
    assert not db.exists() and not db.with_name("studio.duckdb.wal").exists()


def test_not_json_and_unknown_format_exit_2(tmp_path, capsys):
    bad = tmp_path / "tri-he.json"
    bad.write_text("[1, 2")
    assert main(["import", "--format", "tri-he", str(bad), "--db", str(tmp_path / "s.duckdb")]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["import", "--format", "nope", "x"])
    assert exc.value.code == 2


def test_export_command_writes_and_summarises(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    main(["import", "--format", "jsonl", str(_samples(tmp_path, [GOOD])), "--db", db])
    capsys.readouterr()
    assert main(["export", "--table", "samples", "--format", "csv", "--output", str(tmp_path / "o.csv"), "--db", db]) == 0
    assert "samples: 1 rows written to" in capsys.readouterr().out
    assert (tmp_path / "o.csv").read_text().startswith("id,benchmark")


def test_tri_he_and_reefknot_end_to_end(tmp_path, capsys):
    tri_he = shared_dataset("tri-he")
    reefknot = shared_dataset("reefknot")
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "tri-he", str(tri_he), "--db", db]) == 0
    assert "tri-he: 300 images (300 found), 1226 questions; 1226 added, 0 already present; 0 problems" in \
        capsys.readouterr().out
    assert main(["import", "--format", "reefknot", str(reefknot), "--images", str(tri_he / "usage_figures"),
                 "--db", db]) == 0
    out = capsys.readouterr()
    assert "reefknot: 11084 images (67 found), 21560 questions; 21560 added, 0 already present; 0 problems" in out.out
    assert "… " in out.err  # thousands of missing images, listing capped


def test_embedded_sample_benchmark_imports_once(tmp_path, capsys):
    pytest.importorskip("hallu_studio.sample")
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "sample", "--db", db]) == 0
    first = capsys.readouterr().out
    assert " 0 already present" in first
    assert main(["import", "--format", "sample", "--db", db]) == 0
    assert " 0 added" in capsys.readouterr().out


def test_halfscore_folder_imports_gold_captions_and_recorded_captions(tmp_path, capsys):
    folder = shared_dataset("halfscore")
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "halfscore", str(folder), "--db", db]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["halfscore: 1000 images (0 found), 1000 questions; 1000 added, 0 already present; 0 problems "
                   "(+1 warnings)",
                   "llava-1.5-7b_captions.jsonl: 1 runs added, 1000 responses; 1000 added, 0 already present; "
                   "0 problems"]


def test_lmms_eval_responses_with_an_unmatched_row_exit_1(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    main(["import", "--format", "jsonl", str(_samples(tmp_path, [GOOD])), "--db", db])
    logs = _jsonl(tmp_path / "samples_b.jsonl", [{"doc_id": 1, "resps": [["a cat"]]}, {"doc_id": 2, "resps": [["?"]]}])
    capsys.readouterr()
    assert main(["import", "--format", "lmms-eval", str(logs), "--benchmark", "b", "--model", "m", "--db", db]) == 1
    out = capsys.readouterr()
    assert out.err.strip().splitlines() == [
        "error: samples_b.jsonl line 2 (doc_id 2): no stored sample of benchmark b matches '2'",
        "warning: samples_b.jsonl: no results JSON of this run beside it: the model is named 'm' and lmms-eval's "
        "version is unknown"]
    assert "1 responses; 1 added" in out.out
