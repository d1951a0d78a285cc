"""LM specs, `make_lm`, key hygiene, `LMRoles`, `UsageMeter`, SimLM's plain-prompt reply, `memopt lm-check`."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dspy
import pytest
from dspy.utils.exceptions import LMAuthError, LMServerError

from memopt.core.errors import ConfigError, LMError
from memopt.lm.build import make_lm
from memopt.lm.explain import explain_lm_error
from memopt.lm.signatures import AnswerQuestion
from memopt.lm.spec import LMRoles, LMSpec, api_key_env, describe_lm, parse_lm_spec
from memopt.lm.usage import ModelUsage, UsageMeter

SECRET = "sk-test-SECRET"
UNREACHABLE = "openai/x@http://127.0.0.1:9/v1"
MEMOPT = str(Path(sys.executable).with_name("memopt"))


def _ask(lm: dspy.LM, adapter: dspy.Adapter | None = None) -> str:
    with dspy.context(lm=lm, adapter=adapter or dspy.ChatAdapter()):
        return dspy.Predict(AnswerQuestion)(question="Where does Alice live?",
                                            context="[1 May 2023] Alice: I live in Paris now.").answer


@pytest.mark.parametrize(("spec", "expected"), [
    ("sim", LMSpec("sim", "sim/memopt", None, True, None, provider="sim")),
    ("sim:7", LMSpec("sim:7", "sim/memopt", None, True, 7, provider="sim")),
    ("  openai/gpt-4.1-mini ", LMSpec("openai/gpt-4.1-mini", "openai/gpt-4.1-mini")),
    ("ollama_chat/qwen2.5:7b", LMSpec("ollama_chat/qwen2.5:7b", "ollama_chat/qwen2.5:7b")),
    ("qwen2.5@http://127.0.0.1:8008/v1",
     LMSpec("qwen2.5@http://127.0.0.1:8008/v1", "openai/qwen2.5", "http://127.0.0.1:8008/v1")),
    ("hosted_vllm/Qwen/Qwen2.5-7B@https://gpu.local:8443/v1/",
     LMSpec("hosted_vllm/Qwen/Qwen2.5-7B@https://gpu.local:8443/v1/", "hosted_vllm/Qwen/Qwen2.5-7B",
            "https://gpu.local:8443/v1")),
    ("vertex_ai/claude-sonnet-4@20250514",
     LMSpec("vertex_ai/claude-sonnet-4@20250514", "vertex_ai/claude-sonnet-4@20250514")),
])
def test_parse_good_specs(spec: str, expected: LMSpec) -> None:
    assert parse_lm_spec(spec) == expected


@pytest.mark.parametrize(("spec", "why"), [
    ("", "empty"),
    ("   ", "empty"),
    ("sim:x", "seed"),
    ("sim:-1", "seed"),
    ("sim@http://127.0.0.1:8008/v1", "in-process"),
    ("openai/x@", "nothing follows '@'"),
    ("openai/x@localhost:8000", "http://HOST:PORT/v1"),
    ("openai/x@ftp://127.0.0.1/v1", "http://HOST:PORT/v1"),
    ("openai/x@http://127.0.0.1:99999/v1", "not valid"),
    ("openai/x@http://127.0.0.1:8008/v1?api_key=abc", "no credentials, query"),
    ("open ai/gpt", "not a model name"),
    ("openai/", "provider and a model name"),
    ("/gpt-4.1", "provider and a model name"),
])
def test_bad_specs_raise_config_error_naming_the_spec(spec: str, why: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_lm_spec(spec)
    message = str(err.value)
    assert repr(spec.strip() or spec) in message
    assert why in message
    assert "accepted forms" in message


def test_credentials_in_the_url_are_refused_and_not_echoed() -> None:
    with pytest.raises(ConfigError) as err:
        parse_lm_spec("openai/x@http://user:hunter2@127.0.0.1:8008/v1")
    assert "hunter2" not in str(err.value)
    assert "credentials" in str(err.value)


def test_parsing_imports_neither_litellm_nor_dspy() -> None:
    code = ("import sys, memopt.lm; from memopt.lm import parse_lm_spec, describe_lm, LMRoles; "
            "describe_lm(parse_lm_spec('qwen2.5')); LMRoles.from_specs('openai/gpt-4.1-mini').describe(); "
            "print(sorted(m for m in ('litellm', 'dspy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_make_lm_checks_the_provider_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match=r"'qwen2\.5'.*no provider.*add '@URL'"):
        make_lm("qwen2.5")
    # a tail after '@' that is no URL reads as a version tag: the error says so, not "add '@URL'"
    with pytest.raises(ConfigError, match=r"'@notaurl' was read as part of the model name .* http://HOST:PORT/v1;"):
        make_lm("foo/bar@notaurl")
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("adapter", [dspy.ChatAdapter(), dspy.JSONAdapter()], ids=["chat", "json"])
def test_make_lm_sim_answers_with_both_adapters(adapter: dspy.Adapter) -> None:
    lm = make_lm("sim")
    assert lm.model == "sim/memopt"
    assert _ask(lm, adapter) == "Paris"


def test_make_lm_sim_seed_comes_from_the_spec_first() -> None:
    assert make_lm("sim", seed=3).engine.sim.seed == 3
    assert make_lm("sim:5", seed=3).engine.sim.seed == 5


def test_make_lm_real_passes_client_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lm = make_lm("qwen2.5@http://127.0.0.1:8008/v1", max_tokens=64, num_retries=1, timeout=5.0)
    assert (lm.model, lm.engine, lm.num_retries) == ("openai/qwen2.5", "litellm", 1)
    assert lm.kwargs["api_base"] == "http://127.0.0.1:8008/v1"
    assert lm.kwargs["api_key"] == "x"
    assert (lm.kwargs["timeout"], lm.kwargs["max_tokens"]) == (5.0, 64)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert "api_key" not in make_lm("qwen2.5@http://127.0.0.1:8008/v1").kwargs


def test_redact_masks_lm_credentials_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from memopt.lm.redaction import redact

    prompt = "Extract facts about the user from conversations; keep every token of the answer."
    for name, value in {"DB_PASSWORD": "user", "HOME_DIR": "conversations", "HF_TOKEN": "token",
                        "MY_SECRET": "answer", "SESSION": "facts about the user"}.items():
        monkeypatch.setenv(name, value)  # unrelated names, or credential names with values too short to be keys
    assert redact(prompt) == prompt
    for name in ("OPENAI_API_KEY", "WATSONX_APIKEY", "HF_TOKEN", "AZURE_CLIENT_SECRET", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, f"{name.lower()}-0123456789")
        assert redact(f"key={name.lower()}-0123456789 in {prompt}") == f"key=*** in {prompt}", name


def test_no_key_in_describe_repr_or_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    specs = ["openai/gpt-4.1-mini", UNREACHABLE, "sim"]
    roles = LMRoles.from_specs(*specs)
    texts = [repr(parse_lm_spec(s)) for s in specs] + [repr(describe_lm(parse_lm_spec(s))) for s in specs]
    texts += [repr(roles), repr(roles.describe()), repr(make_lm(UNREACHABLE).dump_state())]
    leaked = explain_lm_error(parse_lm_spec("openai/gpt-4.1-mini"),
                              RuntimeError(f"Incorrect API key provided: {SECRET}"))
    texts.append(str(leaked))
    with pytest.raises(LMServerError) as real:
        _ask(make_lm(UNREACHABLE, num_retries=0))
    texts.append(str(explain_lm_error(parse_lm_spec(UNREACHABLE), real.value)))
    assert all(SECRET not in t for t in texts)
    assert "***" in str(leaked)
    assert describe_lm(parse_lm_spec(UNREACHABLE)) == {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1",
                                        "simulated": False, "seed": None, "local": None}


def test_explain_lm_error_names_spec_and_what_to_do() -> None:
    with pytest.raises(LMServerError) as real:
        _ask(make_lm(UNREACHABLE, num_retries=0))
    unreachable = explain_lm_error(parse_lm_spec(UNREACHABLE), real.value)
    assert isinstance(unreachable, LMError)
    assert repr(UNREACHABLE) in str(unreachable) and "could not be reached" in str(unreachable)
    auth = explain_lm_error(parse_lm_spec("anthropic/claude-sonnet-4-5"), LMAuthError("bad key"))
    assert "ANTHROPIC_API_KEY" in str(auth)
    assert api_key_env(parse_lm_spec("ollama_chat/qwen2.5:7b")) == "OLLAMA_CHAT_API_KEY"


def test_roles_default_to_sim_and_to_the_task_lm() -> None:
    assert LMRoles() == LMRoles(task="sim", judge="sim", reflection="sim")
    assert LMRoles().simulated
    roles = LMRoles.from_specs("openai/gpt-4.1-mini", judge="sim:2")
    assert roles.reflection == roles.task == parse_lm_spec("openai/gpt-4.1-mini")
    assert roles.judge.seed == 2
    assert roles.describe()["task"] == {"model": "openai/gpt-4.1-mini", "api_base": None, "simulated": False,
                                        "seed": None, "local": None}
    with pytest.raises(ConfigError, match=r"^judge LM: LM spec 'sim:x'"):
        LMRoles.from_specs("sim", judge="sim:x")


def test_usage_meter_counts_calls_and_tokens_only_inside_the_block(caplog: pytest.LogCaptureFixture) -> None:
    lm = make_lm("sim")
    meter = UsageMeter()
    _ask(lm)
    with caplog.at_level(logging.WARNING), meter.track():
        _ask(lm)
        _ask(lm, dspy.JSONAdapter())
    _ask(lm)
    usage = meter.usage()["sim/memopt"]
    counted = lm.history[1:3]
    assert usage == ModelUsage(calls=2, errors=0,
                               input_tokens=sum(e["usage"]["prompt_tokens"] for e in counted),
                               output_tokens=sum(e["usage"]["completion_tokens"] for e in counted),
                               unpriced=2)  # SimLM has no price: its cost is labelled $0 (simulated) elsewhere
    assert usage.input_tokens > 100 and usage.output_tokens > 0
    assert not [r for r in caplog.records if "callback" in r.getMessage().lower()]
    meter.reset()
    assert meter.total() == ModelUsage()


def test_usage_meter_is_thread_safe_and_counts_failures() -> None:
    meter = UsageMeter()
    lm = make_lm("sim")
    lm.callbacks.append(meter)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: lm("Say something."), range(24)))
    assert meter.usage()["sim/memopt"] == ModelUsage(
        calls=24, errors=0, input_tokens=sum(e["usage"]["prompt_tokens"] for e in lm.history),
        output_tokens=sum(e["usage"]["completion_tokens"] for e in lm.history), unpriced=24)
    with meter.track(), pytest.raises(LMServerError):
        _ask(make_lm(UNREACHABLE, num_retries=0))
    assert meter.usage()["openai/x"] == ModelUsage(calls=1, errors=1)


def test_usage_meter_never_raises_from_a_hook(caplog: pytest.LogCaptureFixture) -> None:
    meter = UsageMeter()
    with caplog.at_level(logging.WARNING):
        meter.on_lm_start("c1", 42, {})  # not an LM: cannot be tracked
        meter.on_lm_end("c1", None)
        meter.on_lm_end("never-started", None)
        meter.on_module_start("c2", object(), {})
    assert meter.total() == ModelUsage()
    assert any("UsageMeter" in r.getMessage() for r in caplog.records)


def test_sim_answers_a_plain_prompt_with_a_labelled_reply() -> None:
    reply = make_lm("sim")("Hello there, how are you today?")[0]
    assert reply.startswith("SimLM (simulated): received a prompt of 6 words")


def _memopt(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MEMOPT, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "400", **(env or {})})


def test_cli_lm_check_sim() -> None:
    out = _memopt("lm-check", "--lm", "sim")
    assert out.returncode == 0, out.stderr
    assert "simulated: yes" in out.stdout
    assert "reply:     Paris" in out.stdout
    assert "latency:" in out.stdout and " ms" in out.stdout


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_cli_lm_check_unreachable_exits_2_naming_the_spec() -> None:
    out = _memopt("lm-check", "--lm", UNREACHABLE, env={"OPENAI_API_KEY": SECRET})
    assert out.returncode == 2
    assert f"LM '{UNREACHABLE}' could not be reached" in out.stderr
    assert "Traceback" not in out.stderr
    assert SECRET not in out.stderr + out.stdout


def test_an_experiment_holds_parsed_specs_and_writes_them_back_as_given(tmp_path):
    """The boundary: `lm.*` is parsed once when the experiment loads; it dumps back to the strings written."""
    from memopt.optimize.experiment import Experiment, load_experiment

    path = tmp_path / "exp.yaml"
    path.write_text("pipeline: rag\nlm: {task: 'sim:4', judge: [openai/a@http://127.0.0.1:1/v1, "
                    "openai/a@http://127.0.0.1:2/v1]}\n")
    experiment = load_experiment(path)
    assert experiment.lm.task == [LMSpec("sim:4", "sim/memopt", simulated=True, seed=4, provider="sim")]
    assert [s.api_base for s in experiment.lm.judge] == ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"]
    assert experiment.lm.reflection == [parse_lm_spec("sim")]
    dumped = experiment.model_dump(mode="json")["lm"]
    assert (dumped["task"], dumped["reflection"]) == ("sim:4", "sim")
    assert dumped["judge"] == ["openai/a@http://127.0.0.1:1/v1", "openai/a@http://127.0.0.1:2/v1"]
    assert Experiment.model_validate_json(experiment.model_dump_json()) == experiment
    for bad, says in (("'not a spec'", "lm.task: LM spec 'not a spec'"), ("5", "lm.task: an LM spec string"),
                      ("[sim, sim]", "a list of endpoints may hold only")):
        path.write_text(f"pipeline: rag\nlm: {{task: {bad}}}\n")
        with pytest.raises(ConfigError, match="exp.yaml: ") as error:
            load_experiment(path)
        assert says in str(error.value)


def test_cli_lm_options_are_parsed_once_and_a_bad_one_names_the_option():
    from memopt.cli.options import judge_lm, lm_list

    assert lm_list(["openai/a@http://h:1/v1", " openai/a@http://h:2/v1 "])[1].api_base == "http://h:2/v1"
    assert lm_list([]) == [parse_lm_spec("sim")] and judge_lm("None") is None
    with pytest.raises(ConfigError, match="--judge-lm: LM spec 'sim@http://h:1/v1'"):
        judge_lm("sim@http://h:1/v1")
