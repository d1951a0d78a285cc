"""`memopt mem0 check`: the real Mem0 (mem0ai 1.0.11) runs on exported prompts, offline; its error paths.

The acceptance test (slow, run by .ci/run with the mem0 extra) runs real Mem0 against SimLM three times on held-out
synthetic conversations: the seed prompts (through a `memopt serve` process), the prompts of a quickstart optimize
run, and an ablation (tuned extraction, seed update) that isolates the update prompt. Each check runs under an audit
hook (tests/fixtures/sandbox_guard.py) that reports any non-loopback connection and any file written outside the
test's temporary directory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError, DataError, LMError
from memopt.data.source import load_data
from memopt.export.mem0_check import (
    EMBEDDING_DIMS,
    MEM0_EXTRA,
    check_mem0,
    load_fragment,
    mem0_config,
    session_messages,
)
from tests.conftest import ROOT

MEMOPT = str(Path(sys.executable).with_name("memopt"))
GUARD = str(ROOT / "tests" / "fixtures" / "sandbox_guard.py")
HELD_OUT = "synthetic:conversations=3,sessions=6,seed=1"  # the quickstart optimizes on seed 0
TINY = "synthetic:conversations=1,sessions=2,seed=1"
FRAGMENT = {"version": "v1.1", "custom_fact_extraction_prompt": "Extract facts.\nToday's date is {session_date}.",
            "custom_update_memory_prompt": "Decide ADD, UPDATE, DELETE or NONE."}


def _needs_mem0() -> None:
    """Skip unless mem0ai is installed, without importing it (the check must be the first to import mem0)."""
    if importlib.util.find_spec("mem0") is None:
        pytest.skip(f"needs the mem0 extra: {MEM0_EXTRA}")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _memopt(*args: str, cwd: Path, env: dict[str, str] | None = None,
            prelude: str = "") -> subprocess.CompletedProcess:
    code = f"import sys\n{prelude}\nfrom memopt.cli import main\nsys.argv = ['memopt', *sys.argv[1:]]\nmain()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=300)


def test_load_fragment_names_the_file_and_the_problem(tmp_path):
    with pytest.raises(ConfigError, match="no such file; write one with memopt export"):
        load_fragment(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{bad")
    with pytest.raises(ConfigError, match=r"bad.json: not valid JSON \(line 1, column 2"):
        load_fragment(tmp_path / "bad.json")
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(ConfigError, match="expected a JSON object"):
        load_fragment(tmp_path / "list.json")
    (tmp_path / "ok.json").write_text(json.dumps(FRAGMENT))
    assert load_fragment(tmp_path / "ok.json") == FRAGMENT


def test_full_config_points_mem0_at_simlm_and_the_temp_dir(tmp_path):
    production = {**FRAGMENT, "llm": {"provider": "openai", "config": {"model": "gpt-4.1-mini"}},
                  "vector_store": {"provider": "qdrant", "config": {"host": "db.example.com", "port": 6333}}}
    config = mem0_config(production, "http://127.0.0.1:9999/v1", tmp_path)
    assert config["custom_fact_extraction_prompt"] == FRAGMENT["custom_fact_extraction_prompt"]
    assert config["custom_update_memory_prompt"] == FRAGMENT["custom_update_memory_prompt"]
    for role in ("llm", "embedder"):
        assert config[role]["provider"] == "openai"
        assert config[role]["config"]["openai_base_url"] == "http://127.0.0.1:9999/v1"
    assert config["embedder"]["config"]["embedding_dims"] == EMBEDDING_DIMS
    store = config["vector_store"]["config"]
    assert store["path"].startswith(str(tmp_path)) and store["on_disk"] and store["embedding_model_dims"] == 64
    assert "host" not in store and config["history_db_path"].startswith(str(tmp_path))


def test_sessions_become_user_messages_led_by_the_speaker():
    conversation = load_data(TINY)[1][0]
    session = conversation.sessions[0]
    messages = session_messages(session)
    assert len(messages) == len(session.turns)
    assert {m["role"] for m in messages} == {"user"}
    assert [m["content"] for m in messages] == [f"{t.speaker}: {t.text}" for t in session.turns]


def test_an_unreachable_or_public_server_is_a_clear_error():
    conversations = load_data(TINY)[1]
    before = dict(os.environ)
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(LMError, match=f"the LM server at {url} is unreachable .*memopt serve"):
        check_mem0(FRAGMENT, conversations, server_url=url)
    with pytest.raises(ConfigError, match="loopback server only"):
        check_mem0(FRAGMENT, conversations, server_url="http://10.1.2.3:8008/v1")
    with pytest.raises(ConfigError, match="--top-k"):
        check_mem0(FRAGMENT, conversations, top_k=0)
    assert dict(os.environ) == before, "the check restores MEM0_DIR, MEM0_TELEMETRY, NO_PROXY, OPENROUTER_API_KEY"


def test_a_non_utf8_answer_prompt_is_one_clear_error(tmp_path):
    from memopt.cli.options import answer_prompt_text

    (tmp_path / "bin.dat").write_bytes(b"\xaf\xff\xfe binary \x80\x81")
    with pytest.raises(DataError, match=r"^--answer-prompt .*bin\.dat: not UTF-8 text\. Save the answer"):
        answer_prompt_text(tmp_path / "bin.dat")
    (tmp_path / "answer.md").write_text("  Answer briefly.\n", encoding="utf-8")
    assert answer_prompt_text(tmp_path / "answer.md") == "Answer briefly."


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_cli_errors_exit_2_with_one_message(tmp_path):
    (tmp_path / "fragment.json").write_text(json.dumps(FRAGMENT))
    base = ("mem0", "check", "--data", TINY, "--limit", "1")
    cases = [
        (("--config", "missing.json"), "", "--config missing.json: no such file"),
        (("--config", "fragment.json"), "sys.modules['mem0'] = None", MEM0_EXTRA),
        (("--config", "fragment.json", "--server", f"http://127.0.0.1:{_closed_port()}/v1"), "", "is unreachable"),
    ]
    for args, prelude, expected in cases:
        done = _memopt(*base, *args, cwd=tmp_path, prelude=prelude)
        assert done.returncode == 2, (args, done.stderr)
        assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.slow
def test_configs_mem0_would_ignore_or_reject_are_errors(tmp_path):
    """Each in a process of its own: the check refuses to run where mem0 was imported before it (telemetry)."""
    _needs_mem0()
    ignored = "would silently ignore: custom_fact_extration_prompt"
    cases = [({"custom_instructions": "Extract facts."}, "custom_instructions, a mem0ai 2.x key"),
             ({"custom_fact_extration_prompt": "Extract facts."}, ignored),
             ({"custom_fact_extraction_prompt": 42}, "Mem0 rejected the config: ")]
    for index, (fragment, expected) in enumerate(cases):
        (tmp_path / f"config{index}.json").write_text(json.dumps(fragment))
        done = _memopt("mem0", "check", "--config", f"config{index}.json", "--data", TINY, "--limit", "1",
                       cwd=tmp_path)
        assert done.returncode == 2 and expected in done.stderr, (fragment, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
    assert "Input should be a valid string" in done.stderr  # pydantic's reason, without the value


def _guarded_check(config: Path, sandbox: Path, *extra: str) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.lower().endswith("_proxy")}
    env.update({"MEMOPT_TEST_SANDBOX": str(sandbox), "TMPDIR": str(sandbox / "tmp"), "PYTHONDONTWRITEBYTECODE": "1",
                "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
                "ALL_PROXY": "http://127.0.0.1:9", "OPENROUTER_API_KEY": "sk-not-a-key"})
    env.pop("MEM0_TELEMETRY", None)
    env.pop("MEM0_DIR", None)
    out = sandbox / f"{config.stem}-result.json"
    done = subprocess.run([sys.executable, GUARD, "mem0", "check", "--config", str(config), "--data", HELD_OUT,
                           "--out", str(out), *extra], capture_output=True, text=True, cwd=sandbox, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "GUARD:" not in done.stderr, done.stderr
    assert list((sandbox / "tmp").iterdir()) == [], "the check removes its temporary directory"
    return json.loads(out.read_text())


def _tuned_fragment(tmp_path: Path) -> Path:
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    done = subprocess.run([MEMOPT, "optimize", str(ROOT / "experiments" / "quickstart.yaml"), "--tracking-uri", uri,
                           "--out", "summary.json"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    run_id = json.loads((tmp_path / "summary.json").read_text())["run_id"]
    done = subprocess.run([MEMOPT, "export", run_id, "--format", "mem0", "--out", "tuned.json", "--tracking-uri",
                           uri], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    return tmp_path / "tuned.json"


def _serve_and_check(config: Path, sandbox: Path) -> tuple[dict, str]:
    proc = subprocess.Popen([MEMOPT, "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        url = proc.stdout.readline().split("serving at ")[1].split()[0]
        result = _guarded_check(config, sandbox, "--server", url)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    return result, out


@pytest.mark.slow
def test_real_mem0_stores_what_the_tuned_prompts_intend(tmp_path):
    _needs_mem0()
    home_before = sorted(p.name for p in Path.home().iterdir())
    sandbox = tmp_path / "sandbox"
    (sandbox / "tmp").mkdir(parents=True)
    done = subprocess.run([MEMOPT, "export", str(ROOT / "prompts"), "--pipeline", "mem0", "--format", "mem0",
                           "--out", str(sandbox / "seed.json")], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    tuned_path = _tuned_fragment(tmp_path)
    (sandbox / "tuned.json").write_text(tuned_path.read_text())
    seed, tuned = (json.loads((sandbox / f"{name}.json").read_text()) for name in ("seed", "tuned"))
    assert tuned != seed, "the quickstart run changed the Mem0 prompts"
    ablation = {**tuned, "custom_update_memory_prompt": seed["custom_update_memory_prompt"]}
    (sandbox / "ablation.json").write_text(json.dumps(ablation))

    seed_run, served = _serve_and_check(sandbox / "seed.json", sandbox)
    tuned_run = _guarded_check(sandbox / "tuned.json", sandbox)
    ablation_run = _guarded_check(sandbox / "ablation.json", sandbox)

    chat, embeddings = map(int, re.search(r"stopped: (\d+) requests, .* (\d+) embedding requests", served).groups())
    assert chat >= 2 * 18 and embeddings > chat, "memopt serve answered every Mem0 call (18 sessions)"
    assert tuned_run["lm_requests"]["chat"] > 0 and tuned_run["lm_requests"]["embeddings"] > 0
    assert tuned_run["prompts"] == {"custom_fact_extraction_prompt": True, "custom_update_memory_prompt": True}
    assert tuned_run["date_note"] is None and tuned_run["mem0_version"] == "1.0.11"
    s, t, a = seed_run["memory"], tuned_run["memory"], ablation_run["memory"]
    # Inside Mem0's own store: the tuned extraction prompt makes memories carry absolute dates ...
    assert s["units_with_absolute_dates"] == 0 < s["units_with_relative_dates"]
    assert t["units_with_relative_dates"] == 0 and t["units_with_absolute_dates"] >= s["units_with_relative_dates"], \
        (s, t)
    assert t["units"] > s["units"]
    # ... and, with the same extraction prompt, the tuned update prompt stops overwriting compatible facts.
    assert t["updates"] < a["updates"] and t["units"] > a["units"]
    assert tuned_run["metrics"]["f1"] > seed_run["metrics"]["f1"] + 0.2  # measured: 0.230 → 0.511
    assert tuned_run["metrics"]["n"] == seed_run["metrics"]["n"] > 50
    assert sorted(p.name for p in Path.home().iterdir()) == home_before
