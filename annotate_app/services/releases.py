"""Releases: immutable, versioned qrels snapshots with their provenance.

`create_release` (reviewer) refuses while a pair lacks labels, a label is stale, a disagreement is open, or
agreement is below the threshold without a justification. Nothing changes a release afterwards. Identical
qrels make no new release (``unchanged=True``). The content hash is the sha256 of the canonical TREC text,
followed by the `canonical_passages` lines of its evidence passages when it has any, then, under a model
aggregation (``aggregate=``, an `Aggregation`), the `canonical_aggregation` lines of its name, parameters and
posterior confidences. Machine labels enter only as a calibrated judge's fill-in, marked ``judge:NAME``;
such a qrel's passages are that judge label's located evidence (hashed as any passage), which the passages
export marks ``source: judge:NAME``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from annotate_app.services._context import ProjectRef, load_release, open_project
from annotate_app.services._evidence import judge_passages, qrel_passages
from annotate_app.services._gate_state import (
    GateState,
    agreement_table,
    compute_blockers,
    load_state,
    summarize,
)
from annotate_app.services._gate_types import Blockers
from annotate_app.services._judge_state import fill_state
from annotate_app.services.aggregations import (
    Aggregation,
    ModelGrades,
    canonical_aggregation,
    check_aggregation,
    model_grades,
)
from annotate_app.services.auth import Actor, Role, audit
from annotate_app.services.errors import Conflict, InvalidInput
from annotate_app.services.inputs import check_length, check_text
from annotate_app.services.passage_agreement import passage_block
from annotate_app.services.types import ReleaseInfo
from annotate_app.store import annotation, corpus, projects, release_passages
from annotate_app.store import releases as releases_store
from annotate_app.store.db import Database
from annotate_app.store.enums import AuditAction, QrelKind, Statistic
from annotate_app.store.models import Project, Release
from metrics.data import Qrels

__all__ = [
    "create_release",
    "preview_release",
    "ReleasePreview",
    "list_releases",
    "get_release",
    "release_qrels",
    "canonical_trec",
    "canonical_passages",
    "corpus_hash",
    "sha256_text",
    "MIN_JUSTIFICATION",
]

MIN_JUSTIFICATION = 20


@dataclass(frozen=True)
class ReleasePreview:
    """What `create_release` would do now: ``identical_to`` is the version of the release that already holds
    these qrels (then nothing would be created), else None and the release would be ``version``.
    ``blocked``: the hard blockers (a release is refused while any remains); ``below_threshold``: a
    justification would be required."""

    project: str
    version: int
    n_qrels: int
    content_hash: str
    identical_to: int | None
    blocked: tuple[str, ...]
    below_threshold: bool


def canonical_trec(query_ids, doc_ids, grades) -> str:
    """TREC qrels text sorted by (query, document) in code-point order (= UTF-8 byte order).

    >>> canonical_trec(["q2", "q1", "q1"], ["D1", "D9", "D10"], [1, 0, 3])
    'q1 0 D10 3\\nq1 0 D9 0\\nq2 0 D1 1\\n'
    """
    rows = sorted(zip(query_ids, doc_ids, (int(g) for g in grades), strict=True))
    return "".join(f"{a} 0 {b} {g}\n" for a, b, g in rows)


def canonical_passages(passages: list[tuple]) -> str:
    """The lines a release's content hash adds for its evidence passages, sorted: ``query_id<TAB>doc_id<TAB>
    doc_version<TAB>start<TAB>end<TAB>grade``; empty without passages (the hash is then the TREC text's).

    >>> canonical_passages([("q1", "D1", 2, 0, 5, 3)])
    'q1\\tD1\\t2\\t0\\t5\\t3\\n'
    """
    return "".join("\t".join(map(str, p)) + "\n" for p in sorted(passages))


def sha256_text(text: str) -> str:
    """The hex sha256 of ``text`` encoded as UTF-8 (a release's content hash of its canonical TREC text).

    >>> sha256_text("")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def corpus_hash(rows: list[tuple[str, int, str]]) -> str:
    """sha256 over ``doc_id<TAB>version<TAB>content sha256`` lines, sorted by doc_id."""
    return sha256_text("".join(f"{d}\t{v}\t{h}\n" for d, v, h in sorted(rows)))


def _info(project: Project, r: Release) -> ReleaseInfo:
    return ReleaseInfo(
        project=project.name,
        version=r.version,
        created_by=r.created_by_name,
        created_at=r.created_at,
        statistic=Statistic(r.statistic),
        agreement_value=r.agreement_value,
        threshold=r.threshold,
        justification=r.justification,
        content_hash=r.content_hash,
        corpus_hash=r.corpus_hash,
        guidelines_version=r.guidelines_version,
        n_qrels=r.n_qrels,
        counts=dict(r.counts),
        annotators=tuple(r.annotators),
        agreement=dict(r.agreement),
        note=r.note,
        sources=dict(r.sources or {}),
        aggregation=dict(r.aggregation or _MAJORITY_RECORD),
    )


def _check_justification(justification: str | None, block: Blockers) -> str | None:
    if justification is not None and not isinstance(justification, str):
        raise InvalidInput(f"justification must be a string or None; got {type(justification).__name__}")
    text = (justification or "").strip()
    if block.below_threshold and len(text) < MIN_JUSTIFICATION:
        raise Conflict(
            f"{block.agreement_message}: a release needs a written justification of at least "
            f"{MIN_JUSTIFICATION} characters"
        )
    return text or None


def _qrels(state: GateState, external: dict[int, tuple[str, str]], model: ModelGrades | None) -> pd.DataFrame:
    """One row per complete pair: query_id, doc_id, grade, kind, label_ids, adjudication_id, pair_id,
    source, judge_label_id, confidence (plain Python values, ready to insert). With a ``model``, the pairs
    no reviewer adjudicated take its grade and confidence (``kind`` still says how the labels voted)."""
    v = state.complete
    grade = v["grade"].to_numpy().copy()
    confidence = np.full(len(v), None, dtype=object)
    if model is not None:
        voted = ~v["disagreement"].to_numpy()
        grade[voted] = model.grades.reindex(v.index).to_numpy()[voted]
        confidence[voted] = model.confidence.reindex(v.index).to_numpy()[voted].tolist()
    kind = np.where(
        v["unanimous"], QrelKind.UNANIMOUS, np.where(v["majority"], QrelKind.MAJORITY, QrelKind.ADJUDICATED)
    )
    adj = state.valid_adjudications().reindex(v.index)
    disagreeing = v["disagreement"].to_numpy()
    settled = disagreeing & adj["grade"].notna().to_numpy()  # a pair not yet adjudicated keeps its vote
    grade[settled] = adj["grade"].to_numpy()[settled]
    adj_ids = np.array(
        [i if d else None for i, d in zip(adj["id"].tolist(), disagreeing, strict=True)], object
    )
    ids = [external[int(p)] for p in v.index]
    return pd.DataFrame(
        {
            "query_id": [x[0] for x in ids],
            "doc_id": [x[1] for x in ids],
            "grade": grade,
            "kind": kind,
            "label_ids": v["label_state"].to_numpy(),
            "adjudication_id": adj_ids,
            "pair_id": v.index.to_numpy(),
            "source": ["human"] * len(ids),
            "judge_label_id": [None] * len(ids),
            "confidence": confidence,
        }
    )


def create_release(
    db: Database,
    actor: Actor,
    project: ProjectRef,
    *,
    justification: str | None = None,
    note: str = "",
    aggregate: Aggregation | str = Aggregation.MAJORITY,
) -> ReleaseInfo:
    """Freeze the accepted qrels into a new release (reviewer). Raises Conflict listing what blocks it.

    ``aggregate``: how labels become grades (`Aggregation`; the gate's blockers are the same for all). Qrels
    identical to an existing release's (same grades, same aggregation) create nothing: that release comes
    back with ``unchanged=True``, also when another reviewer created it at the same moment."""
    chosen = check_aggregation(aggregate)
    if justification is not None:
        check_length(check_text(justification, "justification"), "justification")
    note = check_length(check_text(note or "", "note"), "note")
    content_hash = ""
    try:
        with db.write(snapshot=True) as s:
            _, proj = open_project(s, actor, project, Role.REVIEWER, "create releases")
            state = load_state(s, proj, all_states=True)
            summary = summarize(state)
            filled, unfilled = fill_state(s, proj)
            block = compute_blockers(state, summary)
            block = dataclasses.replace(
                block,
                missing_labels=block.missing_labels - len(filled),
                unfilled=unfilled,
                passages=passage_block(s, proj),
            )
            if block.hard:
                raise Conflict("release blocked: " + "; ".join(block.hard))
            frozen = _frozen(s, proj, state, filled, chosen)
            content_hash = frozen.content_hash
            existing = releases_store.find_by_content(s, proj.id, content_hash)
            if existing is not None:
                return dataclasses.replace(_info(proj, existing), unchanged=True)
            text = _check_justification(justification, block)
            return _insert(s, actor, proj, state, frozen, summary.to_dict(), text, note)
    except IntegrityError:
        pass  # a concurrent release took the version or the content: read what it made
    same = _concurrent_twin(db, actor, project, content_hash)
    if same is None:
        raise Conflict("another release was created at the same time; try again")
    return same


def _concurrent_twin(
    db: Database, actor: Actor, project: ProjectRef, content_hash: str
) -> ReleaseInfo | None:
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "create releases")
        existing = releases_store.find_by_content(s, proj.id, content_hash)
        return None if existing is None else dataclasses.replace(_info(proj, existing), unchanged=True)


def preview_release(
    db: Database, actor: Actor, project: ProjectRef, *, aggregate: Aggregation | str = Aggregation.MAJORITY
) -> ReleasePreview:
    """What creating a release with ``aggregate`` would make now, without writing anything (reviewer)."""
    chosen = check_aggregation(aggregate)
    with db.read(snapshot=True) as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "create releases")
        state = load_state(s, proj, all_states=True)
        filled, unfilled = fill_state(s, proj)
        block = compute_blockers(state, summarize(state))
        block = dataclasses.replace(
            block,
            missing_labels=block.missing_labels - len(filled),
            unfilled=unfilled,
            passages=passage_block(s, proj),
        )
        frozen = _frozen(s, proj, state, filled, chosen)
        existing = releases_store.find_by_content(s, proj.id, frozen.content_hash)
        return ReleasePreview(
            project=proj.name,
            version=releases_store.next_version(s, proj.id),
            n_qrels=len(frozen.rows),
            content_hash=frozen.content_hash,
            identical_to=None if existing is None else existing.version,
            blocked=tuple(block.hard),
            below_threshold=bool(block.below_threshold),
        )


@dataclass(frozen=True)
class _Frozen:
    """The qrels a release would hold: rows in canonical order (query_id, doc_id, grade, kind, label_ids,
    adjudication_id, pair_id, source, judge_label_id, confidence), the pairs behind them, the aggregation's
    record and the content hash."""

    rows: list[tuple]
    qrels: pd.DataFrame
    content_hash: str
    aggregation: dict
    passages: list[tuple] = dataclasses.field(default_factory=list)


_MAJORITY_RECORD = {"name": Aggregation.MAJORITY.value, "parameters": {}}


def _frozen(
    s: Session, proj: Project, state: GateState, filled: pd.DataFrame, aggregate: Aggregation
) -> _Frozen:
    model = model_grades(aggregate, agreement_table(state), list(state.settings.grades))
    human = _qrels(state, annotation.pair_external_ids(s, proj.id), model)
    qrels = pd.concat([human, filled], ignore_index=True) if len(filled) else human
    names = ("query_id", "doc_id", "grade", "kind", "label_ids", "adjudication_id", "pair_id", "source")
    confidence = [
        None if c is None or c != c else float(c) for c in qrels.get("confidence", [None] * len(qrels))
    ]
    columns = [*(qrels[c].tolist() for c in (*names, "judge_label_id")), confidence]
    rows = sorted(zip(*columns, strict=True))  # canonical order: (query, document) is unique
    content = "".join(f"{a} 0 {b} {int(g)}\n" for a, b, g, *_ in rows)
    adjudicated = annotation.latest_passage_adjudications(s, proj.id)
    passages = qrel_passages(
        s, [(a, b, int(g), ids, int(p)) for a, b, g, _, ids, _, p, *_ in rows], adjudicated
    )
    filled_by = [(a, b, int(g), int(m)) for a, b, g, *_, m, _ in rows if m is not None and m == m]
    passages = sorted(passages + judge_passages(s, filled_by))  # a filled qrel: its judge's evidence
    content += canonical_passages(passages)
    record = _record(aggregate, state, model)
    content += canonical_aggregation(record, [(a, b, c) for a, b, *_, c in rows if c is not None])
    return _Frozen(
        rows=rows, qrels=qrels, content_hash=sha256_text(content), aggregation=record, passages=passages
    )


def _record(aggregate: Aggregation, state: GateState, model: ModelGrades | None) -> dict:
    """What the release records of its aggregation: name and parameters (both hashed) and, for a model,
    ``changed``: the pairs whose grade differs from the vote (unanimous or majority) of their labels."""
    if aggregate == Aggregation.MAJORITY:
        return dict(_MAJORITY_RECORD)
    record: dict = {"name": aggregate.value, "parameters": aggregate.parameters}
    voted = state.complete[~state.complete["disagreement"].to_numpy()]
    if model is not None:
        fitted = model.grades.reindex(voted.index).to_numpy()
        record["changed"] = int((fitted != voted["grade"].to_numpy()).sum())
    return record


def _insert(
    s: Session,
    actor: Actor,
    proj: Project,
    state: GateState,
    frozen: _Frozen,
    figures: dict,
    justification: str | None,
    note: str,
) -> ReleaseInfo:
    qrels, rows = frozen.qrels, frozen.rows
    used = state.labels[state.labels["pair_id"].isin(qrels["pair_id"])]["annotator_id"].unique()
    counts = {k.value: int((qrels["kind"] == k).sum()) for k in QrelKind.human()}
    counts["excluded"] = int(state.pairs["excluded"].sum())
    release = releases_store.insert_release(
        s,
        project_id=proj.id,
        version=releases_store.next_version(s, proj.id),
        note=note,
        statistic=figures["statistic"],
        agreement_value=figures["value"],
        threshold=figures["threshold"],
        agreement=figures,
        annotators=sorted(state.names[int(a)] for a in used),
        counts=counts,
        corpus_hash=corpus_hash(corpus.corpus_rows(s, proj.id)),
        guidelines_version=projects.guidelines_version(s, proj.id),
        justification=justification,
        content_hash=frozen.content_hash,
        n_qrels=len(rows),
        sources={str(k): int(v) for k, v in qrels["source"].value_counts().sort_index().items()},
        aggregation=frozen.aggregation,
        created_by=actor.user_id,
        created_by_name=actor.username,
    )
    releases_store.insert_qrels(
        s,
        [
            {
                "release_id": release.id,
                "pair_id": int(p),
                "query_external": a,
                "doc_external": b,
                "grade": int(g),
                "kind": k,
                "label_ids": ids,
                "adjudication_id": None if j is None or j != j else int(j),
                "source": src,
                "judge_label_id": None if m is None or m != m else int(m),
                "confidence": c,
            }
            for a, b, g, k, ids, j, p, src, m, c in rows
        ],
    )
    release_passages.insert_passages(s, release.id, frozen.passages)
    audit(
        s,
        actor,
        AuditAction.RELEASE_CREATED,
        project_id=proj.id,
        target=f"{proj.name} v{release.version}",
        details={
            "content_hash": release.content_hash,
            "n_qrels": len(rows),
            "justification": justification,
            "aggregation": frozen.aggregation["name"],
        },
    )
    return _info(proj, release)


def list_releases(db: Database, actor: Actor, project: ProjectRef) -> list[ReleaseInfo]:
    """Every release of the project, oldest first (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see releases")
        return [_info(proj, r) for r in releases_store.releases(s, proj.id)]


def get_release(db: Database, actor: Actor, project: ProjectRef, version: int | None = None) -> ReleaseInfo:
    """One release (default: the latest) (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "see releases")
        return _info(proj, load_release(s, proj, version))


def release_qrels(db: Database, actor: Actor, project: ProjectRef, version: int | None = None) -> Qrels:
    """A release's qrels as `metrics.Qrels`, ready for `metrics.evaluate` (reviewer)."""
    with db.read() as s:
        _, proj = open_project(s, actor, project, Role.REVIEWER, "read releases")
        release = load_release(s, proj, version)
        rows = sorted(tuple(r[:3]) for r in releases_store.qrel_rows(s, release.id))
    return Qrels(
        [r[0] for r in rows],
        [r[1] for r in rows],
        np.array([r[2] for r in rows], dtype=np.int64),
        source=f"{proj.name} release {release.version}",
    )
