"""Text renderings of evaluation results: aligned table, JSON, CSV and trec_eval's three-column layout.

The numbers live in `metrics.evaluate.Result`; this module only formats them. CSV cells that a spreadsheet
would run as a formula are neutralized (`csv_safe`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from metrics._text import _fmt, _grid, _json_ready
from metrics.evaluate import Result
from metrics.measures import Measure

__all__ = ["score_output", "score_payload", "table", "to_json", "to_csv", "to_trec", "csv_safe"]

_NUMERIC = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_safe(value: Any) -> Any:
    """Prefix ``'`` to text a spreadsheet would run as a formula (leading ``= + - @``, tab or CR).

    Plain numbers such as ``-1.5`` are left alone.

    Args:
        value: a cell's value.

    Returns:
        ``value`` with ``'`` in front when it is such a text; anything else unchanged.

    >>> csv_safe('=HYPERLINK("http://x")'), csv_safe("-1.5"), csv_safe("q1")
    ('\\'=HYPERLINK("http://x")', '-1.5', 'q1')
    """
    if (
        isinstance(value, str)
        and value[:1] in ("=", "+", "-", "@", "\t", "\r")
        and not _NUMERIC.fullmatch(value)
    ):
        return "'" + value
    return value


def _notes(result: Result) -> str:
    c = result.counts
    note = (
        f"{result.name}: {c.evaluated} queries evaluated, {c.missing} missing from the run (scored 0), "
        f"{c.extra} extra in the run (ignored), {c.no_relevant} without relevant documents"
    )
    partial = [f"{k} over {n}" for k, n in result.n.items() if n != c.evaluated]
    return note + (f"; means taken {', '.join(partial)}" if partial else "") + "\n"


def table(results: Sequence[Result], measures: Sequence[Measure], *, per_query: bool = False) -> str:
    """An aligned text table: runs as rows, measures as columns, then a note per run on its query counts.

    Args:
        results: the runs' results, each named (``Result.name``).
        measures: the measures, in column order.
        per_query: also each query's values.

    Returns:
        The table, the notes and, with ``per_query``, a table per run of its queries' values.

    >>> from metrics.evaluate import evaluate
    >>> r = evaluate({"q1": {"D1": 1}, "q2": {"D2": 1}}, {"q1": ["D1", "D2"], "q2": ["D3"]}, ["P@2"])
    >>> r.name = "bm25"
    >>> print(table([r], r.measures).splitlines()[1])
    bm25  0.2500
    """
    names = [str(m) for m in measures]
    rows = [["run", *names]] + [[r.name or "run", *(_fmt(r.mean[n]) for n in names)] for r in results]
    out = _grid(rows) + "\n" + "".join(_notes(r) for r in results)
    if per_query:
        for r in results:
            body = [[q, *(_fmt(v[n]) for n in names)] for q, v in r.per_query_dict().items()]
            out += f"\n{r.name}\n" + _grid([["query", *names], *body])
    return out


def score_payload(
    results: Sequence[Result],
    measures: Sequence[Measure],
    *,
    per_query: bool = False,
    slices: Mapping[str, Any] | None = None,
    fingerprint: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON document of ``qrelforge score``, as plain Python values.

    Args:
        results: the runs' results, each named (``Result.name``).
        measures: the measures, in column order.
        per_query: also each query's values.
        slices: ``{"by": by, "tags": {query: tags}, "slices": {name: [Result per run]}}``, adding a
            ``slices`` section: each slice's query count and runs (their per-query values with
            ``per_query``).
        fingerprint: what the report was computed from (`metrics.fingerprint`), added as a ``fingerprint``
            section.

    Returns:
        ``{"measures": [...], "runs": [Result.to_dict() ...]}`` plus the optional sections; non-finite
        numbers become None.

    >>> from metrics.evaluate import evaluate
    >>> r = evaluate({"q1": {"D1": 1}, "q2": {"D2": 1}}, {"q1": ["D1", "D2"], "q2": ["D3"]}, ["P@2"])
    >>> r.name = "bm25"
    >>> score_payload([r], r.measures)["runs"][0]["mean"]
    {'P@2': 0.25}
    """
    payload: dict[str, Any] = {
        "measures": [str(m) for m in measures],
        "runs": [r.to_dict(per_query=per_query) for r in results],
    }
    if slices is not None:
        payload["slices"] = {
            "by": slices["by"],
            "tags": {q: list(t) for q, t in slices["tags"].items()},
            "slices": [
                {
                    "name": name,
                    "queries": parts[0].counts.evaluated if parts else 0,
                    "runs": [r.to_dict(per_query=per_query) for r in parts],
                }
                for name, parts in slices["slices"].items()
            ],
        }
    if fingerprint is not None:
        payload["fingerprint"] = dict(fingerprint)
    return _json_ready(payload)


def to_json(results: Sequence[Result], measures: Sequence[Measure], *, per_query: bool = False) -> str:
    """`score_payload` as indented JSON text.

    Args:
        results: the runs' results, each named (``Result.name``).
        measures: the measures, in column order.
        per_query: also each query's values.

    Returns:
        The JSON text, ending with a newline.

    >>> from metrics.evaluate import evaluate
    >>> r = evaluate({"q1": {"D1": 1}, "q2": {"D2": 1}}, {"q1": ["D1", "D2"], "q2": ["D3"]}, ["P@2"])
    >>> r.name = "bm25"
    >>> to_json([r], r.measures).splitlines()[:3]
    ['{', '  "measures": [', '    "P@2"']
    """
    payload = score_payload(results, measures, per_query=per_query)
    return json.dumps(payload, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def to_csv(results: Sequence[Result], measures: Sequence[Measure], *, per_query: bool = False) -> str:
    """The results as CSV: a row per run mean (query ``all``), after its queries' rows with ``per_query``.

    Undefined values are empty cells; run names and query IDs pass through `csv_safe`.

    Args:
        results: the runs' results, each named (``Result.name``).
        measures: the measures, in column order.
        per_query: also each query's values.

    Returns:
        The CSV text, with a header ``run,query_id,<measures>``.

    >>> from metrics.evaluate import evaluate
    >>> r = evaluate({"q1": {"D1": 1}, "q2": {"D2": 1}}, {"q1": ["D1", "D2"], "q2": ["D3"]}, ["P@2"])
    >>> r.name = "bm25"
    >>> print(to_csv([r], r.measures, per_query=True), end="")
    run,query_id,P@2
    bm25,q1,0.5
    bm25,q2,0.0
    bm25,all,0.25
    """
    names = [str(m) for m in measures]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["run", "query_id", *names])
    for r in results:
        if per_query:
            for q, v in r.per_query_dict().items():
                writer.writerow(
                    [csv_safe(r.name), csv_safe(q), *("" if v[n] is None else repr(v[n]) for n in names)]
                )
        writer.writerow(
            [csv_safe(r.name), "all", *("" if r.mean[n] is None else repr(r.mean[n]) for n in names)]
        )
    return buf.getvalue()


def to_trec(results: Sequence[Result], measures: Sequence[Measure], *, per_query: bool = False) -> str:
    """The results in trec_eval's layout: ``measure<TAB>query<TAB>value``.

    Each run starts with its ``runid`` and ``num_q`` lines; undefined per-query values are left out.

    Args:
        results: the runs' results, each named (``Result.name``).
        measures: the measures, in column order.
        per_query: also each query's values.

    Returns:
        The lines, each ending with a newline.

    >>> from metrics.evaluate import evaluate
    >>> r = evaluate({"q1": {"D1": 1}, "q2": {"D2": 1}}, {"q1": ["D1", "D2"], "q2": ["D3"]}, ["P@2"])
    >>> r.name = "bm25"
    >>> to_trec([r], r.measures).splitlines()[-1].split()
    ['P@2', 'all', '0.2500']
    """
    names = [str(m) for m in measures]
    lines = []
    for r in results:
        lines.append(f"{'runid':<22}\tall\t{r.name}")
        lines.append(f"{'num_q':<22}\tall\t{r.counts.evaluated}")
        if per_query:
            lines += [
                f"{n:<22}\t{q}\t{v[n]:.4f}"
                for q, v in r.per_query_dict().items()
                for n in names
                if v[n] is not None
            ]
        lines += [f"{n:<22}\tall\t{_fmt(r.mean[n])}" for n in names]
    return "\n".join(lines) + "\n"


_RENDERERS = {"table": table, "json": to_json, "csv": to_csv, "trec": to_trec}


def score_output(
    results: Sequence[Result], measures: Sequence[Measure], *, fmt: str = "table", per_query: bool = False
) -> str:
    """Render results in one of the formats ``table``, ``json``, ``csv``, ``trec``.

    Args:
        results: the runs' results, each named (``Result.name``).
        measures: the measures, in column order.
        fmt: the format's name.
        per_query: also each query's values.

    Returns:
        The text of `table`, `to_json`, `to_csv` or `to_trec`.

    Raises:
        ValueError: ``fmt`` is none of these.

    >>> from metrics.evaluate import evaluate
    >>> r = evaluate({"q1": {"D1": 1}, "q2": {"D2": 1}}, {"q1": ["D1", "D2"], "q2": ["D3"]}, ["P@2"])
    >>> r.name = "bm25"
    >>> score_output([r], r.measures, fmt="csv").splitlines()[-1]
    'bm25,all,0.25'
    """
    if fmt not in _RENDERERS:
        raise ValueError(f"fmt must be one of {', '.join(_RENDERERS)}; got {fmt!r}")
    return _RENDERERS[fmt](results, measures, per_query=per_query)
