"""``export --table ratings``: the event log resolved to each annotator's current rating per response,
beside ``--table judgments``, the raw log (undos included) that stays as it was."""

import csv
import json

import pyarrow.parquet as pq
import pytest

from hallu_studio.annotation import rate, resolved_ratings, undo_last
from hallu_studio.cli import main
from hallu_studio.model import Benchmark, HumanEvent, Response, Run, Sample
from hallu_studio.store import Store

EXPECTED = {  # (response, annotator) -> rating in force
    ("run-m/b/1", "ann"): 4,   # rated 2, then changed to 4
    ("run-m/b/2", "ann"): 1,   # rated 5, undone, rated 1
    ("run-m/b/2", "carl"): 3,  # rated 3, undone, and the undo undone
}


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "ratings.duckdb"
    with Store(path) as st:
        st.add_samples(Benchmark("b"), [Sample(id=f"b/{i}", benchmark="b", image_key=str(i)) for i in (1, 2)])
        st.add_run(Run(id="run-m", benchmark="b", model="llava", backend="recorded"))
        st.add_responses([Response("run-m", f"b/{i}", "text", id=f"run-m/b/{i}") for i in (1, 2)])
        rate(st, "ann", "run-m/b/1", 2)
        rate(st, "ann", "run-m/b/1", 4)
        rate(st, "bob", "run-m/b/1", 3)
        undo_last(st, "bob")                      # bob's only rating is gone
        rate(st, "ann", "run-m/b/2", 5)
        undo_last(st, "ann", "run-m/b/2")
        rate(st, "ann", "run-m/b/2", 1)
        carl = rate(st, "carl", "run-m/b/2", 3)
        undo = st.append_event(HumanEvent("carl", "undo", "run-m/b/2", None, undoes=carl))
        st.append_event(HumanEvent("carl", "undo", "run-m/b/2", None, undoes=undo))
        st.append_event(HumanEvent("ann", "note", "run-m/b/1", {"text": "not a rating"}))
    return path


def test_resolved_ratings_keep_the_rating_in_force_with_its_response(db):
    with Store(db) as st:
        rows = resolved_ratings(st)
        events = {e.id: e for e in st.list_events()}
    assert {(r["response_id"], r["annotator"]): r["rating"] for r in rows} == EXPECTED
    assert [(r["response_id"], r["annotator"]) for r in rows] == sorted(EXPECTED)
    for r in rows:
        assert r["model"] == "llava" and r["run_id"] == "run-m" and r["sample_id"] == r["response_id"][6:]
        assert events[r["event_id"]].value == r["rating"] and events[r["event_id"]].created_at == r["rated_at"]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export_ratings_in_every_format_beside_the_raw_log(db, tmp_path, capsys, fmt):
    out = tmp_path / f"ratings.{fmt}"
    assert main(["export", "--table", "ratings", "--format", fmt, "--output", str(out), "--db", str(db)]) == 0
    assert f"ratings: 3 rows written to {out}" in capsys.readouterr().out
    if fmt == "jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    elif fmt == "csv":
        rows = [{**r, "rating": int(r["rating"])} for r in csv.DictReader(out.open())]
    else:
        rows = pq.read_table(out).to_pylist()
    assert {(r["response_id"], r["annotator"]): r["rating"] for r in rows} == EXPECTED
    log = tmp_path / "judgments.jsonl"
    assert main(["export", "--table", "judgments", "--output", str(log), "--db", str(db)]) == 0
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(events) == 11 and sum(e["kind"] == "undo" for e in events) == 4  # every event, undos included


def test_no_ratings_yet_is_an_empty_table_with_its_header(tmp_path, capsys):
    db = tmp_path / "empty.duckdb"
    Store(db).close()
    out = tmp_path / "r.csv"
    assert main(["export", "--table", "ratings", "--format", "csv", "--output", str(out), "--db", str(db)]) == 0
    assert out.read_text().strip() == "response_id,sample_id,run_id,model,annotator,rating,event_id,rated_at"
