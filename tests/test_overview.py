"""The Overview's ranked boards, its plots' layout and colours, the report, and the first start's slice."""

from __future__ import annotations

import pytest

from hallu_studio.studies.in_force import configs_in_force
from hallu_studio.studies.ranking import HEADLINES, benchmark_boards, rank_benchmark
from hallu_studio.presentation import display_name, model_colour, short_model_label

XSS = "<img src=x onerror=window.__xss=1>"
PROBES = [f"probe rate={r} mix=object+attribute+relation+count seed=0 [synthetic]" for r in (0, 0.1, 0.3, 0.5)]


def _row(run, model, metric, key, value, n=10, config="k"):
    return {"run_id": run, "model": model, "synthetic": False, "metric": metric, "config_key": config, "key": key,
            "value": value, "low": value - 1, "high": value + 1, "n": n}


def test_models_are_ranked_best_first_in_the_metrics_direction():
    runs = [{"id": r, "model": r.upper(), "responses": 20} for r in ("a", "b", "c")]
    applies = {"halfscore": {"a": 20, "b": 20, "c": 20}, "emd": {"a": 20, "b": 20, "c": 20}}
    rows = [_row("a", "A", "halfscore", "f", 0.5), _row("b", "B", "halfscore", "f", 0.9, n=20),
            _row("a", "A", "emd", "total", 10.0), _row("b", "B", "emd", "total", 30.0)]
    board = rank_benchmark("x", rows, runs, applies, {m: "no" for m in ("trihe", "reefknot", "chair", "pope", "edit")})
    # EMD (lower is better) ranks before HalFscore in priority: A first; C has no numbers, so no rank.
    assert board.ranked_by.name == "EMD"
    assert [(r.run_id, r.rank) for r in board.runs] == [("a", 1), ("b", 2), ("c", None)]
    assert board.runs[0].cells["emd.total"].partial and not board.runs[1].cells["halfscore.f"].partial
    assert board.runs[2].cells["emd.total"].note == "not scored yet"
    assert set(board.not_applicable) == {"Tri-HE", "Reefknot", "CHAIR", "POPE"}


def test_every_headline_says_its_direction_unit_and_caveat():
    for h in HEADLINES:
        assert h.arrow in "↓↑" and h.unit and h.meaning and h.misleads
        assert "metrics-and-weaknesses.md" in h.tooltip


def test_short_names_and_colours_depend_on_the_name_alone():
    assert display_name(PROBES[2]) == "probe 0.3"
    assert display_name("transformers:llava-hf/llava-1.5-7b-hf") == "llava-1.5-7b"
    assert display_name("probe rate=0.3 mix=object seed=2 [synthetic]") == "probe 0.3 seed 2"
    assert short_model_label(PROBES[0], True) == "probe 0 (synthetic)"
    assert len({model_colour(p) for p in PROBES}) == len(PROBES), "the demo's probes share a colour"
    assert model_colour("llava") == model_colour("llava")  # no state: a function of the name


def _plot_rows():
    rows = []
    for k, model in enumerate(PROBES + ["transformers:llava-hf/llava-1.5-7b-hf"]):
        for i, (domain, task) in enumerate([("original", "caption"), ("sketch", "caption"), ("oil", "yes_no"),
                                            ("cartoon", "mcq"), ("line", "vqa")] * 2):
            rows.append({"model": model, "synthetic": "probe" in model, "sample_id": f"s{i}", "domain": domain,
                         "task": task, "relation_category": "perception", "emd.total": 10.0 + i + k,
                         "edit.distance": i + k, "edit.words": 10 * (i + 1), "trihe.n_triplets": 3,
                         "trihe.object": k % 3, "trihe.relation": 1, "reefknot.hallucinated": (i + k) % 2})
    return rows


def test_plots_keep_legends_off_the_data_and_each_model_in_its_colour():
    from matplotlib.colors import to_hex

    from hallu_studio.app.render.plots import overview_figures

    rows = _plot_rows()
    labels = {short_model_label(r["model"], r["synthetic"]): model_colour(r["model"]) for r in rows}
    for make, caption, *_ in overview_figures():
        fig = make(rows)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        assert not ax.get_title(), f"{caption}: a title over the axes"
        data_box = ax.get_window_extent(renderer)
        legend = ax.get_legend()
        assert legend is not None and not legend.get_window_extent(renderer).overlaps(data_box), \
            f"{caption}: the legend covers the data"
        seen = {}
        for handle, text in zip(legend.legend_handles, legend.get_texts()):
            label = text.get_text().split(" (α=")[0]
            colour = handle.get_facecolor() if hasattr(handle, "get_facecolor") else handle.get_color()
            colour = colour[0] if getattr(colour, "ndim", 1) == 2 else colour
            seen[label] = to_hex(colour)
        assert seen == labels, f"{caption}: a model is not in its own colour"
        for tick in ax.get_xticklabels():  # tick labels are whole, inside the saved picture
            assert "…" not in tick.get_text()
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_board_html_escapes_and_marks_partial_and_not_applicable():
    from hallu_studio.app.render.leaderboard import board_html

    runs = [{"id": "a", "model": f"evil {XSS}", "responses": 20}, {"id": "b", "model": PROBES[1], "synthetic": True,
                                                                   "responses": 20}]
    rows = [_row("a", runs[0]["model"], "emd", "total", 10.0), _row("b", PROBES[1], "emd", "total", 12.0, n=20)]
    board = rank_benchmark(XSS, rows, runs, {"emd": {"a": 20, "b": 20}}, {"reefknot": "needs relation questions",
                                                                        "trihe": "t", "chair": "c", "pope": "p"})
    html = board_html(board)
    assert XSS not in html and "&lt;img" in html
    assert "10 of 20 scored" in html and "do not apply" in html and "needs relation questions" in html
    assert "EMD ↓" in html and "×100" in html and "synthetic" in html
    assert f'title="{PROBES[1]}"' in html.replace("&#x27;", "'") or "probe rate=0.1" in html


@pytest.fixture
def synthetic(tmp_path):
    from synthetic_store import fill_synthetic_store
    from hallu_studio.model import Run
    from hallu_studio.store import Store

    path = tmp_path / "s.duckdb"
    with Store(path) as store:
        fill_synthetic_store(store, n_samples=10)
        bench = store.list_runs()[0]["benchmark"]
        store.add_run(Run(id="run-hostile", benchmark=bench, model=f"evil {XSS}", backend="jsonl"))
    return path


def test_boards_from_a_store_count_responses_as_the_run_view(synthetic):
    from hallu_studio.store import Store

    with Store(synthetic) as store:
        boards = benchmark_boards(store, configs_in_force(store))
        runs = {r["id"]: r["responses"] for r in store.list_runs()}
    assert len(boards) == 1
    assert {r.run_id: r.responses for r in boards[0].runs} == runs


def test_report_cli_writes_one_offline_file_and_refuses_a_typo(synthetic, tmp_path, capsys):
    from hallu_studio.cli import main

    out = tmp_path / "r" / "report.html"
    assert main(["report", "--db", str(synthetic), "--output", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and "Content-Security-Policy" in html
    assert "<script" not in html.lower() and XSS not in html
    assert "src=\"http" not in html and "href=\"http" not in html and "url(" not in html
    assert "data:image/png;base64," in html and "hs-rank" in html
    assert main(["report", "--db", str(synthetic), "--output", str(out), "--benchmark", "typo"]) == 2
    assert "unknown benchmark 'typo'" in capsys.readouterr().err
    assert main(["report", "--db", str(tmp_path / "missing.duckdb"), "--output", str(out)]) == 2
    assert not (tmp_path / "missing.duckdb").exists(), "a read command created a store"


def test_first_slice_takes_every_run_on_the_same_samples_and_the_banner_counts_responses(synthetic):
    from hallu_studio.app.bootstrap import DemoProgress, stratified_slice
    from hallu_studio.store import Store

    with Store(synthetic) as store:
        first = stratified_slice(store, per_stratum=1)
        responses = {rid: store.get_response(rid) for rid in first}
        samples = {r.sample_id for r in responses.values()}
        tasks = {store.get_sample(s).task for s in samples}
        runs_with_responses = {r["id"] for r in store.list_runs() if r["responses"]}
        assert tasks == {s.task for s in store.iter_samples()}, "every task is in the slice"
        for sample in samples:
            assert {r.run_id for r in responses.values() if r.sample_id == sample} == runs_with_responses
        progress = DemoProgress(store)
        total = store.count_responses()
        assert "loading" in progress.line()
        progress.step("slice")(4, len(first))
        assert f"4 of {len(first)} responses" in progress.line()
        progress.step("rest")
        assert progress.line() == f"first slice scored; now the rest of the {total:,} responses"
        progress.step("rest")(5, 10)
        assert progress.line() == f"scored {total - 5:,} of {total:,} responses"
