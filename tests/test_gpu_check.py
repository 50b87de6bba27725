"""``scripts/gpu_check.sh`` in its skip mode (no CUDA, or ``--cpu-only``): the CPU half runs and the table prints."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _script():
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gpu_check", module)  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_the_cpu_half_runs_and_prints_the_table_and_the_skip_line():
    pytest.importorskip("torch")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(["bash", str(REPO / "scripts" / "gpu_check.sh"), "--cpu-only", "llava"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("family"))
    assert lines[header].split()[:5] == ["family", "check", "device", "dtype", "result"]
    rows = [line.split()[0:1] + [line[len("llava"):].strip()] for line in lines[header + 1:] if line.startswith("llava")]
    checks = " ".join(r[1] for r in rows)
    for check in ("load", "generate", "batch = one by one", "entropy", "logit lens", "DTC", "image judge"):
        assert check in checks
    assert "FAIL" not in done.stdout
    assert lines[-1].startswith("skipped: ") and "the CPU half ran: 7 rows, 0 failed" in lines[-1]


def test_comparisons_fail_on_a_different_token_or_a_diff_past_the_dtype_tolerance():
    check = _script()
    reference = ([["a", "b"]], [0.10, 0.20])
    assert check._compare("generate", ([["a", "b"]], [0.1005, 0.2]), reference, check.TOLERANCE["float32"]) \
        == ("ok", pytest.approx(0.0005))
    result, diff = check._compare("generate", ([["a", "b"]], [0.15, 0.2]), reference, check.TOLERANCE["float16"])
    assert result.startswith("FAIL: max diff") and diff == pytest.approx(0.05)
    assert check._compare("generate", ([["a", "c"]], [0.1, 0.2]), reference, 1.0)[0].startswith("FAIL: differs")
    assert check._compare("batch = one by one", (["x y", "z"], ["x y", "q"]), None, 1.0)[0].startswith("FAIL")
    assert check._compare("entropy", ([], [0.3]), None, 1.0) == ("reference", None)
