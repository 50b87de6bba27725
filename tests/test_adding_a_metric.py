"""Adding a metric is one module plus its registry line: a metric the views have never heard of, registered for
this test alone, is scored by the pipeline and shows in the Overview, Browse, Inspect (with its panel), the report,
the leaderboard and the Study view, with no other file touched."""

from __future__ import annotations

import json
import sys
import types
from typing import Any, Sequence

import pytest

from hallu_studio.config import Settings
from hallu_studio.metrics import registry
from hallu_studio.metrics.base import ItemResult, ScoringItem
from hallu_studio.metrics.evidence import HALLUCINATED, SUPPORTED, EvidenceRow, concept_key
from hallu_studio.metrics.spec import MetricSpec, Number
from hallu_studio.model import HumanEvent
from synthetic_store import fill_synthetic_store

LONG = 8  # a word this long or longer is what the toy calls suspicious


def _rows(values: Any, evidence: Any, text: str) -> list[EvidenceRow]:
    return [EvidenceRow(word, HALLUCINATED if len(word) >= LONG else SUPPORTED, kind="object",
                        reason=f"toy: {len(word)} letters", concept=concept_key("object", word))
            for word in evidence.get("words") or []]


class LongWordsMetric:
    """A toy: the share of a response's words that are long (lower is better)."""

    spec = MetricSpec(
        "longwords", "Long words", tasks=("caption", "vqa"), settings=(),
        headline=Number("share", "long-word share", "%", lower_is_better=True,
                        meaning="the toy's share of long words", plain="% of words that are long"),
        item=Number("long", "long words", "words", lower_is_better=True, meaning="long words in this response"),
        hallucination_scores=(Number("long", "long words", "words", lower_is_better=True,
                                     meaning="toy: long words"),),
        evidence_rows=_rows, reads_concepts=False)
    name = spec.name

    def config(self) -> dict[str, Any]:
        return {"metric": self.name, "long": LONG}

    def update(self, item: ScoringItem) -> ItemResult:
        words = [w.strip(".,;:!?").lower() for w in item.response.split()]
        long = sum(len(w) >= LONG for w in words)
        return ItemResult({"long": long, "words": len(words)}, {"long": long}, {"words": words[:12]})

    def compute(self, stats: Sequence[dict[str, float]]) -> dict[str, float]:
        words = sum(s["words"] for s in stats)
        return {"share": 100.0 * sum(s["long"] for s in stats) / words if words else float("nan")}


@pytest.fixture
def registered(monkeypatch):
    """The module and its registry line, and nothing else: monkeypatch takes both back after the test."""
    module = types.ModuleType("hallu_studio.metrics._longwords_for_test")
    module.LongWordsMetric = LongWordsMetric  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(registry._METRIC_CLASSES, "longwords", ("_longwords_for_test", "LongWordsMetric"))
    monkeypatch.setattr(registry, "METRIC_NAMES", ("longwords", *registry.METRIC_NAMES))
    return LongWordsMetric


def test_a_new_metric_appears_in_every_view(store, registered, tmp_path, capsys):
    from hallu_studio.app.context import AppContext
    from hallu_studio.app.inspection import inspect_response
    from hallu_studio.app.report import build_report
    from hallu_studio.app.tabs import browse, overview, study_compute
    from hallu_studio.cli import main as cli_main
    from hallu_studio.pipelines.scoring import score_store

    ids = fill_synthetic_store(store, n_samples=8)
    report = score_store(store, Settings(), ["longwords"], progress=False)
    assert report.scored.get("longwords", 0) > 0
    ctx = AppContext(store=store)
    title = "Long words"

    # Overview: ranked on the new metric's headline (the first in the registry), its plain unit said
    board = overview.leaderboard_html(ctx, None)
    assert title in board and "% of words that are long" in board

    # Browse: a column of its per-response number
    frame, _, _ = browse.query(ctx, browse.default_filters())
    assert any("long words" in str(c) for c in frame.columns)

    # Inspect: its section, with its rows in words
    caption = next(rid for rid in ids if store.get_response(rid) and "longwords" in
                   {s.metric for s in store.get_scores(rid)})
    panels = inspect_response(store, caption, with_graphs=False)
    assert 'data-metric="longwords"' in panels.evidence and "toy: " in panels.evidence

    # the report
    html = build_report(store)
    assert title in html

    # the leaderboard, as the CLI prints it
    db = store.path
    store.close()
    assert cli_main(["leaderboard", "--db", str(db), "--format", "jsonl"]) in (0, None)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert any(any(str(k).startswith("longwords") for k in line) or line.get("metric") == "longwords"
               for line in lines)

    # the Study view: its number beside people's ratings
    from hallu_studio.store import Store

    with Store(db) as again:
        scored = [r.id for r, _ in again.iter_scores("longwords")]
        for i, rid in enumerate(scored[:12]):
            again.append_event(HumanEvent("ann", "rating", rid, 1 + i % 5))
        table = study_compute.correlations_html(AppContext(store=again), {})
    assert "longwords" in table or title in table
