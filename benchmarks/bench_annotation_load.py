"""An annotation day: N signed-in annotators acting every 2-5 s against a running app's HTTP API.

Starts the app itself on a free loopback port (``--no-bootstrap``, sign-in with one user per annotator) on a
copy of a store built once from the embedded sample benchmark and two probe runs (2,192 responses; cached
under ``--cache-dir``), or points at ``--url`` (loopback only; the annotators must then exist there with
password ``--password``). Each annotator is a thread with its own HTTP session (signed in through ``/login``,
one ``session_hash`` per session, as ``gradio_client`` and the page send it) calling the API by ``--protocol``:
``direct``, one POST to ``/gradio_api/run/<name>`` answered with the result; ``queue``, Gradio's queued API
(``/gradio_api/call/<name>`` and its result stream, what ``gradio_client`` uses). Both by default, one load after
the other, with the ratio; each load reports the CPU an action cost the app and the load generator.

Each "key press" after a think time of 2-5 s (seeded per annotator) is one of:

* rate the item on screen and get the next one (70%): one call (``rate`` with ``then_next``), as the Annotate
  view's key press stores the rating and shows the next item; key-to-next-item is that round trip;
* skip to the next item (10%), undo the latest action (10%), write a note (10%): one call each.

Per annotator count (``--annotators 10,25,50``), for ``--duration`` seconds each: p50 / p95 of the key-to-next-
item latency, actions a second, and then the events checked against what every annotator was told was stored:
*lost* (acknowledged, not in the store), *doubled* (in the store twice, or never acknowledged) and
*misattributed* (stored under someone else). When the app is ours the check reads the store's own event log
after the app has stopped; against ``--url`` it reads each annotator's ``/my_events``.

    python benchmarks/bench_annotation_load.py                          # 10, 25, 50 annotators, 120 s each
    python benchmarks/bench_annotation_load.py --annotators 5 --duration 15   # a smoke run
    python benchmarks/bench_annotation_load.py --server-time 100000   # one action on 100k responses, 50k ratings

Bounded: every request has a timeout, each annotator stops at the deadline, the app is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the tests' own helpers

import httpx  # noqa: E402
from reliability_helpers import free_port, stop_process  # noqa: E402

TARGETS = {"p95_ms": 500.0, "p50_ms": 150.0, "actions_per_s": 10.0}
PASSWORD = "load-test"
REQUEST_TIMEOUT_S = 60.0


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1")
    return env


def _cli(*args: str, timeout: float = 600) -> None:
    subprocess.run([sys.executable, "-m", "hallu_studio", *args], check=True, env=_env(), timeout=timeout,
                   stdout=subprocess.DEVNULL)


def sample_store(cache_dir: Path) -> Path:
    """The embedded sample benchmark with two probe runs' responses, built once (about a minute)."""
    path = cache_dir / "annotation-load.duckdb"
    if path.exists():
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = cache_dir / "annotation-load.building.duckdb"
    partial.unlink(missing_ok=True)
    start = time.perf_counter()
    _cli("import", "--format", "sample", "--db", str(partial))
    for seed, rate in ((1, "0.3"), (2, "0.1")):
        _cli("run", "--db", str(partial), "--benchmark", "sample", "--model", f"probe:rate={rate},seed={seed}",
             "--quiet")
    partial.rename(path)  # only a finished store is reused
    print(f"built {path} in {time.perf_counter() - start:.0f} s", flush=True)
    return path


def start_app(db: Path, users: list[str], workdir: Path) -> tuple[subprocess.Popen, str]:
    """The app on a free loopback port with one sign-in per annotator; returns (process, base URL)."""
    users_file = workdir / "users.json"
    users_file.write_text(json.dumps({u: PASSWORD for u in users}), encoding="utf-8")
    port = free_port()
    log = open(workdir / "app.log", "w", encoding="utf-8")  # noqa: SIM115 (kept open while the app runs)
    proc = subprocess.Popen([sys.executable, "-m", "hallu_studio", "app", "--db", str(db), "--host", "127.0.0.1",
                             "--port", str(port), "--auth", str(users_file), "--no-bootstrap"],
                            env=_env(), stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the app exited ({proc.returncode}); see {workdir / 'app.log'}")
        try:
            if httpx.get(url + "/gradio_api/info", timeout=5).status_code in (200, 401):
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop_app(proc)
    raise RuntimeError("the app did not start within 180 s")


def stop_app(proc: subprocess.Popen) -> None:
    """SIGTERM (the app checkpoints and closes its store), then SIGKILL after 60 s."""
    stop_process(proc, grace_s=60)


class ApiError(RuntimeError):
    pass


def call_api(session: httpx.Client, name: str, *data: Any, protocol: str = "direct",
             session_hash: str | None = None) -> Any:
    """One API call. ``direct``: one POST to ``/gradio_api/run/<name>`` answered with the result (what a script,
    or a Label Studio user's client, does). ``queue``: as ``gradio_client`` makes it, join the queue, then read the
    result stream (two requests).

    ``session_hash`` names the client's session, as ``gradio_client`` and the page send it: Gradio builds a
    session's state (the config of every block of the app, ~30 ms here) once per session, and for a call without
    one, on every call."""
    body = {"data": list(data), "session_hash": session_hash}
    if protocol == "direct":
        answer = session.post(f"/gradio_api/run/{name}", json=body)
        payload = answer.json()
        if answer.status_code != 200 or "error" in payload:
            raise ApiError(f"{name}: {payload.get('error', answer.status_code)}")
        out = payload["data"]
        return out[0] if isinstance(out, list) and out else out
    joined = session.post(f"/gradio_api/call/{name}", json=body)
    joined.raise_for_status()
    event_id = joined.json()["event_id"]
    event = None
    with session.stream("GET", f"/gradio_api/call/{name}/{event_id}") as stream:
        for line in stream.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event in ("complete", "error"):
                payload = json.loads(line.split(":", 1)[1].strip() or "null")
                if event == "error":
                    raise ApiError(f"{name}: {payload}")
                return payload[0] if isinstance(payload, list) and payload else payload
    raise ApiError(f"{name}: the stream ended without a result")


@dataclass
class Annotator:
    name: str
    seed: int
    latencies: list[float] = field(default_factory=list)
    acked: dict[int, str] = field(default_factory=dict)  # event id -> kind the app said it stored
    errors: list[str] = field(default_factory=list)
    actions: int = 0


def act(ann: Annotator, url: str, deadline: float, password: str, protocol: str) -> None:
    """Sign in, take the first item, then act every 2-5 s until the deadline."""
    rng = random.Random(ann.seed)
    with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as session:
        session_hash = uuid.uuid4().hex  # one per signed-in session, as gradio_client makes it

        def call(name: str, *data: Any) -> Any:
            return call_api(session, name, *data, protocol=protocol, session_hash=session_hash)

        try:
            session.post("/login", data={"username": ann.name, "password": password}).raise_for_status()
            item = call("next_item", "unrated", 1, "", "", "")["response_id"]
        except (httpx.HTTPError, ApiError) as exc:
            ann.errors.append(f"start: {exc}")
            return
        while True:
            think = rng.uniform(2.0, 5.0)
            if time.monotonic() + think >= deadline:
                return
            time.sleep(think)
            roll = rng.random()
            start = time.perf_counter()
            try:
                if item is None:
                    item = call("next_item", "unrated", 1, "", "", "")["response_id"]
                elif roll < 0.7:
                    # the rating and the next item in one round trip, as the Annotate view's key press
                    out = call("rate", item, rng.randint(1, 5), "", "", True)
                    ann.acked[out["event_id"]] = "rating"
                    item = out["next"]["response_id"]
                elif roll < 0.8:
                    item = call("next_item", "unrated", 1, item, "", "")["response_id"]
                elif roll < 0.9:
                    out = call("undo", "", "")
                    if out["undone"]:
                        ann.acked[out["undo_event_id"]] = "undo"
                else:
                    out = call("note", item, f"note {ann.actions} by {ann.name}", "")
                    ann.acked[out["event_id"]] = "note"
            except (httpx.HTTPError, ApiError, KeyError, TypeError) as exc:
                ann.errors.append(f"{type(exc).__name__}: {exc}"[:200])
                continue
            ann.latencies.append(time.perf_counter() - start)
            ann.actions += 1


def check_events(annotators: list[Annotator], stored: list[tuple[int, str, str]]) -> dict[str, int]:
    """Lost / doubled / misattributed: the stored (id, annotator, kind) against each annotator's acks."""
    owner = {eid: (a.name, kind) for a in annotators for eid, kind in a.acked.items()}
    seen: dict[int, int] = {}
    misattributed = doubled = 0
    for eid, who, kind in stored:
        seen[eid] = seen.get(eid, 0) + 1
        if eid not in owner:
            doubled += 1  # written, yet nobody was told so: a retry or a double submit
        elif owner[eid] != (who, kind):
            misattributed += 1
    doubled += sum(n - 1 for n in seen.values() if n > 1)
    lost = sum(1 for eid in owner if eid not in seen)
    return {"acknowledged": len(owner), "stored": len(stored), "lost": lost, "doubled": doubled,
            "misattributed": misattributed}


def stored_events_from_store(db: Path, names: set[str]) -> list[tuple[int, str, str]]:
    from hallu_studio.model import APP_SOURCE
    from hallu_studio.store import Store

    with Store(db) as store:
        return [(e.id, e.annotator, e.kind) for e in store.list_events(source=APP_SOURCE) if e.annotator in names]


def stored_events_from_api(url: str, annotators: list[Annotator], password: str) -> list[tuple[int, str, str]]:
    out = []
    for ann in annotators:
        with httpx.Client(base_url=url, timeout=REQUEST_TIMEOUT_S) as session:
            session.post("/login", data={"username": ann.name, "password": password}).raise_for_status()
            out += [(e["id"], ann.name, e["kind"]) for e in call_api(session, "my_events", "")]
    return out


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def cpu_seconds(pid: int) -> float:
    """The user + system CPU time a process has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_load(n: int, args: argparse.Namespace, base: Path | None, workdir: Path, protocol: str) -> dict[str, Any]:
    """n annotators for args.duration seconds: on a fresh copy of the store when the app is ours. With the CPU
    each action cost the app and this load generator (which shares the machine with it)."""
    names = [f"{args.prefix}{n:02d}-{i:02d}" for i in range(n)]
    annotators = [Annotator(name, args.seed * 1000 + i) for i, name in enumerate(names)]
    proc, db = None, None
    if args.url:
        url = args.url
    else:
        db = workdir / f"load-{n}.duckdb"
        shutil.copy(base, db)
        proc, url = start_app(db, names, workdir)
    try:
        server_cpu, client_cpu = (cpu_seconds(proc.pid) if proc else 0.0), time.process_time()
        start = time.monotonic()
        deadline = start + args.duration
        threads = [threading.Thread(target=act, args=(a, url, deadline, args.password, protocol), daemon=True)
                   for a in annotators]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=args.duration + REQUEST_TIMEOUT_S * 3)
        elapsed = time.monotonic() - start
        server_cpu = cpu_seconds(proc.pid) - server_cpu if proc else float("nan")
        client_cpu = time.process_time() - client_cpu
        stored = stored_events_from_api(url, annotators, args.password) if args.url else None
    finally:
        if proc is not None:
            stop_app(proc)
    if stored is None:
        stored = stored_events_from_store(db, set(names))
    latencies = [x for a in annotators for x in a.latencies]
    done = max(1, len(latencies))
    return {"annotators": n, "protocol": protocol, "actions": len(latencies), "seconds": elapsed,
            "server_cpu_ms": server_cpu / done * 1000, "client_cpu_ms": client_cpu / done * 1000,
            "actions_per_s": len(latencies) / elapsed, "p50_ms": _pct(latencies, .5) * 1000,
            "p95_ms": _pct(latencies, .95) * 1000, "max_ms": max(latencies, default=float("nan")) * 1000,
            "errors": sum(len(a.errors) for a in annotators),
            "first_error": next((e for a in annotators for e in a.errors), ""),
            **check_events(annotators, stored)}


def server_times(n_responses: int, n_ratings: int, workdir: Path, steps: int = 40) -> None:
    """One action's server time on a synthetic store of ``n_responses`` and ``n_ratings`` (the handlers in
    this process, no HTTP): p50 / p95 of each, beside the queue computed whole (what each "next" did before)."""
    from synthetic_store import fill_rated_store

    from hallu_studio.annotation import annotation_queue
    from hallu_studio.app import actions
    from hallu_studio.app.context import AppContext
    from hallu_studio.store import Store

    start = time.perf_counter()
    with Store(workdir / f"rated-{n_responses}.duckdb") as store:
        fill_rated_store(store, n_responses // 2, n_ratings)
        print(f"store: {store.count_responses()} responses, {n_ratings} ratings, built in "
              f"{time.perf_counter() - start:.0f} s", flush=True)
        ctx, who = AppContext(store=store), "timing-annotator"
        on_screen = actions.next_item(ctx, who)["response_id"]  # the session's first: computes the order once

        def rate_and_next() -> None:
            nonlocal on_screen
            actions.rate(ctx, who, on_screen, 3)
            on_screen = actions.next_item(ctx, who)["response_id"]

        from hallu_studio.annotation import create_study, study_queue
        from hallu_studio.annotation.design import StudyDesign

        runs = tuple(r["id"] for r in store.list_runs())
        create_study(store, StudyDesign(name="day", runs=runs, images=200, ratings_per_item=2))
        in_study = actions.next_item(ctx, who, study="day")["response_id"]

        def study_rate_and_next() -> None:
            nonlocal in_study
            actions.rate(ctx, who, in_study, 3, "blind", "day")
            in_study = actions.next_item(ctx, who, study="day")["response_id"]

        cases = {"rate + next (key to next item)": rate_and_next,
                 "study of 400 items: rate + next": study_rate_and_next,
                 "study: its whole order (limit 1000)": lambda: study_queue(store, who, "day", limit=1000),
                 "next (skip)": lambda: actions.next_item(ctx, who, after=on_screen),
                 "note": lambda: actions.note(ctx, who, on_screen, "unclear image"),
                 "undo": lambda: actions.undo(ctx, who),
                 "whole queue (each next, before)": lambda: annotation_queue(store, who, limit=1000)}
        for name, fn in cases.items():
            times = []
            for _ in range(steps if "before" not in name else max(3, steps // 8)):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
            print(f"  {name:34s} p50 {_pct(times, .5) * 1000:8.1f} ms  p95 {_pct(times, .95) * 1000:8.1f} ms",
                  flush=True)


def report(row: dict[str, Any]) -> None:
    verdict = ("meets" if row["p95_ms"] <= TARGETS["p95_ms"] and row["p50_ms"] <= TARGETS["p50_ms"]
               else "misses")
    print(f"{row['annotators']:3d} annotators ({row['protocol']}): {row['actions']:5d} actions in {row['seconds']:.0f} s = "
          f"{row['actions_per_s']:.2f}/s; key-to-next-item p50 {row['p50_ms']:.0f} ms, p95 {row['p95_ms']:.0f} ms, "
          f"max {row['max_ms']:.0f} ms ({verdict} p50 <= {TARGETS['p50_ms']:.0f} / p95 <= "
          f"{TARGETS['p95_ms']:.0f}); events: {row['acknowledged']} acknowledged, {row['stored']} stored, "
          f"{row['lost']} lost, {row['doubled']} doubled, {row['misattributed']} misattributed; "
          f"{row['errors']} errors {row['first_error']}; CPU per action: app {row['server_cpu_ms']:.0f} ms, "
          f"load generator {row['client_cpu_ms']:.0f} ms", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--annotators", default="10,25,50", help="comma-separated counts, each a separate load")
    p.add_argument("--duration", type=float, default=120.0, help="seconds of load per count")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--protocol", default="direct,queue",
                   help="comma-separated: direct (one POST to /gradio_api/run/<name>), queue (gradio_client's "
                        "/gradio_api/call/<name> and its result stream); each a separate load, side by side")
    p.add_argument("--url", help="a running app (loopback only) instead of starting one")
    p.add_argument("--password", default=PASSWORD, help="the annotators' password with --url")
    p.add_argument("--prefix", default="load", help="annotator names: PREFIX<count>-<i>")
    p.add_argument("--cache-dir", type=Path, default=Path(tempfile.gettempdir()) / "hallu-bench-cache")
    p.add_argument("--server-time", type=int, metavar="RESPONSES", default=0,
                   help="instead of the load: one action's server time on a synthetic store of RESPONSES "
                        "responses and half as many ratings (e.g. 100000)")
    args = p.parse_args()
    if args.server_time:
        with tempfile.TemporaryDirectory(prefix="annotation-server-time-") as tmp:
            server_times(args.server_time, args.server_time // 2, Path(tmp))
        return
    if args.url and urlparse(args.url).hostname not in ("127.0.0.1", "localhost", "::1"):
        p.error("--url must be on loopback (127.0.0.1 / localhost)")
    counts = [int(x) for x in args.annotators.split(",") if x.strip()]
    if not counts or min(counts) < 1 or max(counts) > 200:
        p.error("--annotators: counts between 1 and 200")
    base = None if args.url else sample_store(args.cache_dir)
    print(f"load: {counts} annotators, {args.duration:.0f} s each, think time 2-5 s, seed {args.seed}; "
          f"{os.cpu_count()} CPUs", flush=True)
    protocols = [x.strip() for x in args.protocol.split(",") if x.strip()]
    if not protocols or set(protocols) - {"direct", "queue"}:
        p.error("--protocol: direct and/or queue")
    with tempfile.TemporaryDirectory(prefix="annotation-load-") as tmp:
        for n in counts:
            rows = [one_load(n, args, base, Path(tmp), protocol) for protocol in protocols]
            for row in rows:
                report(row)
            if len(rows) == 2 and rows[0]["p95_ms"] > 0:
                print(f"    {rows[1]['protocol']} / {rows[0]['protocol']}: p50 "
                      f"{rows[1]['p50_ms'] / rows[0]['p50_ms']:.2f}x, p95 {rows[1]['p95_ms'] / rows[0]['p95_ms']:.2f}x, "
                      f"app CPU per action {rows[1]['server_cpu_ms'] / rows[0]['server_cpu_ms']:.2f}x", flush=True)


if __name__ == "__main__":
    main()
