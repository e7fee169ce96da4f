"""A throwaway PostgreSQL cluster: Debian's binaries, a temp folder, a free port.

The tests (``tests/postgres_cluster.py``) and ``bench_scaleout.py`` start one with
:func:`start_cluster` and stop it with :meth:`PostgresCluster.stop`: ``initdb`` and
``pg_ctl start`` on 127.0.0.1 and a free port, trust authentication, fsync off (it is thrown
away). PostgreSQL refuses to run as root, and CI runs as root: the cluster then runs as
Debian's ``postgres`` user (``subprocess``'s ``user=``), in a folder it owns. The binaries
come from the ``postgresql`` package, which ``.ci/run`` installs when it is missing.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 120  # pg_ctl -w waits this long for the server to accept connections
COMMAND_TIMEOUT_S = 180  # any one initdb / pg_ctl / psql call
UNPRIVILEGED_USERS = ("postgres", "nobody")


class ClusterError(RuntimeError):
    """The cluster could not be made or started (the message says why and what to do)."""


@dataclass(frozen=True)
class PostgresCluster:
    """A running throwaway cluster: where it listens and who may connect (trust auth)."""

    bin_dir: Path
    data_dir: Path
    port: int
    user: str | None = None
    superuser: str = "xyleme"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.superuser}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        """Run one statement as the superuser (CREATE/DROP DATABASE cannot run in a block)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True, connect_timeout=30) as conn:
            conn.execute(sql)

    def stop(self) -> None:
        """Stop the server at once and remove its folder."""
        home = self.data_dir.parent
        subprocess.run(
            [str(self.bin_dir / "pg_ctl"), "stop", "-D", str(self.data_dir), "-m", "immediate"],
            user=self.user,
            cwd=home,
            capture_output=True,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
        shutil.rmtree(home, ignore_errors=True)


def postgres_bin_dir() -> Path:
    """The newest installed PostgreSQL's bin folder."""
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name)
    )
    for candidate in reversed(candidates):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).parent
    raise ClusterError(
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
    raise ClusterError("running as root and no unprivileged 'postgres' or 'nobody' user exists")


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
        raise ClusterError(
            f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )


def start_cluster(*, durable: bool = False) -> PostgresCluster:
    """initdb and start a cluster (``durable``: fsync and synchronous commits on, as a real
    server runs; off by default, as a test's throwaway one needs no crash safety)."""
    bin_dir = postgres_bin_dir()
    user = _run_as()
    home = Path(tempfile.mkdtemp(prefix="xyleme-pg-"))
    data_dir, socket_dir = home / "data", home / "sockets"
    socket_dir.mkdir()
    if user is not None:
        _chown_tree(home, user)
    cluster = PostgresCluster(bin_dir, data_dir, free_port(), user)
    try:
        _command(
            [
                *(str(bin_dir / "initdb"), "-D", str(data_dir), "-U", cluster.superuser),
                *("--auth=trust", "--encoding=UTF8", "--no-sync", "--no-instructions"),
            ],
            user,
            home,
        )
        options = f"-p {cluster.port} -k {socket_dir} -c listen_addresses=127.0.0.1"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        _command(
            [
                *(str(bin_dir / "pg_ctl"), "start", "-D", str(data_dir), "-w"),
                *("-t", str(START_TIMEOUT_S), "-o", options, "-l", str(home / "server.log")),
            ],
            user,
            home,
        )
    except BaseException:
        shutil.rmtree(home, ignore_errors=True)
        raise
    return cluster
