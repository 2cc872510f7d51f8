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
    """The tag key a ``by`` setting slices on.

    Args:
        by: ``"tag"`` or ``"tag:KEY"``.

    Returns:
        ``KEY`` for ``"tag:KEY"``; None for ``"tag"``.

    Raises:
        QrelForgeError: ``by`` is neither form.

    >>> check_by("tag:lang"), check_by("tag")
    ('lang', None)
    """
    match = _BY.fullmatch(by) if isinstance(by, str) else None
    if match is None:
        raise QrelForgeError(f"by must be 'tag' or 'tag:KEY' (e.g. 'tag:lang'); got {quoted(by)}")
    return match[1]


def query_tags(queries: Any) -> dict[str, tuple[str, ...]]:
    """Each query's tags, checked by the rules of `metrics.formats.read_queries`.

    Args:
        queries: a queries file (path or open file), a `read_queries` DataFrame (its ``tags`` column; none:
            no query is tagged) or a mapping ``{query_id: [tag, ...]}``.

    Returns:
        ``{query_id: (tag, ...)}``.

    Raises:
        QrelForgeError: ``queries`` is of no accepted type, or a tag is malformed (names the query).

    >>> query_tags({"q1": ["head", "lang:en"], 2: []})
    {'q1': ('head', 'lang:en'), '2': ()}
    """
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
    """The positions in ``query_ids`` of each slice's queries.

    Args:
        query_ids: the queries, in the order of a result's rows.
        tags: as `query_tags` reads them.
        by: ``"tag"`` or ``"tag:KEY"`` (see the module doc).

    Returns:
        ``{slice: positions}``, slices sorted by name and `UNTAGGED` last.

    Raises:
        QrelForgeError: a bad ``by`` or tag.

    >>> {k: v.tolist() for k, v in query_slices(["q1", "q2", "q3"], {"q1": ["a"], "q2": ["a", "b"]}).items()}
    {'a': [0, 1], 'b': [1], '(untagged)': [2]}
    """
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
    """A result split into one result per slice of its queries (see the module doc).

    Args:
        result: a `metrics.evaluate.Result`.
        tags: as `query_tags` reads them.
        by: ``"tag"`` or ``"tag:KEY"``.

    Returns:
        ``{slice: Result of the slice's queries}``, ordered as `query_slices`.

    Raises:
        QrelForgeError: ``result`` is not a `Result`; a bad ``by`` or tag.
    """
    if not isinstance(result, Result):
        raise QrelForgeError(f"result must be a metrics.evaluate.Result; got {type(result).__name__}")
    return {name: result.take(rows) for name, rows in query_slices(result.query_ids, tags, by=by).items()}


def slice_table(
    results: Mapping[str, Result], tags: Mapping[str, Iterable[str]] | Any, *, by: str = "tag"
) -> pd.DataFrame:
    """The slices' means of several runs as one long table.

    Args:
        results: ``{run name: Result}``.
        tags: as `query_tags` reads them.
        by: ``"tag"`` or ``"tag:KEY"``.

    Returns:
        A DataFrame with one row per slice, run and measure: ``slice``, ``queries`` (in the slice), ``run``,
        ``measure``, ``mean`` (NaN where undefined) and ``n`` (the queries the mean is taken over).

    Raises:
        QrelForgeError: a bad ``by`` or tag.

    >>> from metrics.evaluate import evaluate
    >>> r = evaluate({"q1": {"D1": 1}, "q2": {"D2": 1}}, {"q1": ["D1"], "q2": ["D9", "D2"]}, ["RR"])
    >>> slice_table({"bm25": r}, {"q1": ["head"]}).to_dict("records")[0]
    {'slice': 'head', 'queries': 1, 'run': 'bm25', 'measure': 'RR', 'mean': 1.0, 'n': 1}
    """
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
