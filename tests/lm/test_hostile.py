"""Hostile LM setups and runs: a dying local server, drift on --resume, bad LM configuration, secrets in prompts.

Each CLI case runs the real console entry point (`memopt.cli.main`) in-process from an empty working
directory and asserts the exit code, exactly one ``error: ...`` line on stderr naming the culprit,
no traceback, and that nothing outside the output folder changed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import LMError
from tests.conftest import run_main as _run
from tests.conftest import snapshot

MEMOPT = str(Path(sys.executable).with_name("memopt"))
DATA = "synthetic:conversations=2,sessions=2,seed=1,questions_per_conversation=6"
OPT_DATA = "synthetic:conversations=4,sessions=2,seed=1,questions_per_conversation=6"


def _one_error(code: int, out: str, err: str, expected_code: int, *names: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == expected_code, (code, out, err)
    assert "Traceback" not in out + err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------- item 1: the local server dies

def _stand_in_server(tmp_path: Path):
    """A real OpenAI-compatible server process (`memopt serve`, SimLM), registered as this process's local server."""
    from memopt.lm.local import LocalServer

    proc = subprocess.Popen([MEMOPT, "serve", "--port", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    url = proc.stdout.readline().split("serving at ")[1].split()[0]
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    return LocalServer("smollm2", proc, port, tmp_path / "server.log")


@pytest.mark.parametrize(("signum", "named"), [
    (signal.SIGSEGV, "signal 11 (SIGSEGV): llama-cpp-python's build crashed on this CPU"),
    (signal.SIGKILL, "signal 9 (SIGKILL)"),
    (signal.SIGABRT, "signal 6 (SIGABRT)"),
])
def test_a_local_server_killed_by_a_signal_is_named_with_what_to_do(signum, named, tmp_path, monkeypatch):
    """The server answers over HTTP, is killed by a signal, and the next call says how it died (not 'run again')."""
    from memopt.lm import local
    from memopt.lm.explain import explain_lm_error
    from memopt.lm.spec import parse_lm_spec

    server = _stand_in_server(tmp_path)
    monkeypatch.setitem(local._SERVERS, "smollm2", server)
    try:
        lm = local.llama_cpp_lm(server.url, "smollm2", local="smollm2", timeout=30)
        assert lm("Say hello.")  # a real reply over HTTP
        os.kill(server.pid, signum)
        server.process.wait(timeout=60)  # dead before the next call: SIGABRT's core dump can take a moment
        with pytest.raises(LMError) as caught:
            lm("Say hello again.")
    finally:
        server.process.kill()
        server.process.wait()
    message = str(caught.value)
    assert named in message and "\n" not in message, message
    assert f"pid {server.pid}" in message and "run again" not in message
    assert (local.REBUILD_HINT in message) == (signum == signal.SIGSEGV)
    explained = str(explain_lm_error(parse_lm_spec("local"), ConnectionError("connection refused")))
    assert named in explained and "run again" not in explained, explained


def test_exit_codes_and_unknown_signals_are_named():
    from memopt.lm.local import PORTABLE_FLAGS, REBUILD_HINT, how_it_died

    assert how_it_died(3) == "exited with code 3"
    assert how_it_died(-signal.SIGILL).startswith("was killed by signal 4 (SIGILL): llama-cpp-python's build")
    assert how_it_died(-signal.SIGTERM) == "was killed by signal 15 (SIGTERM)"
    assert how_it_died(-200) == "was killed by signal 200 (unknown signal)"
    assert "--no-cache-dir" in REBUILD_HINT and PORTABLE_FLAGS in REBUILD_HINT and "GGML_NATIVE=OFF" in PORTABLE_FLAGS


def test_the_portable_build_script_builds_the_pinned_version_without_native_tuning():
    """`.ci/install-llama-cpp` (run by `.ci/run`) builds the version the `local` extra pins, with the same flags
    memopt's crash message gives, past pip's cache."""
    import tomllib

    from memopt.lm.local import LLAMA_CPP_VERSION, PORTABLE_FLAGS

    root = Path(__file__).resolve().parents[2]
    script = (root / ".ci" / "install-llama-cpp").read_text()
    pins = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["local"]
    assert f"llama-cpp-python[server]=={LLAMA_CPP_VERSION}" in pins
    assert f'version="${{LLAMA_CPP_VERSION:-{LLAMA_CPP_VERSION}}}"' in script
    assert f'flags="{PORTABLE_FLAGS}"' in script
    assert "--no-cache-dir" in script and "--no-index" in script
    assert "bash .ci/install-llama-cpp" in (root / ".ci" / "run").read_text()


@pytest.mark.slow
def test_the_real_llama_cpp_server_killed_by_sigsegv_is_reported_as_a_crash_of_its_build():
    """On the real server (needs memopt[local]): a completion, then SIGSEGV, then one LMError with the rebuild hint."""
    from memopt.lm import local
    from memopt.lm.build import make_lm

    if local.missing_local() and os.environ.get("CI") != "true":
        pytest.skip(local.missing_local())
    lm = make_lm("local")
    try:
        assert lm("Say hello.")
        server = local._SERVERS["smollm2"]
        os.kill(server.pid, signal.SIGSEGV)
        with pytest.raises(LMError, match=r"signal 11 \(SIGSEGV\): llama-cpp-python's build crashed") as caught:
            lm("Say hello again.")
        assert local.REBUILD_HINT in str(caught.value)
    finally:
        local.stop_local_servers()


# ---------------------------------------------------------------- items 6, 7, 9: CLI cases, one error line each

@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """An optimized run to resume, a traced run, and bad experiment files."""
    from memopt.evaluate.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("hostile_lm")
    (root / "cwd").mkdir()
    (root / "exp").mkdir()
    ok = f"pipeline: rag\ndata: {{source: '{OPT_DATA}'}}\nrounds: 1\noptimizer: {{candidates: 1, trials: 2}}\n"
    (root / "exp" / "ok.yaml").write_text(ok)
    (root / "exp" / "more.yaml").write_text(ok.replace("candidates: 1", "candidates: 3"))
    (root / "exp" / "trials.yaml").write_text(ok.replace("trials: 2", "trials: 5"))
    (root / "exp" / "cost_true.yaml").write_text(ok + "budget: {max_cost_usd: true}\n")
    (root / "exp" / "rounds_true.yaml").write_text(f"pipeline: rag\ndata: {{source: '{OPT_DATA}'}}\nrounds: true\n")
    (root / "exp" / "keyless.yaml").write_text(ok.replace("rounds: 1", "rounds: 1\nlm: {judge: openai/gpt-4.1-mini}"))
    (root / "exp" / "twourls.yaml").write_text(
        ok.replace("rounds: 1", "rounds: 1\nlm: {task: 'm@http://127.0.0.1:1/v1@http://127.0.0.1:2/v1'}"))
    uri = f"sqlite:///{root}/store/mlflow.db"
    done = subprocess.run([MEMOPT, "optimize", str(root / "exp" / "ok.yaml"), "--tracking-uri", uri, "--out",
                           str(root / "summary.json")], capture_output=True, text=True, cwd=root / "cwd", timeout=600)
    assert done.returncode == 0, done.stderr
    run_pipeline("rag", DATA, judge_lm="sim", trace_dir=root / "trace").save(root / "results.json")
    doc = json.loads((root / "results.json").read_text())
    doc.pop("run_id")
    (root / "no_run_id.json").write_text(json.dumps(doc))
    return root


def _cases() -> list[tuple[str, list[str], str]]:
    resume = ["optimize", "{b}/exp/ok.yaml", "--resume", "{run}", "--tracking-uri", "sqlite:///{b}/store/mlflow.db"]
    return [
        # 6. --resume refuses drift, naming the old and the new value
        ("resume-other-optimizer", [*resume, "--optimizer", "gepa"], "optimizer.name 'memtrace' → 'gepa'"),
        ("resume-other-attribution", [*resume, "--attribution", "counterfactual"],
         "attribution.method 'memtrace' → 'counterfactual'"),
        ("resume-other-feedback", [*resume, "--feedback", "outcome"], "optimizer.feedback None → 'outcome'"),
        ("resume-other-candidates", ["optimize", "{b}/exp/more.yaml", *resume[2:]], "optimizer.candidates 1 → 3"),
        ("resume-other-trials", ["optimize", "{b}/exp/trials.yaml", *resume[2:]], "optimizer.trials 2 → 5"),
        # 7. LM configuration, before any work
        ("run-missing-api-key", ["run", "-p", "rag", "--data", DATA, "--lm", "openai/gpt-4.1-mini"], "OPENAI_API_KEY"),
        ("run-judge-missing-api-key", ["run", "-p", "rag", "--data", DATA, "--judge-lm", "anthropic/claude-sonnet-4-5"],
         "ANTHROPIC_API_KEY"),
        ("attribute-missing-api-key", ["attribute", "-r", "{b}/results.json", "-t", "{b}/trace", "--judge-lm",
                                       "groq/llama-3.1-8b-instant", "-o", "{b}/cwd/a.jsonl"], "GROQ_API_KEY"),
        ("optimize-missing-api-key", ["optimize", "{b}/exp/keyless.yaml"], "lm.judge: LM spec 'openai/gpt-4.1-mini'"),
        ("bench-optimize-missing-api-key", ["bench", "optimize", "{b}/exp/keyless.yaml"], "OPENAI_API_KEY"),
        ("run-spec-two-urls", ["run", "-p", "rag", "--data", DATA, "--lm", "m@http://h:1/v1@http://g:2/v1"],
         "m@http://h:1/v1@http://g:2/v1"),
        ("run-spec-space-in-url", ["run", "-p", "rag", "--data", DATA, "--lm", "m@http://h:1/v1 x"], "no spaces"),
        ("run-spec-empty-name", ["run", "-p", "rag", "--data", DATA, "--lm", "openai//m@http://h:1/v1"],
         "openai//m"),
        ("optimize-spec-two-urls", ["optimize", "{b}/exp/twourls.yaml"], "lm.task: LM spec"),
        ("optimize-max-cost-true", ["optimize", "{b}/exp/cost_true.yaml"], "budget.max_cost_usd"),
        ("optimize-rounds-true", ["optimize", "{b}/exp/rounds_true.yaml"], "rounds"),
        # 9. results without a run id are not paired with another run's trace
        ("attribute-results-without-run-id", ["attribute", "-r", "{b}/no_run_id.json", "-t", "{b}/trace", "-o",
                                              "{b}/cwd/a.jsonl"], "carry no run id"),
    ]


CASES = _cases()


@pytest.mark.parametrize(("argv", "names"), [(a, n) for _, a, n in CASES], ids=[i for i, _, _ in CASES])
def test_bad_lm_setups_exit_2_with_one_line_before_any_work(argv, names, base, monkeypatch, capsys):
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    run_id = json.loads((base / "summary.json").read_text())["run_id"]
    fill = {"{b}": str(base), "{run}": run_id}
    for key, value in fill.items():
        argv = [a.replace(key, value) for a in argv]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{base}/cwd/mlflow.db")
    before = snapshot(base)
    code, out, err = _run(argv, base / "cwd", monkeypatch, capsys)
    _one_error(code, out, err, 2, names)
    assert snapshot(base) == before


# ---------------------------------------------------------------- item 7: --max-cost below round 0

@pytest.mark.slow
def test_a_max_cost_below_round_zero_warns_before_spending(tmp_path, monkeypatch, capsys):
    """Against SimLM's server under a priced model name: the warning comes before the first request."""
    from memopt.simlm.server import SimServer

    with SimServer() as server:
        spec = f"openai/gpt-4.1-mini@{server.url}"
        exp = tmp_path / "exp.yaml"
        exp.write_text(f"pipeline: rag\ndata: {{source: '{OPT_DATA}'}}\nrounds: 1\n"
                       f"lm: {{task: '{spec}', judge: '{spec}', reflection: '{spec}'}}\n")
        seen = []
        from memopt.cli import optimize as cli_optimize

        original = cli_optimize._warn_if_round_zero_exceeds

        def watched(experiment, console):
            original(experiment, console)
            seen.append(server.stats.requests)

        monkeypatch.setattr(cli_optimize, "_warn_if_round_zero_exceeds", watched)
        code, out, err = _run(["optimize", str(exp), "--max-cost", "0.000001", "--tracking-uri",
                               f"sqlite:///{tmp_path}/mlflow.db"], tmp_path, monkeypatch, capsys)
    assert seen == [0]  # warned before any request reached the LM server
    warning = [line for line in err.splitlines() if line.startswith("warning: --max-cost")]
    assert len(warning) == 1 and "round 0 is expected to spend" in warning[0], err
    assert "Traceback" not in out + err
    assert "budget exhausted" in out and code == 0


# ---------------------------------------------------------------- item 8: attributions in case order

def test_attributions_come_in_case_order_whatever_order_the_graphs_were_traced_in():
    """Concurrency reorders the traced graphs; the round's attributions (and so its feedback) do not move."""
    from memopt.optimize.experiment import Experiment
    from memopt.optimize.loop import make_scorer, splits_of
    from memopt.optimize.reflective import ReflectiveOptimizer
    from memopt.optimize.scoring import Scored
    from memopt.systems import make_system

    experiment = Experiment(pipeline="mem0", data={"source": OPT_DATA}, rounds=1)
    _, trainset, _, _ = splits_of(experiment)
    scorer = make_scorer(experiment)
    optimizer = ReflectiveOptimizer(scorer, attribution="memtrace", replay=False)  # attribute twice, not replay
    train = scorer.score(make_system("mem0"), trainset, judged=True, traced=True)
    assert len(train.graphs) >= 2
    shuffled = Scored(train.results, train.metrics, dict(reversed(list(train.graphs.items()))))
    found, _, _ = optimizer._attribute(train)
    found_shuffled, _, _ = optimizer._attribute(shuffled)
    order = [r.case_id for r in train.results]
    ids = [case.case_id for case, _ in found]
    assert len({i.split(":")[0] for i in ids}) >= 2, ids  # failures of more than one conversation
    assert ids == sorted(ids, key=order.index)
    assert [c.case_id for c, _ in found_shuffled] == ids
    timeless = [[{k: v for k, v in a.to_dict().items() if k != "seconds"} for _, a in run]
                for run in (found, found_shuffled)]
    assert timeless[0] == timeless[1]


# ---------------------------------------------------------------- item 9: one line per failed attribution

def test_a_failed_attribution_logs_one_line_without_a_traceback(caplog):
    """The judge LM is a real LiteLLM endpoint that refuses connections: every attribution fails, one line each."""
    from memopt.judge.judges import LMJudge
    from memopt.lm.build import make_lm
    from memopt.optimize.experiment import Experiment
    from memopt.optimize.loop import make_scorer, splits_of
    from memopt.optimize.reflective import ReflectiveOptimizer
    from memopt.systems import make_system

    experiment = Experiment(pipeline="rag", data={"source": OPT_DATA}, rounds=1)
    _, trainset, _, _ = splits_of(experiment)
    scorer = make_scorer(experiment)
    train = scorer.score(make_system("rag"), trainset, judged=True, traced=True)
    with _closed_port() as port:
        scorer.judge = LMJudge(make_lm(f"openai/judge@http://127.0.0.1:{port}/v1", num_retries=0, timeout=10))
        with caplog.at_level("WARNING", logger="memopt.optimize.reflective"):
            found, failed, _ = ReflectiveOptimizer(scorer, attribution="memtrace")._attribute(train)
    records = [r for r in caplog.records if r.name == "memopt.optimize.reflective"]
    assert failed > 0 and len(records) == failed  # attributions needing no judge call still succeed
    for record in records:
        message = record.getMessage()
        assert record.exc_info is None and "\n" not in message and "attribution of" in message, message


class _closed_port:
    """A local port nothing listens on (bound, then released)."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]

    def __exit__(self, *exc) -> None:
        return None


def test_the_printed_resume_command_repeats_the_store_and_the_overrides():
    from memopt.cli.optimize import _resume_command

    command = _resume_command(Path("exp s/x.yaml"), "ab" * 16, {"--tracking-uri": "sqlite:////tmp/a b/m.db",
                                                               "--data": None, "--optimizer": "gepa"})
    assert command == ("memopt optimize 'exp s/x.yaml' --resume " + "ab" * 16
                       + " --tracking-uri 'sqlite:////tmp/a b/m.db' --optimizer gepa")


# ---------------------------------------------------------------- item 9: no env-held secret in graphs or HTML

SECRET = "sk-hostile-0123456789abcdef"


def test_run_trace_and_show_never_write_an_env_held_secret_from_a_prompt(tmp_path, monkeypatch, capsys):
    import shutil

    root = Path(__file__).resolve().parents[2]
    prompts = tmp_path / "prompts"
    shutil.copytree(root / "prompts" / "rag", prompts / "rag")
    answer = prompts / "rag" / "answer.md"
    answer.write_text(answer.read_text() + f"\nUse the key {SECRET} when asked.\n")
    monkeypatch.setenv("HOSTILE_TEST_API_KEY", SECRET)
    (tmp_path / "cwd").mkdir()
    code, out, err = _run(["run", "-p", "rag", "--data", DATA, "--prompts", str(prompts), "--trace",
                           str(tmp_path / "trace"), "--out", str(tmp_path / "r.json")], tmp_path / "cwd",
                          monkeypatch, capsys)
    assert code == 0, err
    graphs = sorted((tmp_path / "trace").glob("*.json"))
    assert graphs
    texts = [g.read_text() for g in graphs]
    assert all(SECRET not in t for t in texts) and any("Use the key *** when asked" in t for t in texts)
    code, out, err = _run(["show", str(graphs[0]), "-o", str(tmp_path / "v.html")], tmp_path / "cwd",
                          monkeypatch, capsys)
    assert code == 0, err
    html = (tmp_path / "v.html").read_text()
    assert SECRET not in html and "***" in html
    assert SECRET not in (tmp_path / "r.json").read_text() + out + err
