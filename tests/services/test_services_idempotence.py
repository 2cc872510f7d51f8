"""Idempotent saves (issue 16, item 6) and self-adjudication (issue 16, item 11), on SQLite and PostgreSQL.

A connection dropped mid-commit can lose the reply of a save that committed: the client sees a failure and
retries. Re-saving the current version adds nothing, and a retry with the save's ``request_id`` returns the
label its first attempt stored — never a second version. A reviewer who labelled a pair may not adjudicate
it unless the project allows it; then the audit entry says so.
"""

from __future__ import annotations

import re
import threading

import pytest
from sqlalchemy import create_engine, event, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from annotate_app.services import adjudication, audit, gate, labels, projects, queue
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import Conflict, InvalidInput, PermissionDenied

REASON = "answers the question"


def _count(db, table: str) -> int:
    with db.read() as s:
        return int(s.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


def _claim(db, actor) -> int:
    return queue.next_pair(db, actor, "demo").pair_id


# ------------------------------------------------------------------------------------------ label saves
def test_saving_the_current_version_again_adds_nothing(demo, actors):
    alice = actors["alice"]
    pair = _claim(demo, alice)
    first = labels.save_label(demo, alice, "demo", pair, grade=2, reason=REASON, expected_version=0)
    again = labels.save_label(demo, alice, "demo", pair, grade=2, reason=f"  {REASON} ", expected_version=0)
    assert (again.label_id, again.version) == (first.label_id, 1) and _count(demo, "labels") == 1
    edit = labels.save_label(demo, alice, "demo", pair, grade=2, reason=REASON, unsure=True)
    assert (edit.version, _count(demo, "labels")) == (2, 2)  # the unsure flag changed: a new version


def test_a_retry_with_the_same_request_id_returns_the_first_label(demo, actors):
    alice = actors["alice"]
    pair = _claim(demo, alice)
    first = labels.save_label(demo, alice, "demo", pair, grade=1, reason=REASON, request_id="save-1")
    retry = labels.save_label(
        demo, alice, "demo", pair, grade=1, reason=REASON, expected_version=0, request_id="save-1"
    )
    assert retry == first and _count(demo, "labels") == 1
    second = labels.save_label(demo, alice, "demo", pair, grade=3, reason=REASON, request_id="save-2")
    late = labels.save_label(demo, alice, "demo", pair, grade=1, reason=REASON, request_id="save-1")
    assert (second.version, late.label_id, late.version) == (2, first.label_id, 1)
    assert _count(demo, "labels") == 2
    assert labels.my_labels(demo, alice, "demo")[0].label_id == second.label_id


BAD = "request_id must be None or 1 to 64 characters of A-Z a-z 0-9 . _ : -; got "


@pytest.mark.parametrize(
    ("request_id", "error", "message"),
    [
        ("a b", InvalidInput, BAD + "'a b'"),
        ("x" * 65, InvalidInput, BAD + "'" + "x" * 65 + "'"),
        (7, InvalidInput, BAD + "7"),
        ("", InvalidInput, BAD + "''"),
        ("used", Conflict, "request_id 'used' was already used to save pair {other}, not pair {pair}; "
         "use a new request_id for every save"),
    ],
)  # fmt: skip
def test_bad_request_ids(demo, actors, request_id, error, message):
    alice = actors["alice"]
    other = _claim(demo, alice)
    labels.save_label(demo, alice, "demo", other, grade=1, reason=REASON, request_id="used")
    pair = _claim(demo, alice)
    with pytest.raises(error, match="^" + re.escape(message.format(other=other, pair=pair))):
        labels.save_label(demo, alice, "demo", pair, grade=1, reason=REASON, request_id=request_id)
    assert _count(demo, "labels") == 1


class _ReplyLost:
    """Once armed, the next commit of a session succeeds and then fails as a dropped connection does: on
    PostgreSQL the server connection of that transaction is really terminated (pg_terminate_backend, from
    another connection) right after COMMIT, then the caller gets an OperationalError."""

    def __init__(self, db_url: str):
        self.url, self.armed, self.pid, self.fired = db_url, False, None, 0

    def after_begin(self, session, transaction, connection) -> None:
        if self.armed and connection.dialect.name == "postgresql":
            self.pid = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar()

    def after_commit(self, session) -> None:
        if not self.armed:
            return
        self.armed = False
        self.fired += 1
        if self.pid is not None:
            admin = create_engine(self.url)
            with admin.begin() as conn:
                assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": self.pid}).scalar()
            admin.dispose()
        raise OperationalError("COMMIT", None, ConnectionError("server closed the connection unexpectedly"))


@pytest.fixture
def reply_lost(db_url):
    hook = _ReplyLost(db_url)
    event.listen(Session, "after_begin", hook.after_begin)
    event.listen(Session, "after_commit", hook.after_commit)
    yield hook
    event.remove(Session, "after_begin", hook.after_begin)
    event.remove(Session, "after_commit", hook.after_commit)


@pytest.mark.parametrize("request_id", ["9b2f6c1e-0d4a-4f7e-8a55-3c1d2e4f5a6b", None])
def test_the_phantom_save_a_retry_finds_its_own_label(demo, actors, reply_lost, request_id):
    alice = actors["alice"]
    pair = _claim(demo, alice)
    reply_lost.armed = True
    with pytest.raises(OperationalError, match="server closed the connection"):
        labels.save_label(
            demo, alice, "demo", pair, grade=2, reason=REASON, expected_version=0, request_id=request_id
        )
    assert reply_lost.fired == 1 and _count(demo, "labels") == 1  # committed, reported as failed
    retry = labels.save_label(
        demo, alice, "demo", pair, grade=2, reason=REASON, expected_version=0, request_id=request_id
    )
    with demo.read() as s:
        stored = s.execute(text("SELECT id, request_id FROM labels")).all()
    assert [(retry.label_id, request_id)] == [tuple(r) for r in stored] and retry.version == 1
    assert queue.my_progress(demo, alice, "demo").done == 1


def test_concurrent_retries_with_one_request_id_store_one_label(demo, actors):
    alice = actors["alice"]
    pair = _claim(demo, alice)
    barrier, results = threading.Barrier(4), []

    def save() -> None:
        barrier.wait()
        results.append(labels.save_label(demo, alice, "demo", pair, grade=1, reason=REASON, request_id="dup"))

    threads = [threading.Thread(target=save) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len({r.label_id for r in results}) == 1 and len(results) == 4 and _count(demo, "labels") == 1


# -------------------------------------------------------------------------------------- adjudications
@pytest.fixture
def disputed(demo, actors):
    """Every pair labelled by alice (grade 0) and rita (grade 3), rita a member: twelve disagreements."""
    projects.assign(demo, SYSTEM, "demo", ["rita"])
    for name, grade in (("alice", 0), ("rita", 3)):
        while (view := queue.next_pair(demo, actors[name], "demo")) is not None:
            labels.save_label(demo, actors[name], "demo", view.pair_id, grade=grade, reason=REASON)
    return [d.pair_id for d in gate.disagreements(demo, SYSTEM, "demo")]


def test_adjudicating_the_same_grade_again_adds_nothing(demo, disputed):
    pair = disputed[0]
    first = adjudication.adjudicate(demo, SYSTEM, "demo", pair, grade=1, reason="read it twice")
    again = adjudication.adjudicate(demo, SYSTEM, "demo", pair, grade=1, reason="read it twice ")
    assert again == first and _count(demo, "adjudications") == 1
    adjudication.adjudicate(demo, SYSTEM, "demo", pair, grade=2, reason="read it twice")
    assert _count(demo, "adjudications") == 2


def test_an_adjudication_retry_with_its_request_id_returns_the_first(demo, actors, disputed):
    projects.update_settings(demo, SYSTEM, "demo", allow_self_adjudication=True)
    rita = actors["rita"]
    first = adjudication.adjudicate(demo, rita, "demo", disputed[0], grade=1, reason="first", request_id="a1")
    adjudication.adjudicate(demo, rita, "demo", disputed[0], grade=2, reason="second", request_id="a2")
    retry = adjudication.adjudicate(demo, rita, "demo", disputed[0], grade=1, reason="first", request_id="a1")
    assert (retry.grade, retry.reason, retry.created_at) == (first.grade, first.reason, first.created_at)
    assert _count(demo, "adjudications") == 2


def test_a_reviewer_may_not_adjudicate_a_pair_they_labelled(demo, actors, disputed):
    rita, pair = actors["rita"], disputed[0]
    info = gate.disagreements(demo, SYSTEM, "demo")[0]
    with pytest.raises(
        PermissionDenied,
        match=re.escape(
            f"rita labelled {info.query_id} {info.doc_id} (pair {pair}) and may not adjudicate it; project "
            "'demo' does not allow self-adjudication (setting allow_self_adjudication)"
        ),
    ):
        adjudication.adjudicate(demo, rita, "demo", pair, grade=1, reason="I know best")
    assert _count(demo, "adjudications") == 0
    adjudication.adjudicate(demo, actors["admin"], "demo", pair, grade=1, reason="an admin who did not judge")
    assert _count(demo, "adjudications") == 1


def test_allowed_self_adjudication_is_audited(demo, actors, disputed):
    projects.update_settings(demo, SYSTEM, "demo", allow_self_adjudication=True)
    assert projects.get_project(demo, SYSTEM, "demo").settings.allow_self_adjudication is True
    adjudication.adjudicate(demo, actors["rita"], "demo", disputed[0], grade=1, reason="my own call")
    adjudication.adjudicate(demo, actors["admin"], "demo", disputed[1], grade=1, reason="not mine")
    entries = audit.audit_log(demo, SYSTEM, action="adjudicated")
    assert [(e.actor, e.details.get("self_adjudication")) for e in entries] == [
        ("admin", None),
        ("rita", True),
    ]


def test_the_setting_must_be_a_bool(demo):
    with pytest.raises(InvalidInput, match="^allow_self_adjudication must be a bool; got 'yes'$"):
        projects.update_settings(demo, SYSTEM, "demo", allow_self_adjudication="yes")
