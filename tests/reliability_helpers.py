"""Shared pieces of the reliability suite: hostile strings, a hostile store, an HTML payload
checker, and launching the app in-process on 127.0.0.1.

Nothing here is a test; ``tests/test_reliability_*.py`` use it.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import urllib.error
import urllib.request
from html.parser import HTMLParser
from typing import Any

# Each piece would run script if it reached the page as markup: an image error handler, a
# script element, an SVG load handler, an unknown element with a marker attribute, and quotes
# to break out of an attribute first. The last two would make the browser fetch from another host
# (Gradio's sanitizer drops handlers but keeps images): a Markdown image and a raw <img>.
REMOTE = "![x](http://evil.example/md.png) <img src=\"http://evil.example/raw.png\">"
XSS = ("\"'><img src=x onerror=\"window.__xss=1\"><script>window.__xss=2</script>"
       "<svg onload=window.__xss=3><hsxss data-hsxss=1> " + REMOTE)
# For names that end up in ids split on "/" (benchmarks): the same without a slash (browsers read
# http:\\host\path as http://host/path).
XSS_NO_SLASH = ("\"'><img src=x onerror=window.__xss=1><svg onload=window.__xss=3><hsxss data-hsxss=1> "
                "![x](http:\\\\evil.example\\md.png) <img src=http:\\\\evil.example\\raw.png>")
REMOTE_HOST = "evil.example"
PAYLOAD_SCRIPT_BODIES = {"window.__xss=1", "window.__xss=2", "window.__xss=3"}


def interruptible() -> None:
    """``preexec_fn`` for a child a test stops with SIGINT: Ctrl-C's default action back. A shell that runs the
    suite in the background (``pytest &``, nohup, some CI runners) starts it with SIGINT ignored, which its
    children inherit, and Python then installs no KeyboardInterrupt handler: the SIGINT would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(proc: subprocess.Popen, grace_s: float = 30.0) -> None:
    """SIGTERM (an app checkpoints and closes its store), then SIGKILL if it is still running after ``grace_s``."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def http_status(url: str) -> int | None:
    """The HTTP status ``url`` answers with, or None while nothing answers there."""
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


class PayloadFinder(HTMLParser):
    """Collects every element or attribute that came from the payload (recursing into ``srcdoc``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        src = dict(attrs).get("src") or ""
        if tag == "hsxss" or (tag == "img" and (src == "x" or REMOTE_HOST in src)):
            self.found.append(f"element <{tag} {attrs}>")
        for name, value in attrs:
            value = value or ""
            if name == "data-hsxss" or (name.startswith("on") and "__xss" in value):
                self.found.append(f"attribute {name}={value!r} on <{tag}>")
            if name == "srcdoc":
                self.found += [f"inside srcdoc: {f}" for f in find_payload(value)]
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip() in PAYLOAD_SCRIPT_BODIES:
            self.found.append(f"script element running {data.strip()!r}")


def find_payload(page: str) -> list[str]:
    """What of the payload became markup in ``page`` (empty: nothing would run)."""
    finder = PayloadFinder()
    finder.feed(page)
    finder.close()
    return finder.found


def fill_hostile_store(store: Any) -> dict[str, str]:
    """Synthetic scored data where every text a view shows is the payload.

    Returns ``{"response": id, "sample": id, "run": id}`` of the fully hostile response.
    """
    from synthetic_store import (
        SYNTHETIC_CONFIG_KEY,
        fill_synthetic_store,
    )
    from hallu_studio.model import (
        Benchmark,
        HumanEvent,
        Response,
        Run,
        Sample,
        SceneGraph,
        Score,
    )

    fill_synthetic_store(store, n_samples=4, models=(XSS,), benchmark=XSS_NO_SLASH)
    bench = "hostile"
    graph = SceneGraph.from_dict({
        "objects": [{"id": "0", "name": XSS, "attributes": [XSS]}, {"id": "1", "name": "table", "attributes": []}],
        "relations": [{"subject": "0", "predicate": XSS, "object": "1"}]})
    sample = Sample(id=f"{bench}/1", benchmark=bench, image_key=XSS, task="yes_no", domain=XSS_NO_SLASH,
                    scene_graph=graph, question=XSS, options=[XSS, "b"], answer=XSS, relation_category="perception",
                    reference_text=XSS)
    store.add_samples(Benchmark(bench, XSS, XSS), [sample], [])
    run = Run(id=Run.make_id(bench, XSS, "probe", "", {}, "none", 0), benchmark=bench, model=XSS, backend="probe",
              synthetic=True)
    store.add_run(run)
    text = f"A cat {XSS} on a mat."
    resp = Response(run.id, sample.id, text, signals={"logit_lens": {"position": 0, "top_k": 1, "layers": [
        {"layer": 1, "tokens": [XSS], "probs": [0.5]}]}})
    # a second model's response to the same sample, so Inspect can put one beside the other (A/B preference)
    other = Run(id=Run.make_id(bench, XSS_NO_SLASH, "probe", "", {}, "none", 0), benchmark=bench, model=XSS_NO_SLASH,
                backend="probe", synthetic=True)
    store.add_run(other)
    store.add_responses([resp, Response(other.id, sample.id, f"A dog {XSS} under a table.")])
    store.set_run_status(other.id, "done")
    key = SYNTHETIC_CONFIG_KEY
    store.put_scores([
        Score(resp.id, "concepts", key, {"objects": 2, "attributes": 1, "relations": 1},
              {"extractor": XSS, "concepts": {"objects": ["cat", XSS], "attributes": [[XSS, XSS]],
                                              "relations": [["cat", XSS, XSS]], "object_spans": [[2, 5], [6, 20]],
                                              "attribute_spans": [[6, 20]], "relation_spans": [[2, 30]]}}),
        Score(resp.id, "emd", key, {"object": 10.0, "attribute": None, "relation": None, "total": 10.0},
              {"model": XSS, "types": {"object": {"reference": [XSS, "table"], "response": ["cat", XSS],
                                                  "cost": [[0.1, 0.9], [0.5, 0.2]], "plan": [[0.5, 0.0], [0.0, 0.5]],
                                                  "per_concept_cost": [0.1, 0.2]}}}),
        Score(resp.id, "edit", key, {"distance": 2, "per_word": 0.5, "words": 4},
              {"reviser": XSS, "original": text, "revised": XSS,
               "alignment": [["equal", ["A"], ["A"]], ["substitute", [XSS], [XSS]], ["insert", [], [XSS]]],
               "queries": [XSS]}),
        Score(resp.id, "trihe", key, {"n_triplets": 1, "hallucinated": 1, "object": 1, "relation": 0,
                                      "prediction_error": 0, "unparseable": 0},
              {"judge": XSS, "triplets": [{"triplet": ["cat", XSS, XSS], "span": [2, 9], "verdict": "object",
                                           "score": 0.1, "reason": XSS},
                                          {"triplet": [XSS, "on", "mat"], "span": None, "verdict": XSS,
                                           "score": None, "reason": XSS}]}),
        Score(resp.id, "halfscore", key, {"precision": 0.5, "recall": 0.5, "f": 0.5, "matched": 1,
                                          "hallucinated": 1, "omitted": 1},
              {"matcher": XSS, "hallucinated": [["object", XSS]], "omitted": [["relation", XSS, XSS, XSS]],
               "matched": [[["object", XSS], ["object", XSS], 0.9]]}),
        Score(resp.id, "reefknot", key, {"task": "yes_no", "correct": False, "hallucinated": True,
                                         "answered_yes": True, "entropy": 0.4},
              {"parsed_answer": XSS, "label": XSS, "method": XSS}),
        Score(resp.id, "chair", key, {"hallucinated_objects": 1, "mentioned_objects": 2, "chair_i_item": 0.5},
              {"hallucinated": [XSS], "mentioned": [XSS, "cat"]}),
    ])
    store.set_run_status(run.id, "done")
    store.append_event(HumanEvent(XSS, "note", resp.id, XSS))
    store.append_event(HumanEvent(XSS, "rating", resp.id, 2))
    store.append_event(HumanEvent(XSS, "correction", resp.id, {"verdict": "supported", "reason": XSS,
                                                               "triplet": ["cat", XSS, XSS]}, target="triplet:0"))
    store.save_view(XSS_NO_SLASH, {"text": XSS}, XSS)
    return {"response": resp.id, "sample": sample.id, "run": run.id}


def thread_stacks(frames: int = 8) -> str:
    """The innermost ``frames`` frames of every thread of this process: an app launched by a test serves from
    this process, so where a timed-out wait's server side is stuck shows here."""
    import sys
    import threading
    import traceback

    names = {t.ident: t.name for t in threading.enumerate()}
    return "\n".join(f"--- thread {names.get(ident, ident)}\n" + "".join(traceback.format_stack(frame)[-frames:])
                     for ident, frame in sys._current_frames().items() if ident != threading.get_ident())
