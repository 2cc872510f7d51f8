"""The reports of ``score``, ``compare`` and ``check`` with their slices (``--by tag``) and fingerprints, and
``verify``, which recomputes a JSON report from its fingerprint.

Each report is built by one function from explicit inputs (`score_document`, `compare_document`,
`check_document`), so ``verify`` recomputes a report with the very code that made it, from the options its
fingerprint records (``parameters``) and the tags its ``slices`` section keeps. Only the metrics library is
used (no ``app`` extra).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from annotate_app.cli._common import partitioned as _partitioned
from metrics.errors import QrelForgeError

__all__ = [
    "named_run_files",
    "Command",
    "Slicing",
    "slicing",
    "score_document",
    "score_fingerprint",
    "compare_reports",
    "compare_document",
    "render_compare",
    "check_results",
    "check_document",
    "verify",
    "Verdict",
]


class Command(StrEnum):
    """The commands whose JSON reports carry a fingerprint that ``verify`` can recompute."""

    SCORE = "score"
    COMPARE = "compare"
    CHECK = "check"


@dataclass(frozen=True)
class Slicing:
    """``--by`` and the tags it slices by: ``{query_id: tags}`` (from ``--queries FILE``, or the stored tags
    of a project's queries)."""

    by: str
    tags: dict[str, tuple[str, ...]]
    queries_file: str | None = None
    project: str | None = None

    def source(self, fp: dict[str, Any]) -> dict[str, Any]:
        """``fp`` with the project the tags were read from (``-p``) as its ``queries``."""
        if self.project is not None:
            fp["queries"] = {"project": self.project}
        return fp

    def section(self, slices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"by": self.by, "tags": {q: list(t) for q, t in self.tags.items()}, "slices": slices}


def slicing(
    by: str | None,
    queries: str | None,
    stored: Callable[[], tuple[str, Mapping[str, Any]]] | None = None,
) -> Slicing | None:
    """The slicing of ``--by BY --queries FILE``, or None without ``--by``. ``stored``: reads a project's
    name and ``{query_id: tags}`` (``-p PROJECT``), used when there is no ``--queries``."""
    from metrics.slices import check_by, query_tags

    if by is None:
        if queries is not None:
            raise QrelForgeError(f"--queries {queries!r} is only used with --by tag or --by tag:KEY")
        return None
    check_by(by)
    if queries is not None:
        return Slicing(by=by, tags=query_tags(queries), queries_file=queries)
    if stored is None:
        raise QrelForgeError(f"--by {by} needs --queries FILE or -p PROJECT")
    project, tags = stored()
    return Slicing(by=by, tags=query_tags(tags), project=project)


def _rules(
    strict: bool,
    corpus: str | None = None,
    chunk_map: str | None = None,
    digests: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    from metrics.fingerprint import file_sha256

    sha = digests or file_sha256
    return {
        "strict": strict,
        "corpus_sha256": sha(corpus) if corpus else None,
        "chunk_map_sha256": sha(chunk_map) if chunk_map else None,
    }


def _queries(n: int) -> str:
    return f"{n} quer{'y' if n == 1 else 'ies'}"


def _dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


# ------------------------------------------------------------------------------------------------ inputs
def named_run_files(paths: list[str]) -> dict[str, Any]:
    """Read run files, naming each by its tag; runs sharing a tag are named by their file names instead."""
    from metrics import read_run

    runs = [read_run(p) for p in paths]
    tags = [r.name for r in runs]
    names = [tag if tags.count(tag) == 1 else Path(p).name for tag, p in zip(tags, paths, strict=True)]
    names = [n if names.count(n) == 1 else p for n, p in zip(names, paths, strict=True)]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise QrelForgeError(f"run file {paths[i]!r} is given twice")
    return dict(zip(names, runs, strict=True))


# -------------------------------------------------------------------------------------------------- score
def score_fingerprint(
    qrels: Any,
    qrels_file: str,
    run_files: Sequence[str],
    results: Sequence[Any],
    measures: Sequence[Any],
    *,
    per_query: bool,
    strict: bool,
    cut: Slicing | None,
    corpus: str | None = None,
    chunk_map: str | None = None,
    digests: Callable[[str], str] | None = None,
    chunked: Any = None,
) -> dict[str, Any]:
    """The fingerprint of a score report; ``chunked``: the passages and chunking of chunk runs
    (`annotate_app.cli._chunk_runs.ChunkScoring`), whose files and F it records under ``passages``."""
    from metrics.fingerprint import file_sha256, fingerprint

    fp = fingerprint(
        qrels,
        [(r.name or path, path) for r, path in zip(results, run_files, strict=True)],
        measures,
        qrels_file=qrels_file,
        command=Command.SCORE,
        parameters={"per_query": per_query, "by": cut.by if cut else None},
        rules={**_rules(strict, corpus, chunk_map, digests), **(chunked.rules(digests) if chunked else {})},
        queries_file=cut.queries_file if cut else None,
        digests=digests or file_sha256,
    )
    return cut.source(fp) if cut else fp


def score_document(
    results: Sequence[Any],
    measures: Sequence[Any],
    *,
    per_query: bool,
    cut: Slicing | None,
    fingerprint: dict[str, Any] | None,
) -> dict[str, Any]:
    """The JSON document of ``score`` (`metrics.report.render.score_payload`)."""
    from metrics.report import render
    from metrics.slices import slice_results

    slices = None
    if cut is not None:
        by_slice: dict[str, list[Any]] = {}
        for r in results:
            for name, part in slice_results(r, cut.tags, by=cut.by).items():
                by_slice.setdefault(name, []).append(part)
        slices = {"by": cut.by, "tags": cut.tags, "slices": by_slice}
    return render.score_payload(
        results, measures, per_query=per_query, slices=slices, fingerprint=fingerprint
    )


def score_text(document: dict[str, Any], results: Sequence[Any], measures: Sequence[Any], fmt: str) -> str:
    """``score``'s table or CSV with one block (table) or a leading ``slice`` column (CSV) per slice."""
    from metrics.report import render
    from metrics.slices import slice_results

    measures = list(measures)
    section = document["slices"]
    tags, by = section["tags"], section["by"]
    names = [s["name"] for s in section["slices"]]
    parts = {name: [slice_results(r, tags, by=by)[name] for r in results] for name in names}
    if fmt == "csv":
        lines = ["slice," + render.to_csv(results, measures).splitlines()[0]]
        for name, rows in [("(all)", list(results)), *parts.items()]:
            lines += [
                f"{render.csv_safe(name)},{line}" for line in render.to_csv(rows, measures).splitlines()[1:]
            ]
        return "\n".join(lines) + "\n"
    out = render.table(results, measures)
    for name, rows in parts.items():
        out += f"\nslice {name} ({_queries(rows[0].counts.evaluated)}; --by {by})\n" + render.table(
            rows, measures
        )
    return out


# ------------------------------------------------------------------------------------------------ compare
@dataclass(frozen=True)
class CompareOptions:
    baseline: str | None = None
    tests: tuple[str, ...] = ("t", "permutation", "bootstrap")
    n_permutations: int = 10_000
    n_bootstrap: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    correction: str = "holm"
    strict: bool = False

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {**asdict(self), "tests": list(self.tests)}


def compare_reports(
    qrels_file: str,
    run_files: Sequence[str],
    measures: Sequence[Any],
    options: CompareOptions,
    *,
    cut: Slicing | None,
    corpus: str | None = None,
) -> tuple[Any, dict[str, Any]]:
    """The `metrics.compare.Report` of ``compare`` (its fingerprint set) and one per slice."""
    from metrics import read_qrels
    from metrics.compare import compare, slice_report
    from metrics.fingerprint import fingerprint

    qrels = read_qrels(qrels_file)
    runs = named_run_files(list(run_files))
    report = compare(
        qrels,
        runs,
        measures,
        baseline=options.baseline,
        tests=options.tests,
        n_permutations=options.n_permutations,
        n_bootstrap=options.n_bootstrap,
        seed=options.seed,
        alpha=options.alpha,
        correction=options.correction,
        corpus=corpus,
        strict=options.strict,
    )
    parts = slice_report(report, cut.tags, by=cut.by) if cut else {}
    report.fingerprint = fingerprint(
        qrels,
        list(zip(runs, run_files, strict=True)),
        report.measures,
        qrels_file=qrels_file,
        command=Command.COMPARE,
        parameters={**options.to_dict(), "baseline": report.baseline, "by": cut.by if cut else None},
        rules=_rules(options.strict, corpus),
        queries_file=cut.queries_file if cut else None,
    )
    if cut is not None:
        cut.source(report.fingerprint)
    return report, parts


def compare_document(report: Any, parts: Mapping[str, Any], cut: Slicing | None) -> dict[str, Any]:
    out = report.to_dict()
    fp = out.pop("fingerprint")
    if cut is not None:
        out["slices"] = cut.section(
            [
                {"name": name, "queries": len(p.query_ids), **p.to_dict(per_query=False)}
                for name, p in parts.items()
            ]
        )
    out["fingerprint"] = fp
    return out


def render_compare(
    report: Any, parts: Mapping[str, Any], cut: Slicing | None, fmt: str, max_queries: int
) -> str:
    """``compare``'s output: the report, then each slice's, then (Markdown, HTML) the fingerprint."""
    from metrics.fingerprint import fingerprint_html, fingerprint_markdown

    if fmt == "json":
        return _dumps(compare_document(report, parts, cut))
    fp, report.fingerprint = report.fingerprint, None
    titled = (
        [(f"Slice {name} ({_queries(len(p.query_ids))}; --by {cut.by})", p) for name, p in parts.items()]
        if cut
        else []
    )
    try:
        if fmt == "markdown":
            blocks = [report.to_markdown(max_queries=max_queries)]
            blocks += [p.to_markdown(max_queries=max_queries, title=title) for title, p in titled]
            return "\n".join([*blocks, fingerprint_markdown(fp)])
        if fmt == "html":
            page = report.to_html(max_queries=max_queries)
            bodies = [_body(p.to_html(max_queries=max_queries, title=title)) for title, p in titled]
            end = page.rindex("\n</body>")
            return page[:end] + "".join("\n" + b for b in [*bodies, fingerprint_html(fp)]) + page[end:]
        render = (lambda r: r.to_latex()) if fmt == "latex" else (lambda r: r.to_text())
        return "\n".join([render(report), *(f"{title}\n{render(p)}" for title, p in titled)])
    finally:
        report.fingerprint = fp


def _body(page: str) -> str:
    return page[page.index("<body>\n") + len("<body>\n") : page.rindex("\n</body>")]


# -------------------------------------------------------------------------------------------------- check
@dataclass(frozen=True)
class CheckOutcome:
    """The overall check and one per slice."""

    result: Any
    slices: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.result.passed and all(c.passed for c in self.slices.values())

    def failures(self) -> list[str]:
        out = [] if self.result.passed else [self.result.message()]
        return out + [f"slice {name}: {c.message()}" for name, c in self.slices.items() if not c.passed]

    def message(self) -> str:
        if self.passed:
            extra = f" in all {len(self.slices)} slices too" if self.slices else ""
            return self.result.message() + extra
        return "; ".join(self.failures())


def check_results(
    qrels_file: str,
    run_file: str,
    minimum: Sequence[str],
    maximum: Sequence[str],
    *,
    name: str | None,
    cut: Slicing | None,
) -> CheckOutcome:
    from metrics.checks import check_slices, check_thresholds

    result = check_thresholds(qrels_file, run_file, minimum=minimum, maximum=maximum)
    run = name or result.run or Path(run_file).name
    slices = (
        check_slices(qrels_file, run_file, cut.tags, by=cut.by, minimum=minimum, maximum=maximum)
        if cut
        else {}
    )
    return CheckOutcome(
        result=replace(result, run=run), slices={k: replace(c, run=run) for k, c in slices.items()}
    )


def check_document(
    outcome: CheckOutcome,
    qrels_file: str,
    run_file: str,
    minimum: Sequence[str],
    maximum: Sequence[str],
    *,
    name: str | None,
    cut: Slicing | None,
) -> dict[str, Any]:
    from metrics import read_qrels
    from metrics.checks import parse_threshold
    from metrics.fingerprint import fingerprint

    out = outcome.result.to_dict()
    if cut is not None:
        out["passed"] = outcome.passed
        out["slices"] = cut.section([{"name": k, **c.to_dict()} for k, c in outcome.slices.items()])
    out["fingerprint"] = fingerprint(
        read_qrels(qrels_file),
        [(outcome.result.run, run_file)],
        dict.fromkeys(str(parse_threshold(t)[0]) for t in [*minimum, *maximum]),
        qrels_file=qrels_file,
        command=Command.CHECK,
        parameters={
            "minimum": list(minimum),
            "maximum": list(maximum),
            "name": name,
            "by": cut.by if cut else None,
        },
        rules=_rules(False),
        queries_file=cut.queries_file if cut else None,
    )
    if cut is not None:
        cut.source(out["fingerprint"])
    return out


def check_text(outcome: CheckOutcome) -> str:
    out = outcome.result.to_text()
    for name, c in outcome.slices.items():
        out += f"\nslice {name}: " + c.to_text()
    return out


# ------------------------------------------------------------------------------------------------- verify
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
