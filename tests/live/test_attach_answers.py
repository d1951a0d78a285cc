"""`memopt attach --answers` that lacks a selected case's answer is refused before Mem0 ingests anything: no
recording is left to block the run that follows with the answers completed (hostile probe B16)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mem0")

DATA = "synthetic:conversations=1,sessions=2,seed=1"


def _attach(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memopt", "attach", "mem0", "--config", "mem0.json", "--data", DATA,
                           "--limit", "2", "--trace", "t", "--out", "r.json", "--offline", "--answers", "ans.jsonl"],
                          cwd=cwd, capture_output=True, text=True, timeout=600, env=os.environ.copy())


def test_answers_lacking_a_case_are_refused_before_any_work(tmp_path: Path) -> None:
    from memopt.data.source import load_data
    from memopt.export.mem0_check import plan_cases

    cases = [c for _, found in plan_cases(load_data(DATA)[1], 2, 10) for c in found]
    (tmp_path / "mem0.json").write_text("{}")
    (tmp_path / "ans.jsonl").write_text(json.dumps({"case_id": cases[0].case_id, "answer": "Milo"}) + "\n")
    refused = _attach(tmp_path)
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert "ingesting" not in refused.stdout + refused.stderr and not (tmp_path / "t" / "records.jsonl").exists()
    [line] = refused.stderr.strip().splitlines()
    assert cases[1].case_id in line and "--answers" in line
    (tmp_path / "ans.jsonl").write_text("".join(json.dumps({"case_id": c.case_id, "answer": "Milo"}) + "\n"
                                                for c in cases))
    done = _attach(tmp_path)  # the refused run left nothing in the way
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "t" / "records.jsonl").is_file()
