"""The app's public API through ``gradio_client``, against the app launched in-process."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

import pytest

gradio_client = pytest.importorskip("gradio_client")

from hallu_studio.app import AppContext, build_app  # noqa: E402
from synthetic_store import fill_synthetic_store  # noqa: E402
from hallu_studio.store import Store  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(store: Store, users: list[tuple[str, str]] | None = None):
    demo = build_app(AppContext(store=store, auth_enabled=users is not None))
    demo.queue(default_concurrency_limit=8)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(),
                            quiet=True, auth=users, footer_links=[])
    return demo, url


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("api") / "api.duckdb")
    ids = fill_synthetic_store(store, n_samples=6)
    demo, url = launch(store)
    yield store, ids, url
    demo.close()
    store.close()


@pytest.fixture(scope="module")
def client(app):
    return gradio_client.Client(app[2], verbose=False)


def test_api_names_are_stable(client):
    names = set(client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert {"/rate", "/correct_triplet", "/review_edit", "/note", "/undo", "/next_item", "/prefer",
            "/inspect", "/inspect_next", "/browse", "/export"} <= names


def test_each_annotation_action_appends_one_event(app, client):
    store, ids, _ = app
    rid = ids[0]
    r = client.predict(rid, 4, "carol", api_name="/rate")
    assert r["rating"] == 4 and r["annotator"] == "carol"
    c = client.predict(rid, 1, "supported", "the object is there", "carol", api_name="/correct_triplet")
    assert c["verdict"] == "supported"
    e = client.predict(rid, 0, False, "carol", api_name="/review_edit")
    assert e["accept"] is False
    client.predict(rid, "looks fine", "carol", api_name="/note")
    p = client.predict(ids[0], ids[6], ids[6], "precision", "carol", api_name="/prefer")
    assert p["winner"] == ids[6]
    kinds = [ev.kind for ev in store.list_events(annotator="carol")]
    assert kinds == ["rating", "correction", "revision_review", "note", "preference"]
    u = client.predict("", "carol", api_name="/undo")
    assert u["undone"]
    last = store.list_events(annotator="carol")[-1]
    assert last.kind == "undo" and last.undoes == store.list_events(annotator="carol")[-2].id
    mine = client.predict("carol", api_name="/my_events")
    assert [m["kind"] for m in mine][-1] == "undo"


def test_next_item_walks_the_queue_of_unrated_responses(app, client):
    store, ids, _ = app
    first = client.predict("unrated", 1, "", "dave", api_name="/next_item")
    assert first["response_id"] in ids
    client.predict(first["response_id"], 2, "dave", api_name="/rate")
    second = client.predict("unrated", 1, "", "dave", api_name="/next_item")
    assert second["response_id"] != first["response_id"]
    assert second["remaining"] < first["remaining"] or second["remaining"] == first["remaining"] - 1


def test_a_rating_can_bring_the_next_item_in_the_same_answer(app, client):
    """One round trip a key press, as the Annotate view moves on after a rating: the next item is the one
    next_item would give after that rating (never the item just rated)."""
    store, ids, _ = app
    first = client.predict("unrated", 1, "", "erin", api_name="/next_item")["response_id"]
    out = client.predict(first, 3, "erin", "", True, api_name="/rate")
    assert out["rating"] == 3 and out["next"]["response_id"] in ids and out["next"]["response_id"] != first
    assert out["next"]["response_id"] == client.predict("unrated", 1, "", "erin", api_name="/next_item")["response_id"]
    assert "next" not in client.predict(out["next"]["response_id"], 4, "erin", api_name="/rate")


def test_bad_input_gets_a_clear_error(client, app):
    ids = app[1]
    with pytest.raises(Exception, match="not in the store"):
        client.predict("resp-missing", 3, "erin", api_name="/rate")
    with pytest.raises(Exception, match="rating must be an integer 1-5"):
        client.predict(ids[0], 9, "erin", api_name="/rate")
    with pytest.raises(Exception, match="annotator name"):
        client.predict(ids[0], 3, "", api_name="/rate")
    with pytest.raises(Exception, match="no revision edit number 3"):
        client.predict(ids[0], 3, True, "erin", api_name="/review_edit")
    with pytest.raises(Exception, match="no Tri-HE triplet number 7"):
        client.predict(ids[0], 7, "object", "", "erin", api_name="/correct_triplet")


def test_inspect_next_follows_the_list_and_renders_panels(client, app):
    ids = app[1]
    first = client.predict(api_name="/inspect_next")
    second = client.predict(api_name="/inspect_next")
    assert first[0] in ids and second[0] in ids and first[0] != second[0]
    assert "of 12" in second[1]
    assert any('sandbox="allow-scripts"' in str(x) for x in second)
    one = client.predict(ids[3], api_name="/inspect")
    assert one[0] == ids[3]


def test_concurrent_ratings_are_neither_lost_nor_doubled(app):
    store, ids, url = app
    before = len(store.list_events(kind="rating"))

    def annotate(who: str) -> int:
        c = gradio_client.Client(url, verbose=False)
        for i, rid in enumerate(ids[:5]):
            c.predict(rid, 1 + i % 5, who, api_name="/rate")
        return 5

    with ThreadPoolExecutor(4) as pool:
        done = sum(pool.map(annotate, [f"par{k}" for k in range(4)]))
    ratings = store.list_events(kind="rating")
    assert len(ratings) - before == done == 20
    for k in range(4):
        assert [e.value for e in ratings if e.annotator == f"par{k}"] == [1, 2, 3, 4, 5]


def test_with_sign_in_the_name_comes_from_the_session_never_the_argument(tmp_path):
    store = Store(tmp_path / "auth.duckdb")
    ids = fill_synthetic_store(store, n_samples=2, models=("probe-a",))
    demo, url = launch(store, users=[("ann", "pw-a"), ("bob", "pw-b")])
    try:
        ann = gradio_client.Client(url, auth=("ann", "pw-a"), verbose=False)
        out = ann.predict(ids[0], 5, "bob", api_name="/rate")  # tries to write as bob
        assert out["annotator"] == "ann"
        assert [e.annotator for e in store.list_events()] == ["ann"]
        bob = gradio_client.Client(url, auth=("bob", "pw-b"), verbose=False)
        assert bob.predict("", "ann", api_name="/undo")["undone"] is False  # bob has nothing; ann's stays
        assert len(store.list_events()) == 1
        with pytest.raises(Exception):
            gradio_client.Client(url, auth=("ann", "wrong"), verbose=False)
    finally:
        demo.close()
        store.close()


def test_run_tab_queues_a_probe_run_one_job_at_a_time(tmp_path):
    from hallu_studio.app.tabs.run import jobs_table, submit_runs

    store = Store(tmp_path / "run.duckdb")
    fill_synthetic_store(store, n_samples=3, models=("probe-a",))
    ctx = AppContext(store=store)
    message = submit_runs(ctx, "synthetic-ui", [], 2, "probe:rate=0.5\nprobe:rate=0.0", "", "greedy", "none", [])
    assert "queued 2 runs; the jobs run one after another" in message
    jobs = ctx.jobs.jobs()
    assert [ctx.jobs.wait(j.id, 60).status for j in jobs] == ["completed", "completed"]
    new_runs = [r for r in store.list_runs() if r["model"].startswith("probe rate=")]
    assert len(new_runs) == 2 and all(r["synthetic"] and r["responses"] == 2 for r in new_runs)
    assert "completed" in jobs_table(ctx) and "[synthetic] [synthetic]" not in jobs_table(ctx)
    store.close()


def test_cancelling_while_scoring_keeps_the_completed_run_completed(tmp_path):
    import time

    from hallu_studio.app.tabs.run import submit_runs

    store = Store(tmp_path / "run.duckdb")
    fill_synthetic_store(store, n_samples=6, models=("probe-a",))
    ctx = AppContext(store=store)
    ctx.settings.scoring.batch_size = 1  # many batches: the cancel lands between two of them
    submit_runs(ctx, "synthetic-ui", [], 0, "probe:rate=0.5", "", "greedy", "none", ["chair", "edit"])
    job = ctx.jobs.jobs()[0]
    states = set()
    deadline = time.monotonic() + 60
    while job.status not in ("scoring", "completed", "failed") and time.monotonic() < deadline:
        states.add(job.status)
        time.sleep(0.005)
    ctx.jobs.cancel(job.id)  # during scoring (or just after it): the run itself completed either way
    done = ctx.jobs.wait(job.id, 60)
    assert done.status == "completed", done.message
    run = [r for r in store.list_runs() if r["model"].startswith("probe rate=")][0]
    assert run["status"] == "completed" and run["responses"] == 6
    store.close()


def test_job_states_and_cancel_before_start():
    import threading

    from hallu_studio.app.jobs import JobQueue

    q = JobQueue()
    release, seen = threading.Event(), []

    def slow(cancel, progress):
        progress(1, 2)
        seen.append(q.jobs()[0].status)
        progress(1, 2, "scoring")
        seen.append(q.jobs()[0].status)
        release.wait(10)
        return "ok"

    first = q.submit("first", slow)
    second = q.submit("second", lambda cancel, progress: "never")
    assert q.cancel(second.id)  # still queued: cancelled at once, never run
    assert q.wait(second.id, 1).status == "cancelled"
    release.set()
    assert q.wait(first.id, 10).status == "completed" and seen == ["running", "scoring"]
    assert not q.cancel(first.id)  # ended: nothing to cancel


def test_export_gives_a_zip_of_every_table_and_the_study_tables(client):
    import zipfile

    path = client.predict(api_name="/export")
    names = set(zipfile.ZipFile(path).namelist())
    assert {"samples.csv", "responses.csv", "runs.csv", "scores.csv", "judgments.csv"} <= names
    assert {"study_correlations.html", "study_agreement.html", "study_preferences.html"} <= names


def test_next_item_in_disagreement_mode_puts_disputed_responses_first(app, client):
    store, ids, _ = app
    from hallu_studio.model import Score

    base = store.get_scores(ids[5], "trihe")[0]
    flipped = [dict(t, verdict="supported" if t["verdict"] != "supported" else "object")
               for t in base.evidence["triplets"]]
    store.put_scores([Score(ids[5], "trihe", "second-judge", base.values, dict(base.evidence, triplets=flipped))])
    item = client.predict("disagreement", 1, "", "fay", api_name="/next_item")
    assert item["response_id"] == ids[5]
