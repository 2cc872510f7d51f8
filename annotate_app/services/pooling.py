"""The pool of pairs to judge: TREC-style depth-k pooling, pairs added by hand, exclusions.

Pooling adds the union of each query's top ``depth`` documents of the chosen runs (trec_eval order), records
every run as a source, caps a query at ``budget`` pairs (best first) and adds nothing twice. Exclusion takes
a pair out of the queue, agreement and releases, and frees its unlabelled claims.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput, NotFound
from annotate_app.services.inputs import check_count, check_length, check_text
from annotate_app.services.types import PairInfo, PoolReport
from annotate_app.store import annotation, corpus
from annotate_app.store import pool as pool_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction, PairOrigin
from annotate_app.store.models import Pair, Project, utcnow

__all__ = ["pool", "add_pair", "exclude_pair", "include_pair", "get_pair_info", "list_pairs", "pool_depth"]


def pool(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    *,
    depth: int,
    runs: Sequence[str] | None = None,
    budget: int | None = None,
    skip_prior: bool = False,
) -> PoolReport:
    """Pool the top ``depth`` of ``runs`` (default: every run of the project) into the pairs to judge (admin).

    >>> # pool(db, SYSTEM, "demo", depth=3)  -> PoolReport(added=12, ...) on the sample corpus
    """
    check_count(depth, "depth")
    check_count(budget, "budget", optional=True)
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.ADMIN, "pool runs")
        chosen = _runs(s, proj, runs)
        top = pd.DataFrame(
            pool_store.run_top(s, list(chosen.values()), depth),
            columns=["run_id", "query_id", "document_id", "rank"],
        )
        if skip_prior and len(top):
            prior = pool_store.prior_keys(s, proj.id)
            top = top[[k not in prior for k in zip(top.query_id, top.document_id, strict=True)]]
        existing = pool_store.pair_index(s, proj.id)
        new, over = _select_new(top, existing, budget)
        pool_id = pool_store.insert_pool(
            s,
            project_id=proj.id,
            depth=depth,
            budget=budget,
            runs=sorted(chosen),
            n_added=len(new),
            created_by=actor.user_id,
        )
        added = _insert_pairs(s, proj.id, new, pool_id)
        _insert_sources(s, top, {**existing, **added}, list(chosen.values()), pool_id)
        report = _report(s, proj, sorted(chosen), depth, budget, new, top, existing, over)
        audit(
            s,
            actor,
            AuditAction.POOLED,
            project_id=proj.id,
            target=",".join(sorted(chosen)),
            details={"depth": depth, "budget": budget, "added": len(new), "over_budget": over},
        )
        return report


def _runs(s: Session, project: Project, names: Sequence[str] | None) -> dict[str, int]:
    known = {r.name: r.id for r in corpus.runs(s, project.id)}
    if names is None:
        if not known:
            raise Conflict(f"project {project.name!r} has no runs; import one first")
        return known
    if isinstance(names, str) or not names:
        raise InvalidInput(f"runs must be a non-empty list of run names; got {names!r}")
    missing = [n for n in names if n not in known]
    if missing:
        raise NotFound(
            f"run {missing[0]!r} does not exist in project {project.name!r} "
            f"(runs: {', '.join(sorted(known)) or 'none'})"
        )
    return {n: known[n] for n in names}


def _select_new(top: pd.DataFrame, existing: dict, budget: int | None) -> tuple[pd.DataFrame, int]:
    """The new (query_id, document_id) candidates, best first within each query, cut to the budget."""
    if top.empty:
        return pd.DataFrame({"query_id": [], "document_id": []}, dtype="int64"), 0
    cand = (
        top.groupby(["query_id", "document_id"], sort=False)
        .agg(best=("rank", "min"), n_runs=("run_id", "nunique"))
        .reset_index()
    )
    cand = cand[[k not in existing for k in zip(cand.query_id, cand.document_id, strict=True)]]
    cand = cand.sort_values(
        ["query_id", "best", "n_runs", "document_id"], ascending=[True, True, False, True], kind="stable"
    )
    if budget is None:
        return cand, 0
    have = pd.Series([qq for qq, _ in existing]).value_counts() if existing else pd.Series(dtype="int64")
    room = (budget - cand.query_id.map(have).fillna(0)).clip(lower=0)
    keep = cand.groupby("query_id").cumcount() < room
    return cand[keep.to_numpy()], int((~keep).sum())


def _insert_pairs(s: Session, project_id: int, new: pd.DataFrame, pool_id: int) -> dict:
    now = utcnow()
    rows = [
        {
            "project_id": project_id,
            "query_id": int(qq),
            "document_id": int(d),
            "origin": PairOrigin.POOL,
            "pool_id": pool_id,
            "note": "",
            "claimed": 0,
            "excluded": False,
            "created_at": now,
        }
        for qq, d in zip(new.query_id, new.document_id, strict=True)
    ]
    return pool_store.insert_pairs(s, project_id, rows) if rows else {}


def _insert_sources(s: Session, top: pd.DataFrame, pairs: dict, run_ids: list[int], pool_id: int) -> None:
    seen = pool_store.source_keys(s, run_ids)
    rows = []
    for run_id, qq, d, rank in top.itertuples(index=False):
        pair_id = pairs.get((qq, d))
        if pair_id is not None and (pair_id, run_id) not in seen:
            seen.add((pair_id, run_id))
            rows.append({"pair_id": pair_id, "run_id": int(run_id), "rank": int(rank), "pool_id": pool_id})
    pool_store.insert_sources(s, rows)


def _report(
    s: Session,
    project: Project,
    runs: list[str],
    depth: int,
    budget: int | None,
    new: pd.DataFrame,
    top: pd.DataFrame,
    existing: dict,
    over: int,
) -> PoolReport:
    names = {i: e for e, (i, _) in corpus.query_index(s, project.id).items()}
    counts = new.query_id.value_counts().sort_index()
    per_query = {names[int(k)]: int(v) for k, v in zip(counts.index.tolist(), counts.tolist(), strict=True)}
    pooled_before = len({k for k in zip(top.query_id, top.document_id, strict=True) if k in existing})
    return PoolReport(
        runs=tuple(runs),
        depth=depth,
        budget=budget,
        added=len(new),
        already_pooled=pooled_before,
        over_budget=over,
        per_query=per_query,
    )


# ------------------------------------------------------------------------------------------- by hand
def _find(s: Session, project: Project, query_id: str, doc_id: str) -> Pair:
    pair = pool_store.find_pair(s, project.id, query_id, doc_id)
    if pair is None:
        raise NotFound(f"pair ({query_id!r}, {doc_id!r}) is not in the pool of project {project.name!r}")
    return pair


def _info(s: Session, pair: Pair, query_id: str, doc_id: str) -> PairInfo:
    sources = tuple(pool_store.pair_sources(s, [pair.id]).get(pair.id, []))
    return PairInfo(
        pair_id=pair.id,
        query_id=query_id,
        doc_id=doc_id,
        origin=PairOrigin(pair.origin),
        excluded=bool(pair.excluded),
        sources=sources,
    )


def add_pair(
    db: Database, actor: Actor, project: ProjectRef, query_id: str, doc_id: str, *, note: str = ""
) -> PairInfo:
    """Add one pair by hand (reviewer or admin): origin ``manual``."""
    check_length(check_text(note, "note"), "note")
    check_text(query_id, "query_id")
    check_text(doc_id, "doc_id")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "add pairs")
        queries, docs = corpus.query_index(s, proj.id), corpus.doc_index(s, proj.id)
        if query_id not in queries:
            raise NotFound(f"query {query_id!r} does not exist in project {proj.name!r}")
        if doc_id not in docs:
            raise NotFound(f"document {doc_id!r} does not exist in project {proj.name!r}")
        if pool_store.find_pair(s, proj.id, query_id, doc_id) is not None:
            raise Conflict(f"pair ({query_id!r}, {doc_id!r}) is already in the pool")
        key = (queries[query_id][0], docs[doc_id][0])
        pool_store.insert_pairs(
            s,
            proj.id,
            [
                {
                    "project_id": proj.id,
                    "query_id": key[0],
                    "document_id": key[1],
                    "origin": PairOrigin.MANUAL,
                    "added_by": actor.user_id,
                    "note": note,
                    "claimed": 0,
                    "excluded": False,
                    "created_at": utcnow(),
                }
            ],
        )
        audit(
            s,
            actor,
            AuditAction.PAIR_ADDED,
            project_id=proj.id,
            target=f"{query_id} {doc_id}",
            details={"note": note},
        )
        return _info(s, _find(s, proj, query_id, doc_id), query_id, doc_id)


def exclude_pair(
    db: Database, actor: Actor, project: ProjectRef, query_id: str, doc_id: str, *, reason: str
) -> PairInfo:
    """Take a pair out of judging, agreement and releases (reviewer or admin); ``reason`` is required."""
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidInput("reason must be a non-empty string saying why the pair is excluded")
    check_length(check_text(reason, "reason").strip(), "reason")
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "exclude pairs")
        pair = _find(s, proj, query_id, doc_id)
        pool_store.set_excluded(s, pair.id, True, reason.strip(), actor.user_id)
        freed = annotation.expire_claims(s, proj.id, pair_ids=[pair.id])
        audit(
            s,
            actor,
            AuditAction.PAIR_EXCLUDED,
            project_id=proj.id,
            target=f"{query_id} {doc_id}",
            details={"reason": reason.strip(), "claims_freed": freed},
        )
        s.refresh(pair)
        return _info(s, pair, query_id, doc_id)


def include_pair(db: Database, actor: Actor, project: ProjectRef, query_id: str, doc_id: str) -> PairInfo:
    """Undo an exclusion (reviewer or admin)."""
    with db.write() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "include pairs")
        pair = _find(s, proj, query_id, doc_id)
        pool_store.set_excluded(s, pair.id, False, None, None)
        audit(s, actor, AuditAction.PAIR_INCLUDED, project_id=proj.id, target=f"{query_id} {doc_id}")
        s.refresh(pair)
        return _info(s, pair, query_id, doc_id)


def get_pair_info(db: Database, actor: Actor, project: ProjectRef, query_id: str, doc_id: str) -> PairInfo:
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see pairs")
        return _info(s, _find(s, proj, query_id, doc_id), query_id, doc_id)


def list_pairs(
    db: Database, actor: Actor, project: ProjectRef, *, limit: int = 100, offset: int = 0
) -> pd.DataFrame:
    """A page of the pool (reviewer): pair_id, query_id, doc_id, origin, excluded, claimed, labels,
    reasons."""
    check_count(limit, "limit")
    check_count(offset, "offset", 0)
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "list pairs")
        rows = pool_store.pair_listing(s, proj.id, limit=limit, offset=offset)
    return pd.DataFrame(
        rows,
        columns=[
            "pair_id",
            "query_id",
            "doc_id",
            "origin",
            "excluded",
            "claimed",
            "labels",
            "excluded_reason",
            "note",
        ],
    )


def pool_depth(db: Database, actor: Actor, project: ProjectRef) -> int | None:
    """The greatest depth the project was pooled at (reviewer); None when it was never pooled."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see the pool")
        return pool_store.deepest_pool(s, proj.id)
