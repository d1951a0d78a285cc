"""What a run sends MLflow, made safe: params and tags stringified and cut, metrics flattened, secrets masked.

Param values are stringified (dicts and lists as JSON) and cut to MLflow's 6000 characters, tag
values to 8000. Metrics are flattened (``{"val": {"f1": 0.5}}`` → ``val.f1``); None is skipped,
another non-number is skipped with a warning. Every text passes through
`memopt.lm.redaction.redact`; keys that name a secret (``api_key``, ``secret``, ``password``,
``credential``, ``token`` as a word, so ``max_tokens`` stays; also inside nested dicts) are dropped; a
file is uploaded as a redacted copy when its text holds a secret (`redacted_copy`).
"""

from __future__ import annotations

import json
import logging
import numbers
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memopt.lm.redaction import redact, secret_key, secret_values

__all__ = ["PARAM_LIMIT", "TAG_LIMIT", "KEY_LIMIT", "secret_key", "scrub", "as_text", "cut", "metric_key",
           "entries", "flatten", "redacted_copy"]

PARAM_LIMIT, TAG_LIMIT, KEY_LIMIT = 6000, 8000, 250
_log = logging.getLogger(__name__)


def scrub(value: Any) -> Any:
    """``value`` with secret-named dict keys dropped and strings redacted, recursively."""
    return _scrub(value, secret_values())


def _scrub(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, Mapping):
        return {redact(str(k), secrets): _scrub(v, secrets) for k, v in value.items() if not secret_key(str(k))}
    if isinstance(value, list | tuple | set):
        return [_scrub(v, secrets) for v in value]
    if isinstance(value, str):
        return redact(value, secrets)
    return value


def as_text(value: Any, limit: int) -> str:
    """A param or tag value as redacted text of at most ``limit`` characters (dicts and lists as JSON)."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, Mapping | list | tuple):
        text = json.dumps(scrub(value), sort_keys=True, default=str, ensure_ascii=False)
    else:
        text = str(value)
    return cut(redact(text), limit)


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def metric_key(name: Any) -> str:
    """A key MLflow accepts: redacted, odd characters replaced, at most `KEY_LIMIT` characters."""
    return cut(re.sub(r"[^\w.\-/ ]", "_", redact(str(name))), KEY_LIMIT)


def entries(values: Mapping[str, Any], limit: int) -> dict[str, str]:
    """Params or tags as MLflow takes them: secret-named keys dropped, keys and values made safe."""
    return {metric_key(k): as_text(v, limit) for k, v in values.items() if not secret_key(str(k))}


def flatten(metrics: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """Numeric metrics, nested dicts flattened with '.'; None skipped, other non-numbers skipped with a warning."""
    flat: dict[str, float] = {}
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        elif isinstance(value, numbers.Real):
            flat[metric_key(name)] = float(value)
        elif value is not None:
            _log.warning("metric %s: %r is not a number; not logged", metric_key(name), type(value).__name__)
    return flat


def redacted_copy(path: Path, scratch: Path) -> Path:
    """``path``, or a copy of it under ``scratch`` with secrets masked when any of its text files holds one."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    dirty = {}
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if redact(text) != text:
            dirty[file] = redact(text)
    if not dirty:
        return path
    copy = scratch / path.name
    if path.is_file():
        copy.write_text(dirty[path], encoding="utf-8")
        return copy
    shutil.copytree(path, copy)
    for file, text in dirty.items():
        (copy / file.relative_to(path)).write_text(text, encoding="utf-8")
    return copy
