"""The memory-system registry: the shipped four found by entry point, declarations validated at
registration, plug-ins discovered from installed distributions, a broken plug-in isolated."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError, PluginError
from memopt.lm.signatures import AnswerQuestion, ExtractFacts
from memopt.systems import MemorySystem, OpSpec, make_system, memory_system, system_class, system_names, system_source
from memopt.taxonomy import STAGES
from tests.conftest import ROOT, SHIPPED

ANSWER = OpSpec("answer", "llm", "query", "answers", AnswerQuestion, stages="response")


def test_memopt_never_imports_pipelines():
    pattern = re.compile(r"^\s*(from pipelines\b|import pipelines\b)", re.M)
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "memopt").rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []


def test_the_shipped_systems_come_from_memopts_entry_points_with_valid_declarations():
    assert set(SHIPPED) <= set(system_names())
    for name in SHIPPED:
        cls = system_class(name)
        assert cls.name == name and system_source(name).startswith("memopt ")
        assert all(spec.stages and set(spec.stages) <= set(STAGES) for spec in cls.operations)
    assert system_class("mem0").op_spec("update").stages == ("update", "deletion")
    assert system_class("rag").prompt_ops("retrieve") == ("rewrite_query",)
    assert system_class("mem0").prompt_ops("retrieve") == () and system_class("mem0").steering_knobs("retrieve") == (
        "top_k",)
    assert make_system("rag", top_k=3).knobs["top_k"] == 3


def test_an_unknown_system_lists_the_known_ones():
    with pytest.raises(ConfigError) as err:
        system_class("mem9")
    assert "unknown pipeline 'mem9'" in str(err.value) and all(name in str(err.value) for name in SHIPPED)


def _declare(name: str, *operations: OpSpec, **attrs) -> type[MemorySystem]:
    return memory_system(name)(type("Bad", (MemorySystem,), {"operations": operations, **attrs}))


@pytest.mark.parametrize(("operations", "attrs", "expected"), [
    ((OpSpec("extract", "llm", "ingest", "x", ExtractFacts, stages="extracton"), ANSWER), {},
     "op 'extract': unknown stage 'extracton'"),
    ((OpSpec("extract", "llm", "ingest", "x", ExtractFacts), ANSWER), {}, "op 'extract' declares no stage"),
    ((OpSpec("retrieve", "tool", "query", "x", stages="retrieval", steered_by="rewrite_query"), ANSWER), {},
     "op 'retrieve' is steered by 'rewrite_query', which is neither an op nor a knob"),
    ((OpSpec("extract", "llm", "ingest", "x", stages="extraction"), ANSWER), {}, "op 'extract' is an LLM op without"),
    ((OpSpec("extract", "llm", "ingest", "x", ExtractFacts, stages="extraction"),), {}, "no op of stage 'response'"),
    ((OpSpec("ask", "llm", "query", "x", AnswerQuestion, stages="response"),), {}, "'ask' is taken by MemorySystem"),
    ((ANSWER,), {"ingest_knobs": ("top_k",)}, "ingest_knobs names 'top_k'"),
])
def test_bad_declarations_fail_at_registration_naming_the_system_and_op(operations, attrs, expected):
    with pytest.raises(PluginError) as err:
        _declare("broken_demo", *operations, **attrs)
    assert "memory system 'broken_demo'" in str(err.value) and expected in str(err.value)
    assert "broken_demo" not in system_names()


def test_a_name_is_registered_once():
    with pytest.raises(PluginError, match="'mem0' is registered twice"):
        _declare("mem0", ANSWER)
    assert system_class("mem0").__module__ == "pipelines.mem0"


_PLUGIN = '''
from memopt.lm.signatures import AnswerQuestion
from memopt.systems import MemorySystem, OpSpec

class Echo(MemorySystem):
    operations = (OpSpec("answer", "llm", "query", "answers", AnswerQuestion, stages="response"),)
'''


def _distribution(site: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
    """An installed distribution as importlib.metadata reads one: a .dist-info with entry_points.txt."""
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[memopt.memory_systems]\n{lines}")
    for module, text in modules.items():
        (site / f"{module}.py").write_text(text)


def _memopt(*args: str, site: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "400"}
    return subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, timeout=120,
                          env=env)


def test_installed_plugins_are_discovered_and_a_broken_one_fails_alone(tmp_path):
    _distribution(tmp_path, "demo_echo", {"echo": "demo_echo:Echo"}, {"demo_echo": _PLUGIN})
    _distribution(tmp_path, "demo_broken", {"broken": "demo_broken:Broken", "bad_stage": "demo_bad:Bad"},
                  {"demo_broken": "raise ImportError('needs a package that is not installed')",
                   "demo_bad": _PLUGIN.replace('stages="response"', 'stages="answering"').replace("Echo", "Bad")})
    listed = _memopt("systems", site=tmp_path)
    rows = {line.split("│")[1].strip(): line for line in listed.stdout.splitlines() if line.count("│") > 2}
    assert listed.returncode == 2 and "Traceback" not in listed.stderr, listed.stderr
    assert set(rows) >= {*SHIPPED, "echo", "broken", "bad_stage"}
    assert "demo_echo 0.1: demo_echo:Echo" in rows["echo"] and "answer" in rows["echo"]
    assert "entry point broken = demo_broken:Broken in group memopt.memory_systems, from demo_broken 0.1" in \
        rows["broken"] and "ImportError: needs a package that is not installed" in rows["broken"]
    assert "op 'answer': unknown stage 'answering'" in rows["bad_stage"]
    assert "memopt 0.1.0: pipelines.mem0:Mem0" in rows["mem0"]

    used = _memopt("run", "-p", "broken", site=tmp_path)
    message = " ".join(used.stderr.split())
    assert used.returncode == 2 and "Traceback" not in used.stderr and message.count("error:") == 1, used.stderr
    assert "memory system 'broken' could not be loaded (entry point broken = demo_broken:Broken" in message
