"""Read a DSPy-formatted prompt the way an LM would: instructions, input fields, output fields.

Works for DSPy's ChatAdapter and JSONAdapter (both mark inputs with ``[[ ## name ## ]]`` and list
the output fields with their types in the system message). Also renders SimLM's outputs in the
format the prompt asked for.
"""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass
from typing import Any

__all__ = ["Prompt", "parse_prompt", "render_outputs"]

_FIELD_LINE = re.compile(r"^\s*\d+\.\s+`(?P<name>\w+)`\s+\((?P<type>.*?)\)(?::|$)", re.MULTILINE)
_MARKER = re.compile(r"\[\[ ## (\w+) ## \]\]")
_OBJECTIVE = "your objective is:"


@dataclass(frozen=True)
class Prompt:
    """A parsed prompt: what to do (instructions), with what (inputs), and what to return."""

    instructions: str
    inputs: dict[str, str]
    outputs: tuple[tuple[str, str], ...]
    json_mode: bool

    @property
    def output_names(self) -> frozenset[str]:
        """Output field names, without DSPy's ChainOfThought ``reasoning`` field."""
        return frozenset(name for name, _ in self.outputs if name != "reasoning")


def _section(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    j = text.find(end, i + len(start))
    return text[i + len(start): j if j >= 0 else len(text)]


def parse_prompt(system: str, user: str) -> Prompt:
    """Parse the system message (field lists, instructions) and the last user message (inputs)."""
    outputs_block = _section(system, "Your output fields are:", "All interactions will be structured")
    outputs = tuple((m.group("name"), m.group("type")) for m in _FIELD_LINE.finditer(outputs_block))
    k = system.find(_OBJECTIVE)
    instructions = textwrap.dedent(system[k + len(_OBJECTIVE):]).strip() if k >= 0 else ""
    json_mode = "Outputs will be a JSON object" in system or "Respond with a JSON object" in user
    return Prompt(instructions, _inputs(user), outputs, json_mode)


def _inputs(user: str) -> dict[str, str]:
    cut = user.rfind("\n\nRespond with")
    parts = _MARKER.split(user[:cut] if cut >= 0 else user)
    return {name: value.strip() for name, value in zip(parts[1::2], parts[2::2], strict=True)}


def _chat_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "True" if value else "False"
    return json.dumps(value, ensure_ascii=False)


def render_outputs(prompt: Prompt, values: dict[str, Any]) -> str:
    """Write ``values`` in the output format the prompt asked for (ChatAdapter or JSON)."""
    ordered = {name: values[name] for name, _ in prompt.outputs if name in values}
    if prompt.json_mode:
        return json.dumps(ordered, ensure_ascii=False)
    blocks = [f"[[ ## {name} ## ]]\n{_chat_value(value)}" for name, value in ordered.items()]
    return "\n\n".join(blocks + ["[[ ## completed ## ]]"])
