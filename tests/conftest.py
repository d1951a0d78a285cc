"""Shared fixtures: paths to shared data, a SimLM-backed DSPy LM."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
LOCOMO_DEV = SHARED / "data" / "locomo" / "locomo_dev.json"


@pytest.fixture
def locomo_dev() -> Path:
    """Path of the shared LoCoMo dev file; skips (with the reason) when ../shared is absent."""
    if not LOCOMO_DEV.is_file():
        pytest.skip(f"shared LoCoMo data not found at {LOCOMO_DEV} (../shared is absent on this checkout)")
    return LOCOMO_DEV


@pytest.fixture
def sim_lm():
    """A DSPy LM backed by SimLM (seed 0)."""
    import dspy

    from memopt.lm.sim import SimEngine

    return dspy.LM("sim/memopt", engine=SimEngine(seed=0), cache=False)


@pytest.fixture(autouse=True)
def _reply_cache(tmp_path, monkeypatch):
    """Every test gets its own LM reply cache (in-process and for the commands it starts)."""
    from memopt.lm import cache

    directory = tmp_path / "reply-cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(directory))
    if cache._configured is not None:
        cache.configure_cache(directory)


@pytest.fixture(autouse=True)
def _tracking_uri_restored():
    """MLflow's `set_tracking_uri` exports MLFLOW_TRACKING_URI; a test's store must not leak into the next test."""
    before = os.environ.get("MLFLOW_TRACKING_URI")
    yield
    if before is None:
        os.environ.pop("MLFLOW_TRACKING_URI", None)
    else:
        os.environ["MLFLOW_TRACKING_URI"] = before
