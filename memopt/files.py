"""Reading and writing memopt's files: one clear error for a bad input file, atomic writes.

Every reader raises one `DataError` naming the file and what to do (missing, not UTF-8, not JSON
with line and column); every writer goes through a temporary file and a rename, so an interrupted
write never leaves half a file.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from memopt.errors import DataError

__all__ = ["read_json", "write_atomic", "write_json"]


def read_json(path: str | Path, *, missing: str) -> Any:
    """Decoded JSON of a file (gzip-compressed or not); ``missing`` says what to do when it does not exist."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: {missing}")
    raw = path.read_bytes()
    try:
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}).") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text.") from None
    except (OSError, EOFError) as e:
        raise DataError(f"{path}: unreadable ({e}).") from None


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write text or bytes to ``path`` through a temporary file and a rename (parents created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, str):
        tmp.write_text(data, encoding="utf-8")
    else:
        tmp.write_bytes(data)
    tmp.replace(path)
    return path


def write_json(path: str | Path, data: Any, *, indent: int | None = 1) -> Path:
    """Write ``data`` as JSON (UTF-8, atomically)."""
    return write_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False) + "\n")
