"""What the repository tracks: sources and docs, never what a run leaves behind (databases, their lock files,
artifact folders) — a lock file in a clone would make the first run of a user's store wait on a stranger's lock."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT

LEFT_BEHIND = re.compile(r"(^|/)(mlflow\.db[^/]*|[^/]+\.db|[^/]+\.lock|mlruns/.*|records\.jsonl)$")


def test_no_file_a_run_leaves_behind_is_tracked():
    done = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr  # CI runs on a clean clone
    tracked = done.stdout.splitlines()
    assert len(tracked) > 100
    assert [path for path in tracked if LEFT_BEHIND.search(path)] == []
