"""Fuzz helpers for any loader of JSON input: random truncations, type changes, dropped and renamed keys.

`mutations(doc, seed=..., n=...)` yields ``(description, text)`` pairs: the JSON text of a valid
document after one random mutation. `check_loader(load, doc, tmp_path)` writes each to a file and
calls ``load(path)``; the only allowed outcomes are a result or a `MemoptError` (one clear error).
Any other exception fails the test with the mutation that caused it and its traceback.

    >>> check_loader(load_locomo, [to_locomo(c) for c in conversations], tmp_path, n=300)
"""

from __future__ import annotations

import copy
import json
import random
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memopt.core.errors import MemoptError

__all__ = ["mutations", "check_loader", "check_inputs"]

_HUGE, _DEEP, _SURROGATE = "__fuzz_huge_int__", "__fuzz_deep__", "__fuzz_surrogate__"
_VALUES: tuple[Any, ...] = (None, True, False, 0, -1, 7, 2**63, 1.5, -0.0, "", "x", "../../x", "1:56 pm on 8 May, 2023",
                            [], {}, ["a"], {"a": 1}, [None], _HUGE, _DEEP, _SURROGATE, "line\nbreak")


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            out += _paths(value, (*prefix, i))
    return out


def _parent(doc: Any, path: tuple) -> Any:
    for part in path[:-1]:
        doc = doc[part]
    return doc


def _text(doc: Any) -> str:
    return (json.dumps(doc, ensure_ascii=False)
            .replace(json.dumps(_HUGE), "9" * 5000)
            .replace(json.dumps(_DEEP), "[" * 50_000 + "]" * 50_000)
            .replace(json.dumps(_SURROGATE), '"a lone surrogate \\udc81"'))  # valid JSON, no valid Unicode


def _mutate(doc: Any, rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(("truncate", "retype", "retype", "retype", "drop", "rename", "duplicate"))
    if kind == "truncate":
        text = json.dumps(doc, ensure_ascii=False)
        cut = rng.randrange(len(text))
        return f"truncated at character {cut}", text[:cut]
    doc = copy.deepcopy(doc)
    path = rng.choice(_paths(doc)[1:] or [()])
    if not path:
        value = rng.choice(_VALUES)
        return f"whole document replaced by {value!r:.40}", _text(value)
    parent, last = _parent(doc, path), path[-1]
    if kind == "retype":
        parent[last] = rng.choice(_VALUES)
        return f"{path} set to {parent[last]!r:.40}", _text(doc)
    if kind == "drop":
        del parent[last]
        return f"{path} removed", _text(doc)
    if kind == "rename" and isinstance(parent, dict):
        new = rng.choice(("", "x", f"{last}_", "session_" + "9" * 5000, "session_-1", "session_0", "qa"))
        parent[new] = parent.pop(last)
        return f"{path} renamed to {new!r:.40}", _text(doc)
    if isinstance(parent, list):
        parent.insert(last, copy.deepcopy(parent[last]))
        return f"{path} duplicated", _text(doc)
    return f"{path} kept (no-op mutation)", _text(doc)


def mutations(doc: Any, *, seed: int = 0, n: int = 200) -> Iterator[tuple[str, str]]:
    """``n`` mutated JSON texts of ``doc``, each with what was changed (seeded, so failures reproduce)."""
    rng = random.Random(seed)
    for _ in range(n):
        yield _mutate(doc, rng)


def check_inputs(call: Callable[[Any], Any], inputs: Iterator[tuple[str, Any]], *,
                 must_name: str | None = None) -> dict[str, int]:
    """Call ``call`` on every input; a result, or a `MemoptError` (naming ``must_name``), is fine; anything else
    fails with the input that caused it. Returns how many inputs loaded and how many were refused."""
    counts = {"loaded": 0, "refused": 0}
    for what, value in inputs:
        try:
            call(value)
        except MemoptError as e:
            assert must_name is None or must_name in str(e), (what, str(e))
            counts["refused"] += 1
        except Exception:
            raise AssertionError(f"{what}: not one clear error but\n{traceback.format_exc()}") from None
        else:
            counts["loaded"] += 1
    return counts


def check_loader(load: Callable[[Path], Any], doc: Any, tmp_path: Path, *, seed: int = 0, n: int = 200,
                 name: str = "fuzz.json") -> dict[str, int]:
    """Write ``n`` mutations of ``doc`` to ``tmp_path / name`` one at a time and load each (see `check_inputs`)."""
    path = tmp_path / name

    def written(items: Iterator[tuple[str, str]]) -> Iterator[tuple[str, Path]]:
        for what, text in items:
            path.write_text(text, encoding="utf-8")
            yield what, path

    return check_inputs(load, written(mutations(doc, seed=seed, n=n)), must_name=str(path))
