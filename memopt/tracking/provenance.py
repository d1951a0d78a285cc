"""Which code ran a run: memopt's version and, when memopt runs from a git checkout, its commit.

`code_tags` are the tags a parent run gets: ``memopt.version``, MLflow's ``mlflow.source.name`` (the runs list's
Source column: ``memopt optimize``); from a checkout, MLflow's own
``mlflow.source.git.commit`` (the run page shows it) and ``memopt.git.dirty`` (``true`` when files differ from
that commit). Git is asked with a short timeout and never fails a run: without git, or outside a checkout, the
commit tags are left out.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["code_tags"]

_GIT_SECONDS = 10


def _git(*args: str, cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=_GIT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def code_tags() -> dict[str, str]:
    """``memopt.version``, and the commit of the checkout memopt runs from (see the module docstring)."""
    import memopt

    tags = {"memopt.version": memopt.__version__, "mlflow.source.name": "memopt optimize",
            "mlflow.source.type": "LOCAL"}
    source = Path(memopt.__file__).resolve().parent
    commit = _git("rev-parse", "HEAD", cwd=source)
    if commit:
        changes = _git("status", "--porcelain", "--untracked-files=no", "--", ".", cwd=source.parent)
        tags |= {"mlflow.source.git.commit": commit, "memopt.git.dirty": "true" if changes else "false"}
    return tags
