"""The OpenAI-compatible SimLM server: endpoints, the real dspy.LM + LiteLLM + HTTP path, faults, `memopt serve`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils.exceptions import AdapterParseError, LMServerError

from memopt.core.errors import ConfigError
from memopt.lm.build import make_lm
from memopt.lm.signatures import ExtractFacts
from memopt.simlm import SimLM
from memopt.simlm.server import ServerStats, SimServer

MEMOPT = str(Path(sys.executable).with_name("memopt"))
CONVERSATION = "Alice: I moved to Paris last week.\nBob: Nice! I just started learning the guitar."


def _http(url: str, body: Any = None, raw: bytes | None = None) -> tuple[int, dict[str, str], dict[str, Any]]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read())


def _chat(content: str = "hi") -> dict[str, Any]:
    return {"model": "sim", "messages": [{"role": "user", "content": content}]}


def _extract(lm: dspy.LM, adapter: dspy.Adapter | None = None) -> list[str]:
    with dspy.context(lm=lm, adapter=adapter or dspy.ChatAdapter()):
        return dspy.Predict(ExtractFacts)(session_date="8 May 2023", conversation=CONVERSATION).facts


def _remote(url: str, num_retries: int = 0) -> dspy.LM:
    return dspy.LM("openai/sim", engine="litellm", api_base=url, api_key="x", cache=False, num_retries=num_retries)


def test_models_health_and_errors() -> None:
    with SimServer() as server:
        status, _, models = _http(f"{server.url}/models")
        assert status == 200 and [m["id"] for m in models["data"]] == ["sim"]
        assert _http(server.url.removesuffix("/v1") + "/health")[0] == 200
        status, _, body = _http(f"{server.url}/nowhere")
        assert status == 404 and "no route" in body["error"]["message"]
        status, _, body = _http(f"{server.url}/chat/completions", raw=b"{not json")
        assert status == 400 and "not valid JSON" in body["error"]["message"]
        status, _, body = _http(f"{server.url}/chat/completions", {**_chat(), "stream": True})
        assert status == 400 and "stream" in body["error"]["message"]
        status, _, body = _http(f"{server.url}/chat/completions", _chat("Hello there"))
        assert status == 200 and body["choices"][0]["message"]["content"].startswith("SimLM (simulated)")
        assert body["usage"]["prompt_tokens"] == 3
        assert server.stats == ServerStats(requests=1)


@pytest.mark.parametrize("adapter", [dspy.ChatAdapter(), dspy.JSONAdapter()], ids=["chat", "json"])
def test_dspy_through_litellm_matches_in_process_simlm(adapter: dspy.Adapter) -> None:
    expected = _extract(make_lm("sim"), adapter)
    assert expected, "SimLM extracts facts from this conversation"
    with SimServer() as server:
        lm = _remote(server.url)
        assert _extract(lm, adapter) == expected
        assert server.stats.requests == 1
    assert lm.history[-1]["usage"]["prompt_tokens"] > 100


def test_injected_429s_are_retried_without_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    sleep, caller = time.sleep, threading.current_thread()

    def recorded_sleep(seconds: float) -> None:  # the real sleep, with what the client asked for written down
        if threading.current_thread() is caller:
            waits.append(float(seconds))
        sleep(seconds)

    monkeypatch.setattr(time, "sleep", recorded_sleep)
    with SimServer(seed=1, fail_rate=0.5, status=429) as server:  # seed 1: the first request fails, the second not
        facts = _extract(_remote(server.url, num_retries=2))
        assert server.stats == ServerStats(requests=2, injected_failures=1)
    assert facts == _extract(make_lm("sim"))
    # retry-after: 0 is honoured: the client asks to wait nothing before its retry; without it, it backs off at least
    # 0.375 s (0.5 s with jitter), then twice that. What it asked for, not the clock: a loaded machine stays green.
    assert all(w < 0.25 for w in waits), waits


def test_injected_500_surfaces_without_retries() -> None:
    with SimServer(fail_rate=1.0, status=500) as server:
        with pytest.raises(LMServerError) as err:
            _extract(_remote(server.url, num_retries=0))
        assert err.value.status == 500
        assert server.stats == ServerStats(requests=1, injected_failures=1)


def test_malformed_replies_fail_to_parse() -> None:
    with SimServer(malformed_rate=1.0) as server:
        with pytest.raises(AdapterParseError):
            _extract(_remote(server.url))
        assert server.stats == ServerStats(requests=2, malformed=2)  # ChatAdapter, then its JSONAdapter fallback


def _statuses(seed: int) -> list[int]:
    with SimServer(seed=seed, fail_rate=0.5, status=429) as server:
        replies = [_http(f"{server.url}/chat/completions", _chat()) for _ in range(12)]
    assert all(headers.get("retry-after") == "0" for status, headers, _ in replies if status == 429)
    return [status for status, _, _ in replies]


def test_faults_are_deterministic_for_a_seed() -> None:
    first = _statuses(seed=3)
    assert first == _statuses(seed=3)
    assert set(first) == {200, 429}


def test_delay_applies_before_the_answer() -> None:
    with SimServer(delay=0.3) as server:
        start = time.perf_counter()
        assert _http(f"{server.url}/chat/completions", _chat())[0] == 200
        assert time.perf_counter() - start >= 0.3


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::1"])
def test_non_loopback_hosts_are_refused(host: str) -> None:
    with pytest.raises(ConfigError, match="loopback"):
        SimServer(host=host)


def test_bad_fault_settings_are_refused() -> None:
    for kwargs in ({"status": 503}, {"fail_rate": 1.5}, {"malformed_rate": -0.1}, {"delay": -1.0}):
        with pytest.raises(ConfigError):
            SimServer(**kwargs)


def test_stop_releases_the_port() -> None:
    server = SimServer()
    url = server.start()
    server.stop()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{url}/models", timeout=2)


def test_cli_serve_refuses_a_public_host() -> None:
    out = subprocess.run([MEMOPT, "serve", "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "COLUMNS": "400"})
    assert out.returncode == 2
    assert "refusing to serve on host '0.0.0.0'" in out.stderr


def test_cli_serve_runs_until_ctrl_c() -> None:
    proc = subprocess.Popen([MEMOPT, "serve", "--port", "0", "--seed", "4"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        banner = "".join(proc.stdout.readline() for _ in range(3))  # communicate() skips what readline buffered
        url = banner.split("serving at ")[1].split()[0]
        assert _http(f"{url}/chat/completions", _chat())[0] == 200
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert 'dspy.LM("openai/sim", engine="litellm"' in banner
    assert "stopped: 1 requests, 0 injected failures" in out


def test_cli_lm_check_through_the_server() -> None:
    from typer.testing import CliRunner

    from memopt.cli import app
    from memopt.core.errors import LMError

    runner = CliRunner()
    with SimServer() as server:
        ok = runner.invoke(app, ["lm-check", "--lm", f"openai/sim@{server.url}"])
    assert ok.exit_code == 0, ok.output
    assert "reply:     Paris" in ok.output and "simulated: no" in ok.output and "latency:" in ok.output
    with SimServer(fail_rate=1.0, status=429) as server:
        limited = runner.invoke(app, ["lm-check", "--lm", f"openai/sim@{server.url}"])
        assert server.stats.requests == 1  # lm-check never retries
    assert isinstance(limited.exception, LMError)
    assert "is rate-limiting requests" in str(limited.exception)


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_embeddings_are_lexical_deterministic_and_sized() -> None:
    from openai import OpenAI

    texts = ["Alice adopted a puppy named Max", "Alice's puppy Max was adopted", "Bob plays the guitar on Sundays"]
    with SimServer(fail_rate=1.0) as server:  # faults never apply to embeddings
        client = OpenAI(base_url=server.url, api_key="x", max_retries=0)
        floats = client.embeddings.create(model="sim", input=texts, dimensions=64, encoding_format="float")
        packed = client.embeddings.create(model="sim", input=texts, dimensions=64)  # the client asks for base64
        status, _, default = _http(f"{server.url}/embeddings", {"model": "sim", "input": texts[0]})
        assert server.stats == ServerStats(embeddings=3)
    vectors = [d.embedding for d in floats.data]
    assert [len(v) for v in vectors] == [64, 64, 64]
    assert all(abs(_cosine(v, v) - 1.0) < 1e-9 for v in vectors)
    for decoded, vector in zip((d.embedding for d in packed.data), vectors, strict=True):
        assert decoded == pytest.approx(vector, abs=1e-6)
    assert status == 200 and len(default["data"][0]["embedding"]) == 1536
    assert SimLM().embed(texts, 64) == vectors, "the same text always gets the same vector"
    assert _cosine(vectors[0], vectors[1]) > 0.9 > 0.3 > abs(_cosine(vectors[0], vectors[2]))


def test_embeddings_reject_bad_requests() -> None:
    with SimServer() as server:
        for body, expected in (({"input": [[1, 2, 3]]}, "token arrays"), ({"input": []}, "non-empty"),
                               ({"input": "x", "dimensions": 0}, "'dimensions'"),
                               ({"input": "x", "encoding_format": "int8"}, "'encoding_format'")):
            status, _, reply = _http(f"{server.url}/embeddings", body)
            assert status == 400 and expected in reply["error"]["message"], (body, reply)
        assert server.stats.embeddings == 0


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_cli_serve_stops_cleanly_on_a_signal_right_after_the_banner(signum) -> None:
    """The race behind the once-flaky Ctrl-C test: a signal while the banner is printed still ends in "stopped:"."""
    for _ in range(3):
        proc = subprocess.Popen([MEMOPT, "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            first = proc.stdout.readline()
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=10)
        finally:
            proc.kill()
        assert "serving at" in first
        assert proc.returncode == 0 and "stopped: 0 requests" in out, (proc.returncode, out, err)
        assert "Traceback" not in err


def _raw_post(url: str, head: str, body: bytes = b"") -> tuple[int, dict[str, Any]]:
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.putrequest("POST", parts.path)
    for line in head.splitlines():
        name, _, value = line.partition(": ")
        connection.putheader(name, value)
    connection.endheaders()
    if body:
        connection.send(body)
    response = connection.getresponse()
    status, payload = response.status, json.loads(response.read())
    connection.close()
    return status, payload


def test_hostile_bodies_get_400_or_413_with_a_reason() -> None:
    from memopt.simlm.server import MAX_BODY, MAX_EMBEDDING_INPUTS

    with SimServer() as server:
        deep = b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        status, _, body = _http(f"{server.url}/chat/completions", raw=deep)
        assert status == 400 and "nested too deeply" in body["error"]["message"]
        status, body = _raw_post(f"{server.url}/chat/completions",
                                 f"content-type: application/json\ncontent-length: {MAX_BODY + 1}")
        assert status == 413 and "over the limit" in body["error"]["message"]
        status, body = _raw_post(f"{server.url}/chat/completions", "content-type: application/json\n"
                                 f"content-length: {'9' * 5000}")
        assert status == 400 and "content-length" in body["error"]["message"]
        many = {"model": "sim", "input": ["a few words"] * (MAX_EMBEDDING_INPUTS + 1)}
        status, _, body = _http(f"{server.url}/embeddings", many)
        assert status == 413 and f"at most {MAX_EMBEDDING_INPUTS}" in body["error"]["message"]
        wide = {"model": "sim", "input": ["a few words"] * MAX_EMBEDDING_INPUTS, "dimensions": 8192}
        status, _, body = _http(f"{server.url}/embeddings", wide)
        assert status == 413 and "fewer texts" in body["error"]["message"]
        assert _http(f"{server.url}/chat/completions", _chat())[0] == 200  # still serving
        assert _http(f"{server.url}/embeddings", {"model": "sim", "input": ["a"] * 64})[0] == 200
