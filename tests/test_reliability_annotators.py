"""Concurrent annotators and sign-in, against the app launched in-process on 127.0.0.1.

- 16 ``gradio_client`` sessions, each signed in as its own user, rate, correct and note at once:
  after shutdown the store holds exactly the events sent (none lost, none doubled), each carrying
  the session's user, whatever name the call claimed.
- With sign-in on, nothing is reachable without signing in, and nobody writes in another's name.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

gradio_client = pytest.importorskip("gradio_client")

from reliability_helpers import free_port

from hallu_studio.app import AppContext, build_app
from synthetic_store import fill_synthetic_store
from hallu_studio.app.users import load_users_file
from hallu_studio.store import Store

N_ANNOTATORS = 16
RATINGS_EACH = 3
DEADLINE_S = 90  # the whole concurrent phase; a hang fails instead of stalling the suite


def _launch_signed_in(root):
    users_file = root / "users.json"
    users_file.write_text(json.dumps({f"ann{k:02d}": f"pw-{k}-secret" for k in range(N_ANNOTATORS)}))
    users = load_users_file(users_file)  # the same reader as `app.py --auth users.json`
    store = Store(root / "annotators.duckdb")
    ids = fill_synthetic_store(store, n_samples=4, models=("probe-a",))
    demo = build_app(AppContext(store=store, auth_enabled=True))
    demo.queue(default_concurrency_limit=8)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(),
                            quiet=True, auth=users, footer_links=[])
    return store, ids, url.rstrip("/"), users, demo


@pytest.fixture(scope="module")
def signed_in_app(tmp_path_factory):
    store, ids, url, users, demo = _launch_signed_in(tmp_path_factory.mktemp("annotators"))
    yield store, ids, url, users, demo
    demo.close()
    store.close()


def _annotate(url: str, user: str, password: str, ids: list[str]) -> list[tuple[str, str, object]]:
    """One annotator's session; returns what it sent as (kind, response_id, value)."""
    client = gradio_client.Client(url, auth=(user, password), verbose=False)
    sent = []
    for i in range(RATINGS_EACH):
        rid = ids[i % len(ids)]
        value = 1 + (hash(user) + i) % 5
        out = client.predict(rid, value, "someone-else", api_name="/rate")  # the claimed name is ignored
        assert out["annotator"] == user
        sent.append(("rating", rid, value))
    client.predict(ids[0], 0, "relation", f"reason of {user}", "someone-else", api_name="/correct_triplet")
    sent.append(("correction", ids[0], "relation"))
    client.predict(ids[1], f"note of {user}", "someone-else", api_name="/note")
    sent.append(("note", ids[1], f"note of {user}"))
    return sent


def test_sixteen_signed_in_annotators_at_once_lose_and_double_nothing(tmp_path):
    store, ids, url, users, demo = _launch_signed_in(tmp_path)
    try:
        before = len(store.list_events())
        started = time.monotonic()
        with ThreadPoolExecutor(N_ANNOTATORS) as pool:
            futures = {user: pool.submit(_annotate, url, user, pw, ids) for user, pw in users}
            sent = {user: f.result(timeout=DEADLINE_S) for user, f in futures.items()}
        assert time.monotonic() - started < DEADLINE_S
    finally:
        demo.close()  # the counts below are what the store holds after shutdown
    store.close()
    with Store(tmp_path / "annotators.duckdb") as reopened:  # what the file holds, not a cache
        events = reopened.list_events()
    assert len(events) - before == sum(len(s) for s in sent.values()) == N_ANNOTATORS * (RATINGS_EACH + 2)
    assert len({e.id for e in events}) == len(events)
    assert "someone-else" not in {e.annotator for e in events}
    for user, items in sent.items():
        mine = [e for e in events if e.annotator == user]
        assert Counter(map(repr, map(_what_was_sent, mine))) == Counter(map(repr, items)), user


def _what_was_sent(e) -> tuple[str, str, object]:
    """An event as ``_annotate`` lists what it sent: (kind, response_id, rating / verdict / note text)."""
    if e.kind == "correction":
        return e.kind, e.response_id, e.value["verdict"]
    if e.kind == "note" and isinstance(e.value, dict):
        return e.kind, e.response_id, e.value.get("text")
    return e.kind, e.response_id, e.value


def _status(url: str, method: str = "GET", body: bytes | None = None) -> int:
    """HTTP status without following redirects (a redirect to the login page counts as refused)."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, data=body, method=method,
                                     headers={"Content-Type": "application/json"} if body else {})
    try:
        with opener.open(request, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_nothing_is_reachable_without_signing_in(signed_in_app):
    store, ids, url, _, _ = signed_in_app
    before = len(store.list_events())
    refused = {401, 403, 302, 303, 307}
    for path in ("/config", "/gradio_api/info", "/gradio_api/info?all_endpoints=true", "/info",
                 "/gradio_api/file=/etc/passwd", "/file=/etc/passwd", "/gradio_api/upload_progress",
                 "/gradio_api/queue/status", "/gradio_api/call/rate/abc"):
        assert _status(url + path) in refused | {404, 405}, path  # never 200 with data
        assert _status(url + path) != 200, path
    payload = json.dumps({"data": [ids[0], 5, "intruder"]}).encode()
    for path in ("/gradio_api/call/rate", "/gradio_api/run/rate", "/gradio_api/api/rate", "/run/predict",
                 "/gradio_api/queue/join"):
        assert _status(url + path, "POST", payload) in refused | {404, 405, 422}, path
    assert _status(url + "/config") in refused
    assert _status(url + "/gradio_api/call/rate", "POST", payload) in refused
    # Gradio's one open route without sign-in: it answers only true/false (startup already ran).
    with urllib.request.urlopen(url + "/gradio_api/startup-events", timeout=10) as resp:
        assert resp.read().strip() in (b"true", b"false")
    time.sleep(0.5)
    assert len(store.list_events()) == before  # nothing written by anyone unsigned
    with pytest.raises(Exception):  # noqa: B017 - the library's error for a 401 config varies by version
        gradio_client.Client(url, verbose=False)  # no credentials
    with pytest.raises(ValueError, match="Could not login"):
        gradio_client.Client(url, auth=("ann00", "wrong"), verbose=False)


def test_an_annotator_cannot_write_or_undo_in_anothers_name(signed_in_app):
    store, ids, url, users, _ = signed_in_app
    (a, pa), (b, pb) = users[0], users[1]
    alice = gradio_client.Client(url, auth=(a, pa), verbose=False)
    bob = gradio_client.Client(url, auth=(b, pb), verbose=False)
    out = alice.predict(ids[2], 5, b, api_name="/rate")
    assert out["annotator"] == a
    last_of_b = [e.id for e in store.list_events(annotator=b)]
    alice_undo = alice.predict("", b, api_name="/undo")  # names bob; may only undo alice's own
    assert alice_undo["annotator"] == a
    assert [e.id for e in store.list_events(annotator=b)] == last_of_b
    undone = store.list_events(annotator=a)[-1]
    assert undone.kind == "undo" and store.list_events(annotator=a)[-2].id == undone.undoes
    mine = bob.predict(a, api_name="/my_events")  # asks for alice's log: gets bob's own
    assert {e["id"] for e in mine} == set(last_of_b)
    p = bob.predict(ids[0], ids[1], ids[0], "overall", a, api_name="/prefer")
    assert p["annotator"] == b


def test_a_plain_http_client_rates_and_gets_the_next_item_in_one_request(signed_in_app):
    """A script without gradio_client (a Label Studio user's client): sign in, then one POST per key press to
    ``/gradio_api/run/rate`` answered with the stored rating and the next item; the signed-in user is recorded."""
    import httpx

    store, ids, url, users, _ = signed_in_app
    (who, password) = users[3]
    with httpx.Client(base_url=url, timeout=30) as http:
        http.post("/login", data={"username": who, "password": password}).raise_for_status()
        body = {"data": [ids[3], 4, "someone-else", "", True], "session_hash": "script-session-1"}
        answer = http.post("/gradio_api/run/rate", json=body)
        assert answer.status_code == 200, answer.text
        out = answer.json()["data"][0]
        assert (out["annotator"], out["response_id"], out["rating"]) == (who, ids[3], 4)
        assert out["next"]["annotator"] == who and out["next"]["response_id"] != ids[3]
        refused = http.post("/gradio_api/run/rate", json={"data": [ids[3], 9, "", "", False],
                                                          "session_hash": "script-session-1"})
        assert refused.status_code != 200 and "rating" in refused.text  # the caller's error, by name
    event = next(e for e in store.list_events(annotator=who) if e.id == out["event_id"])
    assert (event.annotator, event.kind, event.value) == (who, "rating", 4)
