"""Name a data set on the command line or in an experiment file, and load it.

A data spec is either a path to a LoCoMo or a LongMemEval JSON file (told apart by content), or
``synthetic`` (the bundled default: the generator's default spec) optionally with options:
``synthetic:conversations=12,sessions=10,seed=3``.
A relative path is read from the working directory; when it is not there, from the working
directory as the shell names it (``$PWD``), so ``../shared/...`` in a checkout reached through a
symlink means the folder next to the link, as ``cd ../shared`` would.
"""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path
from typing import Any

from memopt.core.errors import DataError
from memopt.core.files import read_json
from memopt.data.locomo import parse_locomo
from memopt.data.longmemeval import is_longmemeval, parse_longmemeval
from memopt.data.model import Conversation
from memopt.data.synth import SynthSpec, synthetic_conversations

__all__ = ["parse_synth_spec", "load_data", "data_path", "select"]


def parse_synth_spec(spec: str) -> SynthSpec | None:
    """The `SynthSpec` a ``synthetic[:k=v,...]`` data spec names, or None for a path."""
    if spec != "synthetic" and not spec.startswith("synthetic:"):
        return None
    options: dict[str, int] = {}
    allowed = {f.name for f in fields(SynthSpec)}
    for part in filter(None, spec.partition(":")[2].split(",")):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in allowed or not value.strip().lstrip("-").isdigit() or len(value.strip()) > 18:
            raise DataError(f"data spec {spec[:80]!r}: bad option {part[:40]!r}; use synthetic:"
                            f"{','.join(sorted(allowed))} with integer values.")
        options[key] = int(value)
    return SynthSpec(**options)


def load_data(spec: str) -> tuple[str, list[Conversation]]:
    """Load the conversations a data spec names; returns (description, conversations)."""
    if not spec.strip():
        raise DataError("the data source is empty; pass a LoCoMo or LongMemEval JSON file, or `synthetic`.")
    synth = parse_synth_spec(spec)
    if synth is not None:
        return synth.describe(), synthetic_conversations(synth)
    raw = read_json(data_path(spec),
                    missing="no such data file. Pass a LoCoMo or LongMemEval JSON file, or `synthetic`.")
    if is_longmemeval(raw):
        return str(Path(spec)), parse_longmemeval(raw, source=str(spec))
    if not _is_locomo(raw):
        raise DataError(f"{spec}: neither a LoCoMo file (a list of {{sample_id, conversation, qa}}) nor a LongMemEval "
                        "file (a list of {question_id, question_type, question, answer, haystack_dates, "
                        f"haystack_sessions}}); it holds {_describe(raw)}.")
    return str(Path(spec)), parse_locomo(raw, source=str(spec))


def _is_locomo(raw: Any) -> bool:
    first = raw[0] if isinstance(raw, list) and raw else raw
    return raw == [] or (isinstance(first, dict) and bool({"sample_id", "conversation", "qa"} & set(first)))


def _describe(raw: Any) -> str:
    if isinstance(raw, list):
        inner = type(raw[0]).__name__ if raw else "nothing"
        keys = f" with keys {', '.join(sorted(raw[0])[:6])}" if raw and isinstance(raw[0], dict) else ""
        return f"a list of {inner}{keys}"
    if isinstance(raw, dict):
        return f"an object with keys {', '.join(sorted(raw)[:6]) or '(none)'}"
    return f"a {type(raw).__name__}"


def data_path(spec: str) -> Path:
    """The file a path spec names; a relative one missing from the working directory is tried against ``$PWD``."""
    path = Path(spec)
    pwd = os.environ.get("PWD")
    if path.is_absolute() or not pwd or not Path(pwd).is_absolute() or path.exists():
        return path
    logical = Path(pwd) / path
    return Path(os.path.normpath(logical)) if os.path.exists(os.path.normpath(logical)) else path


def select(conversations: list[Conversation], ids: list[str] | None) -> list[Conversation]:
    """Keep the conversations with these sample ids (all when None); unknown ids are an error."""
    if not ids:
        return conversations
    known = {c.sample_id for c in conversations}
    missing = [i for i in ids if i not in known]
    if missing:
        raise DataError(f"unknown conversation id(s) {', '.join(missing)}; the data has {', '.join(sorted(known))}.")
    wanted = set(ids)
    return [c for c in conversations if c.sample_id in wanted]
