"""A small JSON-over-HTTP client with kept-alive connections, a timeout and bounded retries (stdlib only).

429, 5xx, timeouts and connection errors are retried, at most ``max_attempts`` requests, waiting the
server's ``Retry-After`` or a jittered backoff in [c/2, c], c = min(``max_backoff_s``,
``backoff_s`` · 2^(k-1)); a ``Retry-After`` over ``max_retry_after_s`` fails at once as
`FailureKind.RATE_LIMITED`. Other 4xx are not retried.
"""

from __future__ import annotations

import email.utils
import http.client
import random
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from annotate_app.judges._errors import server_message
from annotate_app.judges._model import FailureKind

__all__ = ["RetryPolicy", "HttpOutcome", "HttpPool"]

MAX_BODY_BYTES = 16 << 20
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry (see the module doc)."""

    max_attempts: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0

    def __post_init__(self) -> None:
        if (
            not isinstance(self.max_attempts, int)
            or isinstance(self.max_attempts, bool)
            or self.max_attempts < 1
        ):
            raise ValueError(f"max_attempts must be an int >= 1; got {self.max_attempts!r}")
        for name in ("backoff_s", "max_backoff_s", "max_retry_after_s"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value < float("inf"):
                raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry`` (1-based).

        >>> RetryPolicy(backoff_s=1.0).delay(3, None, random.Random(0)) <= 4.0
        True
        >>> RetryPolicy().delay(1, 7.0, random.Random(0))
        7.0
        """
        if retry_after is not None:
            return min(retry_after, self.max_retry_after_s)
        cap = min(self.max_backoff_s, self.backoff_s * 2 ** (retry - 1))
        return rng.uniform(cap / 2, cap)


@dataclass(frozen=True)
class HttpOutcome:
    """The last answer to a request (or why there was none), with the requests it took."""

    status: int | None
    body: bytes
    failure: FailureKind | None
    error: str
    requests: int
    retries: int
    elapsed_s: float
    retry_after_s: float | None = None


@dataclass(frozen=True)
class _Attempt:
    status: int | None
    body: bytes
    retry_after: float | None = None
    failure: FailureKind | None = None
    error: str = ""

    @property
    def retryable(self) -> bool:
        if self.failure in (FailureKind.TIMEOUT, FailureKind.CONNECTION):
            return True
        return self.status is not None and (self.status == 429 or self.status >= 500)


class HttpPool:
    """POSTs JSON to one server over a pool of kept-alive connections; safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float,
        retry: RetryPolicy,
        headers: Mapping[str, str] | None = None,
        seed: int | None = None,
    ):
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be an http:// or https:// URL; got {base_url!r}")
        if not isinstance(timeout_s, int | float) or isinstance(timeout_s, bool) or not 0 < timeout_s < 1e6:
            raise ValueError(f"timeout_s must be a number > 0; got {timeout_s!r}")
        self._https = parts.scheme == "https"
        self._host, self._port = parts.hostname, parts.port
        self._prefix = parts.path.rstrip("/")
        self._timeout, self._retry = float(timeout_s), retry
        self._headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._rng = random.Random(seed)

    def post(
        self,
        path: str,
        body: bytes,
        *,
        final: Callable[[int, bytes], FailureKind | None] | None = None,
    ) -> HttpOutcome:
        """POST ``body`` to ``base_url + path``, retrying as the policy says. ``final(status, body)`` may name
        the failure kind of an error answer that must not be retried (None: the usual rules)."""
        start = time.perf_counter()
        requests = 0
        failure: FailureKind | None = None
        while True:
            attempt = self._send(self._prefix + path, body)
            requests += 1
            if attempt.status is not None and attempt.status >= 400 and final is not None:
                failure = final(attempt.status, attempt.body)
                if failure is not None:
                    break
            if attempt.retryable and (attempt.retry_after or 0.0) > self._retry.max_retry_after_s:
                failure = FailureKind.RATE_LIMITED
                break
            if not attempt.retryable or requests >= self._retry.max_attempts:
                break
            with self._lock:
                wait = self._retry.delay(requests, attempt.retry_after, self._rng)
            time.sleep(wait)
        failure, error = failure or attempt.failure, attempt.error
        if attempt.status is not None and not 200 <= attempt.status < 300:
            failure = failure or FailureKind.HTTP_ERROR
            error = _status_error(attempt)
        if failure is not None and requests > 1:
            error = f"{error} (after {requests} attempts)"
        return HttpOutcome(
            status=attempt.status,
            body=attempt.body,
            failure=failure,
            error=error,
            requests=requests,
            retries=requests - 1,
            elapsed_s=time.perf_counter() - start,
            retry_after_s=attempt.retry_after,
        )

    def _send(self, path: str, body: bytes) -> _Attempt:
        conn, reused = self._acquire()
        try:
            return self._exchange(conn, path, body)
        except Exception as exc:
            conn.close()
            if not (reused and isinstance(exc, _STALE)):
                return _failed(exc)
        conn = self._new()  # the idle connection had been closed by the server: send once more
        try:
            return self._exchange(conn, path, body)
        except Exception as exc:
            conn.close()
            return _failed(exc)

    def _exchange(self, conn: http.client.HTTPConnection, path: str, body: bytes) -> _Attempt:
        conn.request("POST", path, body=body, headers=self._headers)
        response = conn.getresponse()
        data = response.read(MAX_BODY_BYTES + 1)
        if len(data) > MAX_BODY_BYTES:
            conn.close()
            return _Attempt(
                status=response.status,
                body=data[:1000],
                failure=FailureKind.BAD_RESPONSE,
                error=f"response body larger than {MAX_BODY_BYTES} bytes",
            )
        retry_after = _retry_after(response.getheader("Retry-After"))
        if response.will_close:
            conn.close()
        else:
            with self._lock:
                self._idle.append(conn)
        return _Attempt(status=response.status, body=data, retry_after=retry_after)

    def _acquire(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._new(), False

    def _new(self) -> http.client.HTTPConnection:
        kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return kind(self._host, self._port, timeout=self._timeout)

    def close(self) -> None:
        """Close the idle connections (connections in use close when their request ends)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


def _status_error(attempt: _Attempt) -> str:
    """``HTTP 400: <the server's message>`` (an excerpt of the body when it has none), with the wait a
    ``Retry-After`` asked for."""
    said = server_message(attempt.body) or repr(attempt.body[:300].decode("utf-8", "replace"))
    wait = "" if attempt.retry_after is None else f" (Retry-After {attempt.retry_after:.0f} s)"
    return f"HTTP {attempt.status}{wait}: {said}"


def _failed(exc: Exception) -> _Attempt:
    if isinstance(exc, socket.timeout | TimeoutError):
        return _Attempt(status=None, body=b"", failure=FailureKind.TIMEOUT, error=f"timed out ({exc})")
    if isinstance(exc, OSError | http.client.HTTPException):
        return _Attempt(
            status=None, body=b"", failure=FailureKind.CONNECTION, error=f"{type(exc).__name__}: {exc}"
        )
    raise exc


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None.

    >>> _retry_after("3"), _retry_after("junk"), _retry_after(None)
    (3.0, None, None)
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None
