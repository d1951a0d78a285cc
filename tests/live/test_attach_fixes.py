"""`memopt attach mem0` on a user's own config: what it refuses, what it says, and what reaches Mem0.

Each test fails without its fix: a config key the installed Mem0 major does not know (a typo, or 2.x's
``custom_instructions`` on 1.0.11) was silently replaced by Mem0's defaults; a Mem0 without an API key ended in
a traceback; without ``--offline`` the data set went into the user's own stores without a word; the question date
of LongMemEval never reached the answer; 2.x dated the replayed history by the day of the run. The tests that run
the real Mem0 are slow and need the mem0 extra (1.0.11); the 2.x one runs in a venv with mem0ai 2.x
(``-k mem0_2x``, as .ci/run does).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError
from memopt.data.source import load_data
from tests.conftest import ROOT

MEMOPT = str(Path(sys.executable).with_name("memopt"))


def _major() -> int | None:
    try:
        return int(importlib.metadata.version("mem0ai").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


def _needs_mem0(major: int) -> None:
    if importlib.util.find_spec("mem0") is None:
        pytest.skip('needs the mem0 extra: pip install -e ".[mem0]"')
    if _major() != major:
        pytest.skip(f"runs with mem0ai {major}.x")


def _env(tmp_path: Path) -> dict[str, str]:
    """An environment where Mem0 cannot reach the network or the home directory, and has no API key."""
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and not k.endswith("_API_KEY")}
    env.update({"MEM0_DIR": str(tmp_path / "mem0home"), "MEM0_TELEMETRY": "False", "HTTP_PROXY": "http://127.0.0.1:9",
                "HTTPS_PROXY": "http://127.0.0.1:9", "TMPDIR": str(tmp_path)})
    return env


def _attach(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([MEMOPT, "attach", "mem0", *args, "--trace", "trace", "--out", "results.json"],
                          capture_output=True, text=True, cwd=tmp_path, env=_env(tmp_path), timeout=600)


def test_without_offline_the_users_stores_are_not_written_without_yes(tmp_path):
    from memopt.live.attach import attach_mem0

    _, conversations = load_data("synthetic:conversations=1,sessions=2,seed=3")
    config = {"vector_store": {"provider": "qdrant", "config": {"path": str(tmp_path / "prod-qdrant")}},
              "history_db_path": str(tmp_path / "prod-history.db")}
    with pytest.raises(ConfigError, match=r"writes the data set into your Mem0's own stores \(the vector store qdrant "
                                          r"at .*prod-qdrant and the history database .*prod-history.db\); pass --yes"):
        attach_mem0(config, conversations, tmp_path / "trace")
    assert not (tmp_path / "prod-qdrant").exists() and not (tmp_path / "trace").exists()


@pytest.mark.slow  # imports the real mem0ai (CI runs it with -m slow)
def test_a_key_the_installed_mem0_does_not_know_is_refused_by_name(tmp_path):
    _needs_mem0(1)
    for key, says in (("custom_instructions", "a mem0ai 2.x key; 1.0.x would ignore it"),
                      ("custom_fact_extration_prompt", "mem0ai 1.0.11 would ignore it and run its defaults")):
        (tmp_path / "c.json").write_text(json.dumps({key: "Extract facts.", "version": "v1.1"}))
        done = _attach(tmp_path, "--config", "c.json", "--data", "synthetic:conversations=1,sessions=2,seed=3",
                       "--offline")
        assert done.returncode == 2, done.stderr
        assert f"--config: key '{key}' is not a mem0ai 1.0.11 setting" in done.stderr and says in done.stderr
        assert "Traceback" not in done.stderr and not (tmp_path / "trace").exists()


@pytest.mark.slow  # imports the real mem0ai (CI runs it with -m slow)
def test_a_mem0_without_an_api_key_is_one_clear_error(tmp_path):
    _needs_mem0(1)
    config = {"vector_store": {"provider": "qdrant", "config": {"path": str(tmp_path / "q"), "on_disk": True}},
              "history_db_path": str(tmp_path / "h.db")}
    (tmp_path / "c.json").write_text(json.dumps(config))
    done = _attach(tmp_path, "--config", "c.json", "--data", "synthetic:conversations=1,sessions=2,seed=3", "--yes")
    assert done.returncode == 2, done.stderr
    assert "Mem0 could not start with this config (OpenAIError" in done.stderr, done.stderr
    assert "OPENAI_API_KEY" in done.stderr and "--offline" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow  # the real mem0ai 1.0.11 offline (CI runs it with -m slow)
def test_the_longmemeval_question_date_reaches_the_answer(tmp_path):
    _needs_mem0(1)
    done = subprocess.run([MEMOPT, "data", "synth", "--format", "longmemeval", "--conversations", "2", "--sessions",
                           "3", "--seed", "4", "--out", "lme.json"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([MEMOPT, "export", str(ROOT / "prompts"), "--pipeline", "mem0", "--format", "mem0", "--out",
                           "mem0.json"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    done = _attach(tmp_path, "--config", "mem0.json", "--data", "lme.json", "--offline")
    assert done.returncode == 0, done.stderr
    from memopt.trace import load_graph

    asked = {i["question_id"]: i["question_date"] for i in json.loads((tmp_path / "lme.json").read_text())}
    graphs = sorted((tmp_path / "trace").glob("*.json"))
    assert len(graphs) == len(asked)
    for path in graphs:
        G = load_graph(path)
        (case,) = G.graph["cases"]
        context = G.nodes[f"context:{G.graph['conversation']}:{case['key']}@1"]["value"]
        assert context.startswith(f"Current date: {asked[G.graph['conversation']]}\n"), context[:120]
        assert case["date"] == asked[G.graph["conversation"]]


@pytest.mark.slow  # the real mem0ai 2.x offline, in a venv of its own (CI: -k mem0_2x)
def test_attach_on_real_mem0_2x_dates_the_history_as_the_conversation_was(tmp_path):
    _needs_mem0(2)
    done = subprocess.run([MEMOPT, "export", str(ROOT / "prompts"), "--pipeline", "mem0", "--format", "mem0-v2",
                           "--out", "v2.json"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "{session_date}" not in json.loads((tmp_path / "v2.json").read_text())["custom_instructions"]
    data = "synthetic:conversations=1,sessions=4,seed=5"
    done = _attach(tmp_path, "--config", "v2.json", "--data", data, "--offline")
    assert done.returncode == 0, done.stderr
    from memopt.live.records import read_records
    from memopt.systems.helpers import session_date

    _, records = read_records(tmp_path / "trace" / "records.jsonl")
    _, (conversation,) = load_data(data)
    dates = [session_date(s) for s in conversation.sessions]
    prompts = ["\n".join(str(m.get("content")) for m in r["messages"] or []) for r in records if r["type"] == "llm"]
    stated = [next((d for d in dates if f"Today's date is {d}." in p), None) for p in prompts]
    assert stated == dates, "each session's extraction is dated by its session, not by the day of the run"
    units = [r for r in records if r["type"] == "history"]
    years = {d.split()[-1] for d in dates}
    assert any(any(y in str(row["new_memory"]) for y in years) for r in units for row in r["rows"])
