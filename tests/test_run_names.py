"""Runs are named so that no two rows of a leaderboard share a name unless they are the same run (issue 27):
a run's name is its model's short name, plus the settings that differ between the runs of that model on that
benchmark (for probes: rate, mix, seed; for other runs: prompt, generation settings, mitigation, checkpoint).
Runs that collide with no other keep their short names.

Before, ``probe:rate=0.3,mix=object+attribute+relation+count,seed=1`` and ``...mix=object+relation,seed=1``
were both "probe 0.3 seed 1 (synthetic)" in the leaderboard.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest
from synthetic_store import fill_synthetic_store

from hallu_studio.cli import main
from hallu_studio.model import Response, Run, Score
from hallu_studio.presentation import display_name, run_names
from hallu_studio.store import Store
from hallu_studio.studies.in_force import configs_in_force
from hallu_studio.studies.ranking import benchmark_boards

PROBE = "probe rate=0.3 mix={} seed=1 [synthetic]"
ALL_KINDS, TWO_KINDS = "object+attribute+relation+count", "object+relation"
LLAVA = "transformers:llava-hf/llava-1.5-7b-hf"


def _copy_run(store: Store, source: Run, **changes) -> Run:
    """Another run of ``source``'s model with ``changes`` to its settings, holding the same responses and scores."""
    fields = {**dataclasses.asdict(source), **changes}
    run = dataclasses.replace(source, **changes, id=Run.make_id(fields["benchmark"], fields["model"], "probe",
                                                                fields["prompt"], fields["generation"],
                                                                fields["mitigation"], fields["seed"]) + "-" +
                              str(len(store.run_manifests())))
    store.add_run(run)
    pairs = list(store.iter_scores(run_id=source.id, with_evidence=True))
    responses = {r.id: Response(run.id, r.sample_id, r.text, r.signals) for r, _ in pairs}
    store.add_responses(list(responses.values()))
    store.put_scores([Score(responses[r.id].id, s.metric, s.config_key, s.values, s.evidence, s.undefined_reason)
                      for r, s in pairs])
    return run


@pytest.fixture
def runs_store(tmp_path):
    """Probe runs that differ in their mix alone (the issue's pair), and one at another rate; then a model run
    and a copy of it that differs in each setting in turn: prompt, generation, mitigation, checkpoint, seed."""
    db = tmp_path / "runs.duckdb"
    with Store(db) as store:
        fill_synthetic_store(store, n_samples=6, models=(PROBE.format(ALL_KINDS), PROBE.format(TWO_KINDS),
                                                         "probe rate=0.5 mix=object seed=1 [synthetic]", LLAVA))
        llava = next(r for r in store.run_manifests() if r.model == LLAVA)
        for change in ({"prompt": "viscon"}, {"generation": {"preset": "sampling"}}, {"mitigation": "dtc"},
                       {"checkpoint": "abc123"}, {"seed": 7}):
            _copy_run(store, llava, **change)
    return db


def _assert_one_name_per_run(pairs: list[tuple[str, str]]) -> None:
    """``(run id, name)`` pairs: each name belongs to one run."""
    runs_of = {}
    for run_id, name in pairs:
        runs_of.setdefault(name, set()).add(run_id)
    shared = {name: ids for name, ids in runs_of.items() if len(ids) > 1}
    assert not shared, f"names shared by several runs: {shared}"


def test_every_run_of_a_leaderboard_has_a_name_of_its_own_and_the_others_keep_theirs(runs_store):
    with Store(runs_store, read_only=True) as store:
        [board] = benchmark_boards(store, configs_in_force(store))
    names = {r.run_id: r.name for r in board.runs}
    assert len(names) == 9
    _assert_one_name_per_run(list(names.items()))
    by_model = Counter(r.model for r in board.runs)
    named = sorted(r.name for r in board.runs)
    # the pair, told apart by the one setting they differ in
    assert "probe 0.3 seed 1 (mix object+attribute+relation+count)" in named
    assert "probe 0.3 seed 1 (mix object+relation)" in named
    # a run no other shares its model's name with keeps the short name
    assert "probe 0.5 seed 1" in named and all(r.name == display_name(r.model) for r in board.runs
                                                if by_model[r.model] == 1 and not r.model.startswith("probe rate=0.3"))
    # each copy of the model run names the setting it changed; the run with the usual settings keeps the short name
    llava = sorted(n for n in named if n.startswith("llava-1.5-7b"))
    assert llava == sorted(["llava-1.5-7b", "llava-1.5-7b (prompt viscon)", "llava-1.5-7b (preset sampling)",
                            "llava-1.5-7b (mitigation dtc)", "llava-1.5-7b (checkpoint abc123)",
                            "llava-1.5-7b (seed 7)"]), llava


def test_the_command_line_leaderboard_shows_each_run_under_its_own_name(runs_store, capsys):
    assert main(["leaderboard", "--db", str(runs_store), "--n-boot", "20"]) == 0
    out = capsys.readouterr().out
    with Store(runs_store, read_only=True) as store:
        names = run_names(store.run_manifests())
    for run_id, name in names.items():
        assert f"{name} (synthetic)" in out, name
    assert "probe 0.3 seed 1 (synthetic)" not in out, "the issue's two runs still look like one"


def test_names_are_unique_per_benchmark_and_only_as_long_as_they_must_be():
    runs = [{"id": "a", "benchmark": "b1", "model": LLAVA, "prompt": "viscon"},
            {"id": "b", "benchmark": "b2", "model": LLAVA, "prompt": ""},  # another benchmark: no clash
            {"id": "c", "benchmark": "b1", "model": "probe rate=0.1 mix=object seed=0 [synthetic]"},
            {"id": "d", "benchmark": "b1", "model": "probe rate=0.3 mix=object seed=0 [synthetic]"},
            # alike in every setting a name shows (an imported run and a made one): the run id tells them apart
            {"id": "e", "benchmark": "b3", "model": LLAVA}, {"id": "f", "benchmark": "b3", "model": LLAVA}]
    names = run_names(runs)
    assert names == {"a": "llava-1.5-7b", "b": "llava-1.5-7b", "c": "probe 0.1", "d": "probe 0.3",
                     "e": "llava-1.5-7b · e", "f": "llava-1.5-7b · f"}
    for benchmark in ("b1", "b2", "b3"):
        _assert_one_name_per_run([(r["id"], names[r["id"]]) for r in runs if r["benchmark"] == benchmark])


def test_browse_and_the_every_number_table_use_the_run_names(runs_store):
    pytest.importorskip("gradio")
    from hallu_studio.app.context import AppContext
    from hallu_studio.app.tabs import browse
    from hallu_studio.app.tabs.overview import every_number_html

    with Store(runs_store, read_only=True) as store:
        ctx = AppContext(store=store)
        frame, _, _ = browse.query(ctx, {})
        table = every_number_html(ctx, None, ctx.in_force())
        names = run_names(store.run_manifests())
    shown = set(frame["model"])
    assert "probe 0.3 seed 1 (mix object+relation) (synthetic)" in shown, shown
    assert "probe 0.3 seed 1 (synthetic)" not in shown
    for name in names.values():
        assert name in table, name
