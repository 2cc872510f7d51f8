"""Slices: per-query results split by query tags (``head``, ``intent:navigational``) and aggregated per slice.

``by="tag"`` makes one slice per tag, ``by="tag:KEY"`` one per value of ``KEY:value`` tags. A query is in
every matching slice, or in `UNTAGGED` (last). Each slice is `metrics.evaluate.Result.take` of its queries,
so its means equal `metrics.evaluate` on the qrels cut to the slice.

>>> from metrics.evaluate import evaluate
>>> r = evaluate({"q1": {"D1": 1}, "q2": {"D2": 1}, "q3": {"D3": 1}},
...              {"q1": ["D1"], "q2": ["D9", "D2"], "q3": ["D9"]}, ["RR"])
>>> tags = {"q1": ["head", "lang:en"], "q2": ["tail", "lang:zh"], "q3": ["tail", "lang:zh"]}
>>> {s: x.mean["RR"] for s, x in slice_results(r, tags).items()}
{'head': 1.0, 'lang:en': 1.0, 'lang:zh': 0.25, 'tail': 0.25}
>>> {s: (x.counts.evaluated, x.mean["RR"]) for s, x in slice_results(r, tags, by="tag:lang").items()}
{'en': (1, 1.0), 'zh': (2, 0.25)}
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import _tags
from metrics.errors import QrelForgeError, quoted
from metrics.evaluate import Result

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["UNTAGGED", "check_by", "query_tags", "query_slices", "slice_results", "slice_table"]

UNTAGGED = "(untagged)"  # no tag can be spelled so (tags hold no parentheses)
_BY = re.compile(rf"tag(?::({_tags._PART}))?")


def check_by(by: Any) -> str | None:
    """The key of ``by`` (``"tag:lang"`` → ``"lang"``), None for ``"tag"``; anything else is an error."""
    match = _BY.fullmatch(by) if isinstance(by, str) else None
    if match is None:
        raise QrelForgeError(f"by must be 'tag' or 'tag:KEY' (e.g. 'tag:lang'); got {quoted(by)}")
    return match[1]


def query_tags(queries: Any) -> dict[str, tuple[str, ...]]:
    """``{query_id: tags}`` from a queries file (path), a `read_queries` DataFrame (its ``tags`` column) or
    a mapping ``{query_id: [tag, ...]}``; every tag is checked (`metrics.formats.read_queries` rules)."""
    if isinstance(queries, str | os.PathLike) or hasattr(queries, "read"):
        from metrics.formats import read_queries

        queries = read_queries(queries)
    if hasattr(queries, "columns"):
        if "tags" not in queries.columns:
            return {str(q): () for q in queries["query_id"]}
        pairs: Iterable[tuple[Any, Any]] = zip(queries["query_id"], queries["tags"], strict=True)
        queries = {q: (() if t is None or t != t else t) for q, t in pairs}  # NaN: no tags field
    if not isinstance(queries, Mapping):
        raise QrelForgeError(
            f"tags must be a path, a DataFrame or a mapping {{query_id: [tag, ...]}}; got "
            f"{type(queries).__name__}"
        )
    out: dict[str, tuple[str, ...]] = {}
    for qid, tags in queries.items():
        tags = _tags.parse_tags(tags)
        reason = _tags.tag_problem(tags)
        if reason:
            raise QrelForgeError(f"query {quoted(qid)}: {reason}")
        out[str(qid)] = tuple(tags)
    return out


def _names(tags: Sequence[str], key: str | None) -> list[str]:
    if key is None:
        return list(tags)
    prefix = key + ":"
    return [t[len(prefix) :] for t in tags if t.startswith(prefix)]


def query_slices(
    query_ids: Sequence[str], tags: Mapping[str, Iterable[str]] | Any, *, by: str = "tag"
) -> dict[str, np.ndarray]:
    """``{slice: positions of its queries in query_ids}``, slices sorted by name, `UNTAGGED` last."""
    key = check_by(by)
    known = query_tags(tags)
    members: dict[str, list[int]] = {}
    for i, qid in enumerate(query_ids):
        for name in _names(known.get(qid, ()), key) or [UNTAGGED]:
            members.setdefault(name, []).append(i)
    order = sorted(n for n in members if n != UNTAGGED) + ([UNTAGGED] if UNTAGGED in members else [])
    return {n: np.array(members[n], dtype=np.intp) for n in order}


def slice_results(
    result: Result, tags: Mapping[str, Iterable[str]] | Any, *, by: str = "tag"
) -> dict[str, Result]:
    """``{slice: result of the slice's queries}`` (see the module doc); ``tags`` as `query_tags` reads."""
    if not isinstance(result, Result):
        raise QrelForgeError(f"result must be a metrics.evaluate.Result; got {type(result).__name__}")
    return {name: result.take(rows) for name, rows in query_slices(result.query_ids, tags, by=by).items()}


def slice_table(
    results: Mapping[str, Result], tags: Mapping[str, Iterable[str]] | Any, *, by: str = "tag"
) -> pd.DataFrame:
    """One row per slice, run and measure: ``slice``, ``queries`` (in the slice), ``run``, ``measure``,
    ``mean`` (NaN where undefined) and ``n`` (the queries it is taken over)."""
    import pandas as pd

    rows = []
    for run, result in results.items():
        for name, part in slice_results(result, tags, by=by).items():
            mean, n = part.mean, part.n
            rows += [
                {
                    "slice": name,
                    "queries": part.counts.evaluated,
                    "run": run,
                    "measure": m,
                    "mean": np.nan if mean[m] is None else mean[m],
                    "n": n[m],
                }
                for m in map(str, result.measures)
            ]
    return pd.DataFrame(rows, columns=["slice", "queries", "run", "measure", "mean", "n"])
