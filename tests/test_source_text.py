"""The package's source holds only text every supported Python compiles: no string constant (docstrings included)
with a lone surrogate. Python 3.13 cleans docstrings at compile time as UTF-8, so a docstring spelling
``"\\ud800"`` unescaped made ``import memopt.core.files`` (and so every command) fail there with UnicodeEncodeError."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for top in ("memopt", "pipelines", "examples") for p in (ROOT / top).rglob("*.py"))


def _unencodable(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node.value.encode("utf-8")
            except UnicodeEncodeError:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_sources_are_found():
    assert len(SOURCES) > 100


@pytest.mark.parametrize("top", ["memopt", "pipelines", "examples"])
def test_no_string_constant_holds_a_lone_surrogate(top):
    assert [f for p in SOURCES if p.relative_to(ROOT).parts[0] == top for f in _unencodable(p)] == []
