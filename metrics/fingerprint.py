"""Fingerprints: what a report was computed from, so that its numbers can be checked again later.

A fingerprint is a JSON-ready dict that every report of ``qrelforge score``, ``compare`` and ``check`` (and
every download of the Score page) carries:

- ``tool``: ``qrelforge`` and its installed version (``importlib.metadata``; ``unknown`` when not installed);
- ``command`` and its ``parameters`` (thresholds, tests, seed, slices...): enough to recompute the report;
- ``qrels``: their source, ``content_sha256`` (sha256 of the canonical TREC text ``qid 0 docid grade`` sorted
  by query then document ID, which is a release's content hash), the release version when they come from a
  release, and the file's ``sha256`` when from a file;
- ``runs``: per run its name, file and the file's ``sha256`` (a run held as partitions: sha256 of the sorted
  ``sha256  name`` lines of its files), or the ``content_sha256`` of its canonical TREC text when not from a
  file;
- ``measures``: the parsed specs as canonical text (``P(rel=2)@5``);
- ``semantics``: the rules in force (`semantics`).

``qrelforge verify REPORT.json QRELS RUN...`` reads it back, checks the hashes and recomputes every number.

>>> fp = fingerprint({"q1": {"D1": 2}}, {"a": {"q1": ["D1"]}}, ["P(rel=2)@5", "nDCG@10"])
>>> fp["measures"], fp["qrels"]["content_sha256"][:12], fp["semantics"]["relevance_level"]
(['P(rel=2)@5', 'nDCG@10'], '97112795cf42', {'P(rel=2)@5': 2, 'nDCG@10': 1})
>>> fp["semantics"]["undefined_without_relevant_documents"]
['nDCG@10']
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from metrics._text import _e, _json_ready
from metrics.data import Qrels, Run
from metrics.errors import QrelForgeError
from metrics.measures import Measure, parse_measures

__all__ = [
    "FINGERPRINT_KEY",
    "tool_version",
    "file_sha256",
    "FileDigests",
    "qrels_sha256",
    "run_sha256",
    "semantics",
    "fingerprint",
    "fingerprint_markdown",
    "fingerprint_html",
]

FINGERPRINT_KEY = "fingerprint"
_BLOCK = 1 << 20


def tool_version() -> str:
    """The installed version of the ``qrelforge`` distribution.

    Returns:
        The version string, or ``"unknown"`` when the distribution is not installed.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("qrelforge")
    except PackageNotFoundError:
        return "unknown"


def _sha_of_file(path: str) -> str:
    """Read into one reused buffer (a fresh block per read grows the heap) of 1 MB: a thread hashing a file
    takes the GIL back twice per block, so blocks much smaller make a busy main thread yield it more often."""
    digest, buffer = hashlib.sha256(), bytearray(_BLOCK)
    view = memoryview(buffer)
    with open(path, "rb", buffering=0) as f:
        while size := f.readinto(buffer):
            digest.update(view[:size])
    return digest.hexdigest()


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file, or of a directory or glob of files (a partitioned run).

    Args:
        path: a file, a directory, or a glob pattern.

    Returns:
        The hex sha256 of the file; for a directory or glob, the sha256 of the ``sha256  name`` lines of its
        files, sorted by name.

    Raises:
        QrelForgeError: ``path`` is neither a file nor a directory or glob holding files.
    """
    path = os.fspath(path)
    if os.path.isfile(path):
        return _sha_of_file(path)
    files = (
        sorted(os.path.join(path, f) for f in os.listdir(path))
        if os.path.isdir(path)
        else sorted(glob.glob(path))
    )
    files = [f for f in files if os.path.isfile(f)]
    if not files:
        raise QrelForgeError(f"{path!r} is not a file, nor a directory or glob holding files")
    lines = "".join(f"{_sha_of_file(f)}  {os.path.basename(f)}\n" for f in files)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


class FileDigests:
    """The `file_sha256` of files, computed on a background thread from the moment it is made.

    Made before the files are read and scored, it overlaps the fingerprint's hashing with that work on a
    second core (reading and hashing release the GIL) instead of adding it after. Called with a path, it
    returns that path's digest, waiting for the thread; a path it was not given is hashed then. A file that
    cannot be hashed raises on the caller's thread, as `file_sha256` does.

    Args:
        paths: the files (directories, globs) to hash, in order.
    """

    def __init__(self, paths: Iterable[str | os.PathLike[str]]):
        self._paths = list(dict.fromkeys(os.fspath(p) for p in paths))
        self._done: dict[str, str | Exception] = {}
        self._thread = threading.Thread(target=self._hash_all, name="qrelforge-sha256", daemon=True)
        self._thread.start()

    def _hash_all(self) -> None:
        for path in self._paths:
            try:
                self._done[path] = file_sha256(path)
            except Exception as exc:  # handed to the caller's thread by __call__
                self._done[path] = exc

    def __call__(self, path: str | os.PathLike[str]) -> str:
        """The sha256 of ``path`` (see `file_sha256`)."""
        path = os.fspath(path)
        if path not in self._paths:
            return file_sha256(path)
        self._thread.join()
        digest = self._done[path]
        if isinstance(digest, Exception):
            raise digest
        return digest


def qrels_sha256(qrels: Qrels) -> str:
    """The sha256 of the canonical TREC text of ``qrels``, a release's content hash.

    The text is ``qid 0 docid grade`` lines sorted by query, then document ID (code points). It is built with
    numpy (`metrics._canonical`), so hashing imports neither pyarrow nor pandas.

    Args:
        qrels: the judgments.

    Returns:
        The hex sha256 of that text.
    """
    from metrics._canonical import qrels_text_blocks

    digest = hashlib.sha256()
    for block in qrels_text_blocks(qrels):
        digest.update(block.data)
    return digest.hexdigest()


def run_sha256(run: Run) -> str:
    """The sha256 of the canonical text of ``run``.

    The text is ``qid docid score`` lines in evaluation order (rank order per query), the scores in shortest
    round-trip form.

    Args:
        run: the ranked documents.

    Returns:
        The hex sha256 of that text.
    """
    frame = run.ranked()
    digest = hashlib.sha256()
    rows = zip(frame.query_id.to_pylist(), frame.doc_id.to_pylist(), frame.score.tolist(), strict=True)
    for q, d, s in rows:
        digest.update(f"{q} {d} {s!r}\n".encode())
    return digest.hexdigest()


def semantics(measures: Iterable[str | Measure], **rules: Any) -> dict[str, Any]:
    """The rules the numbers of ``measures`` follow, as a JSON-ready mapping.

    They say which queries count, what an unjudged document is, which measures are undefined (left out of the
    mean) for a query without relevant documents, which are judged-only, the relevance level of each measure
    and how each is aggregated.

    Args:
        measures: the measures, as names or `Measure` objects.
        **rules: further rules (``strict``, ``corpus``, ``chunk_map``...), added as given.

    Returns:
        ``{rule: value}``, JSON-serializable.

    Raises:
        MeasureError: a measure name does not parse.
    """
    specs = parse_measures(measures)
    return _json_ready(
        {
            "queries": "the queries of the qrels; a query missing from a run scores 0 (FirstRel: undefined); "
            "queries only in a run are ignored",
            "unjudged_documents": "non-relevant, except for judged_only measures (the condensed list)",
            "undefined_without_relevant_documents": [str(m) for m in specs if m.definition.needs_relevant],
            "judged_only": [str(m) for m in specs if m.judged_only],
            "relevance_level": {str(m): m.rel for m in specs},
            "aggregate": {str(m): str(m.definition.aggregate) for m in specs},
            **rules,
        }
    )


def fingerprint(
    qrels: Any,
    runs: Mapping[str, Any] | Iterable[tuple[str, Any]],
    measures: Iterable[str | Measure],
    *,
    qrels_file: str | None = None,
    release: int | None = None,
    run_files: Mapping[str, str] | None = None,
    command: str = "score",
    parameters: Mapping[str, Any] | None = None,
    rules: Mapping[str, Any] | None = None,
    queries_file: str | None = None,
    digests: Callable[[str], str] = file_sha256,
) -> dict[str, Any]:
    """The fingerprint of a report: what was scored, by which tool, under which rules (see the module doc).

    Args:
        qrels: the judgments, anything `metrics.evaluate` accepts.
        runs: ``{name: run}`` or ``(name, run)`` pairs, each run anything `metrics.evaluate` accepts; a run
            given as a path is its own file, a run without a file is hashed by its content.
        measures: the measures scored, as names or `Measure` objects.
        qrels_file: the file the qrels were read from (hashed), if any.
        release: the release version the qrels are, if any.
        run_files: ``{name: path}``, the files the runs were read from (hashed).
        command: the command that made the report.
        parameters: the command's options.
        rules: further `semantics`.
        queries_file: the queries file the slices' tags come from (hashed, under ``queries``), if any.
        digests: gives a file's sha256 (`file_sha256`, or a `FileDigests` started before scoring).

    Returns:
        The fingerprint, a JSON-ready mapping with ``tool``, ``command``, ``parameters``, ``qrels``, ``runs``,
        ``measures``, ``semantics`` (and ``queries`` when ``queries_file`` is given).

    Raises:
        QrelForgeError: a file cannot be hashed, or the qrels or a run cannot be read.
    """
    from metrics.evaluate import as_qrels, as_run

    files = dict(run_files or {})
    specs = parse_measures(measures)
    q = as_qrels(qrels)
    run_rows = []
    for name, run in runs.items() if isinstance(runs, Mapping) else runs:
        path = files.get(name, os.fspath(run) if isinstance(run, str | os.PathLike) else None)
        row: dict[str, Any] = {"name": name, "file": path}
        if path is not None:
            row["sha256"] = digests(path)
        else:
            row["content_sha256"] = run_sha256(as_run(run))
        run_rows.append(row)
    queries = {"file": queries_file, "sha256": digests(queries_file)} if queries_file else None
    return _json_ready(
        {
            "tool": {"name": "qrelforge", "version": tool_version()},
            "command": command,
            "parameters": dict(parameters or {}),
            "qrels": {
                "source": q.source,
                "release": release,
                "file": qrels_file,
                "sha256": digests(qrels_file) if qrels_file else None,
                "content_sha256": qrels_sha256(q),
            },
            "runs": run_rows,
            "measures": [str(m) for m in specs],
            "semantics": semantics(specs, **dict(rules or {})),
            **({"queries": queries} if queries else {}),
        }
    )


def _json(fp: Mapping[str, Any]) -> str:
    return json.dumps(fp, ensure_ascii=False, indent=2, allow_nan=False)


def fingerprint_markdown(fp: Mapping[str, Any]) -> str:
    """A Markdown ``## Fingerprint`` section holding ``fp`` as a fenced JSON block.

    The fence is longer than any run of backticks inside, so no ID can end it.

    Args:
        fp: a fingerprint (`fingerprint`).

    Returns:
        The section's Markdown, ending with a newline.

    >>> print(fingerprint_markdown({"command": "score"}), end="")
    ## Fingerprint
    <BLANKLINE>
    ```json
    {
      "command": "score"
    }
    ```
    """
    text = _json(fp)
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"## Fingerprint\n\n{fence}json\n{text}\n{fence}\n"


def fingerprint_html(fp: Mapping[str, Any]) -> str:
    """An HTML ``<section>`` holding ``fp`` as escaped JSON in a ``<pre>``.

    Args:
        fp: a fingerprint (`fingerprint`).

    Returns:
        The section's HTML.
    """
    return f'<section id="fingerprint"><h2>Fingerprint</h2><pre>{_e(_json(fp))}</pre></section>'
