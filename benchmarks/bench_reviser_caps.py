"""How long the LLM reviser's two answers must be, measured on real model captions (issue 22).

VISCON's reviser (Figure 12) answers twice: the database calls it needs (``{"api_calls": [...]}``), then the
revised caption (``{"caption": ...}``). This bench writes, for each caption of
``../shared/datasets/halfscore/llava-1.5-7b_captions.jsonl`` (real LLaVA-1.5-7B captions of DCI images),
the longest *sensible* answers: one call per object, one per attribute and one per relation the offline
parser finds (more than the prompt's "minimal necessary" calls: ``GetAttributes`` of an object serves all
its attributes), and the caption itself unchanged (a revision removes or replaces words; it does not
grow). It counts their tokens (with ``--tokenize-url``, a llama-cpp-python server's ``/extras/tokenize/count``
with the model's own tokenizer; else characters / 4, the estimate the timeouts use) and prints, beside
the caption's own tokens, their distribution and how many answers each cap formula would cut.

    python benchmarks/bench_reviser_caps.py [--limit 1000] [--tokenize-url http://127.0.0.1:8391]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.llm.dispatch import CHARS_PER_TOKEN, revise_caption_tokens, revise_queries_tokens  # noqa: E402

# ../shared beside the checkout; $HALLU_STUDIO_SHARED points elsewhere (a git worktree one level deeper).
SHARED = Path(os.environ.get("HALLU_STUDIO_SHARED") or ROOT.parent / "shared")
CAPTIONS = SHARED / "datasets" / "halfscore" / "llava-1.5-7b_captions.jsonl"


def _counter(url: str | None) -> Callable[[str], int]:
    if not url:
        return lambda text: math.ceil(len(text) / CHARS_PER_TOKEN)
    import httpx

    client = httpx.Client(timeout=30)

    def count(text: str) -> int:
        resp = client.post(f"{url.rstrip('/')}/extras/tokenize/count", json={"input": text, "model": "any"})
        resp.raise_for_status()
        return int(resp.json()["count"])
    return count


def _ideal_calls(concepts: object) -> list[str]:
    def ref(name: str) -> str:
        return f"<object {name.replace(' ', '_')}_0>"
    calls = [f"GetDescription({ref(o.name)})" for o in concepts.objects]  # type: ignore[attr-defined]
    calls += [f"GetAttributes({ref(a.object)})" for a in concepts.attributes]  # type: ignore[attr-defined]
    calls += [f"GetRelation({ref(r.subject)}, {ref(r.object)})" for r in concepts.relations]  # type: ignore[attr-defined]
    return calls


def _quantiles(values: list[float]) -> str:
    ordered = sorted(values)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return (f"median {at(0.5):.2f}, p90 {at(0.9):.2f}, p99 {at(0.99):.2f}, max {ordered[-1]:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--tokenize-url", default=None, help="a llama-cpp-python server (its tokenizer counts)")
    args = parser.parse_args(argv)
    if not CAPTIONS.exists():
        print(f"{CAPTIONS} is not available", file=sys.stderr)
        return 1
    from hallu_studio.components import Components

    captions = [json.loads(line)["caption"] for line in CAPTIONS.open(encoding="utf-8") if line.strip()]
    captions = [c if isinstance(c, str) else " ".join(c) for c in captions][:args.limit]
    concepts = Components().parser().extract(captions)
    count = _counter(args.tokenize_url)
    rows = []
    for caption, cs in zip(captions, concepts):
        own = count(caption)
        calls = count(json.dumps({"api_calls": _ideal_calls(cs)}))
        revised = count(json.dumps({"caption": caption}))
        rows.append((len(caption), own, calls, revised))
    unit = "tokens (the model's tokenizer)" if args.tokenize_url else "tokens (characters / 4)"
    print(f"{len(rows)} LLaVA-1.5-7B captions; {unit}")
    print(f"caption: {_quantiles([r[1] for r in rows])}")
    print(f"calls answer: {_quantiles([r[2] for r in rows])}; per caption token {_quantiles([r[2] / r[1] for r in rows])}")
    print(f"caption answer: {_quantiles([r[3] for r in rows])}; per caption token "
          f"{_quantiles([r[3] / r[1] for r in rows])}")
    estimated = [math.ceil(chars / CHARS_PER_TOKEN) for chars, *_ in rows]
    print(f"caption tokens as the caps estimate them (characters / 4): {_quantiles([float(e) for e in estimated])}")
    # The cap before (issue 22): 512 + 4 per caption token, for both answers.
    caps = {"before: 512 + 4 per caption token, both answers": ([512 + 4 * e for e in estimated],) * 2,
            "now: calls revise_queries_tokens, caption revise_caption_tokens":
                ([revise_queries_tokens("x" * r[0]) for r in rows], [revise_caption_tokens("x" * r[0]) for r in rows])}
    for name, (calls_cap, caption_cap) in caps.items():
        print(f"{name}: calls cap {_quantiles([float(c) for c in calls_cap])}, cuts {sum(r[2] > c for r, c in zip(rows, calls_cap))}; "
              f"caption cap {_quantiles([float(c) for c in caption_cap])}, cuts {sum(r[3] > c for r, c in zip(rows, caption_cap))}; "
              f"least room left {min(c - r[2] for r, c in zip(rows, calls_cap))} / {min(c - r[3] for r, c in zip(rows, caption_cap))} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
