"""Every paper analysis in the Study view, in headless Chromium, on a small scored store.

Probe runs at three injection rates on a hand-written mini benchmark (reused from
``test_analyses_integration``), scored by the real offline metrics, a recorded run whose
yes/no answers carry a logit lens, and a few ratings. For each analysis in the dropdown
the test picks it, runs it and checks that the panel shows its title, a table or notes,
and a plot image; a screenshot of the panel goes to ``test-artifacts/analysis-<name>.png``.
"""

from __future__ import annotations

import os

import pytest
from test_analyses_integration import mini_samples, probe_runs
from reliability_helpers import free_port
from test_browser import ARTIFACTS, CHROMIUM, _open, _tab, browser  # noqa: F401  (browser: fixture)

from hallu_studio.model import Benchmark, HumanEvent, Response, Run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCORED = ["emd", "trihe", "edit", "reefknot"]
LAYERS = 6


def lens_run(store, source_run: str) -> None:
    """A recorded run: the source run's yes/no answers with a logit lens (answer probability per layer).

    The probe backend records answer entropy but no logit lens; the confidence analysis needs
    both, so the lens rises to the answer's final probability in the last layers.
    """
    run = Run(Run.make_id("mini", "lens-fixture", "recorded", "", {}, "none", 0), "mini", "lens-fixture",
              "recorded", synthetic=True)
    responses = []
    for rid in store.response_ids(run_id=source_run):
        source = store.get_response(rid)
        if not source.sample_id.startswith("mini/y"):
            continue
        answer = "yes" if source.text.strip().lower().startswith("yes") else "no"
        final = 0.55 if (source.signals or {}).get("injected") else 0.9  # a flipped answer ends less sure
        rise = [round(0.1 + (final - 0.1) * (i / (LAYERS - 1)) ** 2, 3) for i in range(LAYERS)]
        lens = {answer: rise, ("no" if answer == "yes" else "yes"): [round(1 - p, 3) for p in rise]}
        signals = dict(source.signals or {}, logit_lens=lens)
        responses.append(Response(run.id, source.sample_id, source.text, signals,
                                  Response.make_id(run.id, source.sample_id)))
    assert responses, "the probe run answered no yes/no question"
    store.add_runs_and_responses([run], responses)


@pytest.fixture(scope="module")
def analyses_app(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from hallu_studio.config import Settings
    from hallu_studio.pipelines.scoring import score_store
    from hallu_studio.store import Store

    store = Store(tmp_path_factory.mktemp("browser-analyses") / "analyses.duckdb")
    store.add_samples(Benchmark("mini"), mini_samples())
    probe_runs(store, "mini", (0.0, 0.3, 0.6))
    noisy = [r["id"] for r in store.list_runs("mini") if r["backend"] == "probe"][-1]
    lens_run(store, noisy)
    settings = Settings()
    report = score_store(store, settings, SCORED, progress=False)
    assert not report.failed, report.failures
    for i, rid in enumerate(store.response_ids(benchmark="mini")[::3][:8]):
        store.append_event(HumanEvent("ann", "rating", rid, 1 + i % 5))
    demo = build_app(AppContext(store=store, settings=settings))
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    yield store, url
    demo.close()
    store.close()


def _choose(page, label: str) -> None:
    page.locator("#study-analysis-name input").first.click()
    page.locator("ul[role=listbox] li", has_text=label).first.click()
    page.wait_for_function("(label) => document.querySelector('#study-analysis-name input')?.value === label",
                           arg=label, timeout=90_000)


def _plot_image(page, previous: str | None) -> str:
    """Wait for a new, loaded plot image in the panel; returns its src."""
    page.wait_for_function(
        """(previous) => {
            const img = document.querySelector('#study-analysis-plot img');
            return img && img.complete && img.naturalWidth > 0 && img.getAttribute('src') !== previous;
        }""", arg=previous, timeout=180_000)
    img = page.locator("#study-analysis-plot img").first
    box = img.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 100, box
    return str(img.get_attribute("src"))


def _run(page, label: str, previous: str | None) -> tuple[int, str, str]:
    """Pick and run one analysis; returns its table's row count, the panel's text and the plot's src."""
    name, title = label.split(": ", 1)
    _choose(page, label)
    page.click("#study-analysis-run")
    page.wait_for_function(
        "(title) => document.querySelector('#study-analysis-table h4')?.innerText === title "
        "|| document.querySelector('#study-analysis-table .hs-error')",
        arg=title, timeout=180_000)
    panel = page.locator("#study-analysis-table")
    errors = panel.locator(".hs-error")
    assert errors.count() == 0, f"{name}: {errors.first.inner_text()}"
    rows = panel.locator("table tbody tr").count()
    assert rows or panel.locator("ul.hs-notes li").count(), f"{name}: neither a table nor notes"
    return rows, panel.inner_text(), _plot_image(page, previous)


def test_every_analysis_runs_in_the_study_view(analyses_app, browser):  # noqa: F811
    from hallu_studio.app.tabs.study_analyses import analysis_choices

    _, url = analyses_app
    page = _open(browser, url, set())
    _tab(page, "Study")
    page.wait_for_selector("#study-analysis-run", timeout=45_000)
    ARTIFACTS.mkdir(exist_ok=True)
    previous: str | None = None
    empty = []
    for label, name in analysis_choices():
        rows, text, previous = _run(page, label, previous)
        if not rows:
            empty.append((name, text))
        if name == "confidence-layers":  # the recorded run's lens reached the analysis
            assert "logit lens recorded for" in text, text
        page.locator("#study-analyses").screenshot(path=str(ARTIFACTS / f"analysis-{name}.png"))
    # the store holds what every analysis needs (ratings, entropy, a logit lens, three probe rates)
    assert not empty, empty
    page.close()


# run ids -> analyses that must explain, in their notes, why a run without their data shows nothing
TOO_LITTLE = {"frequent-pairs": "no Tri-HE triplet verdicts", "judge-agreement": "at least three are needed",
              "run-comparison": "needs two or more"}


def test_an_analysis_without_its_data_explains_why(analyses_app, browser):  # noqa: F811
    from hallu_studio.app.tabs.study_analyses import analysis_choices

    store, url = analyses_app
    lens = [r["id"] for r in store.list_runs("mini") if r["backend"] == "recorded"]
    page = _open(browser, url, set())
    _tab(page, "Study")
    page.locator("#study-analysis-runs textarea, #study-analysis-runs input").first.fill(lens[0])
    labels = {name: label for label, name in analysis_choices()}
    previous: str | None = None
    for name, reason in TOO_LITTLE.items():
        rows, text, previous = _run(page, labels[name], previous)
        assert rows == 0 and "no rows" in text and reason in text, (name, text)
    page.locator("#study-analyses").screenshot(path=str(ARTIFACTS / "analysis-too-little-data.png"))
    page.close()


def test_long_run_names_are_wrapped_and_the_figure_widened():
    from hallu_studio.app.tabs.study_analyses import readable_figure
    from hallu_studio.studies.analyses.result import figure

    names = [f"probe rate={r} mix=object+attribute+relation+count seed=0 [synthetic]" for r in (0, 0.3, 0.6)]
    fig, (ax,) = figure()
    ax.bar(range(3), [1, 2, 3])
    ax.set_xticks(range(3), names, rotation=30)
    fig.canvas.draw()
    numbers = [t.get_text() for t in ax.get_yticklabels()]
    width = fig.get_size_inches()[0]
    readable_figure(fig)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert [label.split("\n") for label in labels][1] == ["probe rate=0.3", "mix=object+attribute+relation+count",
                                                           "seed=0 [synthetic]"]
    assert [label.replace("\n", " ") for label in labels] == names
    assert all(t.get_rotation() == 0 for t in ax.get_xticklabels())
    assert fig.get_size_inches()[0] > width  # three wrapped names need more than the analysis' 4.2 inches
    assert [t.get_text() for t in ax.get_yticklabels()] == numbers  # short numeric ticks are left alone
