"""SimLM is one wing with one door: code outside `memopt/simlm/` imports only names `memopt.simlm` exports."""

from __future__ import annotations

import ast
from pathlib import Path

import memopt.simlm as simlm

ROOT = Path(__file__).resolve().parents[2]
WING = ROOT / "memopt" / "simlm"


def _outside() -> list[Path]:
    files = [p for d in ("memopt", "pipelines", "examples", "experiments") for p in (ROOT / d).rglob("*.py")]
    return [p for p in files if WING not in p.parents]


def _reaches_inside(tree: ast.AST) -> list[str]:
    """Imports of the wing's modules, or of names its door does not export."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("memopt.simlm.")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("memopt.simlm."):
                found.append(node.module)
            elif node.module == "memopt.simlm":
                found += [f"memopt.simlm.{a.name}" for a in node.names if a.name not in simlm.__all__]
    return found


def test_nothing_outside_the_wing_imports_its_insides():
    files = _outside()
    assert len(files) > 100
    offenders = {str(p.relative_to(ROOT)): bad for p in files if (bad := _reaches_inside(ast.parse(p.read_text())))}
    assert offenders == {}


def test_the_check_sees_an_inside_import():
    assert _reaches_inside(ast.parse("from memopt.simlm.engine import SimLM")) == ["memopt.simlm.engine"]
    assert _reaches_inside(ast.parse("from memopt.simlm import behaviour")) == ["memopt.simlm.behaviour"]
    assert _reaches_inside(ast.parse("import memopt.simlm.reflect")) == ["memopt.simlm.reflect"]
    assert _reaches_inside(ast.parse("from memopt.simlm import SimLM, CATALOGUE")) == []


def test_every_name_of_the_door_loads():
    for name in simlm.__all__:
        assert getattr(simlm, name) is not None
    assert simlm.SimLM.__module__ == "memopt.simlm.engine"
