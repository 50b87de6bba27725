"""Side-by-side throughput of the backends, measured in one run.

1. transformers: the same tiny random LLaVA, batch size 8 vs 1 (greedy, CPU unless CUDA is present).
2. OpenAI-compatible: a local server answering after 50 ms, concurrency 16 vs 1.
3. LLM extraction of dense captions on a ONE-SLOT local server (llama.cpp with one slot: requests
   queue, each takes time growing with its prompt). The same captions are extracted one call at a
   time (the server's own sequential throughput) and then as scoring does it (concurrency 8, a base
   timeout shorter than the queue): every caption must come back, at >= 0.8 x the sequential rate.

    python benchmarks/bench_backends.py [--requests 32] [--tokens 16] [--captions 20] [--only extraction]
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
import tempfile
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests' tiny models

from hallu_studio.config import apply_offline_env_defaults


def _png(i: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (i * 37 % 255, 90, 200)).save(buf, "PNG")
    return buf.getvalue()


def bench_transformers(n: int, tokens: int) -> tuple[float, float]:
    from hallu_studio.backends.base import GenerationRequest, SignalRequest
    from hallu_studio.backends.transformers_backend import TransformersBackend
    from tiny_models import build_tiny_llava
    from hallu_studio.prompts import generation_preset

    directory = build_tiny_llava(tempfile.mkdtemp(prefix="bench-llava-"), hidden=64, layers=2)
    backend = TransformersBackend(str(directory), batch_size=8)
    prompts = ["is there a cat ?", "describe the image in detail .", "is the dog on the table ?"]
    requests = [GenerationRequest(f"s{i}", prompts[i % 3], _png(i), generation_preset("greedy", tokens),
                                  SignalRequest(token_logprobs=True)) for i in range(n)]
    backend.generate(requests[:2])  # warm-up: load, first-call overheads
    timings = {}
    for size in (1, 8):
        backend.batch_size = size
        start = time.perf_counter()
        results = backend.generate(requests)
        timings[size] = time.perf_counter() - start
        assert all(r.ok for r in results), [r.error for r in results if not r.ok][:1]
    return timings[1], timings[8]


class _SlowServer:
    def __init__(self, latency_s: float) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                time.sleep(latency_s)
                data = json.dumps({"model": "m", "choices": [{"message": {"content": "a cat on a table"},
                                                              "finish_reason": "stop"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def bench_openai(n: int) -> tuple[float, float]:
    from hallu_studio.backends.base import GenerationRequest
    from hallu_studio.backends.openai_backend import OpenAIBackend
    from hallu_studio.prompts import generation_preset

    server = _SlowServer(0.05)
    requests = [GenerationRequest(f"s{i}", "Describe the image in detail.", _png(i), generation_preset("greedy", 64))
                for i in range(n)]
    timings = {}
    for c in (1, 16):
        backend = OpenAIBackend("m", server.url, concurrency=c, timeout_s=10)
        start = time.perf_counter()
        results = backend.generate(requests)
        timings[c] = time.perf_counter() - start
        assert all(r.ok for r in results), [r.error for r in results if not r.ok][:1]
    server.httpd.shutdown()
    return timings[1], timings[16]


_NOUNS = ("cat", "sofa", "lamp", "table", "window", "rug", "plant", "book", "cup", "chair", "painting", "shelf",
          "clock", "vase", "dog", "pillow", "curtain", "bottle", "laptop", "wall")
_ADJECTIVES = ("grey", "red", "wooden", "small", "tall", "striped", "white", "old", "round", "green")


def dense_caption(i: int, words: int = 120) -> str:
    """A DCI-like dense caption (deterministic): many objects, attributes and relations."""
    parts = []
    k = i
    while sum(len(p.split()) for p in parts) < words:
        a, b = _NOUNS[k % len(_NOUNS)], _NOUNS[(k * 7 + 3) % len(_NOUNS)]
        parts.append(f"A {_ADJECTIVES[k % len(_ADJECTIVES)]} {a} stands next to the {b}, and the {b} is "
                     f"{_ADJECTIVES[(k + 3) % len(_ADJECTIVES)]}.")
        k += 5
    return " ".join(parts)


class _OneSlotServer:
    """An OpenAI-compatible chat server with ONE slot: requests queue; each takes
    ``base_s + per_char_s × prompt characters`` (prompt processing and a short JSON answer).
    It answers the LLM extractor's structured steps from the caption's words, and keeps working
    on a request whose client hung up (the slot is busy either way)."""

    def __init__(self, base_s: float, per_char_s: float) -> None:
        slot = threading.Lock()
        self.busy_s = 0.0
        self.answered = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = " ".join(str(m.get("content", "")) for m in body["messages"])
                with slot:
                    took = base_s + per_char_s * len(prompt)
                    time.sleep(took)
                    server.busy_s += took
                    server.answered += 1
                text = _extraction_answer(body)
                data = json.dumps({"id": "x", "object": "chat.completion", "model": "m", "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up on this one

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def _extraction_answer(body: dict) -> str:
    step = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    sentence = body["messages"][-1]["content"]
    nouns = [n for n in _NOUNS if f" {n}" in sentence.split("; Objects:")[0]]
    if step == "extract_objects":
        return json.dumps({"objects": nouns})
    if step == "extract_attributes":
        return json.dumps({"attributes": [{"object": n, "attributes": [_ADJECTIVES[len(n) % len(_ADJECTIVES)]]}
                                          for n in nouns[:3]]})
    return json.dumps({"relations": [{"subject": a, "predicate": "next to", "object": b}
                                     for a, b in zip(nouns, nouns[1:3])]})


def dci_captions(path: str, n: int) -> list[str]:
    """The first ``n`` real DCI dense references (``halfscore/annotation.json``), read where they lie."""
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    return [r["caption"] for r in records[:n]]


def bench_extraction(n: int, concurrency: int = 8, server_url: str | None = None, server_model: str | None = None,
                     captions: list[str] | None = None) -> dict:
    """Dense-caption LLM extraction on a one-slot server: one at a time vs scoring's adaptive dispatch.

    With ``server_url`` the calls go to that real server (say a one-slot ``llama_cpp.server``) with the
    default timeouts, and the server's busy time is not known: the ratio of the two wall times is.
    """
    from hallu_studio.config import LLMSettings
    from hallu_studio.extraction.llm import LLMExtractor
    from hallu_studio.llm import LLMClient

    captions = captions or [dense_caption(i) for i in range(n)]
    out = {}
    for label, level in (("sequential", 1), ("adaptive", concurrency)):
        server = None
        if server_url:
            # The defaults a user gets, with no cache (both passes must ask the server).
            settings = LLMSettings(base_url=server_url, model=server_model or "m", concurrency=level)
            client = LLMClient(settings, None)
        else:
            server = _OneSlotServer(base_s=0.05, per_char_s=0.00003)
            # Scaled ~100x down from the llama.cpp run (8 s a call, 60 s timeout, concurrency 8):
            # a try's first timeout (~0.5 s) is shorter than eight queued calls (~1 s).
            settings = LLMSettings(base_url=server.url, model="m", concurrency=level, timeout_s=0.3,
                                   timeout_per_token_s=0.0002, max_retries=4)
            client = LLMClient(settings, None, backoff_s=0.05)
        extractor = LLMExtractor(client)
        start = time.perf_counter()
        if level == 1:
            results = [_extract_or_error(extractor, c) for c in captions]
        else:
            try:
                results = list(extractor.extract(captions))
            except Exception:  # noqa: BLE001 - as the scoring pipeline does: then caption by caption
                results = [_extract_or_error(extractor, c) for c in captions]
        seconds = time.perf_counter() - start
        stats = client.dispatcher.stats.snapshot()
        lost = sum(1 for r in results if isinstance(r, BaseException) or not len(r))
        out[label] = {"seconds": seconds, "lost": lost, "calls": stats["calls"], "retried": stats["retried"],
                      "failed": stats["failed"], "server_answers": server.answered if server else stats["done"],
                      "server_busy_s": server.busy_s if server else float("nan"),
                      "final_concurrency": client.dispatcher.limit.level,
                      "parse_failures": sum(stats["parse_failures"].values())}
        if server is not None:
            server.httpd.shutdown()
    out["ratio"] = out["sequential"]["seconds"] / out["adaptive"]["seconds"]
    # The server's own capacity: its busy time for one answer per call (the sequential run wastes none).
    out["of_capacity"] = out["sequential"]["server_busy_s"] / out["adaptive"]["seconds"]
    return out


def _extract_or_error(extractor, caption: str):  # noqa: ANN001, ANN202 - bench helper
    try:
        return extractor.extract([caption])[0]
    except Exception as exc:  # noqa: BLE001 - counted as a lost caption
        return exc


def main() -> None:
    apply_offline_env_defaults()
    warnings.filterwarnings("ignore")
    logging.getLogger("hallu_studio").setLevel(logging.ERROR)  # each timed-out try would log a line
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--captions", type=int, default=20)
    parser.add_argument("--only", choices=("transformers", "openai", "extraction"), default=None)
    parser.add_argument("--server", default=None, help="extraction: a real OpenAI-compatible server's URL (.../v1)")
    parser.add_argument("--server-model", default=None, help="extraction: the model name the server serves")
    parser.add_argument("--dci", default=None, help="extraction: DCI's annotation.json; its first --captions "
                                                     "references are extracted instead of generated captions")
    args = parser.parse_args()
    if args.only in (None, "extraction"):
        r = bench_extraction(args.captions, server_url=args.server, server_model=args.server_model,
                             captions=dci_captions(args.dci, args.captions) if args.dci else None)
        for label in ("sequential", "adaptive"):
            x = r[label]
            print(f"dense-caption LLM extraction, one-slot server, {args.captions} captions, {label}: "
                  f"{x['seconds']:.2f} s ({args.captions / x['seconds']:.2f} captions/s), {x['lost']} lost, "
                  f"{x['calls']} calls ({x['retried']} retried, {x['failed']} failed), server answered "
                  f"{x['server_answers']} (busy {x['server_busy_s']:.2f} s), {x['parse_failures']} parse failures, "
                  f"concurrency at the end {x['final_concurrency']}")
        print(f"adaptive / sequential throughput: x{r['ratio']:.2f} (needs >= 0.8, with nothing lost); "
              f"of the server's busy-time capacity: {r['of_capacity']:.2f}")
    if args.only == "extraction":
        return
    if args.only in (None, "transformers"):
        t1, t8 = bench_transformers(args.requests, args.tokens)
        print(f"transformers tiny LLaVA, {args.requests} requests x {args.tokens} tokens: batch 1 {t1:.2f} s "
              f"({args.requests / t1:.1f} req/s), batch 8 {t8:.2f} s ({args.requests / t8:.1f} req/s): "
              f"batching gain x{t1 / t8:.2f}")
        if args.only == "transformers":
            return
    n = args.requests * 2
    c1, c16 = bench_openai(n)
    print(f"openai-compatible, 50 ms server, {n} requests: concurrency 1 {c1:.2f} s ({n / c1:.1f} req/s), "
          f"concurrency 16 {c16:.2f} s ({n / c16:.1f} req/s): gain x{c1 / c16:.2f}")


if __name__ == "__main__":
    main()
