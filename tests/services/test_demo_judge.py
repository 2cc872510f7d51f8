"""The demo ships a replayed judge (issue 13, item 8): ``sample_corpus/judge_lexical.jsonl`` holds the lexical
backend's labels of ``demo-review``'s pairs, and ``load_demo(labelled=True)`` imports them as judge
``lexical`` through `judges.import_labels`, so the Judges section of the Agreement page has figures; a
second load changes nothing; on SQLite and PostgreSQL.

Regenerate the file (after changing the corpus, the runs or the lexical judge) with
``PYTHONPATH=. python tests/services/test_demo_judge.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from annotate_app.services.auth import SYSTEM

SAMPLE = Path(__file__).resolve().parents[2] / "sample_corpus"
FILE = SAMPLE / "judge_lexical.jsonl"
DEPTH = 3  # demo-review's pool depth (services.demo)


def _pool() -> list[tuple[str, str]]:
    """demo-review's pairs: the top DEPTH documents of run A and run B, by query then document."""
    pairs = set()
    for name in ("run_a.trec", "run_b.trec"):
        for line in (SAMPLE / name).read_text(encoding="utf-8").splitlines():
            qid, _, doc, rank, *_ = line.split()
            if int(rank) <= DEPTH:
                pairs.add((qid, doc))
    return sorted(pairs)


def lexical_lines() -> list[str]:
    """The JSONL lines of the lexical judge on demo-review's pairs: the project's documents as the app builds
    the judge (`_judge_state.build_judge`: title, blank line, text), the default 0-3 scale."""
    from annotate_app.judges import GradeScale, JudgeTask, LexicalJudge, Pair

    docs = [json.loads(x) for x in (SAMPLE / "docs.jsonl").read_text(encoding="utf-8").splitlines()]
    corpus = {d["doc_id"]: f"{d['title']}\n\n{d['text']}" if d.get("title") else d["text"] for d in docs}
    queries = {
        q["query_id"]: q["text"]
        for q in map(json.loads, (SAMPLE / "queries.jsonl").read_text(encoding="utf-8").splitlines())
    }
    judge, task = LexicalJudge(corpus, name="lexical"), JudgeTask(scale=GradeScale.default())
    out = []
    for qid, doc in _pool():
        pair = Pair(query_id=qid, query=queries[qid], doc_id=doc, document=corpus[doc])
        result = judge.judge(pair, task)
        row = {
            "query_id": qid,
            "doc_id": doc,
            "grade": result.grade,
            "reason": result.reason,
            "confidence": result.confidence,
            "model": result.model,
            "prompt": result.prompt_hash,
        }
        out.append(json.dumps(row, ensure_ascii=False))
    return out


def _file_rows() -> list[dict]:
    return [json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines()]


def test_the_shipped_file_is_the_lexical_backends_output():
    assert FILE.read_text(encoding="utf-8").splitlines() == lexical_lines()
    keys = {"query_id", "doc_id", "grade", "reason", "confidence", "model", "prompt"}
    assert all(set(row) == keys for row in _file_rows()) and len(_file_rows()) == 12


@pytest.fixture
def labelled(db):
    from annotate_app.services.demo import load_demo

    load_demo(db, labelled=True)
    return db


def _grades(qrels) -> dict[tuple[str, str], int]:
    return {(q, d): g for q, docs in qrels.to_dict().items() for d, g in docs.items()}


def test_demo_review_holds_the_replayed_judge_with_its_figures(labelled):
    from annotate_app.services import judges

    (info,) = judges.list_judges(labelled, SYSTEM, "demo-review")
    assert (info.name, info.backend) == ("lexical", "replay")
    assert _grades(judges.judge_qrels(labelled, SYSTEM, "demo-review", "lexical")) == {
        (r["query_id"], r["doc_id"]): r["grade"] for r in _file_rows()
    }
    (cal,) = judges.calibrate(labelled, SYSTEM, "demo-review")
    figures = (cal.n_pairs, round(cal.kappa, 3), round(cal.tau, 3), round(cal.tau_top5, 3), cal.passed)
    assert figures == (12, 0.755, 0.333, 0.333, False)  # tau over scheme_a, scheme_b and bm25
    assert judges.list_judges(labelled, SYSTEM, "demo") == []


def test_running_the_lexical_backend_in_the_app_gives_the_shipped_grades(labelled):
    from annotate_app.services import judges

    judges.add_judge(labelled, SYSTEM, "demo-review", "live", backend="lexical")
    report = judges.run_judge(labelled, SYSTEM, "demo-review", "live", pairs="all")
    assert (report.pairs, report.failed) == (12, 0)
    live = judges.judge_qrels(labelled, SYSTEM, "demo-review", "live")
    assert _grades(live) == _grades(judges.judge_qrels(labelled, SYSTEM, "demo-review", "lexical"))


def test_a_second_load_imports_nothing_again(labelled):
    from annotate_app.services import audit
    from annotate_app.services.demo import load_demo

    before = {e.id for e in audit.audit_log(labelled, SYSTEM, project="demo-review", limit=1000)}
    assert {"judge_added", "judge_imported"} <= {
        e.action for e in audit.audit_log(labelled, SYSTEM, project="demo-review", limit=1000)
    }
    load_demo(labelled, labelled=True)
    new = [
        e.action
        for e in audit.audit_log(labelled, SYSTEM, project="demo-review", limit=1000)
        if e.id not in before
    ]
    assert set(new) <= {"import_documents", "import_queries", "import_run"}


if __name__ == "__main__":
    FILE.write_text("\n".join(lexical_lines()) + "\n", encoding="utf-8")
    sys.exit(0)
