"""``bench_human_agreement.py --judge vlm`` runs end to end against a scripted OpenAI-compatible server and prints
its tables with the image judge beside the reference judges (issue 30). The images are synthetic squares named as
the set's images are, and the server answers from the question's hash: the numbers mean nothing, the plumbing is
what is tested. Reads FaithScore's human labels from ../shared and skips without them."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from conftest import SHARED, shared_dataset
from test_llm_fake_server import FakeChatServer

ROOT = Path(__file__).resolve().parents[1]


def _answer(question: str, n_images: int) -> tuple[str, float]:
    p = int(hashlib.sha256(question.encode()).hexdigest()[:4], 16) / 0xFFFF
    return ("Yes." if p >= 0.5 else "No."), p


@pytest.mark.slow
def test_the_bench_prints_the_image_judge_beside_the_reference_judges(tmp_path):
    from hallu_studio.importers.human import read_human_judgements

    study = read_human_judgements(shared_dataset("human", "faithscore"))
    keep = {r.sample_id for r in study.responses.responses[:4]}
    images = tmp_path / "images"
    images.mkdir()
    for sample in study.benchmark.samples:
        if sample.id in keep:
            buf = io.BytesIO()
            Image.new("RGB", (32, 32), (len(sample.image_key) * 7 % 255, 90, 160)).save(buf, "PNG")
            (images / f"COCO_val2014_{sample.image_key}.png").write_bytes(buf.getvalue())
    with FakeChatServer([("vision", _answer)]) as server:
        cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_human_agreement.py"), "--sets", "faithscore",
               "--limit", "4", "--metrics", "trihe,halfscore", "--n-boot", "50", "--no-cache", "--judge", "vlm",
               "--vlm-model", f"openai:scripted-vl@{server.base_url}", "--images", str(images)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               "HALLU_STUDIO_SHARED": str(SHARED), "XDG_CACHE_HOME": str(tmp_path / "cache")}
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        asked = server.answered
    assert done.returncode == 0, done.stderr[-3000:]
    assert asked > 0  # the image judge was asked, with the images
    out = done.stdout
    assert "Tri-HE judge (vlm:openai:scripted-vl)" in out and "Tri-HE judge (graph+vlm:openai:scripted-vl)" in out
    assert "every response faithscore labelled is hallucinated" in out  # the first four: its note, not a table
