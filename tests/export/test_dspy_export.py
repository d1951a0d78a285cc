"""The DSPy export loads the way a DSPy user loads a saved program: ``dspy.load(DIR, allow_pickle=True)``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memopt.core.errors import ConfigError
from memopt.export.formats import dspy_load_line, export
from memopt.export.knobs import Knobs

TUNED = {"extract": "Extract every fact of both speakers, with its date.", "update": "Keep compatible facts.",
         "answer": "Answer from the memories; say Not mentioned when they hold nothing."}


def test_a_program_directory_loads_with_dspy_load_in_a_fresh_process(tmp_path):
    knobs = Knobs({"top_k": 7, "similar_k": 3}, "r" * 32, {"val_f1": 0.5})
    out = export("mem0", TUNED, "dspy", tmp_path / "program", knobs)
    assert sorted(p.name for p in out.iterdir()) == ["knobs.yaml", "metadata.json", "program.pkl"]
    line = dspy_load_line("mem0", out, knobs)
    assert line == f"import dspy; program = dspy.load({str(out)!r}, allow_pickle=True)"
    script = f"{line}\nprint(type(program).__mro__[1].__name__, program.instructions() == {TUNED!r}, program.knobs)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "MemorySystem True {'top_k': 7, 'similar_k': 3}"
    again = export("mem0", {**TUNED, "update": "Update only on contradiction."}, "dspy", out, knobs)  # replaced
    assert again == out and (out / "program.pkl").is_file()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="not a DSPy program memopt exported"):
        export("mem0", TUNED, "dspy", tmp_path / "mine", knobs)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_a_state_file_loads_with_the_one_line_the_export_prints(tmp_path):
    knobs = Knobs({"top_k": 7, "similar_k": 3}, None, {}, "defaults")
    out = export("mem0", TUNED, "dspy", tmp_path / "program.json", knobs)
    line = dspy_load_line("mem0", out, knobs)
    assert "make_system('mem0', similar_k=3, top_k=7)" in line
    script = f"{line}\nprint(program.instructions() == {TUNED!r}, program.knobs['top_k'])"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True 7"
