"""A throwaway PostgreSQL cluster for the SQL source tests: Debian's server binaries (``initdb``,
``pg_ctl``) on a Unix socket in a temporary folder, no TCP (``listen_addresses=''``).

As root, ``initdb`` refuses to run: the cluster is then made and run as the ``postgres`` user (or
``nobody``) through ``runuser``. Skipped, with the reason, when the binaries are missing; failing
instead when ``AUDITKIT_REQUIRE_POSTGRES=1`` (CI).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _unavailable(reason: str) -> None:
    if os.environ.get("AUDITKIT_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL required (AUDITKIT_REQUIRE_POSTGRES=1) but {reason}")
    pytest.skip(reason)


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def _runner() -> tuple[list[str], int | None]:
    """The command prefix to run the server's binaries, and the uid that will own the cluster."""
    if os.geteuid() != 0:
        return [], None
    for user in ("postgres", "nobody"):
        try:
            uid = pwd.getpwnam(user).pw_uid
        except KeyError:
            continue
        if shutil.which("runuser"):
            return ["runuser", "-u", user, "--"], uid
    return [], None


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The URL of a fresh database ``audit`` on a private cluster (stopped and removed at the end)."""
    bindir = _bindir()
    if bindir is None:
        _unavailable("PostgreSQL's server binaries (initdb, pg_ctl) are not installed (apt-get install postgresql)")
    prefix, uid = _runner()
    if os.geteuid() == 0 and uid is None:
        _unavailable("running as root without a postgres or nobody user and runuser: initdb refuses root")
    root = Path(tempfile.mkdtemp(prefix="auditkit-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if uid is not None:
        for p in (root, sock):
            os.chown(p, uid, -1)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*prefix, *args], capture_output=True, text=True, env=env, timeout=120)

    r = run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "audit", "-E", "UTF8", "--no-sync")
    if r.returncode:
        shutil.rmtree(root, ignore_errors=True)
        _unavailable(f"initdb failed: {r.stderr.strip()[-400:]}")
    opts = f"-c listen_addresses='' -c unix_socket_directories={sock} -c fsync=off"
    r = run(str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(root / "log"), "-w", "-t", "60", "start")
    if r.returncode:
        log = (root / "log").read_text(errors="replace")[-400:] if (root / "log").exists() else r.stderr
        shutil.rmtree(root, ignore_errors=True)
        _unavailable(f"pg_ctl start failed: {log.strip()}")
    try:
        r = run(str(bindir / "createdb"), "-h", str(sock), "-U", "audit", "audit")
        assert r.returncode == 0, r.stderr
        yield f"postgresql://audit@/audit?host={sock}"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def execute(url: str, *statements: str) -> None:
    """Run ``statements`` on the database at ``url`` (through ADBC, committed)."""
    import adbc_driver_postgresql.dbapi as driver
    with driver.connect(url) as conn:
        with conn.cursor() as cur:
            for s in statements:
                cur.execute(s)
        conn.commit()
