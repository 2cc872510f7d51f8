"""Login throttling under a burst of simultaneous guesses, with the real argon2 parameters (64 MiB a check),
on SQLite and PostgreSQL.

Thirty threads (each its own database session) guess at once: the attempts are counted before any password is
checked, so at most `MAX_FAILED_LOGINS` checks run, the right password — tried last — is refused while the
account is locked, and the process never holds more than `MAX_CONCURRENT_CHECKS` argon2 checks at once (its
RSS grows by less than 400 MB during the burst; 30 checks at once took 2 GB). Names that are no user are held
to the same limits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from annotate_app.services import auth, users
from annotate_app.services.auth import BUSY, MAX_CONCURRENT_CHECKS, MAX_FAILED_LOGINS, SYSTEM
from annotate_app.services.errors import PermissionDenied
from annotate_app.store.db import Database
from annotate_app.store.models import AuditEntry

GUESSES = 30
PEAK_GROWTH_MB = 400
INVALID = "invalid username or password"
LOCKED = "too many failed logins for 'alice'; try again in "


class CountingHasher(PasswordHasher):
    """argon2-cffi's default hasher that counts its verifications and the most that ran at once."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.checks = self.running = self.most = 0

    def verify(self, hash, password) -> bool:  # noqa: A002  (argon2's own parameter name)
        with self.lock:
            self.checks += 1
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            return super().verify(hash, password)
        finally:
            with self.lock:
                self.running -= 1


@pytest.fixture
def hasher(monkeypatch) -> CountingHasher:
    counting = CountingHasher()
    monkeypatch.setattr(auth, "_HASHER", counting)
    monkeypatch.setattr(auth, "_DUMMY_HASH", counting.hash("qrelforge-timing-equaliser"))
    return counting


@pytest.fixture
def real_db(db_url, hasher, monkeypatch):
    # A lock long enough to outlast the burst on a loaded machine (the default 30 s expired during a burst
    # at load 60): the test is about how many checks run, not how long the lock lasts.
    monkeypatch.setattr(auth, "LOCK_BASE", timedelta(minutes=10))
    database = Database(db_url, pool_size=GUESSES + 2)
    users.create_user(database, SYSTEM, "alice", "the-right-password")
    yield database
    database.dispose()


def _burst(db: Database, attempts: list[tuple[str, str]], *, before: Callable | None = None) -> list[str]:
    """Run every (username, password) attempt in its own thread, all released at once; returns each outcome
    (the username of a login, or the refusal message), in the order of ``attempts``."""
    outcomes: list[str] = [""] * len(attempts)
    barrier = threading.Barrier(len(attempts))

    def attempt(i: int, name: str, password: str) -> None:
        barrier.wait(timeout=60)
        if before is not None:
            before(i)
        try:
            outcomes[i] = auth.authenticate(db, name, password).username
        except PermissionDenied as exc:
            outcomes[i] = str(exc)

    threads = [threading.Thread(target=attempt, args=(i, *a)) for i, a in enumerate(attempts)]
    with _RssWatch() as watch:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    _GROWTH[0] = watch.growth_mb
    return outcomes


_GROWTH = [0.0]


def _rss_mb() -> float:
    """The process's resident set now (VmRSS, KiB in /proc/self/status)."""
    with open("/proc/self/status") as f:
        line = next(row for row in f if row.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


class _RssWatch:
    """Samples the RSS every 2 ms while the burst runs; `growth_mb` is the most it rose above its value at the
    start. A growth, not a level: the xdist worker may already hold hundreds of MB from earlier tests, which
    the allocator does not give back (and the sandbox may not let VmHWM be reset)."""

    def __init__(self) -> None:
        self.growth_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.002):
            self.growth_mb = max(self.growth_mb, _rss_mb() - self._start)

    def __enter__(self) -> _RssWatch:
        self._start = _rss_mb()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _burst_growth_mb() -> float:
    """How far the RSS rose above its start during the last `_burst`."""
    return _GROWTH[0]


def test_a_burst_of_guesses_gets_at_most_five_checks(real_db, hasher, monkeypatch):
    """29 wrong guesses and the right password, tried at once; the right one is counted last (it waits for
    the 29 other attempts to be counted, or refused, before its own)."""
    counted = threading.Condition()
    done = [0]
    real_claim = getattr(auth, "_claim", None)

    def claim_last(db, user_id, name, now):
        if threading.current_thread().name == "right":
            with counted:
                counted.wait_for(lambda: done[0] >= GUESSES - 1, timeout=60)
        try:
            return real_claim(db, user_id, name, now)
        finally:
            with counted:
                done[0] += 1
                counted.notify_all()

    if real_claim is not None:
        monkeypatch.setattr(auth, "_claim", claim_last)
    attempts = [("alice", f"wrong guess {i}") for i in range(GUESSES - 1)] + [("alice", "the-right-password")]

    def name_the_right_one(i: int) -> None:
        if i == GUESSES - 1:
            threading.current_thread().name = "right"

    before = hasher.checks
    outcomes = _burst(real_db, attempts, before=name_the_right_one)
    checks = hasher.checks - before
    assert 1 <= checks <= MAX_FAILED_LOGINS, f"{checks} password checks in a burst of {GUESSES}"
    assert outcomes[-1].startswith(LOCKED)  # the right password is refused while the account is locked
    assert all(o in (INVALID, BUSY) or o.startswith(LOCKED) for o in outcomes[:-1]), outcomes
    assert outcomes[:-1].count(INVALID) == checks
    assert hasher.most <= MAX_CONCURRENT_CHECKS
    assert _burst_growth_mb() < PEAK_GROWTH_MB

    with pytest.raises(PermissionDenied, match=rf"^{LOCKED}\d+ s$"):  # after the burst too, unchecked
        auth.authenticate(real_db, "alice", "the-right-password")
    assert hasher.checks - before == checks
    with real_db.read() as s:
        locks = s.scalars(select(AuditEntry).where(AuditEntry.action == "login_locked")).all()
    assert [e.target for e in locks] == ["alice"]


def test_a_burst_on_a_name_that_is_no_user_is_held_to_the_same_limit(real_db, hasher):
    before = hasher.checks
    outcomes = _burst(real_db, [("nobody", f"guess {i}") for i in range(GUESSES)])
    assert set(outcomes) <= {INVALID, BUSY} and INVALID in outcomes
    assert hasher.checks - before <= MAX_FAILED_LOGINS
    assert hasher.most <= MAX_CONCURRENT_CHECKS
    assert _burst_growth_mb() < PEAK_GROWTH_MB


def test_a_burst_of_different_unknown_names_runs_two_checks_at_a_time(real_db, hasher):
    """Every name is new, so each gets its dummy check: they queue for the process's argon2 slots (those
    that wait too long are refused with BUSY), and the memory stays bounded."""
    outcomes = _burst(real_db, [(f"nobody{i}", "a guess") for i in range(GUESSES)])
    assert set(outcomes) <= {INVALID, BUSY} and INVALID in outcomes
    assert hasher.most <= MAX_CONCURRENT_CHECKS
    assert _burst_growth_mb() < PEAK_GROWTH_MB
