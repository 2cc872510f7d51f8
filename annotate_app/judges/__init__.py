"""Machine judges: pre-labelling relevance with LLMs (or a lexical baseline), tracked and never trusted blind.

A judge reads a (query, document) `Pair` and a `JudgeTask` (the `GradeScale`, each grade with its label and
definition, and the project's guidelines) and returns a `JudgeResult`: a grade, a reason and a confidence,
with provenance (prompt hash, raw response, latency, tokens, model, samples and their grades). A pair the
judge cannot grade is a result with a `FailureKind`, its raw text and the error, never a guessed grade and
never an exception that loses the other pairs.

Judges (`Judge` protocol, `Backend`; `BUILDERS` makes the runnable ones from a stored `JudgeSetup`):

- `OpenAIJudge`: an OpenAI-compatible chat completions endpoint (vLLM, llama.cpp, Ollama, LM Studio, SGLang,
  TGI, LiteLLM, OpenRouter, Groq, OpenAI, Azure, DashScope), with a built-in prompt (`BUILTIN_PROMPTS`: ours,
  or ``aspects``, intent and trust before the grade) or a `PromptTemplate` file, request parameters
  (``max_tokens``, ``temperature``, ``seed``, ``extra_body``) and adaptations to parameters a server refuses
  (`Adaptation`); reasoning kept apart from the answer (`split_think`), replies read by `parse_reply`;
- `ReplayJudge`: machine labels made elsewhere, read from JSONL by `read_machine_labels`;
- `LexicalJudge`: BM25 scores mapped to grades, offline (demo and tests);
- `EnsembleJudge`: other judges' grades combined (`Combine`: majority, mean, min), their answers kept.

`JudgeClient` runs a judge over many pairs: threads, a bounded in-flight window over a lazy iterator of
pairs, results yielded as they complete, a cache (`JudgeCache`: `MemoryCache`, `SQLiteCache`) so a rerun
sends nothing and an interrupted run resumes, running `Counts`, a progress callback (`TqdmProgress`) and a
dry run. Retries and timeouts of the HTTP judge: `RetryPolicy`.

Layering: this package may import `metrics` and the standard library (tqdm optionally, for the progress
bar), and nothing else of the app: never streamlit, sqlalchemy, or ``annotate_app.store``, ``services``,
``ui``, ``views`` or ``cli``. The services call it; storing results is theirs. (The one SQLite file here is a
standalone local cache for the client and benchmarks, not the app's database.)

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
