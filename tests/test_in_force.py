"""One configuration in force per metric, the same in every view.

A store with every metric scored; one metric's setting changes; ``score`` recomputes that metric alone, and the
Overview, Browse, Inspect, the report and the command-line leaderboard all show the new configuration's value for
the same response and model. A store whose scores were made under other settings (an older HalluStudio's) keeps
them, and every view shows them with a note naming the configuration.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from hallu_studio.app import AppContext
from hallu_studio.app.inspection import inspect_response
from hallu_studio.app.report import build_report
from hallu_studio.app.tabs import browse
from hallu_studio.app.tabs.overview import leaderboard_html
from hallu_studio.cli import main
from hallu_studio.config import load_settings
from hallu_studio.model import Benchmark, Response, Run, Sample, SceneGraph, Score
from hallu_studio.pipelines.scoring import score_store
from hallu_studio.presentation import number
from hallu_studio.store import Store
from hallu_studio.studies.in_force import configs_in_force
from hallu_studio.studies.ranking import benchmark_boards

EVERY_METRIC = ["emd", "edit", "trihe", "halfscore", "reefknot", "chair", "pope"]
GRAPH = SceneGraph.from_dict({"objects": [{"id": "1", "name": "cat", "attributes": ["black"]},
                                          {"id": "2", "name": "sofa", "attributes": ["red"]}],
                              "relations": [{"subject": "1", "predicate": "on", "object": "2"}]})
# One caption per model, so that a model's Overview number is its one response's number.
ANSWERS = {"alpha": {"cap": "A black cat sits on a red sofa.", "yn": "Yes, it is.", "mcq": "A"},
           "beta": {"cap": "A white dog sleeps under a wooden table next to a lamp.", "yn": "No.", "mcq": "B"}}


def _fill(store: Store) -> None:
    samples = [Sample(id="t/cap", benchmark="t", image_key="1", task="caption", scene_graph=GRAPH),
               Sample(id="t/yn", benchmark="t", image_key="1", task="yes_no", scene_graph=GRAPH,
                      question="Is the cat on the sofa?", answer="yes", relation_category="perception"),
               Sample(id="t/mcq", benchmark="t", image_key="1", task="mcq", scene_graph=GRAPH,
                      question="Where is the cat? A. on the sofa B. under the sofa", options=["on", "under"],
                      answer="A", relation_category="perception")]
    store.add_samples(Benchmark("t"), samples)
    for model, answers in ANSWERS.items():
        store.add_run(Run(id=f"run-{model}", benchmark="t", model=model, backend="recorded"))
        store.add_responses([Response(f"run-{model}", f"t/{task}", text) for task, text in answers.items()])


@pytest.fixture(scope="module")
def changed(tmp_path_factory):
    """A store scored under the defaults, then again after ``emd_ground_cost`` changed; the settings file."""
    folder = tmp_path_factory.mktemp("in_force")
    db, toml = folder / "s.duckdb", folder / "hallu-studio.toml"
    toml.write_text("", encoding="utf-8")
    with Store(db) as store:
        _fill(store)
        first = score_store(store, load_settings(toml, env={}), EVERY_METRIC, progress=False)
        toml.write_text('[scoring]\nemd_ground_cost = "cosine"\n', encoding="utf-8")
        second = score_store(store, load_settings(toml, env={}), EVERY_METRIC, progress=False)
        before = {s.response_id: s.values["total"] for _, s in store.iter_scores("emd")
                  if s.config_key != configs_in_force(store, load_settings(toml, env={})).key("emd")}
    return db, toml, first, second, before


def test_changing_one_metrics_setting_rescores_that_metric_alone(changed):
    _, _, first, second, before = changed
    assert set(first.scored) == set(EVERY_METRIC) and not first.failed
    assert second.scored == Counter({"emd": 2}) and second.concepts_extracted == 0 and not second.failed
    assert len(before) == 2  # the earlier configuration's scores stay in the store


def test_every_view_shows_the_new_configurations_value_for_the_same_response(changed):
    db, toml, _, _, before = changed
    settings = load_settings(toml, env={})
    with Store(db) as store:
        ctx = AppContext(store=store, settings=settings)
        in_force = ctx.in_force()
        assert in_force.shown["emd"].is_current and not in_force.notes()
        new = {s.response_id: s.values["total"] for _, s in store.iter_scores("emd") if s.config_key == in_force.key("emd")}
        caption = {r.run_id: r.id for r in store.iter_responses() if r.sample_id == "t/cap"}
        assert all(new[rid] != before[rid] for rid in caption.values()), "VISCON's cosine cost moves EMD"

        board = benchmark_boards(store, in_force)[0]
        overview = {r.run_id: r.cells["emd.total"].value for r in board.runs}
        frame, _, _ = browse.query(ctx, browse.default_filters())
        column = "VISCON EMD ↓ (×100)"
        browsed = {row["id"]: re.search(r'title="([^"]+)"', row[column]).group(1) for _, row in frame.iterrows()}
        overview_page = leaderboard_html(ctx, None)
        report = build_report(store, in_force=in_force)
        for page in (overview_page, report):  # each column says which configuration its numbers are of
            assert f"VISCON EMD: {in_force.label('emd', in_force.key('emd'))}" in page.replace("&#x27;", "'")
            assert "(current settings)" in page
        for run_id, rid in caption.items():
            value = new[rid]
            assert overview[run_id] == pytest.approx(value)
            assert float(browsed[rid]) == pytest.approx(value)
            header = inspect_response(store, rid, in_force, with_graphs=False).header
            assert re.search(rf'data-column="emd.total"[^>]*>[^<]*<b>{re.escape(number(value))}</b>', header)
            for page in (overview_page, report):
                row = re.search(rf'<tr data-run="{run_id}">(.*?)</tr>', page).group(1)
                assert f"<b>{number(value)}</b>" in row


def test_the_command_line_leaderboard_shows_the_same_value_and_names_the_configuration(changed, capsys):
    db, toml, _, _, _ = changed
    with Store(db) as store:
        in_force = configs_in_force(store, load_settings(toml, env={}))
        new = {s.response_id: s.values["total"] for _, s in store.iter_scores("emd") if s.config_key == in_force.key("emd")}
        caption = {r.run_id: r.id for r in store.iter_responses() if r.sample_id == "t/cap"}
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--config", str(toml), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    emd = {r["run_id"]: r for r in rows if r["metric"] == "emd" and r["key"] == "total"}
    for run_id, rid in caption.items():
        assert emd[run_id]["value"] == pytest.approx(new[rid])
        assert emd[run_id]["config_key"] == in_force.key("emd") and "(current settings)" in emd[run_id]["config"]
    assert [r["rank"] for r in rows if r["metric"] == "trihe" and r["key"] == "hallu_q"] == [1, 2]  # ranked

    assert main(["leaderboard", "--db", str(db), "--config", str(toml), "--all-configs", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "config,config_key" in out.splitlines()[0]
    assert sum(1 for line in out.splitlines() if ",emd,total," in line) == 4  # two models x two configurations


def test_scores_of_other_settings_are_shown_with_a_note_naming_them(changed, capsys):
    db, _, _, _, before = changed
    defaults_toml = db.parent / "defaults.toml"
    defaults_toml.write_text('[scoring]\nemd_ground_cost = "grounded"\nchair_vocabulary = "coco-80"\n',
                             encoding="utf-8")
    settings = load_settings(defaults_toml, env={})
    with Store(db) as store:
        ctx = AppContext(store=store, settings=settings)
        in_force = ctx.in_force()
        # EMD under the grounded cost is scored: it is current again; CHAIR's COCO-80 configuration is not scored
        assert in_force.shown["emd"].is_current and not in_force.shown["chair"].is_current
        (note,) = in_force.notes()
        assert note.startswith("chair: the current settings' configuration is not scored yet") and "shown: chair" in note
        frame, _, status = browse.query(ctx, browse.default_filters())
        assert "chair: the current settings" in status.replace("\\", "")
        assert "chair: the current settings" in leaderboard_html(ctx, None)
        rid = next(r.id for r in store.iter_responses() if r.sample_id == "t/cap")
        assert "chair: the current settings" in inspect_response(store, rid, in_force).header
        assert float(re.search(r'title="([^"]+)"', frame[frame["id"] == rid].iloc[0]["VISCON EMD ↓ (×100)"]).group(1)) \
            == pytest.approx(before[rid])
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--config", str(defaults_toml)]) == 0
    assert "note: chair: the current settings' configuration is not scored yet" in capsys.readouterr().err


def test_the_rule_picks_the_current_configuration_else_the_most_scored():
    from hallu_studio.metrics.keys import ConfigKeys
    from hallu_studio.studies.in_force import choose

    rows = [{"metric": "trihe", "config_key": "a", "scores": 3, "computed_at": "2025-01-01 10:00:00"},
            {"metric": "trihe", "config_key": "b", "scores": 3, "computed_at": "2025-01-02 10:00:00"},
            {"metric": "trihe", "config_key": "c", "scores": 1, "computed_at": "2025-01-03 10:00:00"}]
    assert choose(rows, ConfigKeys(keys={"trihe": "c"})).key("trihe") == "c"
    shown = choose(rows, ConfigKeys(problems={"trihe": "needs scoring.nli_model"}))
    assert shown.key("trihe") == "b"  # tie on scores: the later one
    assert "cannot build it here (needs scoring.nli_model)" in shown.notes()[0]
    assert choose(rows, ConfigKeys(keys={"trihe": "a"})).label("trihe", "a").endswith("(current settings)")


def test_a_scored_store_keeps_its_scores_under_a_key_no_setting_makes(store):
    store.add_samples(Benchmark("b"), [Sample(id="b/1", benchmark="b", image_key="1", scene_graph=GRAPH)])
    store.add_run(Run(id="run-m", benchmark="b", model="m", backend="recorded"))
    (response,) = [Response("run-m", "b/1", "A black cat on a red sofa.")]
    store.add_responses([response])
    store.put_scores([Score(response.id, "emd", "made-by-an-older-version", {"total": 12.5})])
    in_force = configs_in_force(store)
    assert in_force.key("emd") == "made-by-an-older-version"
    assert "emd: the current settings' configuration is not scored yet" in in_force.notes()[0]
    assert store.browse_responses({}, ["emd.total"], configs=in_force.keys())[0]["emd.total"] == 12.5


@pytest.mark.parametrize("module", ["hallu_studio.studies.in_force", "hallu_studio.studies.ranking",
                                    "hallu_studio.presentation", "hallu_studio.metrics.spec",
                                    "hallu_studio.metrics.registry", "hallu_studio.config"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_metrics_shown_under_another_configuration_for_one_reason_share_one_note():
    from hallu_studio.metrics.keys import ConfigKeys
    from hallu_studio.studies.in_force import choose

    rows = [{"metric": m, "config_key": "old", "scores": 4, "computed_at": "2025-01-01 10:00:00"}
            for m in ("emd", "halfscore", "trihe")]
    notes = choose(rows, ConfigKeys(keys={"emd": "new", "halfscore": "new"}, problems={"trihe": "needs x"})).notes()
    assert len(notes) == 2
    assert notes[0].startswith("emd, halfscore: the current settings' configuration is not scored yet")
    assert "shown: emd settings" in notes[0] and "halfscore settings" in notes[0] and "(4 scores)" in notes[0]
    assert notes[1].startswith("trihe: the current settings cannot build it here (needs x)")


def test_configurations_are_named_by_what_sets_them_apart(changed, capsys):
    db, toml, _, _, _ = changed
    with Store(db) as store:
        emd = {r["config_key"]: r["config"] for r in store.score_configs() if r["metric"] == "emd"}
        assert len(emd) == 2 and all(c is not None and c["metric"]["metric"] == "emd" for c in emd.values())
    capsys.readouterr()
    assert main(["leaderboard", "--db", str(db), "--config", str(toml), "--all-configs", "--format", "jsonl"]) == 0
    names = {r["config"] for r in map(json.loads, capsys.readouterr().out.splitlines()) if r["metric"] == "emd"}
    assert len(names) == 2 and all("ground_cost" in n for n in names), names
    assert any("no ground_cost" in n and "(current settings)" in n for n in names)  # cosine: VISCON's own cost
    assert all(" · " in n for n in names)
