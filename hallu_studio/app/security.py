"""The Content-Security-Policy every response of the app carries: the page loads only from the app itself.

Escaping (``render.palette.esc`` / ``md``) keeps untrusted text from becoming markup; this policy is the
second line: if an escape is ever missed, a ``<img src=http://elsewhere>`` or a script from another
host is refused by the browser, so no request leaves the machine. The graphs' ``srcdoc`` pages inherit
this policy and add their own stricter one (``render.graphs``).
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Measured in Chromium: Gradio 6's front end needs inline styles (Svelte style attributes and <style>
# blocks), inline scripts (the page's config, our shortcuts in <head>, vis.js inlined in the graph pages)
# and 'unsafe-eval' (gr.HTML evaluates its templates with Function(): without it no gr.HTML renders).
# Scripts still come only from this origin; what keeps text inert is the escaping, not this line.
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",  # inlined images are data: URIs; Gradio previews files as blob:
    "font-src 'self' data:",
    "connect-src 'self'",  # the queue's event stream and uploads, same origin only
    "media-src 'self' data: blob:",
    "worker-src 'self' blob:",
    "frame-src 'self'",  # the graphs are srcdoc frames, which this does not govern
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
])
# A link followed out of the app does not tell the other host which view (and which saved name) it came from.
REFERRER_POLICY = "no-referrer"


class ContentSecurityPolicy:
    """ASGI middleware: adds the policy headers to every HTTP response (pure ASGI, so streamed
    responses such as the queue's server-sent events pass through untouched)."""

    def __init__(self, app: ASGIApp, policy: str = CONTENT_SECURITY_POLICY) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = self.policy
                headers["Referrer-Policy"] = REFERRER_POLICY
            await send(message)

        await self.app(scope, receive, send_with_policy)


def app_kwargs() -> dict[str, Any]:
    """What ``launch(app_kwargs=...)`` passes to Gradio's FastAPI app: the policy middleware."""
    return {"middleware": [Middleware(ContentSecurityPolicy)]}
