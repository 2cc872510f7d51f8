"""Scoring support for the Score page (reviewers): stored runs as `metrics.Run`, a BM25 baseline over the
project, the current labels for assessor sensitivity, and sending unjudged documents to the queue.

Everything needs the reviewer role. Scores come from `metrics` on a release's qrels, so the page agrees with
``qrelforge score``. `bm25_baseline` returns a run and stores nothing; `queue_pairs` adds ``manual`` pairs in
one transaction and reports the pooled and unknown ones.

>>> QueueReport(added=2, already_pooled=1, unknown=(("q9", "D1"),)).message
'2 pairs sent to the judging queue; 1 already in the pool; 1 unknown to the project (first: q9 D1)'
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import InvalidInput, NotFound
from annotate_app.services.inputs import check_length, check_text
from annotate_app.store import corpus as corpus_store
from annotate_app.store import pool
from annotate_app.store import scoring as scoring_store
from annotate_app.store.db import Database, unstorable
from annotate_app.store.enums import AuditAction, PairOrigin
from annotate_app.store.models import utcnow
from metrics.data import Run

__all__ = [
    "stored_run",
    "bm25_baseline",
    "label_table",
    "query_tags",
    "queue_pairs",
    "QueueReport",
    "MAX_QUEUE",
]

MAX_QUEUE = 10_000


@dataclass(frozen=True)
class QueueReport:
    """What `queue_pairs` did: ``added`` new pairs, ``already_pooled`` ones skipped, ``unknown`` (query, doc)
    pairs naming a query or document the project does not have."""

    added: int
    already_pooled: int
    unknown: tuple[tuple[str, str], ...] = ()

    @property
    def message(self) -> str:
        parts = [f"{self.added} pair{'s' if self.added != 1 else ''} sent to the judging queue"]
        if self.already_pooled:
            parts.append(f"{self.already_pooled} already in the pool")
        if self.unknown:
            first = " ".join(self.unknown[0])
            parts.append(f"{len(self.unknown)} unknown to the project (first: {first})")
        return "; ".join(parts)


def stored_run(db: Database, actor: Actor, project: ProjectRef, name: str) -> Run:
    """A run imported into the project, as a `metrics.Run` named ``name`` (reviewer).

    Its scores are the imported ones, so `metrics.evaluate` ranks it exactly as the original file.
    """
    name = check_text(name, "run name")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "read runs")
        run = corpus_store.find_run(s, proj.id, name)
        if run is None:
            raise NotFound(f"run {name!r} does not exist in project {proj.name!r}")
        rows = scoring_store.run_entries(s, run.id)
    return Run(
        [r[0] for r in rows],
        [r[1] for r in rows],
        np.array([r[2] for r in rows], dtype=np.float64),
        name=str(name),
        source=f"{proj.name} run {name}",
    )


def bm25_baseline(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    *,
    k: int = 100,
    k1: float = 1.5,
    b: float = 0.75,
    name: str = "bm25",
) -> Run:
    """A BM25 run over the project's documents and queries (reviewer); see the module doc.

    ``k``: documents kept per query (int >= 1); ``k1``, ``b``: BM25 parameters
    (`metrics.retrieval.bm25.BM25Index`).
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise InvalidInput(f"k must be an int >= 1; got {k!r}")
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "build a BM25 baseline")
        docs, queries = scoring_store.corpus_texts(s, proj.id), scoring_store.query_texts(s, proj.id)
    if not docs or not queries:
        raise InvalidInput(f"project {proj.name!r} needs documents and queries for a BM25 baseline")
    from metrics.retrieval.bm25 import BM25Index

    corpus = pd.DataFrame(docs, columns=["doc_id", "title", "text"])
    return BM25Index(corpus, k1=k1, b=b).run(dict(queries), k=int(k), name=name)


def label_table(db: Database, actor: Actor, project: ProjectRef) -> pd.DataFrame:
    """Every annotator's current label on the pairs not excluded (reviewer): columns ``query_id``, ``doc_id``,
    ``annotator``, ``grade`` — the input of `metrics.stats.sensitivity.assessor_sensitivity`."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "read labels")
        rows = scoring_store.label_table(s, proj.id)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "annotator", "grade"])
    return frame.astype({"grade": np.int64})


def query_tags(db: Database, actor: Actor, project: ProjectRef) -> dict[str, tuple[str, ...]]:
    """``{query_id: tags}`` of every query of the project (reviewer): the ``tags`` field of the queries file
    it was imported from (`metrics.slices` reads them; no tags: an empty tuple)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "read query tags")
        metas = scoring_store.query_metas(s, proj.id)
    return {qid: tuple(meta.get("tags") or ()) for qid, meta in sorted(metas.items())}


def _check_pairs(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    out: dict[tuple[str, str], None] = {}
    for item in pairs:
        ok = isinstance(item, tuple | list) and len(item) == 2 and all(isinstance(x, str) and x for x in item)
        if not ok or any(unstorable(x) for x in item):
            raise InvalidInput(f"pairs must be (query_id, doc_id) string pairs; got {item!r}")
        out[(item[0], item[1])] = None
    if not out:
        raise InvalidInput("pairs must name at least one (query_id, doc_id) pair")
    if len(out) > MAX_QUEUE:
        raise InvalidInput(f"pairs must hold at most {MAX_QUEUE} pairs at once; got {len(out)}")
    return list(out)


def queue_pairs(
    db: Database, actor: Actor, project: ProjectRef, pairs: Iterable[tuple[str, str]], *, note: str = ""
) -> QueueReport:
    """Add ``pairs`` (query ID, document ID) to the pool as manual pairs to judge (reviewer); see the module
    doc.

    ``note`` (e.g. "unjudged in bm25's top 10") is kept with each pair and in the audit entry.
    """
    wanted = _check_pairs(pairs)
    text = check_length(check_text(note or "", "note"), "note")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "add pairs")
        queries, docs = corpus_store.query_index(s, proj.id), corpus_store.doc_index(s, proj.id)
        unknown = tuple(p for p in wanted if p[0] not in queries or p[1] not in docs)
        keys = [(queries[a][0], docs[b][0]) for a, b in wanted if a in queries and b in docs]
        existing = pool.pair_index(s, proj.id)
        new = [key for key in keys if key not in existing]
        now = utcnow()
        rows = [
            {
                "project_id": proj.id,
                "query_id": a,
                "document_id": b,
                "origin": PairOrigin.MANUAL,
                "added_by": actor.user_id,
                "note": text,
                "claimed": 0,
                "excluded": False,
                "created_at": now,
            }
            for a, b in new
        ]
        if rows:
            pool.insert_pairs(s, proj.id, rows)
        report = QueueReport(added=len(new), already_pooled=len(keys) - len(new), unknown=unknown)
        audit(
            s,
            actor,
            AuditAction.PAIRS_QUEUED,
            project_id=proj.id,
            target=proj.name,
            details={
                "added": report.added,
                "already_pooled": report.already_pooled,
                "unknown": len(unknown),
                "note": text,
            },
        )
        return report
