"""The judge client: many pairs through one judge, concurrently, cached, with running counts.

`JudgeClient.run` reads pairs lazily, keeps at most ``max_in_flight`` in flight and yields each pair's one
result as it completes; a judge's exception becomes a `FailureKind.ERROR` result. Answers are cached at once,
retried failures are not. A failure that `FailureKind.stops_run` stops the run (`JudgeClient.stopped`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from annotate_app.judges._cache import JudgeCache, cache_key
from annotate_app.judges._model import FailureKind, Judge, JudgeResult, JudgeTask, Pair, RenderedPrompt

__all__ = ["Counts", "JudgeClient", "TqdmProgress"]


@dataclass(frozen=True)
class Counts:
    """Running counts of a run: results handed out (``done``), pairs taken from the cache, pairs the judge was
    asked about, failed results, HTTP requests sent (retries included), retries, and tokens."""

    done: int = 0
    cached: int = 0
    judged: int = 0
    failed: int = 0
    sent: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def adding(self, result: JudgeResult) -> Counts:
        """These counts with ``result`` handed out too."""
        return Counts(
            done=self.done + 1,
            cached=self.cached + result.cached,
            judged=self.judged + (not result.cached),
            failed=self.failed + (not result.ok),
            sent=self.sent + (0 if result.cached else result.requests),
            retries=self.retries + (0 if result.cached else result.retries),
            prompt_tokens=self.prompt_tokens + (0 if result.cached else result.prompt_tokens),
            completion_tokens=self.completion_tokens + (0 if result.cached else result.completion_tokens),
        )


Progress = Callable[[Counts], Any]


class JudgeClient:
    """Runs a judge over many pairs (see the module doc).

    >>> from annotate_app.judges import LexicalJudge, MemoryCache
    >>> judge = LexicalJudge({"d1": "replace the battery", "d2": "return an order"})
    >>> client = JudgeClient(judge, JudgeTask(), cache=MemoryCache(), workers=2)
    >>> pairs = [Pair(query_id="q1", query="battery", doc_id=d, document="") for d in ("d1", "d2")]
    >>> sorted((r.doc_id, r.grade) for r in client.run(pairs))
    [('d1', 3), ('d2', 0)]
    >>> _ = list(client.run(pairs)); client.counts.cached, client.counts.judged
    (2, 0)
    """

    def __init__(
        self,
        judge: Judge,
        task: JudgeTask,
        *,
        cache: JudgeCache | None = None,
        workers: int = 8,
        max_in_flight: int | None = None,
        progress: Progress | None = None,
    ):
        if not isinstance(judge, Judge):
            raise ValueError(f"judge must implement the Judge protocol; got {type(judge).__name__}")
        if not isinstance(task, JudgeTask):
            raise ValueError(f"task must be a JudgeTask; got {type(task).__name__}")
        if cache is not None and not isinstance(cache, JudgeCache):
            raise ValueError(f"cache must have get(key) and put(key, result); got {type(cache).__name__}")
        _check_int(workers, "workers")
        window = 2 * workers if max_in_flight is None else max_in_flight
        _check_int(window, "max_in_flight")
        if progress is not None and not callable(progress):
            raise ValueError(f"progress must be callable; got {progress!r}")
        self.judge, self.task, self.cache = judge, task, cache
        self.workers, self.max_in_flight, self.progress = workers, window, progress
        self._counts = Counts()
        self._stopped: JudgeResult | None = None

    @property
    def counts(self) -> Counts:
        """The counts of the current (or last) run."""
        return self._counts

    @property
    def stopped(self) -> JudgeResult | None:
        """The result that stopped the current (or last) run early, or None when it ran to the end."""
        return self._stopped

    def dry_run(self, pairs: Iterable[Pair] | Pair) -> RenderedPrompt:
        """The prompt (and request) the judge would send for the first pair; nothing is sent."""
        first = pairs if isinstance(pairs, Pair) else next(iter(pairs), None)
        if not isinstance(first, Pair):
            raise ValueError(f"pairs must hold at least one Pair for a dry run; got {first!r}")
        return self.judge.render(first, self.task)

    def run(self, pairs: Iterable[Pair]) -> Iterator[JudgeResult]:
        """Judge every pair; yields one result per pair as they complete. Raises ValueError at once (before
        reading any pair) when the judge cannot work with the task."""
        fingerprint = self.judge.fingerprint(self.task)
        self._counts, self._stopped = Counts(), None
        return self._run(iter(pairs), fingerprint)

    def run_into(self, pairs: Iterable[Pair], sink: Callable[[JudgeResult], Any]) -> Counts:
        """Judge every pair, handing each result to ``sink`` as it completes; returns the final counts."""
        for result in self.run(pairs):
            sink(result)
        return self._counts

    def _run(self, pairs: Iterator[Pair], fingerprint: str) -> Iterator[JudgeResult]:
        pending: set[Future[JudgeResult]] = set()
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="judge")
        try:
            for pair in pairs:
                if self._stopped is not None:
                    break
                if not isinstance(pair, Pair):
                    raise ValueError(f"pairs must be Pair objects; got {type(pair).__name__} {pair!r:.80}")
                key = cache_key(self.judge.name, fingerprint, pair) if self.cache is not None else None
                hit = self.cache.get(key) if self.cache is not None and key is not None else None
                if hit is not None:
                    yield self._hand_out(dataclasses.replace(hit, cached=True))
                    continue
                pending.add(pool.submit(self._judge_one, pair, key))
                while len(pending) >= self.max_in_flight:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    yield from map(self._hand_out, (f.result() for f in done))
            if self._stopped is not None:  # pairs not started yet are not sent
                for future in pending:
                    future.cancel()
                pending = {f for f in pending if not f.cancelled()}
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                yield from map(self._hand_out, (f.result() for f in done))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _judge_one(self, pair: Pair, key: str | None) -> JudgeResult:
        try:
            result = self.judge.judge(pair, self.task)
        except Exception as exc:  # a judge's bug must not lose the other pairs
            result = JudgeResult(
                query_id=pair.query_id,
                doc_id=pair.doc_id,
                judge=self.judge.name,
                backend=self.judge.backend,
                model="",
                grade=None,
                failure=FailureKind.ERROR,
                error=f"{type(exc).__name__}: {exc}",
                samples=0,
            )
        if (
            key is not None
            and self.cache is not None
            and (result.failure is None or not result.failure.retried)
        ):
            self.cache.put(key, result)
        return result

    def _hand_out(self, result: JudgeResult) -> JudgeResult:
        if result.failure is not None and result.failure.stops_run and self._stopped is None:
            self._stopped = result
        self._counts = self._counts.adding(result)
        if self.progress is not None:
            self.progress(self._counts)
        return result


class TqdmProgress:
    """A tqdm progress bar as a ``progress`` callback (needs the tqdm package); close it, or use ``with``."""

    def __init__(self, *, total: int | None = None, desc: str = "judging", **tqdm_options: Any):
        try:
            from tqdm import tqdm
        except ImportError:  # pragma: no cover - tqdm ships with the test extra
            raise ValueError("TqdmProgress needs the tqdm package: pip install tqdm") from None
        self._bar = tqdm(total=total, desc=desc, unit="pair", **tqdm_options)

    def __call__(self, counts: Counts) -> None:
        self._bar.update(counts.done - self._bar.n)
        self._bar.set_postfix(sent=counts.sent, cached=counts.cached, failed=counts.failed, refresh=False)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> TqdmProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_int(value: Any, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an int >= 1; got {value!r}")
