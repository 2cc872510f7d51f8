"""The app as an ASGI application: the Streamlit script `annotate_app/streamlit_app.py`, plus a middleware
that writes the server's root into every HTML page, so a deep link connects at once.

``on_script_error``: `annotate_app.ui.errors.script_error` shows an escaped domain error as its message.

Memory: the server fixes glibc's mmap threshold at `MMAP_THRESHOLD` (`keep_big_blocks_apart`), so every block
of that size or more is its own mapping, returned to the system when freed. glibc's default raises the
threshold to the size of the last such block freed (up to 32 MiB), after which the megabyte blocks of an
upload's lines come from the script thread's arena and stay resident after they are freed, on top of what
the next upload reads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from annotate_app.ui import errors

__all__ = ["app", "BackendBaseUrl", "SCRIPT", "MMAP_THRESHOLD", "keep_big_blocks_apart"]

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


MMAP_THRESHOLD = 128 << 10  # glibc's own starting value
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def keep_big_blocks_apart(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes for this process (see the module); False where the
    C library is not glibc, which is then left as it is."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold))
    except (OSError, AttributeError):
        return False


keep_big_blocks_apart()
app = st.App(SCRIPT, middleware=[Middleware(BackendBaseUrl)], on_script_error=errors.script_error)
