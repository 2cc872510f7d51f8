"""The judges' interface: what goes in (a pair, a grade scale, guidelines), what comes out (a result)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Backend",
    "FailureKind",
    "Grade",
    "GradeScale",
    "JudgeTask",
    "Pair",
    "RenderedPrompt",
    "JudgeResult",
    "Judge",
    "JudgeSetup",
    "sha256_text",
]


class Backend(StrEnum):
    """Where a judge's grades come from."""

    OPENAI = "openai"  # an OpenAI-compatible chat completions endpoint (vLLM, llama.cpp, Ollama, hosted)
    REPLAY = "replay"  # machine labels made elsewhere, read from JSONL
    LEXICAL = "lexical"  # BM25 scores mapped to grades, offline
    ENSEMBLE = "ensemble"  # other judges of the project, their grades combined


class FailureKind(StrEnum):
    """Why a result has no grade. A failure is recorded with its raw text, never replaced by a guess.

    Every kind is either an answer (the model replied and its reply holds no usable grade: cached like a
    grade, a rerun does not ask again) or a failure a rerun retries (`retried`: never cached). `stops_run`
    kinds end a run at once: every further request would fail the same way.
    """

    NO_GRADE = "no_grade"  # the reply holds no readable grade
    OUT_OF_SCALE = "out_of_scale"  # the reply's grade is not on the scale
    AMBIGUOUS = "ambiguous"  # the reply gives several different grades
    TRUNCATED = "truncated"  # finish_reason "length": a token limit cut the reply
    CONTENT_FILTER = (
        "content_filter"  # finish_reason "content_filter": the server's filter withheld the reply
    )
    REFUSAL = "refusal"  # the message's "refusal" field: the model declined
    FINISH_ERROR = "finish_error"  # finish_reason "error": generation failed on the server
    PROVIDER_ERROR = "provider_error"  # an error object in an HTTP 200 body (OpenRouter and other proxies)
    RATE_LIMITED = "rate_limited"  # 429 whose Retry-After is longer than the client's cap: the run stops
    QUOTA = (
        "quota"  # the account's quota or credit is spent (insufficient_quota): never retried, the run stops
    )
    BAD_RESPONSE = "bad_response"  # the HTTP body is not a chat completion (malformed JSON, no choices)
    HTTP_ERROR = "http_error"  # a 4xx other than 429, or 429/5xx still after the last attempt
    TIMEOUT = "timeout"  # no answer within the timeout, on every attempt
    CONNECTION = "connection_error"  # the server could not be reached, on every attempt
    NOT_FOUND = "not_found"  # the judge knows nothing of the pair (replay) or the document (lexical)
    ERROR = "error"  # the judge raised an unexpected exception for this pair

    @property
    def retried(self) -> bool:
        """Whether a rerun asks again (the failure is not an answer, so it is never cached)."""
        return self not in _ANSWERS

    @property
    def stops_run(self) -> bool:
        """Whether a run stops at once on this failure (the server said every request would fail)."""
        return self in (FailureKind.RATE_LIMITED, FailureKind.QUOTA)

    @classmethod
    def retried_kinds(cls) -> frozenset[FailureKind]:
        """The kinds a rerun retries."""
        return frozenset(k for k in cls if k.retried)


_ANSWERS = frozenset(
    {FailureKind.NO_GRADE, FailureKind.OUT_OF_SCALE, FailureKind.AMBIGUOUS, FailureKind.NOT_FOUND}
)


def sha256_text(text: str) -> str:
    """The hex sha256 of ``text`` encoded as UTF-8.

    >>> sha256_text("")[:16]
    'e3b0c44298fc1c14'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Grade:
    """One grade of a scale: its value, its short label and what it means (the definition a judge reads)."""

    value: int
    label: str
    definition: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.value, int) or isinstance(self.value, bool):
            raise ValueError(f"grade value must be an int; got {self.value!r}")
        if not isinstance(self.label, str) or not self.label.strip():
            raise ValueError(f"grade label must be a non-empty string; got {self.label!r}")
        if not isinstance(self.definition, str):
            raise ValueError(f"grade definition must be a string; got {self.definition!r}")


_DEFAULT_DEFINITIONS = (
    (0, "Not relevant", "The document has nothing to say about the query."),
    (1, "Related", "The document is about the query's topic, but it does not answer the query."),
    (
        2,
        "Partly answers",
        "The document answers part of the query, or answers it only vaguely; something the searcher "
        "needs is missing.",
    ),
    (3, "Fully answers", "The document is about the query and gives a complete, direct answer to it."),
)


@dataclass(frozen=True)
class GradeScale:
    """The grades a judge may give, in increasing order of relevance.

    >>> scale = GradeScale.from_labels([(0, "Not relevant"), (1, "Relevant")])
    >>> scale.values, 1 in scale, 2 in scale
    ((0, 1), True, False)
    >>> GradeScale.default().values
    (0, 1, 2, 3)
    """

    grades: tuple[Grade, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.grades, tuple) or not all(isinstance(g, Grade) for g in self.grades):
            raise ValueError(f"grades must be a tuple of Grade; got {self.grades!r:.200}")
        if len(self.grades) < 2:
            raise ValueError(f"grades must hold at least 2 grades; got {len(self.grades)}")
        values = [g.value for g in self.grades]
        if values != sorted(set(values)):
            raise ValueError(f"grades must have distinct values in increasing order; got {values}")

    @classmethod
    def from_labels(cls, labels: Iterable[tuple[int, str]], *, definitions: Mapping[int, str] | None = None):
        """A scale from ``(value, label)`` pairs (the app's grade scale), with optional definitions."""
        defs = dict(definitions or {})
        return cls(grades=tuple(Grade(value=v, label=lab, definition=defs.get(v, "")) for v, lab in labels))

    @classmethod
    def default(cls) -> GradeScale:
        """The 0-3 scale with our definitions (written for QrelForge, after TREC's 0-3 levels)."""
        return cls(
            grades=tuple(Grade(value=v, label=lab, definition=d) for v, lab, d in _DEFAULT_DEFINITIONS)
        )

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(g.value for g in self.grades)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value in self.values

    def describe(self) -> str:
        """One line per grade, highest first: ``3 = Fully answers: definition``."""
        return "\n".join(
            f"{g.value} = {g.label}" + (f": {g.definition}" if g.definition else "")
            for g in reversed(self.grades)
        )


@dataclass(frozen=True)
class JudgeTask:
    """What every pair of a run is judged against: the grade scale and the project's guidelines (Markdown)."""

    scale: GradeScale = field(default_factory=GradeScale.default)
    guidelines: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.scale, GradeScale):
            raise ValueError(f"scale must be a GradeScale; got {type(self.scale).__name__}")
        if not isinstance(self.guidelines, str):
            raise ValueError(f"guidelines must be a string; got {type(self.guidelines).__name__}")

    def as_json(self) -> str:
        """A canonical JSON form (for hashing)."""
        return json.dumps(
            {"scale": [asdict(g) for g in self.scale.grades], "guidelines": self.guidelines},
            sort_keys=True,
            ensure_ascii=False,
        )


@dataclass(frozen=True)
class Pair:
    """One (query, document) pair to judge. ``doc_version`` names the document's revision (e.g. the app's
    version number); when empty, the document's text hash stands for it in cache keys."""

    query_id: str
    query: str
    doc_id: str
    document: str
    doc_version: str = ""

    def __post_init__(self) -> None:
        for name in ("query_id", "query", "doc_id", "document", "doc_version"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ValueError(f"{name} must be a string; got {type(value).__name__} {value!r:.80}")
        for name in ("query_id", "doc_id"):
            if not getattr(self, name):
                raise ValueError(f"{name} must be a non-empty string; got ''")

    def version(self) -> str:
        """The document version used in cache keys: ``doc_version``, else ``sha256:`` of the text."""
        return self.doc_version or "sha256:" + sha256_text(self.document)


@dataclass(frozen=True)
class RenderedPrompt:
    """What a judge would send for one pair (a dry run): the prompt text and, for HTTP judges, the request."""

    judge: str
    prompt_hash: str
    text: str
    request: str = ""  # the JSON body of the HTTP request, "" for offline judges


@dataclass(frozen=True)
class JudgeResult:
    """A judge's answer for one pair, with its provenance. Exactly one of ``grade`` and ``failure`` is set.

    ``raw_response`` is the model's answer text (a JSON list of the texts when there are several samples), or
    the HTTP body of a failed request; ``reasoning`` the reasoning that came with it (a separate
    ``reasoning_content`` or ``reasoning`` field, or a ``<think>`` block of the content; a JSON list with
    several samples), kept as provenance and never read for the grade; ``answer_field`` the message field the
    answer was read from (``content``, or a reasoning field when the server left ``content`` empty);
    ``aspects`` what the reply says besides the grade and reason (the ``aspects`` prompt's intent and
    trust); ``evidence`` the quotes of the document the reply gives for its grade, as written (located in the
    document's text when the label is stored; see `annotate_app.judges.locate_evidence`) and
    ``evidence_spans`` the ``[start, end)`` spans a replayed label gives instead, in the text of the judged
    document version; ``latency_s`` covers every attempt and wait for the pair; ``requests`` counts the HTTP
    requests sent for it, ``retries`` those that were repeats after a failure; ``retry_after_s`` the wait a
    rate-limited server asked for.
    """

    query_id: str
    doc_id: str
    judge: str
    backend: Backend
    model: str
    grade: int | None
    reason: str = ""
    confidence: float | None = None
    failure: FailureKind | None = None
    error: str = ""
    prompt_hash: str = ""
    raw_response: str = ""
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    samples: int = 1
    sample_grades: tuple[int | None, ...] = ()
    requests: int = 0
    retries: int = 0
    cached: bool = False
    reasoning: str = ""
    answer_field: str = "content"
    aspects: Mapping[str, Any] = field(default_factory=dict)
    retry_after_s: float | None = None
    evidence: tuple[str, ...] = ()
    evidence_spans: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if (self.grade is None) == (self.failure is None):
            raise ValueError(
                f"a result has a grade or a failure, not both nor neither; got grade={self.grade!r}, "
                f"failure={self.failure!r}"
            )

    @property
    def ok(self) -> bool:
        return self.failure is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (enums as their values); `from_dict` reads it back."""
        out = asdict(self)
        out["sample_grades"] = list(self.sample_grades)
        out["aspects"] = dict(self.aspects)
        out["evidence"] = list(self.evidence)
        out["evidence_spans"] = [list(span) for span in self.evidence_spans]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeResult:
        values = dict(data)
        values["backend"] = Backend(values["backend"])
        values["failure"] = FailureKind(values["failure"]) if values.get("failure") else None
        values["sample_grades"] = tuple(values.get("sample_grades", ()))
        values["aspects"] = dict(values.get("aspects") or {})
        values["evidence"] = tuple(values.get("evidence") or ())
        values["evidence_spans"] = tuple((int(a), int(b)) for a, b in values.get("evidence_spans") or ())
        return cls(**values)


@runtime_checkable
class Judge(Protocol):
    """A machine judge. `judge` never raises for a pair's own trouble: it returns a failed result."""

    @property
    def name(self) -> str:
        """The judge's name, as the app lists it among the annotators (e.g. ``openai:qwen2.5-7b``)."""
        ...

    @property
    def backend(self) -> Backend: ...

    def fingerprint(self, task: JudgeTask) -> str:
        """A hash of everything besides the pair that decides the answer (prompt hash, model, settings);
        raises ValueError when the judge cannot work with ``task`` at all."""
        ...

    def render(self, pair: Pair, task: JudgeTask) -> RenderedPrompt:
        """What would be sent for ``pair``, sending nothing."""
        ...

    def judge(self, pair: Pair, task: JudgeTask) -> JudgeResult:
        """Judge one pair."""
        ...


def _no_corpus() -> Mapping[str, str]:
    return {}


@dataclass(frozen=True)
class JudgeSetup:
    """What the app stores of a judge, without the database: what a `Backend`'s builder reads.

    ``params``: the request parameters (``max_tokens``, ``timeout_s``, ``seed``, ``extra_body``; absent keys
    take the judge's defaults); ``adapted``: the adaptations made to its server in earlier runs (unknown
    names are dropped by the builder); ``prompt``: the template text of its latest prompt version (None:
    the default); ``corpus``: the project's documents ``{doc_id: text}``, read only by the builders that
    need them; ``members`` (an ensemble's): each member's backend and setup, in order; ``combine``: the
    ensemble's rule (`annotate_app.judges.Combine`).
    """

    name: str
    base_url: str = ""
    model: str = ""
    temperature: float = 0.0
    samples: int = 1
    params: Mapping[str, Any] = field(default_factory=dict)
    adapted: tuple[str, ...] = ()
    prompt: str | None = None
    corpus: Callable[[], Mapping[str, str]] = _no_corpus
    members: tuple[tuple[Backend, JudgeSetup], ...] = ()
    combine: str = "majority"
