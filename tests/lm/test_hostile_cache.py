"""A damaged LM reply cache never stops a run: corrupt, truncated, read-only, or not a directory, `memopt run`
against a real HTTP LM (`SimServer`) answers every case with one ``warning:`` line naming the cache folder.

A corrupt or truncated cache is moved aside and rebuilt (the next run is served from the new one); one that
cannot be written is bypassed (memory only). Nothing outside the output file and the cache folder changes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memopt.lm import cache
from memopt.simlm.server import SimServer
from tests.conftest import snapshot

DATA = "synthetic:conversations=1,sessions=2,seed=3,questions_per_conversation=4"


def _run(argv: list[str], cwd: Path, monkeypatch, capsys, caplog) -> tuple[int, str]:
    """Exit code and stderr of the command, run as a user runs it: a process of its own (with this test's
    environment, the cache folder included). In one process a run would inherit the SQLite connections an earlier
    run left to the cache, which the damage done between the runs would then break under it."""
    done = subprocess.run([sys.executable, "-m", "memopt", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=os.environ.copy())
    return done.returncode, done.stderr


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` and everything under it read-only for this process, for real (root: the immutable flag)."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-R", "+i", str(path)], check=True)
    else:
        for p in [path, *path.rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        with pytest.raises(OSError):
            (path / "probe").write_text("x")
        yield
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-R", "-i", str(path)], check=True)
        else:
            for p in [path, *path.rglob("*")]:
                p.chmod(0o755 if p.is_dir() else 0o644)


def _filled(folder: Path, url: str, monkeypatch, capsys, caplog) -> None:
    """A real cache: one run's replies."""
    monkeypatch.setenv(cache.CACHE_ENV, str(folder))
    monkeypatch.setattr(cache, "_configured", None)
    code, err = _run(["run", "-p", "rag", "--data", DATA, "--lm", f"openai/sim@{url}", "--judge-lm", "none",
                      "--out", str(folder.parent / "first.json")], folder.parent, monkeypatch, capsys, caplog)
    assert code == 0 and err.strip() == "", err
    assert len(list(folder.glob("*/cache.db"))) == 16


def _corrupt(folder: Path) -> None:
    (folder / "000" / "cache.db").write_bytes(b"this is not SQLite " * 64)


def _truncate(folder: Path) -> None:
    for db in folder.glob("*/cache.db"):
        os.truncate(db, db.stat().st_size // 3)


SLOW = pytest.mark.slow  # ≈ 10-30 s: up to three runs, each a process


@pytest.mark.parametrize(("damage", "says"), [
    pytest.param(_corrupt, "was damaged", id="corrupt", marks=SLOW),
    pytest.param(_truncate, "was damaged", id="truncated", marks=SLOW),
    pytest.param("file", "cannot be used", id="not-a-directory", marks=SLOW),
    pytest.param("read-only", "cannot be used", id="read-only", marks=SLOW)])
def test_a_damaged_cache_is_rebuilt_or_bypassed_with_one_warning(tmp_path, monkeypatch, capsys, caplog, damage,
                                                                 says):
    folder = tmp_path / "cache"
    (tmp_path / "cwd").mkdir()
    with SimServer() as server:
        if damage == "file":
            folder.write_text("a file where the cache folder should be")
        else:
            _filled(folder, server.url, monkeypatch, capsys, caplog)
            if callable(damage):
                damage(folder)
        asked = server.stats.requests
        monkeypatch.setenv(cache.CACHE_ENV, str(folder))
        monkeypatch.setattr(cache, "_configured", None)
        before = snapshot(tmp_path)
        argv = ["run", "-p", "rag", "--data", DATA, "--lm", f"openai/sim@{server.url}", "--judge-lm", "none",
                "--out", str(tmp_path / "cwd" / "r.json")]
        with read_only(folder) if damage == "read-only" else contextlib.nullcontext():
            code, err = _run(argv, tmp_path / "cwd", monkeypatch, capsys, caplog)
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 0, err
        assert "Traceback" not in err
        assert len(lines) == 1 and lines[0].startswith(f"warning: LM reply cache {folder} {says}"), err
        results = json.loads((tmp_path / "cwd" / "r.json").read_text())
        assert results["metrics"]["errored"] == 0 and server.stats.requests > asked  # answered by the LM
        changed = {k for k in set(before) | set(snapshot(tmp_path)) if before.get(k) != snapshot(tmp_path).get(k)}
        asides = {p.name for p in tmp_path.glob("cache.damaged-*")}
        assert {k.split("/")[0] for k in changed} <= {"cwd", "cache", *asides}
        if says == "was damaged":  # set aside for inspection, and the new cache serves the next run
            [aside] = tmp_path.glob("cache.damaged-*")
            assert len(list(aside.glob("*/cache.db"))) == 16
            asked = server.stats.requests
            monkeypatch.setattr(cache, "_configured", None)
            code, err = _run(argv, tmp_path / "cwd", monkeypatch, capsys, caplog)
            assert code == 0 and err.strip() == "" and server.stats.requests == asked
    if damage == "file":
        assert folder.read_text() == "a file where the cache folder should be"
    shutil.rmtree(tmp_path / "cwd")


def test_the_cache_is_not_memory_mapped_so_a_truncated_file_cannot_crash_the_process(tmp_path, monkeypatch):
    """SQLite reading a memory-mapped file that another hand truncated gets SIGBUS; the cache's shards say mmap 0."""
    import sqlite3

    import dspy

    monkeypatch.setattr(cache, "_configured", None)
    folder = cache.configure_cache(tmp_path / "cache")
    shards = sorted(folder.glob("*/cache.db"))
    assert len(shards) == 16
    for db in shards:
        with contextlib.closing(sqlite3.connect(db)) as con:
            assert con.execute("SELECT value FROM Settings WHERE key = 'sqlite_mmap_size'").fetchone() == (0,)
    disk = dspy.cache.disk_cache  # DSPy's own FanoutCache (behind memopt's guard) reads the setting back
    assert all(shard._con.execute("PRAGMA mmap_size").fetchone() == (0,) for shard in disk._shards)
