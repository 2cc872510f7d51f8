"""The store as the judge client's cache: a label is keyed on the judge, its prompt hash and settings,
the query and the document version, so a rerun sends nothing and an interrupted run continues where it
stopped (each answer is committed as it arrives). A graded answer's evidence is located in the text of the
judged document version as it is stored (`annotate_app.judges.locate_evidence`)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from sqlalchemy.exc import IntegrityError

from annotate_app.judges import (
    GIVEN,
    Backend,
    FailureKind,
    JudgeResult,
    QuoteEvidence,
    locate_evidence,
)
from annotate_app.services.inputs import MAX_REASON, cut
from annotate_app.store import judges as judges_store
from annotate_app.store.db import Database
from annotate_app.store.models import MachineJudge

__all__ = ["StoreCache"]


class StoreCache:
    """The judge client's cache (`annotate_app.judges.JudgeCache`) over the store: a hit is a stored label of
    the judge with that key; each answer is committed in its own short transaction as it arrives.

    ``pairs`` maps (query ID, document ID) to (pair id, document version) for the pairs of the run;
    ``texts`` pair id → the text of that version, where the evidence of an answer is located (a pair
    without one stores no evidence: the probes' changed documents).
    """

    def __init__(
        self,
        db: Database,
        judge: MachineJudge,
        pairs: Mapping[tuple[str, str], tuple[int, int]],
        *,
        prompt_id: int | None = None,
        probe: bool = False,
        texts: Mapping[int, str] | None = None,
    ):
        self._db, self._judge_id, self._name = db, judge.id, judge.name
        self._backend = Backend(judge.backend)
        self._pairs, self._prompt_id, self._probe = dict(pairs), prompt_id, probe
        self._ids = {pair_id: key for key, (pair_id, _) in self._pairs.items()}
        self._texts = dict(texts or {})
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
                **_stored_evidence(row.evidence_quotes),
            )

    def put(self, key: str | None, result: JudgeResult) -> None:
        pair = self._pairs.get((result.query_id, result.doc_id))
        if pair is None:
            return
        fields = _label_fields(result)
        text = self._texts.get(pair[0])
        if result.grade is not None and text is not None and (result.evidence or result.evidence_spans):
            found = locate_evidence(text, result.evidence, result.evidence_spans)
            fields["evidence"] = [list(span) for span in found.spans]
            fields["evidence_quotes"] = [q.to_dict() for q in found.quotes]
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


def _stored_evidence(items: Any) -> dict[str, Any]:
    """The ``evidence`` and ``evidence_spans`` of a result, from a stored label's ``evidence_quotes``."""
    quotes = [QuoteEvidence.from_dict(q) for q in items or ()]
    return {
        "evidence": tuple(q.quote for q in quotes if q.method != GIVEN),
        "evidence_spans": tuple(
            (q.start, q.end)
            for q in quotes
            if q.method == GIVEN and q.start is not None and q.end is not None
        ),
    }
