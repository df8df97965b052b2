"""The store's atomic writes through one open file (auditkit.store.atomic.atomic_file): fsynced through it,
renamed into place readable by others, its folder made when missing; nothing left when the write fails."""

from __future__ import annotations

import os
import stat

import pytest

from auditkit.store import atomic
from auditkit.store.atomic import atomic_file


def test_an_atomic_file_is_written_fsynced_through_its_own_handle_and_renamed(tmp_path, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real(fd)))
    target = tmp_path / "new" / "deeper" / "f.json"  # its folders made
    with atomic_file(target) as fh:
        assert fh.name.endswith(".tmp") and os.path.dirname(fh.name) == str(target.parent)
        fh.write(b"{}")
    assert target.read_bytes() == b"{}" and len(synced) == 1 and synced[0].endswith(".tmp")
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~atomic._umask()
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]


def test_a_failed_atomic_file_leaves_nothing_and_names_the_file(tmp_path):
    target = tmp_path / "f.json"
    with pytest.raises(ValueError), atomic_file(target) as fh:
        fh.write(b"half")
        raise ValueError("stopped")
    assert list(tmp_path.iterdir()) == []

    def full(data):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError) as err, atomic_file(target) as fh:
        fh.write = full
        fh.write(b"x")
    assert err.value.filename == str(target) and list(tmp_path.iterdir()) == []
