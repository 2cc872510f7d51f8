"""``verify``: a JSON report's files checked against its fingerprint and every number recomputed with the
code that made it (`annotate_app.cli._reports`)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from annotate_app.cli._common import partitioned as _partitioned
from annotate_app.cli._reports import (
    Command,
    CompareOptions,
    Slicing,
    check_results,
    compare_document,
    compare_reports,
    score_document,
)
from metrics.errors import QrelForgeError

__all__ = ["verify", "Verdict", "recompute"]


@dataclass(frozen=True)
class Verdict:
    """What ``verify`` found: how many numbers it compared and those that differ (one line each)."""

    numbers: int
    differences: tuple[str, ...]

    @property
    def holds(self) -> bool:
        return not self.differences


def _read_report(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise QrelForgeError(f"REPORT {path}: cannot be read ({exc.strerror})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise QrelForgeError(f"REPORT {path}: not a JSON report ({str(exc)[:80]})") from None
    fp = data.get("fingerprint") if isinstance(data, dict) else None
    if not isinstance(fp, dict) or fp.get("command") not in tuple(Command):
        raise QrelForgeError(
            f"REPORT {path}: no fingerprint of score, compare or check (a JSON report made with "
            "--format json)"
        )
    return data


def _check_file(what: str, path: str, stored: Mapping[str, Any], content: Any) -> None:
    """Refuse ``path`` when its hash is not the one the report was made from (the file's sha256, else the
    content hash of its canonical text)."""
    from metrics.fingerprint import file_sha256

    if not os.path.exists(path):
        raise QrelForgeError(f"{what} {path}: no such file")
    if stored.get("sha256"):
        key, here = "sha256", file_sha256(path)
    else:
        key, here = "content_sha256", content()
    if here != stored.get(key):
        raise QrelForgeError(
            f"{what} {path} differs from the file the report was made from ({key} {here[:16]}… here, "
            f"{str(stored.get(key))[:16]}… in the report)"
        )


def _check_inputs(fp: Mapping[str, Any], qrels_file: str, run_files: Sequence[str]) -> None:
    from metrics import read_qrels, read_run
    from metrics.fingerprint import qrels_sha256, run_sha256

    runs = fp.get("runs") or []
    if len(runs) != len(run_files):
        raise QrelForgeError(
            f"the report was made from {len(runs)} run{'s' if len(runs) != 1 else ''}; "
            f"got {len(run_files)} RUN"
            f"{'s' if len(run_files) != 1 else ''} (give them in the report's order)"
        )
    _check_file("QRELS", qrels_file, fp.get("qrels") or {}, lambda: qrels_sha256(read_qrels(qrels_file)))
    for path, stored in zip(run_files, runs, strict=True):
        _check_file("RUN", path, stored, lambda p=path: run_sha256(read_run(p)))


def _check_side_file(rules: Mapping[str, Any], flag: str, path: str | None) -> str | None:
    """``path`` (the value of ``--chunk-map`` or ``--corpus``) checked against the report's
    ``{chunk_map,corpus}_sha256``: a chunk map the report was made with is required (the numbers depend on
    it); a corpus is optional (it only refuses unknown documents), but one given must be the report's."""
    from metrics.fingerprint import file_sha256

    key = f"{flag.removeprefix('--').replace('-', '_')}_sha256"
    stored = rules.get(key)
    if path is None:
        if stored and flag == "--chunk-map":
            raise QrelForgeError(
                f"the report was made with --chunk-map (sha256 {str(stored)[:16]}…); pass the same file "
                "with --chunk-map FILE to recompute it"
            )
        return None
    if not stored:
        raise QrelForgeError(f"{flag} {path}: the report was made without {flag}")
    if not os.path.exists(path):
        raise QrelForgeError(f"{flag} {path}: no such file")
    here = file_sha256(path)
    if here != stored:
        raise QrelForgeError(
            f"{flag} {path} differs from the file the report was made from (sha256 {here[:16]}… here, "
            f"{str(stored)[:16]}… in the report)"
        )
    return path


def _cut(data: Mapping[str, Any], by: str | None) -> Slicing | None:
    if by is None:
        return None
    section = data.get("slices")
    if not isinstance(section, dict) or not isinstance(section.get("tags"), dict):
        raise QrelForgeError(f"the report was made with --by {by} but has no slices section with its tags")
    from metrics.slices import query_tags

    return Slicing(by=by, tags=query_tags(section["tags"]))


def recompute(
    data: Mapping[str, Any],
    qrels_file: str,
    run_files: Sequence[str],
    *,
    chunk_map: str | None = None,
    corpus: str | None = None,
    chunks: str | None = None,
    docs: str | None = None,
) -> dict[str, Any]:
    """The report recomputed from its fingerprint on these files (their hashes checked first); a score
    report made with ``--chunk-map`` (``--corpus``) is recomputed with ``chunk_map`` (``corpus``), whose
    sha256 must be the report's ``chunk_map_sha256`` (``corpus_sha256``); one made with ``--passages``
    (``qrels_file`` is then the passages file) with ``chunks`` (and ``docs``), checked alike."""
    from annotate_app.cli._chunk_runs import report_scoring
    from metrics import parse_measures, read_corpus, read_qrels
    from metrics.distributed import read_partitions
    from metrics.evaluate import evaluate

    fp = data["fingerprint"]
    _check_inputs(fp, qrels_file, run_files)
    rules = fp.get("semantics") or {}
    chunk_map = _check_side_file(rules, "--chunk-map", chunk_map)
    corpus = _check_side_file(rules, "--corpus", corpus)
    params = fp.get("parameters") or {}
    cut = _cut(data, params.get("by"))
    measures = parse_measures(fp["measures"])
    strict = bool(rules.get("strict"))
    chunked = report_scoring(rules, qrels_file if chunks or rules.get("passages") else None, chunks, docs)
    if chunked is not None:
        results = [chunked.score(p, measures, strict=strict) for p in run_files]
        return score_document(
            results, measures, per_query=bool(params.get("per_query")), cut=cut, fingerprint=None
        )
    if fp["command"] == Command.SCORE:
        qrels = read_qrels(qrels_file)
        docs = read_corpus(corpus) if corpus else None
        results = [
            evaluate(
                qrels,
                read_partitions(p) if _partitioned(p) else p,
                measures,
                strict=strict,
                corpus=docs,
                chunk_map=chunk_map,
            )
            for p in run_files
        ]
        return score_document(
            results, measures, per_query=bool(params.get("per_query")), cut=cut, fingerprint=None
        )
    if fp["command"] == Command.COMPARE:
        keys = CompareOptions.__dataclass_fields__
        options = CompareOptions(**{k: v for k, v in params.items() if k in keys})
        options = replace(options, tests=tuple(options.tests))
        report, parts = compare_reports(qrels_file, run_files, measures, options, cut=cut)
        return compare_document(report, parts, cut)
    outcome = check_results(
        qrels_file,
        run_files[0],
        params.get("minimum") or [],
        params.get("maximum") or [],
        name=params.get("name"),
        cut=cut,
    )
    out = outcome.result.to_dict()
    if cut is not None:
        out["passed"] = outcome.passed
        out["slices"] = cut.section([{"name": k, **c.to_dict()} for k, c in outcome.slices.items()])
    return out


def _numbers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every number (and null standing for an undefined number) in a report, with its path; booleans and
    text are not numbers, the fingerprint is not compared."""
    if isinstance(value, dict):
        for k, v in value.items():
            if not path and k == "fingerprint":
                continue
            yield from _numbers(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numbers(v, (*path, i))
    elif value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        yield path, value


def _describe(data: Mapping[str, Any], path: tuple[Any, ...]) -> str:
    """A number's place in words: ``P@10, run a, query q1``, ``P@10, run b, p_t``, ``slice head; RR, run a,
    mean``."""
    measures = set((data.get("fingerprint") or {}).get("measures") or [])
    node: Any = data
    where_slice = measure = run = query = None
    parent: Any = None
    for key in path:
        node = node[key] if isinstance(node, dict | list) else None
        if isinstance(key, int) and isinstance(node, dict):
            if parent == "slices":
                where_slice, run = node.get("name"), None
            elif "run" in node or "measure" in node:
                run, measure = node.get("run", run), node.get("measure", measure)
            elif parent == "runs":
                run = node.get("name")
        elif isinstance(key, str):
            if key in measures:
                measure = key
            elif parent == "per_query" and run is None:
                run, parent = key, "per_query_run"
                continue
            elif parent in ("per_query", "per_query_run"):
                query = key
            elif parent in ("means", "n", "counts") and run is None:
                run = key
        parent = key
    last = path[-1] if path else ""
    if query is not None:
        where = f"query {query}"
    elif "n" in path:
        where = "query count"
    elif last == measure or last in ("mean", "value"):
        where = "mean"
    else:
        where = str(last)
    text = ", ".join(x for x in (measure, f"run {run}" if run is not None else None, where) if x)
    return f"slice {where_slice}; {text}" if where_slice is not None else text


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def verify(
    report_file: str,
    qrels_file: str,
    run_files: Sequence[str],
    *,
    chunk_map: str | None = None,
    corpus: str | None = None,
    chunks: str | None = None,
    docs: str | None = None,
) -> Verdict:
    """Recompute ``report_file`` on the files (and the chunk map or corpus the report was scored with, or
    its chunks and documents) and compare every number (see the module doc)."""
    data = _read_report(report_file)
    fresh = recompute(
        data, qrels_file, run_files, chunk_map=chunk_map, corpus=corpus, chunks=chunks, docs=docs
    )
    stored = dict(_numbers(data))
    again = dict(_numbers(fresh))
    diffs = []
    for path, value in stored.items():
        new = again.get(path, "absent")
        if new == "absent" or not _same(value, new):
            diffs.append(f"{_describe(data, path)}: stored {value!r}, recomputed {new!r}")
    diffs += [
        f"{_describe(fresh, path)}: not in the report, recomputed {value!r}"
        for path, value in again.items()
        if path not in stored
    ]
    return Verdict(numbers=len(stored), differences=tuple(diffs))
