"""Importing an `ir_datasets` dataset (the ``ir-datasets`` extra) from its local cache, with no network.

Documents, queries and qrels go through the project's own imports, streamed via temporary files; a part not
in the cache is refused with one line. Each part is its own idempotent transaction, so rerunning finishes.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotate_app.services._context import ProjectRef, open_project
from annotate_app.services.auth import Actor, Role
from annotate_app.services.errors import InvalidInput
from annotate_app.services.imports.documents import import_documents
from annotate_app.services.imports.qrels import import_qrels
from annotate_app.services.imports.queries import import_queries
from annotate_app.services.types import ImportReport
from annotate_app.store.db import Database

__all__ = ["import_ir_dataset"]


class _NotCached(BaseException):  # noqa: N818
    """ir_datasets tried to download. A BaseException, so that ir_datasets' own ``except Exception`` around
    each download mirror (which would log it and try the next) lets it through."""


def import_ir_dataset(db: Database, actor: Actor, project: ProjectRef, dataset_id: str) -> list[ImportReport]:
    """Import an ir_datasets dataset's documents, queries and qrels (those it has) from the local cache
    (admin); returns one report per part. InvalidInput for an unknown dataset id, one not in the cache, or
    a missing ``ir_datasets`` package."""
    if not isinstance(dataset_id, str) or not dataset_id.strip() or len(dataset_id) > 200:
        raise InvalidInput(f"dataset_id must be an ir_datasets dataset id; got {dataset_id!r:.80}")
    with db.read() as s:
        open_project(s, actor, project, Role.ADMIN, "import datasets")
    ir_datasets = _package()
    with (
        tempfile.TemporaryDirectory(prefix="qrelforge-ir-datasets-") as tmp,
        _offline(ir_datasets, dataset_id),
    ):
        dataset = _load(ir_datasets, dataset_id)
        files = _write_parts(dataset, dataset_id, Path(tmp))
        reports = []
        if "docs" in files:
            reports.append(
                import_documents(db, actor, project, files["docs"], filename=f"{dataset_id}/docs.jsonl")
            )
        if "queries" in files:
            reports.append(
                import_queries(db, actor, project, files["queries"], filename=f"{dataset_id}/queries.jsonl")
            )
        if "qrels" in files:
            reports.append(
                import_qrels(
                    db, actor, project, files["qrels"], name=dataset_id, filename=f"{dataset_id}/qrels.trec"
                )
            )
    if not reports:
        raise InvalidInput(f"ir_datasets dataset {dataset_id!r} has no documents, queries or qrels")
    return reports


def _package() -> Any:
    try:
        import ir_datasets
    except ModuleNotFoundError:
        raise InvalidInput(
            "importing ir_datasets datasets needs the ir_datasets package: "
            "pip install 'qrelforge[ir-datasets]'"
        ) from None
    return ir_datasets


@contextlib.contextmanager
def _offline(ir_datasets: Any, dataset_id: str) -> Iterator[None]:
    """Switch ir_datasets' HTTP client off: a download attempt becomes InvalidInput (not in the cache)."""
    libs = ir_datasets.lazy_libs
    original = libs.requests

    def refuse() -> Any:
        raise _NotCached()

    libs.requests = refuse
    try:
        yield
    except _NotCached:
        home = ir_datasets.util.home_path()
        raise InvalidInput(
            f"ir_datasets dataset {dataset_id!r} is not in the local cache ({home}); download it first "
            f"(e.g. `ir_datasets export {dataset_id} docs > /dev/null`) or set IR_DATASETS_HOME"
        ) from None
    finally:
        libs.requests = original


def _load(ir_datasets: Any, dataset_id: str) -> Any:
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise InvalidInput(
            f"unknown ir_datasets dataset {dataset_id!r:.80} (see https://ir-datasets.com for the ids)"
        ) from None


def _write_parts(dataset: Any, dataset_id: str, tmp: Path) -> dict[str, Path]:
    """The dataset's parts as files the imports read: docs.jsonl, queries.jsonl, qrels.trec."""
    parts = {
        "docs": (dataset.has_docs, "docs_iter", tmp / "docs.jsonl", _doc_line),
        "queries": (dataset.has_queries, "queries_iter", tmp / "queries.jsonl", _query_line),
        "qrels": (dataset.has_qrels, "qrels_iter", tmp / "qrels.trec", _qrel_line),
    }
    out = {}
    for part, (present, rows, path, line) in parts.items():
        if not present():
            continue
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                for row in getattr(dataset, rows)():
                    f.write(line(row))
        except _NotCached:
            raise
        except (OSError, ValueError, AttributeError) as exc:
            raise InvalidInput(
                f"ir_datasets dataset {dataset_id!r}: its {part} cannot be read: {str(exc)[:200]}"
            ) from None
        out[part] = path
    return out


def _doc_line(doc: Any) -> str:
    title = getattr(doc, "title", "") or ""
    text = getattr(doc, "text", None)
    if not isinstance(text, str):
        text = doc.default_text()
    return json.dumps({"doc_id": doc.doc_id, "title": title, "text": text}, ensure_ascii=False) + "\n"


def _query_line(query: Any) -> str:
    text = getattr(query, "text", None)
    if not isinstance(text, str):
        text = query.default_text()
    return json.dumps({"query_id": query.query_id, "text": text}, ensure_ascii=False) + "\n"


def _qrel_line(qrel: Any) -> str:
    return f"{qrel.query_id} 0 {qrel.doc_id} {qrel.relevance}\n"
