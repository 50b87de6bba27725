"""The app as served: every response carries the Content-Security-Policy, and the API lists exactly
the endpoints docs/app.md documents (everything else is private).

The app is launched the way ``app.py`` launches it (``build_app`` + ``launch_kwargs``) on a small
synthetic store; no browser needed (``test_reliability_browser.py`` checks the policy in Chromium).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from reliability_helpers import free_port

from hallu_studio.app.security import CONTENT_SECURITY_POLICY

DOCS = Path(__file__).resolve().parents[1] / "docs" / "app.md"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from hallu_studio.app import AppContext, build_app, launch_kwargs
    from synthetic_store import fill_synthetic_store
    from hallu_studio.store import Store

    store = Store(tmp_path_factory.mktemp("security") / "security.duckdb")
    fill_synthetic_store(store, n_samples=2)
    demo = build_app(AppContext(store=store))
    demo.queue()
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True,
                            footer_links=[], **launch_kwargs())
    yield url.rstrip("/")
    demo.close()
    store.close()


def _directives(policy: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in policy.split(";") if d.strip()}


def test_the_policy_allows_no_other_host():
    directives = _directives(CONTENT_SECURITY_POLICY)
    assert directives["default-src"] == ["'self'"]
    for name in ("img-src", "script-src", "style-src", "font-src", "connect-src", "media-src", "frame-src"):
        assert name in directives, name
        for source in directives[name]:
            # only this origin and in-page data; no scheme or host wildcard that another server would match
            assert source in {"'self'", "'unsafe-inline'", "'unsafe-eval'", "data:", "blob:"}, (name, source)
    assert directives["object-src"] == ["'none'"]


def test_every_page_and_api_response_carries_the_policy(served):
    paths = ["/", "/?view=%21%5Bx%5D%28http%3A%2F%2Fevil.example%2Fa.png%29", "/config", "/gradio_api/info",
             "/theme.css", "/no-such-page"]
    with httpx.Client(timeout=30) as client:
        for path in paths:
            response = client.get(served + path)
            policy = response.headers.get("content-security-policy")
            assert policy == CONTENT_SECURITY_POLICY, (path, response.status_code)
            assert response.headers.get("referrer-policy") == "no-referrer", path
        # the front end's own script files too
        page = client.get(served + "/").text
        assets = re.findall(r'src="([^"]+\.js)"', page)
        assert assets, "no script found in the page"
        asset = client.get(assets[0] if assets[0].startswith("http") else served + "/" + assets[0].lstrip("/"))
        assert asset.headers.get("content-security-policy") == CONTENT_SECURITY_POLICY


def documented_endpoints() -> set[str]:
    """The names in docs/app.md's "Stable API names: `a`, `b`, ..." sentence."""
    text = DOCS.read_text(encoding="utf-8")
    sentence = re.search(r"Stable API names:(.*?)\.\s", text, re.S)
    assert sentence, "docs/app.md lost its 'Stable API names:' sentence"
    return {"/" + name for name in re.findall(r"`([a-z_]+)`", sentence.group(1))}


def test_every_api_endpoint_is_documented_or_private(served):
    with httpx.Client(timeout=30) as client:
        info = client.get(served + "/gradio_api/info").json()
    listed = set(info["named_endpoints"])
    assert not info["unnamed_endpoints"], info["unnamed_endpoints"].keys()
    assert not {e for e in listed if re.fullmatch(r"/lambda(_\d+)?", e)}, "an unnamed lambda is public"
    assert listed == documented_endpoints(), (
        f"public but undocumented: {sorted(listed - documented_endpoints())}; "
        f"documented but not served: {sorted(documented_endpoints() - listed)}")
