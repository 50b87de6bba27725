"""Annotate's key presses (rate, next, undo, note) do constant work whatever the store holds: the queries one
action runs are the same on a small store and on a year of a lab's annotation (100k responses, 50k ratings).
Timings are not asserted here (``benchmarks/bench_annotation_load.py`` measures them)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import pytest

from hallu_studio.app import actions
from hallu_studio.app.context import AppContext
from hallu_studio.store import Store
from synthetic_store import fill_rated_store

LARGE = (50_000, 50_000)  # samples (x 2 models = 100k responses), ratings
SMALL = (100, 50)


class _CountingCursor:
    """A DuckDB cursor that counts the statements run through it and the rows they return (``rows``)."""

    def __init__(self, cursor: Any, counter: list[str], rows: list[int]) -> None:
        self._cursor, self._counter, self._rows = cursor, counter, rows

    def execute(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self._counter.append(" ".join(str(sql).split())[:80])
        self._cursor.execute(sql, *args, **kwargs)
        return self  # the fetch after it is counted too

    def fetchall(self) -> list:
        rows = self._cursor.fetchall()
        self._rows.append(len(rows))
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def _counting(store: Store, monkeypatch: pytest.MonkeyPatch, rows: list[int]) -> list[str]:
    """Count every statement the store runs (and into ``rows``, the rows each fetch returned): each of its calls
    takes its cursor from ``_using``."""
    statements: list[str] = []
    plain = store._using

    @contextmanager
    def counted() -> Iterator[_CountingCursor]:
        with plain() as cur:
            yield _CountingCursor(cur, statements, rows)

    monkeypatch.setattr(store, "_using", counted)
    return statements


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Store]:
    out = {}
    for name, (samples, ratings) in (("small", SMALL), ("large", LARGE)):
        store = Store(tmp_path_factory.mktemp(name) / "s.duckdb")
        fill_rated_store(store, samples, ratings)
        out[name] = store
    yield out
    for store in out.values():
        store.close()


def _statements_per_action(store: Store, monkeypatch: pytest.MonkeyPatch, who: str) -> dict[str, list[str]]:
    ctx = AppContext(store=store)
    item = actions.next_item(ctx, who)["response_id"]  # the first builds the annotator's order: once a session
    actions.rate(ctx, who, item, 3)
    on_screen = {}
    steps = {
        "next": lambda: on_screen.update(actions.next_item(ctx, who)),
        "rate": lambda: actions.rate(ctx, who, on_screen["response_id"], 4),
        "note": lambda: actions.note(ctx, who, item, "unclear image"),
        "undo": lambda: actions.undo(ctx, who),
        "next after undo": lambda: actions.next_item(ctx, who),
    }
    return {name: statements for name, (statements, _) in _each_counted(store, monkeypatch, steps).items()}


def _each_counted(store: Store, monkeypatch: pytest.MonkeyPatch,
                  steps: dict[str, Any]) -> dict[str, tuple[list[str], int]]:
    """Run each step in turn: the statements it ran and the rows they returned."""
    out = {}
    for name, step in steps.items():
        rows: list[int] = []
        statements = _counting(store, monkeypatch, rows)
        step()
        out[name] = (list(statements), sum(rows))
        monkeypatch.undo()
    return out


def test_an_action_runs_as_many_queries_on_100k_responses_as_on_200(stores, monkeypatch):
    assert stores["large"].count_responses() == 2 * LARGE[0]
    small = _statements_per_action(stores["small"], monkeypatch, "new-annotator")
    large = _statements_per_action(stores["large"], monkeypatch, "new-annotator")
    for action in small:
        assert large[action], (action, "no statement counted: the counting missed the store's cursor")
        assert len(large[action]) == len(small[action]), (action, small[action], large[action])
        assert len(large[action]) <= 6, (action, large[action])  # a handful of keyed statements, no queue rebuild


def test_next_skips_what_others_completed_and_never_hands_one_item_to_two_at_once(stores):
    store = stores["small"]
    ctx = AppContext(store=store)
    first = actions.next_item(ctx, "ann-a")["response_id"]
    second = actions.next_item(ctx, "ann-b")["response_id"]
    assert first and second and first != second  # a held item is not given to another with one rating needed
    actions.rate(ctx, "ann-a", second, 2)  # a rates the item b holds: b's rating would be a second one
    assert actions.next_item(ctx, "ann-a")["response_id"] == first  # still a's, unrated
    # c's order was computed before; the item a rated has its one rating and is never handed out
    seen = {actions.next_item(ctx, "ann-c")["response_id"] for _ in range(3)}
    assert second not in seen


def test_undo_puts_the_item_back_in_the_annotators_queue(stores):
    store = stores["small"]
    ctx = AppContext(store=store)
    item = actions.next_item(ctx, "ann-u")["response_id"]
    actions.rate(ctx, "ann-u", item, 5)
    assert actions.next_item(ctx, "ann-u")["response_id"] != item
    assert actions.undo(ctx, "ann-u")["response_id"] == item
    assert actions.next_item(ctx, "ann-u")["response_id"] == item


def _study_key_presses(store: Store, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple[int, int]]:
    """(statements, rows read) of a study's next, rate and next-while-looking, on a study of 20 images x 2 models."""
    from hallu_studio.annotation import create_study
    from hallu_studio.annotation.design import StudyDesign

    runs = tuple(r["id"] for r in store.list_runs())
    if store.get_study("day") is None:
        create_study(store, StudyDesign(name="day", runs=runs, images=20, ratings_per_item=2))
    ctx, who = AppContext(store=store), "study-annotator"
    on_screen: dict[str, Any] = {}
    steps = {"next": lambda: on_screen.update(actions.next_item(ctx, who, study="day")),
             "rate": lambda: actions.rate(ctx, who, on_screen["response_id"], 4, "blind", "day"),
             "skip the one on screen": lambda: actions.next_item(ctx, who, after=on_screen["response_id"],
                                                                 study="day")}
    return {name: (len(statements), rows) for name, (statements, rows) in _each_counted(store, monkeypatch, steps).items()}


def test_a_study_key_press_reads_the_studys_items_not_the_store(stores, monkeypatch):
    """A study's next reads its own items and the events on them: as many statements on 100k responses and 50k
    ratings as on 200, and rows in proportion to the study (40 items), not to the store."""
    small = _study_key_presses(stores["small"], monkeypatch)
    large = _study_key_presses(stores["large"], monkeypatch)
    for action, (statements, rows) in large.items():
        assert statements == small[action][0], (action, small[action], large[action])
        assert rows <= 20 * 40, (action, rows, "rows read: the study's 40 items, not the store's 100k responses")
