"""The judge client: caches (a rerun sends nothing, an interrupted run resumes), the bounded window, counts,
progress and failures that never lose the other pairs. HTTP cases run against tests/helpers/llm_server.py."""

from __future__ import annotations

import io
import threading
import time
from collections import Counter
from typing import Any

import pytest
from llm_server import Answer, LLMServer, error, honour_n

from annotate_app.judges import (
    Backend,
    Counts,
    FailureKind,
    JudgeClient,
    JudgeResult,
    JudgeTask,
    MemoryCache,
    OpenAIJudge,
    Pair,
    RenderedPrompt,
    RetryPolicy,
    SQLiteCache,
    TqdmProgress,
    cache_key,
)

TASK = JudgeTask()
FAST = RetryPolicy(max_attempts=2, backoff_s=0.01, max_backoff_s=0.02)


@pytest.fixture
def llm():
    with LLMServer() as server:
        yield server


def pairs(n: int, *, version: str = "1") -> list[Pair]:
    return [
        Pair(
            query_id=f"q{i % 7}",
            query=f"query {i % 7}",
            doc_id=f"d{i}",
            document=f"text {i}",
            doc_version=version,
        )
        for i in range(n)
    ]


def http_judge(server: LLMServer, **options: Any) -> OpenAIJudge:
    return OpenAIJudge(
        server.url, "m", retry=FAST, timeout_s=5, api_key_env="QRELFORGE_TEST_NO_KEY", **options
    )


def keyed(results) -> dict[tuple[str, str], JudgeResult]:
    out: dict[tuple[str, str], JudgeResult] = {}
    for r in results:
        assert (r.query_id, r.doc_id) not in out, f"duplicate result for {r.query_id}/{r.doc_id}"
        out[(r.query_id, r.doc_id)] = r
    return out


def test_a_rerun_with_the_cache_sends_nothing(llm):
    cache = MemoryCache()
    with http_judge(llm) as judge:
        client = JudgeClient(judge, TASK, cache=cache, workers=4)
        first = keyed(client.run(pairs(30)))
        assert (len(llm.seen), client.counts.sent, client.counts.cached, len(cache)) == (30, 30, 0, 30)
        again = keyed(client.run(pairs(30)))
    assert len(llm.seen) == 30
    assert (client.counts.sent, client.counts.cached, client.counts.judged, client.counts.done) == (
        0,
        30,
        0,
        30,
    )
    assert all(r.cached for r in again.values()) and not any(r.cached for r in first.values())
    assert {k: (r.grade, r.prompt_hash) for k, r in again.items()} == {
        k: (r.grade, r.prompt_hash) for k, r in first.items()
    }


def test_the_cache_key_follows_the_judge_the_prompt_the_query_and_the_document_version(llm):
    cache = MemoryCache()
    with http_judge(llm) as judge:
        list(JudgeClient(judge, TASK, cache=cache).run(pairs(5)))
        list(JudgeClient(judge, TASK, cache=cache).run(pairs(5, version="2")))  # new document versions
        list(JudgeClient(judge, JudgeTask(guidelines="new rule"), cache=cache).run(pairs(5)))  # new prompt
    with http_judge(llm, name="other") as other:
        list(JudgeClient(other, TASK, cache=cache).run(pairs(5)))  # another judge
    with http_judge(llm, samples=2) as sampled:
        list(JudgeClient(sampled, TASK, cache=cache).run(pairs(5)))  # other settings
    assert len(llm.seen) == 25
    p = pairs(1)[0]
    moved = Pair(
        query_id=p.query_id, query="another text", doc_id=p.doc_id, document=p.document, doc_version="1"
    )
    assert cache_key("j", "f", p) != cache_key("j", "f", moved)
    unversioned = Pair(query_id="q", query="x", doc_id="d", document="v1")
    edited = Pair(query_id="q", query="x", doc_id="d", document="v2")
    assert cache_key("j", "f", unversioned) != cache_key("j", "f", edited)  # text hash stands for the version


def test_an_interrupted_run_resumes_where_it_stopped_without_resending(llm, tmp_path):
    llm.script = lambda body, attempt: Answer(delay_s=0.02, contents=honour_n(body, attempt).contents)
    path = tmp_path / "cache.sqlite"
    with http_judge(llm) as judge, SQLiteCache(path) as cache:
        taken = []
        for result in JudgeClient(judge, TASK, cache=cache, workers=3, max_in_flight=5).run(pairs(40)):
            taken.append(result)
            if len(taken) == 12:
                break  # closes the generator: pairs in flight finish and are cached, the rest never start
        sent_before = len(llm.seen)
        assert 12 <= sent_before <= 12 + 5
        assert len(cache) == sent_before
    with http_judge(llm) as judge, SQLiteCache(path) as cache:  # a new process would see the same file
        client = JudgeClient(judge, TASK, cache=cache, workers=3)
        rest = keyed(client.run(pairs(40)))
    assert len(rest) == 40
    assert client.counts.cached == sent_before and client.counts.sent == 40 - sent_before
    assert Counter(s.body["messages"][0]["content"] for s in llm.seen if s.body) == Counter(
        {judge.template.render(p, TASK): 1 for p in pairs(40)}
    )


def test_a_consumer_that_raises_keeps_what_was_judged(llm):
    cache = MemoryCache()
    with http_judge(llm) as judge:
        seen = []

        def sink(result: JudgeResult) -> None:
            seen.append(result)
            if len(seen) == 5:
                raise RuntimeError("disk full")

        with pytest.raises(RuntimeError, match="disk full"):
            JudgeClient(judge, TASK, cache=cache, workers=2, max_in_flight=3).run_into(pairs(20), sink)
        assert len(cache) == len(llm.seen) >= 5
        client = JudgeClient(judge, TASK, cache=cache, workers=2)
        assert len(keyed(client.run(pairs(20)))) == 20
    assert len(llm.seen) == 20


def test_transient_failures_are_not_cached_and_a_rerun_retries_them(llm):
    llm.script = lambda body, attempt: error(500) if attempt <= 2 else honour_n(body, attempt)
    cache = MemoryCache()
    with http_judge(llm) as judge:
        client = JudgeClient(judge, TASK, cache=cache)
        first = list(client.run(pairs(1)))
        assert [r.failure for r in first] == [FailureKind.HTTP_ERROR] and len(cache) == 0
        second = list(client.run(pairs(1)))
    assert [r.grade for r in second] == [2] and len(cache) == 1
    assert (client.counts.sent, client.counts.cached, len(llm.seen)) == (1, 0, 3)


def test_unreadable_replies_are_cached_like_grades(llm):
    llm.script = lambda body, attempt: Answer(contents=("no idea",))
    cache = MemoryCache()
    with http_judge(llm) as judge:
        for _ in range(2):
            assert [r.failure for r in JudgeClient(judge, TASK, cache=cache).run(pairs(1))] == [
                FailureKind.NO_GRADE
            ]
    assert len(llm.seen) == 1


def test_pairs_are_read_lazily_within_the_window_and_concurrency_is_bounded(llm):
    active, peak, lock = [0], [0], threading.Lock()

    def script(body: dict[str, Any], attempt: int) -> Answer:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.03)
        with lock:
            active[0] -= 1
        return honour_n(body, attempt)

    llm.script = script
    pulled = [0]

    def source():
        for p in pairs(60):
            pulled[0] += 1
            yield p

    with http_judge(llm) as judge:
        run = JudgeClient(judge, TASK, workers=3, max_in_flight=6).run(source())
        assert pulled[0] == 0  # nothing is read before the first result is asked for
        next(run)
        assert pulled[0] <= 6
        yielded, ahead = 1, []
        for _ in run:
            yielded += 1
            ahead.append(pulled[0] - yielded)  # pairs read but not yet handed out
    assert max(ahead) <= 6 and pulled[0] == 60
    assert 1 <= peak[0] <= 3 and len(llm.seen) == 60


class Flaky:
    """A judge (not the client's code) that raises for one document."""

    name = "flaky"
    backend = Backend.LEXICAL

    def fingerprint(self, task: JudgeTask) -> str:
        return "f"

    def render(self, pair: Pair, task: JudgeTask) -> RenderedPrompt:
        return RenderedPrompt(judge=self.name, prompt_hash="h", text=pair.query)

    def judge(self, pair: Pair, task: JudgeTask) -> JudgeResult:
        if pair.doc_id == "d3":
            raise KeyError("boom")
        return JudgeResult(
            query_id=pair.query_id,
            doc_id=pair.doc_id,
            judge=self.name,
            backend=self.backend,
            model="",
            grade=1,
        )


def test_a_judge_that_raises_loses_no_other_pair():
    results = keyed(JudgeClient(Flaky(), TASK, workers=2).run(pairs(10)))
    assert len(results) == 10
    bad = results[("q3", "d3")]
    assert (bad.failure, bad.error, bad.grade) == (FailureKind.ERROR, "KeyError: 'boom'", None)
    assert all(r.grade == 1 for k, r in results.items() if k != ("q3", "d3"))


def test_progress_sees_running_counts_and_tqdm_draws_a_bar():
    seen: list[Counts] = []
    client = JudgeClient(Flaky(), TASK, workers=2, progress=seen.append)
    list(client.run(pairs(10)))
    assert [c.done for c in seen] == list(range(1, 11))
    assert seen[-1] == client.counts == Counts(done=10, judged=10, failed=1)
    out = io.StringIO()
    with TqdmProgress(total=10, file=out, mininterval=0) as bar:
        list(JudgeClient(Flaky(), TASK, progress=bar).run(pairs(10)))
    assert "10/10" in out.getvalue() and "failed=1" in out.getvalue()


def test_dry_run_sends_nothing_and_needs_a_pair(llm):
    with http_judge(llm) as judge:
        client = JudgeClient(judge, TASK)
        shown = client.dry_run(pairs(3))
        assert shown.prompt_hash == judge.template.prompt_hash(TASK) and "query 0" in shown.text
        with pytest.raises(ValueError, match="pairs must hold at least one Pair for a dry run; got None"):
            client.dry_run([])
    assert llm.seen == [] and client.counts == Counts()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"workers": 0}, "workers must be an int >= 1; got 0"),
        ({"max_in_flight": 0}, "max_in_flight must be an int >= 1; got 0"),
        ({"cache": {}}, "cache must have get(key) and put(key, result); got dict"),
        ({"progress": 3}, "progress must be callable; got 3"),
    ],
)
def test_client_options_are_checked(options, message):
    with pytest.raises(ValueError) as info:
        JudgeClient(Flaky(), TASK, **options)
    assert str(info.value) == message


def test_a_pair_that_is_not_a_pair_is_refused():
    with pytest.raises(ValueError, match="pairs must be Pair objects; got tuple"):
        list(JudgeClient(Flaky(), TASK).run([("q", "d")]))  # type: ignore[list-item]
