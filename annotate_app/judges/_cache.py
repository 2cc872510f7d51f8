"""Result caches for the judge client: a rerun sends nothing, an interrupted run continues where it stopped.

A key (`cache_key`) is the sha256 of the judge's name, its fingerprint (the prompt hash and the settings that
change answers), the query ID, the sha256 of the query text, the document ID and the document version. Any
object with ``get(key)`` and ``put(key, result)`` is a cache (`JudgeCache`); the app provides one backed by
its own store. `MemoryCache` lives as long as the process; `SQLiteCache` is a standalone local file (for the
command line and benchmarks) that survives an interrupted run: each result is committed as it arrives.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from typing import Protocol, runtime_checkable

from annotate_app.judges._model import JudgeResult, Pair, sha256_text

__all__ = ["JudgeCache", "MemoryCache", "SQLiteCache", "cache_key"]


def cache_key(judge: str, fingerprint: str, pair: Pair) -> str:
    """The cache key of ``pair`` for a judge (see the module doc).

    >>> p = Pair(query_id="q1", query="battery", doc_id="d1", document="...", doc_version="3")
    >>> cache_key("j", "f", p) == cache_key("j", "f", Pair(query_id="q1", query="battery", doc_id="d1",
    ...                                                    document="changed", doc_version="3"))
    True
    """
    parts = [judge, fingerprint, pair.query_id, sha256_text(pair.query), pair.doc_id, pair.version()]
    return sha256_text(json.dumps(parts, ensure_ascii=False))


@runtime_checkable
class JudgeCache(Protocol):
    """Where the client looks a result up before judging, and puts it as soon as it arrives."""

    def get(self, key: str) -> JudgeResult | None: ...

    def put(self, key: str, result: JudgeResult) -> None: ...


class MemoryCache:
    """A cache in a dict (thread-safe)."""

    def __init__(self) -> None:
        self._results: dict[str, JudgeResult] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> JudgeResult | None:
        with self._lock:
            return self._results.get(key)

    def put(self, key: str, result: JudgeResult) -> None:
        with self._lock:
            self._results[key] = result

    def __len__(self) -> int:
        return len(self._results)


class SQLiteCache:
    """A cache in a local SQLite file (WAL mode; thread-safe; one commit per result).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "judge-cache.sqlite"
    >>> with SQLiteCache(path) as cache:
    ...     print(cache.get("missing"), len(cache))
    None 0
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS judge_cache (key TEXT PRIMARY KEY, result TEXT NOT NULL)"
            )
        except sqlite3.Error as exc:
            raise ValueError(f"path {self.path!r} cannot be used as a judge cache: {exc}") from None
        self._lock = threading.Lock()

    def get(self, key: str) -> JudgeResult | None:
        with self._lock:
            row = self._db.execute("SELECT result FROM judge_cache WHERE key = ?", (key,)).fetchone()
        return JudgeResult.from_dict(json.loads(row[0])) if row else None

    def put(self, key: str, result: JudgeResult) -> None:
        text = json.dumps(result.to_dict(), ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO judge_cache (key, result) VALUES (?, ?)", (key, text))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM judge_cache").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> SQLiteCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
