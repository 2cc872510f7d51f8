"""The reports of ``score``, ``compare`` and ``check``, with their slices (``--by tag``) and fingerprints.

Each report is built by one function from explicit inputs (`score_document`, `compare_document`,
`check_document`), so ``verify`` (`annotate_app.cli._verify`) recomputes a report with the very code that
made it, from the options its fingerprint records (``parameters``) and the tags its ``slices`` section
keeps. Only the metrics library is used (no ``app`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

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
