"""Streaming document import (issue 14 item 6): documents are read, checked and written `DOC_BATCH` at a
time in one transaction; a bad line anywhere — here the last, after two full batches — imports nothing.
``benchmarks/import_docs_memory.py`` measures the peak RSS on a 1 GB corpus."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import text

from annotate_app.services import imports, projects
from annotate_app.services.auth import SYSTEM
from annotate_app.services.errors import InvalidInput


def _count(db, table: str) -> int:
    with db.read() as s:
        return s.execute(text(f"SELECT count(*) FROM {table}")).scalar()


@pytest.mark.parametrize(
    ("last", "reason"),
    [
        ("not json", "invalid JSON (Expecting value at column 1): 'not json'"),
        (
            '{"doc_id": "X1", "text": "dup"}',
            'duplicate doc_id \'X1\' (first on line 2): \'{"doc_id": "X1", "text": "dup"}\'',
        ),
        (
            '{"doc_id": "Y", "text": "a\\u0000b"}',
            """text contains a NUL character (U+0000): '{"doc_id": "Y", "text": "a\\\\u0000b"}'""",
        ),
    ],
)
def test_a_bad_last_line_of_a_streamed_document_import_imports_nothing(db, tmp_path, last, reason):
    """More documents than one batch (`documents.DOC_BATCH`), the bad line last: nothing is imported."""
    from annotate_app.services.imports import documents

    projects.create_project(db, SYSTEM, "p")
    n = documents.DOC_BATCH * 2 + 1
    path = tmp_path / "docs.jsonl"
    path.write_text(
        "".join(json.dumps({"doc_id": f"X{i}", "text": f"t {i}"}) + "\n" for i in range(n)) + last + "\n"
    )
    with pytest.raises(InvalidInput) as info:
        imports.import_documents(db, SYSTEM, "p", path)
    assert str(info.value) == f"{path}:{n + 1}: {reason}"
    assert (_count(db, "documents"), _count(db, "document_versions"), _count(db, "imports")) == (0, 0, 0)
