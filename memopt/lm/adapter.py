"""memopt's DSPy adapters: `SchemaJSONAdapter` for a tiny model behind llama.cpp's server, and `SignatureChatAdapter`
(DSPy's ChatAdapter building each signature's system message once) for every other LM `memopt.lm.make_lm` builds.

`SignatureChatAdapter`: DSPy's ChatAdapter formats the system message (field descriptions, the field structure with
each output type's JSON schema, the instructions) again on every call, 0.3-1.7 ms per call for memopt's signatures
on this machine; it depends only on the signature, so this adapter builds it once per signature class and keeps it
while the class lives. Messages, requests and replies are byte-identical to ChatAdapter's. It yields to an adapter
the caller configured (``dspy.configure(adapter=...)``).

`SchemaJSONAdapter` contract:

- Every request carries the JSON schema of the signature's output fields as llama.cpp's
  ``response_format`` extension, ``{"type": "json_object", "schema": {...}}``: the server turns it
  into a grammar, so the reply is a JSON object of that shape unless the token limit cuts it off.
  List outputs must hold at least ``min_items`` items (default 1: SmolLM2-135M answers ``[]`` to
  almost every extraction otherwise; memopt's pipelines treat a blank fact or a NONE event as no
  change).
- The system message is short: the instructions, one line naming the inputs, one line naming the
  keys of the reply with their types and descriptions (instead of DSPy's field-structure template).
- Parsing is JSONAdapter's (``json_repair`` closes a reply cut off at the token limit). Its
  fallback: when that fails, keep every field that validates and, of a list field, the items that
  validate (a reply cut off inside its last item); if a field is still missing or invalid, the
  adapter raises DSPy's `AdapterParseError`, which memopt records as the failed case's error.
- `AdapterStats` counts the replies parsed (``outputs``), those parsed only after repair or
  dropping items (``repaired``), and those that raised (``malformed``); read with ``stats()``.
- An LM can carry the adapter it needs (`attach_adapter`); `adapter_scope(lm)` sets it for a block
  when it has one. memopt's LLM operations, LM judges and reflection step use it, so the adapter
  follows the LM wherever memopt uses it, and other LMs keep DSPy's default.
"""

from __future__ import annotations

import contextlib
import json
import threading
import weakref
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, get_args, get_origin

import dspy
import json_repair
import pydantic
from dspy.adapters.utils import get_annotation_name, parse_value
from dspy.utils.exceptions import AdapterParseError

__all__ = ["AdapterStats", "SchemaJSONAdapter", "SignatureChatAdapter", "output_schema", "attach_adapter",
           "preferred_adapter", "adapter_scope"]

_ATTRIBUTE = "memopt_adapter"
_INVALID = object()


@dataclass
class AdapterStats:
    """Replies parsed, repaired (parsed only after repair or dropping items) and malformed (unparseable)."""

    outputs: int = 0
    repaired: int = 0
    malformed: int = 0


def output_schema(signature: type[dspy.Signature], *, min_items: int = 0) -> dict[str, Any]:
    """The JSON schema of a signature's output fields: all required, no other keys, lists of ``min_items`` or more."""
    fields = {name: (field.annotation, ...) for name, field in signature.output_fields.items()}
    model = pydantic.create_model("Reply", __config__=pydantic.ConfigDict(extra="forbid"), **fields)
    schema = model.model_json_schema()
    for prop in schema["properties"].values():
        if prop.get("type") == "array" and min_items:
            prop["minItems"] = min_items
    return schema


def _describe(name: str, field: Any, *, typed: bool) -> str:
    desc = str((field.json_schema_extra or {}).get("desc") or "")
    kind = get_annotation_name(field.annotation) if typed else ""
    detail = ": ".join(part for part in (kind, "" if desc.startswith("${") else desc) if part)
    return f"`{name}`" + (f" ({detail})" if detail else "")


def _strict_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


class SchemaJSONAdapter(dspy.JSONAdapter):
    """JSONAdapter with llama.cpp's schema-constrained output, a short system message and a lenient fallback."""

    def __init__(self, *, min_items: int = 1) -> None:
        super().__init__(use_native_function_calling=False)
        self.min_items = min_items
        self._lock = threading.Lock()
        self._stats = AdapterStats()

    def stats(self) -> dict[str, int]:
        """Counts so far: outputs, repaired, malformed."""
        with self._lock:
            return asdict(self._stats)

    def _count(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                setattr(self._stats, name, getattr(self._stats, name) + delta)

    def _prepare_response_format(self, lm: Any, lm_kwargs: dict[str, Any], signature: type[dspy.Signature]) -> None:
        lm_kwargs["response_format"] = {"type": "json_object",
                                        "schema": output_schema(signature, min_items=self.min_items)}

    def format_system_message(self, signature: type[dspy.Signature]) -> str:
        """The instructions, the inputs, and the keys of the JSON reply."""
        inputs = "; ".join(_describe(n, f, typed=False) for n, f in signature.input_fields.items())
        outputs = "; ".join(_describe(n, f, typed=True) for n, f in signature.output_fields.items())
        return f"{signature.instructions}\n\nInputs: {inputs}.\nReply with one JSON object with the keys: {outputs}."

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        """JSONAdapter's parse, then the lenient fallback; counts every reply."""
        try:
            fields = super().parse(signature, completion)
            repaired = not _strict_object(completion)
        except AdapterParseError:
            fields = _salvage(signature, completion)
            if fields is None:
                self._count(outputs=1, malformed=1)
                raise
            repaired = True
        self._count(outputs=1, repaired=int(repaired))
        return fields


class SignatureChatAdapter(dspy.ChatAdapter):
    """DSPy's ChatAdapter with each signature's system message built once (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._system: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()

    def format_system_message(self, signature: type[dspy.Signature]) -> str:
        """ChatAdapter's system message for ``signature``, from the first call's."""
        with self._lock:
            message = self._system.get(signature)
        if message is None:
            message = super().format_system_message(signature)
            with self._lock:
                self._system[signature] = message
        return message


def _salvage(signature: type[dspy.Signature], completion: str) -> dict[str, Any] | None:
    """The output fields that validate, list fields keeping their valid items; None if a field is missing."""
    raw = json_repair.loads(completion)
    if not isinstance(raw, dict):
        return None
    fields: dict[str, Any] = {}
    for name, field in signature.output_fields.items():
        if name not in raw:
            return None
        annotation, value = field.annotation, raw[name]
        if get_origin(annotation) is list and isinstance(value, list):
            item_type = (get_args(annotation) or (Any,))[0]
            fields[name] = [item for item in (_valid(v, item_type) for v in value) if item is not _INVALID]
            continue
        fields[name] = _valid(value, annotation)
        if fields[name] is _INVALID:
            return None
    return fields


def _valid(value: Any, annotation: Any) -> Any:
    try:
        return parse_value(value, annotation)
    except ValueError:
        return _INVALID


def attach_adapter(lm: dspy.LM, adapter: dspy.Adapter) -> dspy.LM:
    """Make ``adapter`` the one memopt uses with ``lm``; returns ``lm``."""
    setattr(lm, _ATTRIBUTE, adapter)
    return lm


def preferred_adapter(lm: Any) -> dspy.Adapter | None:
    """The adapter attached to ``lm``, if any."""
    return getattr(lm, _ATTRIBUTE, None)


@contextlib.contextmanager
def adapter_scope(lm: Any = None) -> Iterator[None]:
    """Use the adapter attached to ``lm`` (default: the current DSPy LM) inside the block, if it has one."""
    adapter = preferred_adapter(lm if lm is not None else dspy.settings.lm)
    if adapter is None or (isinstance(adapter, SignatureChatAdapter) and dspy.settings.adapter is not None):
        yield
        return
    with dspy.context(adapter=adapter):
        yield
