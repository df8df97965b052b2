"""A throwaway PostgreSQL server for the SQL tests: Debian's ``postgresql`` binaries, ``initdb`` and
``pg_ctl`` on a Unix socket in a temporary folder, no TCP port (``listen_addresses = ''``).

As root, ``initdb`` refuses to run: the server runs as the ``postgres`` user (Debian's package makes
it) or ``nobody``. Skipped, saying why, when the binaries are missing; with
``AUDITKIT_REQUIRE_POSTGRES=1`` (``.ci/run``) a missing server fails instead.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REQUIRED = os.environ.get("AUDITKIT_REQUIRE_POSTGRES") == "1"


def binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (the newest Debian version), or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    ctl = shutil.which("pg_ctl")
    return Path(ctl).parent if ctl and shutil.which("initdb") else None


def _unavailable(why: str) -> None:
    if REQUIRED:
        pytest.fail(f"PostgreSQL is required (AUDITKIT_REQUIRE_POSTGRES=1): {why}")
    pytest.skip(f"no PostgreSQL server here ({why}); apt-get install postgresql")


@contextmanager
def server() -> Iterator[str]:
    """Start a server; yields a libpq URL (``postgresql:///auditkit?host=SOCKET_DIR``)."""
    bindir = binaries()
    if bindir is None:
        _unavailable("initdb and pg_ctl not found")
    user = None
    if os.geteuid() == 0:
        for name in ("postgres", "nobody"):
            try:
                user = pwd.getpwnam(name)
                break
            except KeyError:
                continue
        if user is None:
            _unavailable("running as root and no postgres or nobody user to run the server")
    folder = Path(tempfile.mkdtemp(prefix="auditkit-pg-"))
    data, sock = folder / "data", folder / "sock"
    sock.mkdir()
    if user is not None:
        os.chown(folder, user.pw_uid, user.pw_gid)
        os.chown(sock, user.pw_uid, user.pw_gid)

    def run(*cmd: str) -> subprocess.CompletedProcess:
        prefix = ["runuser", "-u", user.pw_name, "--"] if user is not None else []
        return subprocess.run([*prefix, *cmd], capture_output=True, text=True, timeout=120, cwd=folder)

    try:
        done = run(str(bindir / "initdb"), "-D", str(data), "-U", "auditkit", "--auth=trust", "-E", "UTF8",
                   "--no-locale")
        if done.returncode:
            _unavailable(f"initdb failed: {done.stderr.strip()[-500:]}")
        options = f"-c listen_addresses='' -c unix_socket_directories={sock} -c fsync=off"
        done = run(str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start")
        if done.returncode:
            _unavailable(f"pg_ctl start failed: {done.stderr.strip()[-500:]}")
        try:
            done = run(str(bindir / "createdb"), "-h", str(sock), "-U", "auditkit", "auditkit")
            if done.returncode:
                _unavailable(f"createdb failed: {done.stderr.strip()[-500:]}")
            yield f"postgresql:///auditkit?host={sock}&user=auditkit"
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
