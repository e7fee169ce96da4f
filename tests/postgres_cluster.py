"""A throwaway PostgreSQL cluster for the tests: Debian's binaries, a temp folder, a free port.

Nothing here needs a server someone started by hand: the session's first test that asks for
:func:`postgres_cluster` runs ``initdb`` and ``pg_ctl start`` on 127.0.0.1 and a free port,
and the cluster is stopped and removed at the end of the session. Each test that asks for
:func:`postgres_url` gets a database of its own, dropped afterwards.

PostgreSQL refuses to run as root, and CI runs as root: the cluster then runs as Debian's
``postgres`` user (``subprocess``'s ``user=``), in a folder it owns. The binaries come from the
``postgresql`` package, which ``.ci/run`` installs when it is missing; without them the tests
that need the cluster fail with that instruction rather than skip.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path

import pytest

START_TIMEOUT_S = 120  # pg_ctl -w waits this long for the server to accept connections
COMMAND_TIMEOUT_S = 180  # any one initdb / pg_ctl / psql call
UNPRIVILEGED_USERS = ("postgres", "nobody")


@dataclass(frozen=True)
class PostgresCluster:
    """A running throwaway cluster: where it listens and who may connect (trust auth)."""

    bin_dir: Path
    data_dir: Path
    port: int
    superuser: str = "xyleme"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.superuser}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        """Run one statement as the superuser (CREATE/DROP DATABASE cannot run in a block)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True, connect_timeout=30) as conn:
            conn.execute(sql)


def postgres_bin_dir() -> Path:
    """The newest installed PostgreSQL's bin folder, or a failure saying how to get one."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
    )
    for candidate in reversed(candidates):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    pytest.fail(
        "PostgreSQL's server binaries are missing: install Debian's 'postgresql' package "
        "(.ci/run does it when missing)"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run_as() -> str | None:
    """The user the server runs as: ourselves, or an unprivileged account when we are root."""
    if os.geteuid() != 0:
        return None
    for name in UNPRIVILEGED_USERS:
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    pytest.fail("running as root and no unprivileged 'postgres' or 'nobody' user exists")


def _chown_tree(path: Path, user: str) -> None:
    entry = pwd.getpwnam(user)
    for folder, _dirs, files in os.walk(path):
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        for name in files:
            os.chown(os.path.join(folder, name), entry.pw_uid, entry.pw_gid)


def _command(args: list[str], user: str | None, cwd: Path) -> None:
    done = subprocess.run(
        args,
        user=user,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """Start a cluster for the session, and stop and remove it at the end."""
    bin_dir = postgres_bin_dir()
    user = _run_as()
    home = Path(tempfile.mkdtemp(prefix="xyleme-pg-"))
    data_dir, socket_dir = home / "data", home / "sockets"
    socket_dir.mkdir()
    if user is not None:
        _chown_tree(home, user)
    cluster = PostgresCluster(bin_dir, data_dir, free_port())
    _command(
        [
            *(str(bin_dir / "initdb"), "-D", str(data_dir), "-U", cluster.superuser),
            *("--auth=trust", "--encoding=UTF8", "--no-sync", "--no-instructions"),
        ],
        user,
        home,
    )
    options = (
        f"-p {cluster.port} -k {socket_dir} -c listen_addresses=127.0.0.1"
        " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    )
    pg_ctl = str(bin_dir / "pg_ctl")
    log = home / "server.log"
    _command(
        [
            *(pg_ctl, "start", "-D", str(data_dir), "-w", "-t", str(START_TIMEOUT_S)),
            *("-o", options, "-l", str(log)),
        ],
        user,
        home,
    )
    try:
        yield cluster
    finally:
        subprocess.run(
            [pg_ctl, "stop", "-D", str(data_dir), "-m", "immediate", "-w"],
            user=user,
            cwd=home,
            capture_output=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
        shutil.rmtree(home, ignore_errors=True)


_database_numbers = count(1)


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """A fresh, empty database of the session's cluster for one test, dropped afterwards."""
    name = f"xyleme_test_{os.getpid()}_{next(_database_numbers)}"
    postgres_cluster.admin(f'CREATE DATABASE "{name}"')
    try:
        yield postgres_cluster.url(name)
    finally:
        postgres_cluster.admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
