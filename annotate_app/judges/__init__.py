"""Machine judges: relevance labels from LLMs (or a lexical baseline), with provenance, never trusted blind.

A `Judge` grades a `Pair` under a `JudgeTask` into a `JudgeResult` (grade, reason, confidence, provenance);
a pair it cannot grade is a result with a `FailureKind`, never a guess or an exception. `JudgeClient` runs
one judge over many pairs. Imports `metrics` and the standard library only, nothing else of the app.

>>> judge = LexicalJudge({"d1": "how to replace the battery", "d2": "return policy"})
>>> result = judge.judge(Pair(query_id="q1", query="replace battery", doc_id="d1", document=""), JudgeTask())
>>> result.grade, result.confidence, result.backend
(3, 1.0, <Backend.LEXICAL: 'lexical'>)
"""

from annotate_app.judges._backends import BUILDERS, Builder
from annotate_app.judges._cache import JudgeCache, MemoryCache, SQLiteCache, cache_key
from annotate_app.judges._client import Counts, JudgeClient, TqdmProgress
from annotate_app.judges._completion import split_think
from annotate_app.judges._ensemble import Combine, EnsembleJudge, combine_grades
from annotate_app.judges._errors import Adaptation, server_message
from annotate_app.judges._evidence import GIVEN, JudgeEvidence, QuoteEvidence, locate_evidence, merge_spans
from annotate_app.judges._http import RetryPolicy
from annotate_app.judges._lexical import LexicalJudge, grade_of
from annotate_app.judges._model import (
    Backend,
    FailureKind,
    Grade,
    GradeScale,
    Judge,
    JudgeResult,
    JudgeSetup,
    JudgeTask,
    Pair,
    RenderedPrompt,
    sha256_text,
)
from annotate_app.judges._openai import DEFAULT_API_KEY_ENV, RESERVED_BODY_KEYS, OpenAIJudge, check_extra_body
from annotate_app.judges._parse import Reply, Vote, majority, parse_reply
from annotate_app.judges._prompt import (
    ASPECTS_TEMPLATE,
    BUILTIN_PROMPTS,
    DEFAULT_MAX_DOCUMENT_CHARS,
    DEFAULT_TEMPLATE,
    PromptTemplate,
)
from annotate_app.judges._replay import MachineLabel, ReplayJudge, read_machine_labels

__all__ = [
    "Backend",
    "BUILDERS",
    "Builder",
    "JudgeSetup",
    "FailureKind",
    "Grade",
    "GradeScale",
    "JudgeTask",
    "Pair",
    "JudgeResult",
    "RenderedPrompt",
    "Judge",
    "sha256_text",
    "PromptTemplate",
    "DEFAULT_TEMPLATE",
    "DEFAULT_MAX_DOCUMENT_CHARS",
    "Reply",
    "Vote",
    "parse_reply",
    "majority",
    "RetryPolicy",
    "OpenAIJudge",
    "DEFAULT_API_KEY_ENV",
    "RESERVED_BODY_KEYS",
    "check_extra_body",
    "Adaptation",
    "server_message",
    "split_think",
    "ASPECTS_TEMPLATE",
    "BUILTIN_PROMPTS",
    "GIVEN",
    "JudgeEvidence",
    "QuoteEvidence",
    "locate_evidence",
    "merge_spans",
    "MachineLabel",
    "read_machine_labels",
    "ReplayJudge",
    "LexicalJudge",
    "EnsembleJudge",
    "Combine",
    "combine_grades",
    "grade_of",
    "JudgeCache",
    "MemoryCache",
    "SQLiteCache",
    "cache_key",
    "Counts",
    "JudgeClient",
    "TqdmProgress",
]
