"""Side-by-side throughput of the backends, measured in one run.

1. transformers: the same tiny random LLaVA, batch size 8 vs 1 (greedy, CPU unless CUDA is present).
2. OpenAI-compatible: a local server answering after 50 ms, concurrency 16 vs 1.

    python benchmarks/bench_backends.py [--requests 32] [--tokens 16]
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hallu_studio.config import apply_offline_env_defaults


def _png(i: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), (i * 37 % 255, 90, 200)).save(buf, "PNG")
    return buf.getvalue()


def bench_transformers(n: int, tokens: int) -> tuple[float, float]:
    from hallu_studio.backends.base import GenerationRequest, SignalRequest
    from hallu_studio.backends.tiny import build_tiny_llava
    from hallu_studio.backends.transformers_backend import TransformersBackend
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


def main() -> None:
    apply_offline_env_defaults()
    warnings.filterwarnings("ignore")
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=16)
    args = parser.parse_args()
    t1, t8 = bench_transformers(args.requests, args.tokens)
    print(f"transformers tiny LLaVA, {args.requests} requests x {args.tokens} tokens: batch 1 {t1:.2f} s "
          f"({args.requests / t1:.1f} req/s), batch 8 {t8:.2f} s ({args.requests / t8:.1f} req/s): "
          f"batching gain x{t1 / t8:.2f}")
    n = args.requests * 2
    c1, c16 = bench_openai(n)
    print(f"openai-compatible, 50 ms server, {n} requests: concurrency 1 {c1:.2f} s ({n / c1:.1f} req/s), "
          f"concurrency 16 {c16:.2f} s ({n / c16:.1f} req/s): gain x{c1 / c16:.2f}")


if __name__ == "__main__":
    main()
