"""The store as the judge client's cache: a label is keyed on the judge, its prompt hash and settings,
the query and the document version, so a rerun sends nothing and an interrupted run continues where it
stopped (each answer is committed as it arrives)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from sqlalchemy.exc import IntegrityError

from annotate_app.judges import (
    Backend,
    FailureKind,
    JudgeResult,
)
from annotate_app.services.inputs import MAX_REASON, cut
from annotate_app.store import judges as judges_store
from annotate_app.store.db import Database
from annotate_app.store.models import MachineJudge

__all__ = ["StoreCache"]


class StoreCache:
    """The judge client's cache (`annotate_app.judges.JudgeCache`) over the store: a hit is a stored label of
    the judge with that key; each answer is committed in its own short transaction as it arrives.

    ``pairs`` maps (query ID, document ID) to (pair id, document version) for the pairs of the run.
    """

    def __init__(
        self,
        db: Database,
        judge: MachineJudge,
        pairs: Mapping[tuple[str, str], tuple[int, int]],
        *,
        prompt_id: int | None = None,
        probe: bool = False,
    ):
        self._db, self._judge_id, self._name = db, judge.id, judge.name
        self._backend = Backend(judge.backend)
        self._pairs, self._prompt_id, self._probe = dict(pairs), prompt_id, probe
        self._ids = {pair_id: key for key, (pair_id, _) in self._pairs.items()}
        self._lock = threading.Lock()

    def get(self, key: str) -> JudgeResult | None:
        with self._db.read() as s:
            row = judges_store.cached_label(s, self._judge_id, key)
            if row is None:
                return None
            query_id, doc_id = self._ids.get(row.pair_id, ("?", "?"))
            return JudgeResult(
                query_id=query_id,
                doc_id=doc_id,
                judge=self._name,
                backend=self._backend,
                model=row.model,
                grade=row.grade,
                reason=row.reason,
                confidence=row.confidence,
                failure=FailureKind(row.failure) if row.failure else None,
                error=row.error,
                prompt_hash=row.prompt_hash,
                raw_response=row.raw_response,
                latency_s=row.latency_s,
                prompt_tokens=row.prompt_tokens,
                completion_tokens=row.completion_tokens,
                samples=row.samples,
                sample_grades=tuple(row.sample_grades or ()),
                reasoning=row.reasoning,
                answer_field=row.answer_field,
                aspects=dict(row.aspects or {}),
            )

    def put(self, key: str | None, result: JudgeResult) -> None:
        pair = self._pairs.get((result.query_id, result.doc_id))
        if pair is None:
            return
        fields = _label_fields(result)
        try:
            with self._lock, self._db.write() as s:
                judges_store.insert_label(
                    s,
                    judge_id=self._judge_id,
                    pair_id=pair[0],
                    prompt_id=self._prompt_id,
                    cache_key=key,
                    probe=self._probe,
                    doc_version=pair[1],
                    **fields,
                )
        except IntegrityError:  # a concurrent run stored the same answer first
            return

    def record(self, result: JudgeResult) -> None:
        """Store a failure the client does not cache (a rerun retries it), with its raw text, under no key."""
        if not result.cached and result.failure is not None and result.failure.retried:
            self.put(None, result)


def _label_fields(result: JudgeResult) -> dict[str, Any]:
    return {
        "grade": result.grade,
        "reason": cut(result.reason, MAX_REASON),  # a model's reply may say more: raw_response keeps it
        "confidence": result.confidence,
        "sample_grades": list(result.sample_grades),
        "failure": None if result.failure is None else str(result.failure),
        "error": result.error,
        "prompt_hash": result.prompt_hash[:64],
        "raw_response": result.raw_response,
        "model": result.model[:255],
        "latency_s": float(result.latency_s),
        "prompt_tokens": int(result.prompt_tokens),
        "completion_tokens": int(result.completion_tokens),
        "samples": max(int(result.samples), 0),
        "reasoning": result.reasoning,
        "answer_field": result.answer_field[:32],
        "aspects": dict(result.aspects),
    }
