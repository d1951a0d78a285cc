"""`memopt export` when the disk refuses a write part-way: one error, the old export intact, nothing left behind.

The refusal is real: the export runs in a process whose file-size limit (``RLIMIT_FSIZE``, with ``SIGXFSZ``
ignored) makes the system refuse a write past a few kilobytes, as a disk that fills after the first file does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.systems.prompts import load_prompts, write_prompts

OLD = {"extract": "Extract the facts of both speakers.", "update": "Decide ADD, UPDATE, DELETE or NONE.",
       "answer": "Answer in a few words from the memories."}
# The update prompt is past the limit: the text export writes answer and extract first, then the disk is "full".
NEW = {"answer": "Answer briefly from the memories.", "extract": "Extract every fact; resolve dates.",
       "update": "Keep compatible facts; UPDATE only what changed. " * 200}
LIMIT = 4096

FULL_DISK = """\
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
sys.argv = ["memopt", "export", *sys.argv[1:]]
from memopt.cli import main
main()
"""


def _export(*args: str, cwd: Path, full: bool = False) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", FULL_DISK.format(limit=LIMIT), *args] if full else \
        [sys.executable, "-m", "memopt", "export", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow  # over 4 s on a quiet machine (CI runs it with -m slow)
@pytest.mark.parametrize("fmt, out", [("text", "exported"), ("mem0", "mem0.json"), ("dspy", "program.json")])
def test_a_write_refused_part_way_leaves_the_old_export_intact_with_one_error(fmt, out, tmp_path):
    write_prompts("mem0", OLD, tmp_path / "old")
    write_prompts("mem0", NEW, tmp_path / "new")
    first = _export(str(tmp_path / "old"), "--format", fmt, "--out", out, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    if fmt == "text":
        (tmp_path / "exported" / "mem0" / "NOTES.txt").write_text("mine\n")  # a file of the user's in the folder
    before = _tree(tmp_path)
    failed = _export(str(tmp_path / "new"), "--format", fmt, "--out", out, cwd=tmp_path, full=True)
    assert failed.returncode == 2, failed.stderr
    lines = [line for line in failed.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "cannot be written" in lines[0], failed.stderr
    assert _tree(tmp_path) == before  # not one new byte, no temporary file or folder left behind
    done = _export(str(tmp_path / "new"), "--format", fmt, "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    if fmt == "text":
        assert load_prompts("mem0", list(NEW), tmp_path / out) == {op: text.strip() for op, text in NEW.items()}
        assert (tmp_path / "exported" / "mem0" / "NOTES.txt").read_text() == "mine\n"  # kept by the swap
        assert sorted(p.name for p in (tmp_path / "exported").iterdir()) == ["mem0"]
    elif fmt == "mem0":
        assert json.loads((tmp_path / out).read_text())["custom_update_memory_prompt"] == NEW["update"].strip()
