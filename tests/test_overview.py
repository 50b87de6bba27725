"""The Overview's ranked boards, its plots' layout and colours, the report, and the first start's slice."""

from __future__ import annotations

import pytest

from hallu_studio.studies.in_force import configs_in_force
from hallu_studio.studies.ranking import benchmark_boards, headlines, rank_benchmark
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
    for h in headlines():
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


def _probe_board(benchmark="sample", scored=True):
    from hallu_studio.metrics.registry import METRIC_NAMES

    runs = [{"id": f"r{k}", "model": p, "synthetic": True, "responses": 20} for k, p in enumerate(PROBES)]
    rows = [_row(f"r{k}", p, "trihe", "hallu_q", 5.0 + 10 * k, n=20) for k, p in enumerate(PROBES)] if scored else []
    for row in rows:
        row["synthetic"] = True
    return rank_benchmark(benchmark, rows, runs, {"trihe": {f"r{k}": 20 for k in range(4)}, "pope": {"r0": 20}},
                          {m: "n/a" for m in METRIC_NAMES if m not in ("trihe", "pope")})


def _outside_fold(html: str) -> str:
    import re

    return re.sub(r'<details class="hs-research">.*?</details>', "", html, flags=re.S)


def test_the_board_says_in_words_who_hallucinates_least_what_the_unit_is_and_what_a_probe_is():
    import html as html_lib
    import re

    from hallu_studio.app.render.leaderboard import PROBE_NOTE, board_html
    from hallu_studio.metrics.registry import metric_spec

    page = board_html(_probe_board())
    seen = html_lib.unescape(re.sub(r"<[^>]+>", " ", _outside_fold(page)))
    plain = metric_spec("trihe").headline.plain
    lead = html_lib.unescape(re.search(r'<p class="hs-headline">(.*?)</p>', page).group(1))
    assert lead.startswith("probe 0 hallucinates least on sample: Tri-HE Hallu_Q 5 "), lead
    assert "against 15 for the next, probe 0.1 (10 lower" in lead and "35 for probe 0.5, which hallucinates most" in lead
    assert f"Hallu_Q ↓: {plain}; lower is better." in lead and "not real AI models" in lead
    assert PROBE_NOTE in seen and "probe 0.3 gets about 3 in 10 wrong" in seen  # in the page, not in a hover
    assert seen.count(plain) == 2  # beside the number, in the sentence and under the column's name
    # Viewers see no command and no pointer to a hover; what is missing is said in words. The fold keeps them.
    assert "hallu-studio" not in seen and "hover" not in seen.lower() and "docs/" not in seen
    assert "Not scored on this benchmark yet: POPE F1. Its number is missing, not zero" in seen
    assert "hallu-studio score --metrics pope" in page and "Configurations" not in seen


def test_every_headline_unit_is_said_in_plain_words():
    from hallu_studio.metrics.registry import metric_specs

    for spec in metric_specs():
        plain = spec.headline.plain
        assert plain and plain != spec.headline.unit and "×100" not in plain.split("(")[0], spec.name


def test_unscored_benchmarks_come_after_the_ranked_ones_in_one_line():
    from hallu_studio.app.render.leaderboard import ranked_first, waiting_html

    waiting, ranked = _probe_board("haelm", scored=False), _probe_board("sample")
    assert [b.benchmark for b in ranked_first([waiting, ranked])] == ["sample", "haelm"]
    line = waiting_html([waiting])
    assert "haelm" in line and "4 runs" in line and "hallu-studio" not in line


def test_the_plots_note_names_each_family_once_and_only_while_it_has_no_scores():
    from hallu_studio.app.render.plots import figures_html

    assert "No scores to plot yet for: Tri-HE, VISCON, Reefknot." in figures_html([{"model": "m", "run_id": "r"}])
    rows = _plot_rows()
    assert "No scores to plot" not in figures_html(rows), "scored families are not named"
    no_edit = [{k: v for k, v in r.items() if not k.startswith(("edit.", "reefknot."))} for r in rows]
    note = figures_html(no_edit)
    # VISCON's EMD is drawn: its edit plot is named, not the whole family again
    assert "No scores to plot yet for: VISCON: edit distance vs length, Reefknot." in note


def test_a_metric_that_declares_a_plot_is_drawn_with_no_app_change(monkeypatch):
    from hallu_studio.app.render import plots
    from hallu_studio.metrics import registry
    from hallu_studio.metrics.spec import MetricSpec, Number, Plot

    toy = MetricSpec("toy", "Toy", tasks=("caption",), settings=(),
                     headline=Number("rate", "rate", "%", lower_is_better=True, plain="% of toys"),
                     plots=(Plot("mean_by", "rate per domain", "one bar per domain", "toy rate (%)", ("rate",),
                                 by=("domain",), scale=100.0),))
    monkeypatch.setattr(registry, "metric_specs", lambda: [toy])
    rows = [{"model": m, "synthetic": False, "domain": d, "toy.rate": v}
            for m, d, v in (("a", "x", 0.1), ("a", "y", 0.3), ("b", "x", 0.5))]
    html = plots.figures_html(rows)
    assert "Toy: rate per domain" in html and "data:image/png;base64," in html
    monkeypatch.setattr(registry, "metric_specs", lambda: [MetricSpec(
        "toy", "Toy", tasks=("caption",), settings=(), headline=toy.headline,
        plots=(Plot("pie", "x", "x", "x", ("rate",)),))])
    with pytest.raises(ValueError, match="toy asks for a plot of kind 'pie'"):
        plots.figures_html(rows)


def test_plots_of_metrics_that_do_not_apply_are_not_named_as_waiting():
    from hallu_studio.app.render.plots import figures_html

    rows = [{k: v for k, v in r.items() if not k.startswith("reefknot.")} for r in _plot_rows()]
    # a benchmark without relation questions: Reefknot never gets scores there, so it is never "not plotted yet"
    assert "No scores to plot" not in figures_html(rows, metrics={"trihe", "emd", "edit", "halfscore", "chair"})
    assert "No scores to plot yet for: Reefknot." in figures_html(rows)
