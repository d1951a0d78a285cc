"""Shared fixtures: paths to shared data, a SimLM-backed DSPy LM."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file's size and time under ``root``, every folder's presence: what a refused command must leave as it
    was (an output check's probe file, made and removed at once, changes only its folder's time)."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) if p.is_file() else (0, 0)
            for p in root.rglob("*")}


class InFlight:
    """Counts the calls inside ``with in_flight:`` at once, from any thread; ``peak`` is the most there were."""

    def __init__(self) -> None:
        self._lock, self.now, self.peak = threading.Lock(), 0, 0

    def __enter__(self) -> InFlight:
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self.now -= 1
LOCOMO_DEV_IN_SHARED = Path("data") / "locomo" / "locomo_dev.json"
SHIPPED = ("evermemos", "long_context", "mem0", "rag")  # the memory systems memopt ships (pipelines/)


def shared_candidates(test_file: str | Path = __file__, cwd: str | Path | None = None,
                      env: Mapping[str, str] = os.environ) -> list[Path]:
    """Where ``shared/`` may be, first match wins: ``$MEMOPT_SHARED``, then ``../shared`` next to the checkout.

    The checkout's parent is taken four ways, since a checkout reached through a symlink has a
    logical and a physical parent: the shell's working directory (``$PWD``, logical), the process's
    working directory (physical), this file's path as given and as resolved.
    """
    cwd = Path(cwd) if cwd is not None else Path.cwd()
    given = Path(os.path.abspath(test_file))
    out = [Path(env["MEMOPT_SHARED"])] if env.get("MEMOPT_SHARED") else []
    if env.get("PWD") and Path(env["PWD"]).is_absolute():
        out.append(Path(env["PWD"]).parent / "shared")
    out += [cwd / ".." / "shared", given.parent.parent.parent / "shared",
            Path(test_file).resolve().parent.parent.parent / "shared"]
    return list(dict.fromkeys(out))


def find_locomo_dev(candidates: list[Path]) -> Path | None:
    """The first candidate holding ``data/locomo/locomo_dev.json``, as that file's path."""
    return next((c / LOCOMO_DEV_IN_SHARED for c in candidates if (c / LOCOMO_DEV_IN_SHARED).is_file()), None)


def require_locomo_dev(candidates: list[Path], env: Mapping[str, str] = os.environ) -> Path:
    """The LoCoMo dev file; when absent, skip with where it looked (fail under ``CI=true``)."""
    found = find_locomo_dev(candidates)
    if found is None:
        looked = ", ".join(str(c / LOCOMO_DEV_IN_SHARED) for c in candidates)
        reason = f"shared LoCoMo data not found; looked at {looked} (set MEMOPT_SHARED to the shared/ folder)"
        if env.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the LoCoMo tests, but the {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="session")
def locomo_dev() -> Path:
    """Path of the shared LoCoMo dev file (see `shared_candidates`)."""
    return require_locomo_dev(shared_candidates())


@pytest.fixture
def sim_lm():
    """A DSPy LM backed by SimLM (seed 0)."""
    import dspy

    from memopt.simlm import SimEngine

    return dspy.LM("sim/memopt", engine=SimEngine(seed=0), cache=False)


@pytest.fixture(autouse=True)
def _reply_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own LM reply cache (in-process and for the commands it starts), outside its tmp_path."""
    from memopt.lm import cache

    directory = tmp_path_factory.mktemp("reply-cache")
    monkeypatch.setenv(cache.CACHE_ENV, str(directory))
    # Lazily: the next LM built with caching (`make_lm`) points DSPy's cache (memory and disk) at it. Configuring it
    # here cost every test ~0.2 s (16 SQLite shards), most of which never cache a reply.
    cache._configured = None


@pytest.fixture(autouse=True)
def _mlflow_tracking_uri_stays_with_its_test():
    """`Tracker` sets MLflow's process-wide tracking URI (and ``$MLFLOW_TRACKING_URI``, which subprocesses inherit);
    put both back after each test so no test points a later one at its store."""
    before = os.environ.get("MLFLOW_TRACKING_URI")
    yield
    utils = sys.modules.get("mlflow.tracking._tracking_service.utils")
    if utils is not None:
        utils._tracking_uri = None
    if before is None:
        os.environ.pop("MLFLOW_TRACKING_URI", None)
    else:
        os.environ["MLFLOW_TRACKING_URI"] = before


def run_main(argv: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    """Run ``memopt ARGV`` in-process in ``cwd``: (exit code, stdout, stderr)."""
    from memopt.cli import main

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["memopt", *argv])
    with pytest.raises(SystemExit) as exit_:
        main()
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err
