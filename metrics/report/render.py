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

    Plain numbers such as ``-1.5`` are left alone. Non-strings are returned unchanged.

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
    """Runs as rows, measures as columns, then one note per run on the queries behind the means."""
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
    """The JSON document of ``score``: ``measures``, ``runs`` (`Result.to_dict`); with ``slices``
    (``{"by": by, "tags": {query: tags}, "slices": {name: [Result per run]}}``) a ``slices`` section (each
    slice's query count and runs, their per-query values when ``per_query``), with ``fingerprint`` (
    `metrics.fingerprint`) a ``fingerprint`` section."""
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
    payload = score_payload(results, measures, per_query=per_query)
    return json.dumps(payload, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def to_csv(results: Sequence[Result], measures: Sequence[Measure], *, per_query: bool = False) -> str:
    """One row per run mean (query ``all``) and with ``per_query`` per query; empty cells where undefined."""
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
    """trec_eval's layout: ``measure<TAB>query<TAB>value``; undefined per-query values are left out."""
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
    """Render results in one of ``table``, ``json``, ``csv``, ``trec``."""
    if fmt not in _RENDERERS:
        raise ValueError(f"fmt must be one of {', '.join(_RENDERERS)}; got {fmt!r}")
    return _RENDERERS[fmt](results, measures, per_query=per_query)
