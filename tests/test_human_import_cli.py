"""``hallu-studio import --format human-judgements``: bad records named, good ones stored, re-import adds nothing,
imported judgements kept apart from the app's annotators."""

import json
from pathlib import Path

from hallu_studio.cli import main
from hallu_studio.model import APP_SOURCE, HumanEvent
from hallu_studio.importers.registry import ImportRequest
from hallu_studio.pipelines.importing import import_format
from hallu_studio.store import Store


def _jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


LINE = {"source": "pilot", "sample_id": "img-1", "reference_text": ["A dog on the grass."], "model": "m1",
        "response": "A dog and a cat on the grass.", "annotator": "ann", "label": "hallucinated",
        "spans": [{"start": 12, "end": 15, "label": "hallucinated"}]}


def test_import_human_judgements_cli_names_bad_records_and_reimport_adds_nothing(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    rows = [LINE, {**LINE, "annotator": "bob", "label": "accurate", "spans": []},
            {**LINE, "annotator": "cy", "label": "maybe"}, "{oops"]
    path = _jsonl(tmp_path / "pilot.jsonl", rows)
    assert main(["import", "--format", "human-judgements", str(path), "--db", db]) == 1
    out = capsys.readouterr()
    assert out.out.splitlines() == [
        "pilot: 1 images (0 found), 1 questions; 1 added, 0 already present; 0 problems",
        "pilot responses: 1 runs added, 1 responses; 1 added, 0 already present; 0 problems",
        "pilot judgements: 3 judgements; 3 added, 0 already present; 2 problems"]
    assert out.err.splitlines() == [
        "error: pilot.jsonl line 4: not valid JSON at column 2: expecting property name enclosed in double quotes; "
        "found 'o' in '{oops'",
        "error: pilot.jsonl line 3: a label must be one of ('accurate', 'hallucinated', 'unsure'), got 'maybe'"]
    assert main(["import", "--format", "human-judgements", str(path), "--db", db]) == 1
    again = capsys.readouterr().out.splitlines()
    assert again[0].endswith("0 added, 1 already present; 0 problems")
    assert again[2] == "pilot judgements: 3 judgements; 0 added, 3 already present; 2 problems"
    with Store(db) as store:
        events = store.list_events_of_kinds(["label", "span_label"])
        assert len(events) == 3 and {e.source for e in events} == {"pilot"}
        assert store.event_sources()[0]["source"] == "pilot"


def test_judgements_of_a_stored_response_and_of_an_unknown_one(tmp_path, capsys):
    db = str(tmp_path / "s.duckdb")
    assert main(["import", "--format", "human-judgements", str(_jsonl(tmp_path / "a.jsonl", [LINE])), "--db", db]) == 0
    capsys.readouterr()
    with Store(db) as store:
        rid = store.response_ids()[0]
    later = [{"source": "pilot", "response_id": rid, "annotator": "dee", "rating": 2},
             {"source": "pilot", "response_id": "resp-nope", "annotator": "dee", "rating": 3}]
    assert main(["import", "--format", "human-judgements", str(_jsonl(tmp_path / "b.jsonl", later)), "--db", db]) == 1
    out = capsys.readouterr()
    assert "error: pilot judgement of resp-nope: no such response in the study or the store" in out.err
    assert "pilot judgements: 1 judgements; 1 added, 0 already present; 1 problems" in out.out


def test_imported_ratings_stay_out_of_the_apps_tables_and_queues(tmp_path):
    from hallu_studio.annotation import annotation_queue, rate
    from hallu_studio.studies.collect import mean_human_ratings

    path = _jsonl(tmp_path / "a.jsonl", [{**LINE, "rating": 1}])
    with Store(tmp_path / "s.duckdb") as store:
        import_format(store, "human-judgements", ImportRequest(path=Path(path)))
        rid = store.response_ids()[0]
        assert mean_human_ratings(store) == {} and mean_human_ratings(store, "pilot") == {rid: 1.0}
        assert annotation_queue(store, "ann") == [rid]  # the study's "ann" is not the app's "ann"
        rate(store, "ann", rid, 4)
        assert mean_human_ratings(store) == {rid: 4.0}
        assert [e.source for e in store.list_events_of_kinds(["rating"], source=APP_SOURCE)] == [APP_SOURCE]


def test_append_events_once_compares_values_whatever_their_key_order(store):
    a = HumanEvent("s", "comparison", "r1", {"other": "h", "aspect": "x", "score": 1}, target="vs:h:x", source="s")
    b = HumanEvent("s", "comparison", "r1", {"score": 1, "aspect": "x", "other": "h"}, target="vs:h:x", source="s",
                   meta={"line": 9})
    c = HumanEvent("s", "comparison", "r1", {"other": "h", "aspect": "x", "score": 1}, target="vs:h:x", source="t")
    assert store.append_events_once([a, b]) == 1
    assert store.append_events_once([b, c]) == 1  # c: another source
    assert len(store.list_events_of_kinds(["comparison"])) == 2


def test_human_judgements_take_only_a_path(tmp_path, capsys):
    assert main(["import", "--format", "human-judgements", "x.jsonl", "--benchmark", "b",
                 "--db", str(tmp_path / "s.duckdb")]) == 2
    assert "does not take --benchmark" in capsys.readouterr().err
    assert main(["import", "--format", "human-judgements", str(tmp_path), "--db", str(tmp_path / "s.duckdb")]) == 2
    assert "no human-judgement data file found" in capsys.readouterr().err
