"""Where the app listens: ``--host`` / ``--port`` win over Gradio's ``GRADIO_SERVER_NAME`` /
``GRADIO_SERVER_PORT``, which win over 127.0.0.1:7860; a taken port is one line and exit status 2.
The app runs as a subprocess (``python app.py`` and ``hallu-studio app``) as a user starts it."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import free_port, http_status, stop_process

from hallu_studio.app.main import server_address, why_cannot_listen
from hallu_studio.store import Store

REPO = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 90


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HALLU_STUDIO_", "GRADIO_SERVER_"))}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])), HOME=str(tmp_path),
               GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1",
               PYTHONUNBUFFERED="1", **extra)
    return env


@pytest.fixture
def taken_port():
    """A port something listens on, as another server would."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def _args(host: str | None = None, port: int | None = None) -> argparse.Namespace:
    return argparse.Namespace(host=host, port=port)


def test_flags_win_over_the_environment_which_wins_over_the_defaults():
    env = {"GRADIO_SERVER_NAME": "0.0.0.0", "GRADIO_SERVER_PORT": "9001"}
    assert server_address(_args(), {}) == ("127.0.0.1", 7860)
    assert server_address(_args(), env) == ("0.0.0.0", 9001)
    assert server_address(_args("127.0.0.1", 9002), env) == ("127.0.0.1", 9002)
    assert server_address(_args(port=9002), env) == ("0.0.0.0", 9002)
    with pytest.raises(ValueError, match="GRADIO_SERVER_PORT must be a port number from 1 to 65535, got 'http'"):
        server_address(_args(), {"GRADIO_SERVER_PORT": "http"})
    with pytest.raises(ValueError, match="--port must be a port number"):
        server_address(_args(port=70000), env)


def test_a_listening_port_is_taken_and_a_free_one_is_not(taken_port):
    assert "in use" in why_cannot_listen("127.0.0.1", taken_port)
    assert why_cannot_listen("127.0.0.1", free_port()) is None
    assert "cannot listen on host" in why_cannot_listen("no-such-host.invalid", 7860)


@pytest.mark.parametrize("command, env_port", [
    (["app.py"], False),                              # python app.py --port P
    (["-m", "hallu_studio", "app"], True),            # GRADIO_SERVER_PORT=P hallu-studio app
])
def test_a_taken_port_is_one_line_and_exit_2(tmp_path, taken_port, command, env_port):
    db = tmp_path / "never.duckdb"
    argv = [sys.executable, *[str(REPO / c) if c == "app.py" else c for c in command], "--db", str(db),
            "--no-bootstrap"] + ([] if env_port else ["--port", str(taken_port)])
    extra = {"GRADIO_SERVER_PORT": str(taken_port)} if env_port else {}
    done = subprocess.run(argv, cwd=tmp_path, env=_env(tmp_path, **extra), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    err = done.stderr.strip()
    assert err == (f"error: port {taken_port} on 127.0.0.1 is already in use (another HalluStudio or server?); "
                   "choose a free one with --port N or GRADIO_SERVER_PORT=N"), done.stderr
    assert not db.exists(), "the store was opened before the port was checked"


def test_the_app_listens_where_the_environment_says_unless_a_flag_says_otherwise(tmp_path, taken_port):
    db = tmp_path / "app.duckdb"
    Store(db).close()
    port = free_port()
    # GRADIO_SERVER_PORT names a taken port: only the flag winning lets the app start at all;
    # GRADIO_SERVER_NAME puts it on another loopback address than the default.
    proc = subprocess.Popen([sys.executable, str(REPO / "app.py"), "--db", str(db), "--no-bootstrap",
                             "--port", str(port)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=_env(tmp_path, GRADIO_SERVER_NAME="127.0.0.2", GRADIO_SERVER_PORT=str(taken_port)),
                            text=True, errors="replace")
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while (status := http_status(f"http://127.0.0.2:{port}/")) is None:
            assert proc.poll() is None, f"app.py exited with {proc.returncode}: {proc.stdout.read()[-1500:]}"
            assert time.monotonic() < deadline, f"app.py did not answer on 127.0.0.2:{port}"
            time.sleep(0.3)
        assert status == 200
        assert http_status(f"http://127.0.0.1:{port}/") is None, "listening on the default host too"
    finally:
        stop_process(proc)
