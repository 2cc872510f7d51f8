"""Backup archives hold the users' password hashes: the archive and the partial file it is written to are
mode 0600 (owner only), whatever the umask, also when an existing, more open file is overwritten."""

from __future__ import annotations

import os
import stat

import pytest

from annotate_app.services import backup
from annotate_app.services.auth import SYSTEM
from annotate_app.store import backup as backup_store


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def open_umask():
    """A umask that would make new files world-readable (0644), restored afterwards."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_the_archive_and_its_partial_file_are_owner_only(demo, tmp_path, monkeypatch, open_umask):
    seen: list[tuple[str, int]] = []
    rows = backup_store.rows

    def spying_rows(s, table, **kwargs):
        seen.extend((p.name, _mode(p)) for p in tmp_path.iterdir() if ".partial-" in p.name)
        return rows(s, table, **kwargs)

    monkeypatch.setattr(backup_store, "rows", spying_rows)
    info = backup.backup(demo, SYSTEM, tmp_path / "qf.zip")
    assert _mode(info.path) == 0o600
    assert seen and {mode for _, mode in seen} == {0o600}
    assert {name for name, _ in seen} == {f".qf.zip.partial-{os.getpid()}"}


def test_overwriting_a_world_readable_file_leaves_an_owner_only_archive(demo, tmp_path, open_umask):
    target = tmp_path / "qf.zip"
    target.write_text("old")
    target.chmod(0o644)
    stale = tmp_path / f".qf.zip.partial-{os.getpid()}"  # left by a crash, world-readable
    stale.write_text("stale")
    stale.chmod(0o644)
    backup.backup(demo, SYSTEM, target, overwrite=True)
    assert _mode(target) == 0o600
    assert not stale.exists()
