"""Decoders: what the records of one Mem0 major mean (which call is which, what each reply decided).

One decoder per Mem0 major (`decoder_for`); an unknown major is refused with the versions memopt reads.

- **1.x** (`Mem0V1`): per ``add``, one fact-extraction call (reply ``{"facts": [...]}``), then per new
  fact an embedding and ``vector_store.search(limit=5)``, then, when facts were found, one
  update-decision call (reply ``{"memory": [{"id", "text", "event", "old_memory"}]}``) whose ids are
  Mem0's local ids 0..n-1 of the search hits deduplicated in first-seen order. NONE decisions are only
  in that reply. Custom prompts: ``custom_fact_extraction_prompt``, ``custom_update_memory_prompt``.
- **2.x** (`Mem0V2`): per ``add``, one ADD-only extraction call (reply ``{"memory": [{"text", ...}]}``
  or ``{"facts": [...]}``), no update decision; the custom prompt is ``custom_instructions``.

A call is told apart by its reply (which key the JSON object has), not by its position, so the LLM
calls of an optional graph store are left out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from memopt.core.errors import ConfigError

__all__ = ["Decoder", "Mem0V1", "Mem0V2", "decoder_for", "parse_reply", "AddStep", "PROMPT_KEYS", "SUPPORTED"]

PROMPT_KEYS = {1: ("custom_fact_extraction_prompt", "custom_update_memory_prompt"), 2: ("custom_instructions",)}
SUPPORTED = "mem0ai 1.x (pinned by the mem0 extra: 1.0.11) and 2.x (tested: 2.2.1)"
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")
_FIXED_PART = ("Below is the current content of my memory", "Current memory is empty.")


def hits_of(found: Any) -> list[dict[str, Any]]:
    """Vector-store search results as ``[{id, text, score}]``."""
    out = []
    for hit in found or []:
        payload = getattr(hit, "payload", None) or {}
        out.append({"id": str(getattr(hit, "id", "")), "text": payload.get("data", ""),
                    "score": getattr(hit, "score", None)})
    return out


def parse_reply(text: str | None) -> dict[str, Any]:
    """A JSON object reply as Mem0 reads it (code fences stripped, else the outermost ``{...}``); {} if none."""
    if not text or not text.strip():
        return {}
    cleaned = _FENCE.sub("", text.strip())
    for candidate in (cleaned, cleaned[cleaned.find("{"): cleaned.rfind("}") + 1]):
        try:
            value = json.loads(candidate, strict=False)
        except (json.JSONDecodeError, ValueError):
            continue
        return value if isinstance(value, dict) else {}
    return {}


def _fact_text(fact: Any) -> str:
    if isinstance(fact, dict):
        fact = fact.get("fact") or fact.get("text") or fact.get("memory") or ""
    return str(fact).strip()


@dataclass
class AddStep:
    """One decoded ``Memory.add`` call: what was extracted, what the update step saw and decided, what was written."""

    call: int
    user_id: str
    messages: list[dict[str, Any]]
    metadata: dict[str, Any]
    session: dict[str, Any] | None = None
    extraction_prompt: str | None = None
    extraction_input: str | None = None
    facts: list[str] = field(default_factory=list)
    extraction_reply: dict[str, Any] = field(default_factory=dict)
    seen: list[dict[str, str]] = field(default_factory=list)  # [{local, id, text}] in first-seen order
    searches: list[dict[str, Any]] = field(default_factory=list)
    update_prompt: str | None = None
    decisions: list[dict[str, Any]] | None = None  # None: no update call
    history: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    at: str | None = None  # the wall-clock time of the call (recordings from before it existed: None)


class Decoder:
    """Reads the records of one Mem0 major."""

    major: int = 0

    def call_fields(self, kind: str, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The fields recorded for a public ``add`` / ``search`` call."""
        if kind == "add":
            messages = kwargs.get("messages", args[0] if args else None)
            if isinstance(messages, str):
                messages = [{"role": "user", "content": messages}]
            elif isinstance(messages, dict):
                messages = [messages]
            return {"messages": messages, "user_id": kwargs.get("user_id"), "metadata": kwargs.get("metadata"),
                    "infer": kwargs.get("infer", True)}
        filters = kwargs.get("filters") or {}
        return {"query": kwargs.get("query", args[0] if args else None),
                "user_id": kwargs.get("user_id") or filters.get("user_id"),
                "limit": kwargs.get("limit", kwargs.get("top_k")), "filters": filters}

    def vector_fields(self, name: str, args: tuple, kwargs: dict[str, Any], result: Any) -> dict[str, Any]:
        """The fields recorded for one vector-store call (its result included)."""
        if name in ("search", "keyword_search"):
            return {"query": kwargs.get("query", args[0] if args else None),
                    "limit": kwargs.get("limit", kwargs.get("top_k")),
                    "filters": kwargs.get("filters"), "hits": hits_of(result)}
        if name == "insert":
            payloads = kwargs.get("payloads") or (args[2] if len(args) > 2 else None) or []
            return {"ids": [str(i) for i in kwargs.get("ids") or (args[1] if len(args) > 1 else [])],
                    "texts": [(p or {}).get("data") for p in payloads]}
        vector_id = kwargs.get("vector_id", args[0] if args else None)
        if name == "update":
            payload = kwargs.get("payload") or (args[2] if len(args) > 2 else None) or {}
            return {"ids": [str(vector_id)], "texts": [payload.get("data")]}
        if name == "get":
            payload = getattr(result, "payload", None) or {}
            return {"ids": [str(vector_id)], "texts": [payload.get("data")]}
        return {"ids": [str(vector_id)]}

    def decode_llm(self, step: AddStep, record: dict[str, Any]) -> None:
        """Fold one LLM call made inside an ``add`` into the step."""
        raise NotImplementedError


def _system_and_user(messages: Any) -> tuple[str, str]:
    system = user = ""
    for message in messages or []:
        if isinstance(message, dict):
            if message.get("role") == "system":
                system = str(message.get("content") or "")
            elif message.get("role") == "user":
                user = str(message.get("content") or "")
    return system, user


class Mem0V1(Decoder):
    """mem0ai 1.x: extraction, then an ADD / UPDATE / DELETE / NONE decision over the search hits."""

    major = 1

    def decode_llm(self, step: AddStep, record: dict[str, Any]) -> None:
        """Fold one LLM call made inside an ``add`` into the step."""
        reply = parse_reply(record.get("response"))
        system, user = _system_and_user(record.get("messages"))
        if "memory" in reply and system == "" and step.decisions is None:
            cut = min((i for i in (user.find(m) for m in _FIXED_PART) if i >= 0), default=len(user))
            step.update_prompt = user[:cut].strip()
            memory = reply.get("memory")
            step.decisions = [d for d in memory if isinstance(d, dict)] if isinstance(memory, list) else []
        elif "facts" in reply or (system and step.extraction_prompt is None):
            step.extraction_prompt, step.extraction_input = system, user
            facts = reply.get("facts")
            step.facts = [f for f in (_fact_text(x) for x in facts) if f] if isinstance(facts, list) else []
            step.extraction_reply = reply


class Mem0V2(Decoder):
    """mem0ai 2.x: one ADD-only extraction call per ``add``; no update decision."""

    major = 2

    def decode_llm(self, step: AddStep, record: dict[str, Any]) -> None:
        """Fold one LLM call made inside an ``add`` into the step."""
        reply = parse_reply(record.get("response"))
        system, user = _system_and_user(record.get("messages"))
        items = reply.get("memory", reply.get("facts"))
        if step.extraction_prompt is not None or not isinstance(items, list):
            return
        step.extraction_prompt, step.extraction_input = system, user
        step.facts = [f for f in (_fact_text(x) for x in items) if f]
        step.extraction_reply = reply


_DECODERS: dict[int, type[Decoder]] = {1: Mem0V1, 2: Mem0V2}


def decoder_for(version: str) -> Decoder:
    """The decoder of a Mem0 version string (``"1.0.11"``); an unknown major is a `ConfigError`."""
    head = str(version).split(".", 1)[0]
    major = int(head) if head.isdigit() else None
    if major not in _DECODERS:
        raise ConfigError(f"mem0ai {version}: memopt reads {SUPPORTED}; this major's calls are not known to it. "
                          "Install a supported version (pip install -e \".[mem0]\" pins 1.0.11).")
    return _DECODERS[major]()
