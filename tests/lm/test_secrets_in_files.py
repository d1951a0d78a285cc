"""Every file memopt writes passes through the masking rule of traces: a credential of the environment that
occurs in the data (a turn, a gold answer) or in an LM's reply reaches neither results.json, the graphs nor the
on-disk reply cache (hostile probes S02, S03)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memopt.core.files import write_folder, write_json
from memopt.simlm.server import SimServer

KEY = "sk-test-48c-written-Zq7Mark"


def _memopt(*argv: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memopt", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env={**os.environ, **env})


def _files_holding(root: Path, needle: str, skip: Path) -> list[str]:
    """Files under ``root`` (but ``skip``) whose bytes hold ``needle``."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and p != skip and needle.encode() in p.read_bytes())


def test_a_key_in_the_data_and_in_the_lm_reply_reaches_no_file(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": KEY, "MEMOPT_CACHE_DIR": str(tmp_path / "cache")}
    made = _memopt("data", "synth", "-n", "1", "-s", "3", "--seed", "1", "--hard-percent", "0", "--out", "d.json",
                   cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr
    data = json.loads((tmp_path / "d.json").read_text())
    turn = data[0]["conversation"]["session_1"][3]
    turn["text"] += f" By the way, my API token is {KEY}."
    data[0]["qa"] = [{"question": f"What is {turn['speaker']}'s API token?", "evidence": [turn["dia_id"]],
                      "category": 4, "answer": KEY}]
    (tmp_path / "d.json").write_text(json.dumps(data))
    with SimServer() as server:
        done = _memopt("run", "-p", "long_context", "--data", "d.json", "--lm", f"openai/sim@{server.url}",
                       "--judge-lm", "none", "--trace", "g", "--out", "r.json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "r.json").read_text())
    predictions = [c["prediction"] for c in results["cases"]] if "cases" in results else []
    assert KEY not in done.stdout + done.stderr
    assert _files_holding(tmp_path, KEY, skip=tmp_path / "d.json") == []
    assert any(p and "***" in p for p in predictions), predictions  # the LM did echo it: masked, not missing
    assert list((tmp_path / "cache").rglob("cache.db"))  # the reply cache was written


def test_written_files_are_masked_like_traces(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", KEY)
    write_json(tmp_path / "a.json", {"answer": f"it is {KEY}", "api_key": "short"})
    write_folder(tmp_path / "out", {"p.md": f"use {KEY}\n"})
    assert json.loads((tmp_path / "a.json").read_text()) == {"answer": "it is ***", "api_key": "***"}
    assert (tmp_path / "out" / "p.md").read_text() == "use ***\n"


def test_a_numeric_secret_in_json_data_is_masked_and_the_file_stays_json(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("BANK_PIN_PASSWORD", "40213377")
    write_json(tmp_path / "n.json", {"account": 9402133771, "exact": 40213377, "ratio": 0.5, "ok": True,
                                     "text": "pin 40213377"})
    text = (tmp_path / "n.json").read_text()
    assert "40213377" not in text
    assert json.loads(text) == {"account": "***", "exact": "***", "ratio": 0.5, "ok": True, "text": "pin ***"}
