"""SimLM: a deterministic, instruction-following simulated LM, and its DSPy engine.

`SimLM.respond(system, user)` reads a DSPy-formatted prompt (ChatAdapter or JSONAdapter), finds
the operation from the output fields the signature declares, reads the directives its
instructions grant (`memopt.simlm.directives`), performs the operation with plain NLP on the inputs,
and writes the outputs in the format the prompt asked for. A prompt that is not a DSPy prompt may be
one of the real Mem0's two calls (fact extraction, update decision; `memopt.simlm.mem0_formats`):
SimLM performs the same ``extract`` / ``update`` behaviour, with the directives of Mem0's prompt, and
answers with the bare JSON object Mem0 parses. `SimLM.embed` is its lexical embedding model
(`memopt.simlm.embedding`). It reads nothing but the prompt.

`SimEngine` plugs it into DSPy 3.4's engine interface::

    lm = dspy.LM("sim/memopt", engine=SimEngine(seed=0), cache=False)

Everything SimLM produces is simulated; runs that use it are labelled ``lm.simulated=true``.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

from memopt.judge import rules as judge_rules
from memopt.simlm import behaviour, mem0_formats, reflect
from memopt.simlm.directives import active_directives
from memopt.simlm.embedding import DEFAULT_DIMENSIONS, embed
from memopt.simlm.prompt import Prompt, parse_prompt, render_outputs

__all__ = ["SimLM", "SimEngine", "OPERATIONS", "operation_of"]

logger = logging.getLogger(__name__)

Behaviour = Callable[[dict[str, str], frozenset[str]], dict[str, Any]]

OPERATIONS: dict[frozenset[str], tuple[str, Behaviour]] = {
    frozenset({"facts"}): ("extract", behaviour.extract),
    frozenset({"memory"}): ("update", behaviour.decide_updates),
    frozenset({"query"}): ("rewrite_query", behaviour.rewrite_query),
    frozenset({"answer"}): ("answer", behaviour.answer),
    frozenset({"summary"}): ("summarize", behaviour.summarize),
    frozenset({"boundaries"}): ("segment", behaviour.segment),
    frozenset({"updated_profile"}): ("profile", behaviour.update_profile),
    frozenset({"correct"}): ("judge_answer", judge_rules.judge_answer),
    frozenset({"contains"}): ("judge_contains", judge_rules.judge_contains),
    frozenset({"error_type", "op_id"}): ("judge_locate", judge_rules.judge_locate),
}


def operation_of(prompt: Prompt) -> str | None:
    """The SimLM operation a parsed prompt asks for (None when the signature is not a standard one)."""
    if prompt.output_names == frozenset({"proposals"}):
        return "propose"
    entry = OPERATIONS.get(prompt.output_names)
    return entry[0] if entry else None


def _default(type_name: str) -> Any:
    t = type_name.lower()
    if t.startswith(("list", "tuple", "set")):
        return []
    if t.startswith("dict"):
        return {}
    if t == "bool":
        return False
    if t in ("int", "float"):
        return 0
    return ""


class SimLM:
    """The simulator: one prompt in, one completion out, deterministic for a given seed."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def respond(self, system: str, user: str) -> str:
        """The completion for a DSPy prompt or a Mem0 call (system + last user message); else a labelled note."""
        prompt = parse_prompt(system, user)
        if prompt.outputs:
            return render_outputs(prompt, self.outputs(prompt))
        request = mem0_formats.read_request(system, user)
        if request is not None:
            return mem0_formats.render_reply(request, self.mem0_outputs(request))
        return _plain_reply(system, user)

    def mem0_outputs(self, request: mem0_formats.Mem0Request) -> dict[str, Any]:
        """The output SimLM produces for a recognised Mem0 call (``facts`` or ``memory``)."""
        fn = OPERATIONS[frozenset({request.output})][1]
        return fn(request.inputs, active_directives(request.operation, request.instructions))

    def embed(self, texts: list[str], dimensions: int = DEFAULT_DIMENSIONS) -> list[list[float]]:
        """Lexical embeddings of ``texts`` (see `memopt.simlm.embedding`)."""
        return [embed(text, dimensions) for text in texts]

    def outputs(self, prompt: Prompt) -> dict[str, Any]:
        """The output field values SimLM produces for a parsed prompt."""
        op = operation_of(prompt)
        if op == "propose":
            values = reflect.propose(prompt.inputs, self.seed)
        elif op is not None:
            fn = OPERATIONS[prompt.output_names][1]
            values = fn(prompt.inputs, active_directives(op, prompt.instructions))
        else:
            logger.warning("SimLM does not know a signature with outputs %s; returning empty values.",
                           sorted(prompt.output_names))
            values = {}
        for name, type_name in prompt.outputs:
            if name == "reasoning":
                values.setdefault(name, f"Simulated {op or 'unknown'} step.")
            values.setdefault(name, _default(type_name))
        return values


def _plain_reply(system: str, user: str) -> str:
    n = len(f"{system} {user}".split())
    return (f"SimLM (simulated): received a prompt of {n} words; it answers DSPy-formatted prompts "
            "of memopt's standard signatures and Mem0's extraction and update calls only.")


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(getattr(p, "text", "") or "" for p in content)


class SimEngine:
    """DSPy 3.4 engine backed by SimLM (``dspy.LM("sim/memopt", engine=SimEngine(), cache=False)``)."""

    def __init__(self, seed: int = 0, *, latency: float = 0.0) -> None:
        self.sim = SimLM(seed)
        self.latency = latency

    def complete(self, request: Any) -> Any:
        """Answer one canonical DSPy request (after ``latency`` seconds, to simulate a remote LM)."""
        from dspy.lm15 import Message, Response, TextPart, Usage

        if self.latency:
            time.sleep(self.latency)
        system = _text(request.system)
        users = [m for m in request.messages if m.role == "user"]
        user = (users[-1].text or "") if users else ""
        out = self.sim.respond(system, user)
        prompt_tokens = _tokens(system) + sum(_tokens(m.text or "") for m in request.messages)
        usage = Usage(input_tokens=prompt_tokens, output_tokens=_tokens(out), total_tokens=prompt_tokens + _tokens(out))
        return Response(id=None, model="sim", message=Message.assistant([TextPart(out)]), finish_reason="stop",
                        usage=usage)

    def stream(self, request: Any) -> Iterator[Any]:
        """Stream one response (as a single chunk)."""
        from dspy.lm15 import response_to_events

        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Nothing to release."""

    def dump_state(self) -> dict[str, Any]:
        """State for saving a program together with its LM."""
        return {"seed": self.sim.seed, "latency": self.latency}

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> SimEngine:
        """Rebuild an engine from `dump_state` output."""
        return cls(seed=int(state.get("seed", 0)), latency=float(state.get("latency", 0.0)))
