"""The shareable report reads on its own: a one-line summary first, every explanation written out (a file has no
hover for most readers), and no pointer to a file the reader does not have."""

from __future__ import annotations

import html
import re

import pytest

from hallu_studio.studies.in_force import configs_in_force
from hallu_studio.studies.ranking import benchmark_boards
from hallu_studio.app.report import build_report, scene_graph_png, summary_line
from synthetic_store import fill_synthetic_store
from hallu_studio.model import SceneGraph
from hallu_studio.store import Store


@pytest.fixture(scope="module")
def store():
    st = Store(":memory:")
    fill_synthetic_store(st, n_samples=12, models=("alpha-vlm", "beta-vlm"))
    yield st
    st.close()


def _visible(page: str) -> str:
    body = re.sub(r"<style>.*?</style>", "", page, flags=re.S)
    body = re.sub(r"<img[^>]*>", "", body)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))


def test_the_report_opens_with_who_hallucinates_least_and_by_how_much(store):
    page = build_report(store)
    first = re.search(r"</h1>\s*<p class=\"hs-summary\">(.*?)</p>", page, re.S)
    assert first, "the summary is the first thing under the title"
    line = html.unescape(first.group(1))
    boards = benchmark_boards(store, configs_in_force(store))
    ranked = [r for r in boards[0].runs if r.rank is not None]
    assert line.startswith("In short: ") and "hallucinates least on synthetic-ui" in line
    assert ranked[0].model.split("-")[0] in line and "for the next" in line
    assert line == summary_line(boards)


def test_the_report_explains_everything_in_its_text(store):
    visible = _visible(build_report(store))
    assert "hover" not in visible.lower() and "docs/" not in visible
    assert "What each number means" in visible and "Misleads:" in visible
    assert "lower is better" in visible and "higher is better" in visible
    assert "Models: " in visible  # the full specs, written out
    assert "supported by the reference" in visible  # what the failure cards' colours mean


def test_the_reference_drawing_holds_every_object_and_attribute():
    objects = [{"id": str(i), "name": f"thing{i}", "attributes": ["red", "large", "wooden", "striped"]}
               for i in range(14)]
    relations = [{"subject": str(i), "predicate": "left of", "object": str(i + 1)} for i in range(13)]
    small = scene_graph_png(SceneGraph.from_dict({"objects": objects[:2], "relations": relations[:1]}))
    large = scene_graph_png(SceneGraph.from_dict({"objects": objects, "relations": relations}))
    from PIL import Image
    import io

    assert Image.open(io.BytesIO(large)).size[0] > Image.open(io.BytesIO(small)).size[0] >= 150
    assert Image.open(io.BytesIO(large)).size[0] >= 600  # fourteen objects are not squeezed into a thumbnail
