"""The app as an ASGI application: the Streamlit script `annotate_app/streamlit_app.py`, plus a middleware
that writes the server's root into every HTML page, so a deep link connects at once.

``on_script_error``: `annotate_app.ui.errors.script_error` shows an escaped domain error as its message.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from annotate_app.ui import errors

__all__ = ["app", "BackendBaseUrl", "SCRIPT"]

SCRIPT = Path(__file__).with_name("streamlit_app.py")
_TAG = (
    b"<script>window.__streamlit=Object.assign({},window.__streamlit,"
    b"{BACKEND_BASE_URL:window.location.origin+%s});</script>"
)
_NOT_PAGES = ("/_stcore/", "/static/", "/media/", "/component", "/app/static/", "/auth/", "/oauth2callback")


class BackendBaseUrl:
    """ASGI middleware: HTML responses to GET requests get the `_TAG` script as the first element of their
    head (``base_path``: the server's URL path, "/" unless ``server.baseUrlPath`` is set)."""

    def __init__(self, app: ASGIApp, base_path: str = "/") -> None:
        self.app = app
        self.tag = _TAG % repr(base_path).encode()

    @staticmethod
    def _is_page(scope: Scope) -> bool:
        path = scope.get("path", "")
        last = path.rsplit("/", 1)[-1]
        return (
            scope["type"] == "http"
            and scope["method"] == "GET"
            and "." not in last
            and not any(part in path for part in _NOT_PAGES)
            or path.endswith("/index.html")
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._is_page(scope):
            await self.app(scope, receive, send)
            return
        # the page's HTML uncompressed, so that the tag can go in
        headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"]
        start: list[Message] = []
        body: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.append(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            await self._send(start[0], b"".join(body), send)

        await self.app({**scope, "headers": headers}, receive, capture)

    async def _send(self, start: Message, body: bytes, send: Send) -> None:
        headers = dict((k.lower(), v) for k, v in start["headers"])
        if headers.get(b"content-type", b"").startswith(b"text/html") and b"<head>" in body:
            body = body.replace(b"<head>", b"<head>" + self.tag, 1)
            start = {
                **start,
                "headers": [
                    (k, str(len(body)).encode() if k.lower() == b"content-length" else v)
                    for k, v in start["headers"]
                ],
            }
        await send(start)
        await send({"type": "http.response.body", "body": body})


app = st.App(SCRIPT, middleware=[Middleware(BackendBaseUrl)], on_script_error=errors.script_error)
