"""The CLI tests' shared fixture: `cli` runs ``qrelforge ARGV...`` in-process on the test database."""

from __future__ import annotations

import pytest


@pytest.fixture
def cli(db_url, fast_hashing, monkeypatch, capsys):
    """``cli(*argv, stdin=None) -> (exit code, stdout, stderr)``: ``qrelforge ARGV...`` in-process against
    ``db_url`` (no default project); the CLI tests' shared fixture."""
    import io

    from annotate_app.cli import main

    monkeypatch.setenv("QRELFORGE_DATABASE_URL", db_url)
    monkeypatch.delenv("QRELFORGE_PROJECT", raising=False)

    def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return run
