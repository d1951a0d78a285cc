"""`memopt run` end to end through the console entry point: results file, table, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memopt.simlm.server import SimServer

SMALL = "synthetic:conversations=2,sessions=3,seed=5"


def memopt(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, timeout=timeout)


def test_run_writes_results_in_the_documented_schema(tmp_path):
    out = tmp_path / "results.json"
    done = memopt("run", "--pipeline", "mem0", "--data", SMALL, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "adversarial" in done.stdout and "F1" in done.stdout and "simulated" in done.stdout
    results = json.loads(out.read_text())
    assert {"pipeline", "lm", "simulated", "data", "prompts", "metrics", "cases"} <= set(results)
    assert results["pipeline"] == "mem0" and results["simulated"] is True
    assert set(results["prompts"]) == {"extract", "update", "answer"}
    metrics = results["metrics"]
    assert {"f1", "em", "judge", "n", "errored", "by_category"} <= set(metrics)
    assert metrics["n"] == len(results["cases"]) and metrics["errored"] == 0
    mean_f1 = sum(c["f1"] for c in results["cases"]) / len(results["cases"])
    assert abs(metrics["f1"] - mean_f1) < 1e-3
    assert sum(v["n"] for v in metrics["by_category"].values()) == metrics["n"]


@pytest.mark.slow  # over 2 s on a quiet machine (CI runs it with -m slow)
def test_run_with_exported_prompts_uses_their_knobs_under_the_command_line_ones(tmp_path):
    from memopt.systems.prompts import load_prompts, write_prompts

    tuned = tmp_path / "tuned"
    write_prompts("mem0", load_prompts("mem0", ["extract", "update", "answer"]), tuned)
    (tuned / "mem0" / "knobs.yaml").write_text("knobs:\n  top_k: 3\n  similar_k: 2\nrun_id: abc\nsource: run\n")
    out = tmp_path / "r.json"
    done = memopt("run", "-p", "mem0", "--data", SMALL, "--prompts", str(tuned), "--knob", "similar_k=4",
                  "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["knobs"] == {"top_k": 3, "similar_k": 4}  # the score's knobs, --knob first
    assert f"knobs from {tuned / 'mem0' / 'knobs.yaml'}: top_k=3 (--knob overrides)" in done.stderr
    (tuned / "mem0" / "knobs.yaml").write_text("knobs:\n  chunk_size: 3\n")
    done = memopt("run", "-p", "mem0", "--data", SMALL, "--prompts", str(tuned), "--out", str(out))
    assert done.returncode == 2 and "knobs.yaml: pipeline mem0: unknown knob(s) chunk_size" in done.stderr, done.stderr


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_bad_arguments_exit_2_with_one_message(tmp_path):
    for args, expected in [
        (("--pipeline", "mem9"), "unknown pipeline 'mem9'"),
        (("--pipeline", "rag", "--prompts", str(tmp_path / "nope")), "no such directory"),
        (("--pipeline", "rag", "--data", str(tmp_path / "missing.json")), "no such data file"),
        (("--pipeline", "rag", "--lm", "not a spec"), "not a spec"),
        (("--pipeline", "rag", "--knob", "top_k"), "expected NAME=INTEGER"),
        (("--pipeline", "rag", "--conversations", "nope"), "unknown conversation id"),
    ]:
        done = memopt("run", "--data", SMALL, "--out", str(tmp_path / "r.json"), *args) if "--data" not in args \
            else memopt("run", "--out", str(tmp_path / "r.json"), *args)
        assert done.returncode == 2, (args, done.stderr)
        assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_lm_failures_mark_cases_and_too_many_exit_nonzero_after_writing(tmp_path):
    # Unparseable replies are asked for again twice (parse retries) before a case errors; one request at a time
    # (--concurrency 1) keeps the seeded faults on the same requests.
    with SimServer(seed=3, malformed_rate=0.5) as some, SimServer(seed=3, malformed_rate=1.0) as broken:
        partial, total = tmp_path / "partial.json", tmp_path / "broken.json"
        ok = memopt("run", "-p", "long_context", "--data", SMALL, "--lm", f"openai/sim@{some.url}",
                    "--judge-lm", "none", "--concurrency", "1", "--out", str(partial))
        bad = memopt("run", "-p", "long_context", "--data", SMALL, "--lm", f"openai/sim@{broken.url}",
                     "--judge-lm", "none", "--limit", "5", "--no-cache", "--out", str(total))
    cases = json.loads(partial.read_text())["cases"]
    errored = [c for c in cases if "error" in c]
    assert ok.returncode == 0, ok.stderr
    assert 0 < len(errored) <= 0.2 * len(cases) and all(c["prediction"] == "" for c in errored)
    assert bad.returncode == 1 and "5 of 5 cases errored" in bad.stderr
    assert all("error" in c for c in json.loads(total.read_text())["cases"])
