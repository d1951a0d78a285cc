"""A real PostgreSQL server for tests, started from a package on a loopback port and torn down after.

Binaries: the ``pgserver`` wheel's bundled PostgreSQL (PyPI), else Debian's ``postgresql`` package
(/usr/lib/postgresql/*/bin). As root (CI), the server runs as the ``postgres`` system user when it
exists, else as ``pgserver`` (the user the pgserver wheel creates for itself). When that user cannot
reach the binaries (a virtualenv under a root-only folder, as `.ci/run`'s ``mktemp -d``), they are
copied once per process to a folder it can read, with the bundled libraries where the binaries'
RPATH (``$ORIGIN/../../../pgserver.libs``) looks for them. Auth is ``trust`` on 127.0.0.1 only: a
throw-away cluster in a temporary directory.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["postgres_bin", "postgres_server", "require_team", "stop_server", "start_server"]


def postgres_bin() -> Path | None:
    """The directory holding initdb and pg_ctl (pgserver's bundled ones first), or None."""
    try:
        import pgserver

        bundled = Path(pgserver.__file__).parent / "pginstall" / "bin"
        if (bundled / "initdb").exists():
            return bundled
    except ImportError:
        pass
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def require_team() -> None:
    """Skip unless psycopg and a PostgreSQL are installed; under ``CI=true`` a missing one fails instead (.ci/run
    installs both)."""
    import importlib.util

    import pytest

    missing = [what for what, there in (("psycopg (pip install 'memopt[team]')", importlib.util.find_spec("psycopg")),
                                        ("PostgreSQL (pip install pgserver)", postgres_bin())) if there is None]
    if missing and not os.environ.get("CI"):
        pytest.skip(f"needs {' and '.join(missing)}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_as() -> list[str]:
    if os.geteuid() != 0:
        return []
    for user in ("postgres", "pgserver"):
        try:
            pwd.getpwnam(user)
            return ["runuser", "-u", user, "--"]
        except KeyError:
            continue
    subprocess.run(["useradd", "--system", "--no-create-home", "pgserver"], check=True)
    return ["runuser", "-u", "pgserver", "--"]


_reachable: dict[Path, Path] = {}
_servers: dict[str, list[str]] = {}  # port -> the pg_ctl command line (without its action) of a running server


def _reachable_by(as_user: list[str], bindir: Path) -> Path:
    """``bindir``, or a copy ``as_user`` can run when that user cannot reach it (pgserver's layout kept)."""
    if not as_user or bindir in _reachable:
        return _reachable.get(bindir, bindir)
    if subprocess.run([*as_user, "test", "-x", str(bindir / "initdb")], capture_output=True).returncode == 0:
        _reachable[bindir] = bindir
        return bindir
    home = Path(tempfile.mkdtemp(prefix="memopt-pgbin-"))
    atexit.register(shutil.rmtree, home, True)
    os.chmod(home, 0o755)
    install = bindir.parent  # .../pgserver/pginstall
    shutil.copytree(install, home / "pgserver" / "pginstall", symlinks=True)
    libs = install.parent.parent / "pgserver.libs"
    if libs.is_dir():
        shutil.copytree(libs, home / "pgserver.libs", symlinks=True)
    for folder in (home / "pgserver", home / "pgserver" / "pginstall"):
        os.chmod(folder, 0o755)
    _reachable[bindir] = home / "pgserver" / "pginstall" / "bin"
    return _reachable[bindir]


@contextmanager
def postgres_server(databases: tuple[str, ...] = ("memopt",)) -> Iterator[dict[str, str]]:
    """Start a server on 127.0.0.1:<free port>; yield ``{database: postgresql://postgres@127.0.0.1:PORT/db}``."""
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("no PostgreSQL binaries: pip install pgserver, or apt-get install postgresql")
    root = Path(tempfile.mkdtemp(prefix="memopt-pg-"))
    data = root / "data"
    as_user = _run_as()
    bindir = _reachable_by(as_user, bindir)
    if as_user:
        user = as_user[2]
        shutil.chown(root, user)
        os.chmod(root, 0o700)
    port = _free_port()
    env = {**os.environ, "LC_ALL": "C"}
    subprocess.run([*as_user, str(bindir / "initdb"), "-A", "trust", "-U", "postgres", "-E", "UTF8", "-D", str(data)],
                   check=True, capture_output=True, env=env)
    options = f"-h 127.0.0.1 -p {port} -k {root} -c max_connections=200 -c fsync=off"
    subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"),
                    "-w", "-t", "60", "start"], check=True, capture_output=True, env=env)
    _servers[str(port)] = [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log")]
    try:
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", autocommit=True) as conn:
            for db in databases:
                conn.execute(f'CREATE DATABASE "{db}"')
        yield {db: f"postgresql://postgres@127.0.0.1:{port}/{db}" for db in databases}
    finally:
        _servers.pop(str(port), None)
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, env=env)
        shutil.rmtree(root, ignore_errors=True)


def _port(url: str) -> str:
    return url.rsplit("@", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]


def stop_server(url: str) -> None:
    """Stop the server of ``url`` (one `postgres_server` started) at once, as a crash or an outage would."""
    subprocess.run([*_servers[_port(url)], "-m", "immediate", "-w", "stop"], check=True, capture_output=True,
                   env={**os.environ, "LC_ALL": "C"})


def start_server(url: str) -> None:
    """Start the stopped server of ``url`` again (same data, same port); returns once it accepts connections."""
    subprocess.run([*_servers[_port(url)], "-w", "-t", "60", "start"], check=True, capture_output=True,
                   env={**os.environ, "LC_ALL": "C"})
