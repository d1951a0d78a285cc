"""`memopt.lm` has no import circle: every module imports on its own, and its import graph (read with `ast`,
function-level and TYPE_CHECKING imports included) is acyclic."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

LM = Path(__file__).resolve().parents[2] / "memopt" / "lm"


def _name(path: Path) -> str:
    parts = path.relative_to(LM.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_name(p): p for p in sorted(LM.rglob("*.py"))}


def _type_only(tree: ast.AST) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:`` (never run)."""
    blocks = [b for b in ast.walk(tree) if isinstance(b, ast.If) and "TYPE_CHECKING" in ast.unparse(b.test)]
    return {id(n) for block in blocks for stmt in block.body for n in ast.walk(stmt)}


def _imported(path: Path, module: str, known: set[str], *, type_checking: bool = True) -> set[str]:
    """The `memopt.lm` modules one file imports anywhere in it: ``from P import m`` counts ``P.m`` when it is a
    module (``P`` is then only its parent package, already loading), else ``P``. ``type_checking``: count the
    imports under ``if TYPE_CHECKING:`` too."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = set() if type_checking else _type_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            submodules = {f"{base}.{alias.name}" for alias in node.names} & known
            found.update(submodules)
            if len(submodules) < len(node.names):  # names defined in ``base`` itself: ``base`` runs first
                found.add(base)
    return {name for name in found if name in known and name != module}


def import_graph() -> dict[str, set[str]]:
    """Module → the `memopt.lm` modules it imports."""
    modules = _modules()
    return {name: _imported(path, name, set(modules)) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as a path that returns to its start, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_circle_and_passes_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_imports_for_type_checking_only_can_be_left_out(tmp_path):
    path = tmp_path / "x.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from memopt.lm import usage\n")
    known = {"memopt.lm", "memopt.lm.usage", "memopt.lm.x"}
    assert _imported(path, "memopt.lm.x", known) == {"memopt.lm.usage"}
    assert _imported(path, "memopt.lm.x", known, type_checking=False) == set()


def test_the_graph_sees_function_level_and_relative_imports(tmp_path):
    code = "def f():\n    from memopt.lm.build import make_lm\n    from . import usage\n"
    path = tmp_path / "x.py"
    path.write_text(code)
    found = _imported(path, "memopt.lm.x", {"memopt.lm", "memopt.lm.build", "memopt.lm.usage", "memopt.lm.x"})
    assert found == {"memopt.lm.build", "memopt.lm.usage"}
    path.write_text("if True:\n    from memopt.lm import usage, make_lm\n")
    found = _imported(path, "memopt.lm.x", {"memopt.lm", "memopt.lm.usage", "memopt.lm.x"})
    assert found == {"memopt.lm", "memopt.lm.usage"}  # make_lm is a name of the package: it runs first


def test_memopt_lm_has_no_import_circle():
    graph = import_graph()
    assert {"memopt.lm.spec", "memopt.lm.build", "memopt.lm.router", "memopt.lm.usage"} <= set(graph)
    assert "memopt.lm.spec" in graph["memopt.lm.router"] and "memopt.lm.router" in graph["memopt.lm.build"]
    assert find_cycle(graph) is None, " → ".join(find_cycle(graph) or [])


def test_spec_parsing_imports_no_other_lm_module():
    """The boundary (experiment loading, CLI options) parses specs without building or calling an LM: it reads
    only the registry of in-process providers' names and the masking rule of its errors, which import nothing of
    `memopt.lm`."""
    graph = import_graph()
    assert graph["memopt.lm.spec"] == {"memopt.lm.providers", "memopt.lm.redaction"}
    assert graph["memopt.lm.providers"] == set() and graph["memopt.lm.redaction"] == set()


def test_memopt_has_no_import_circle_anywhere():
    """The whole package, function-level imports included, is acyclic: no module imports, at any point of a run,
    one that imports it back (imports for type checking only are not run and not counted here)."""
    root = LM.parent
    modules = {_name(p): p for p in sorted(root.rglob("*.py"))}
    graph = {name: _imported(path, name, set(modules), type_checking=False) for name, path in modules.items()}
    assert len(graph) > 100 and graph["memopt.simlm.provider"] >= {"memopt.simlm", "memopt.lm.providers"}
    assert find_cycle(graph) is None, " → ".join(find_cycle(graph) or [])


def test_every_lm_module_imports_in_a_fresh_interpreter():
    """Each module of `memopt.lm`, imported first with no other memopt module loaded, imports cleanly."""
    modules = [name for name in _modules() if not name.endswith("local_server_child")]
    code = ("import importlib, sys\n"
            f"for name in {modules!r}:\n"
            "    for loaded in [m for m in sys.modules if m == 'memopt' or m.startswith('memopt.')]:\n"
            "        del sys.modules[loaded]\n"
            "    importlib.import_module(name)\n"
            f"print('ok', len({modules!r}))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ok", str(len(modules))]
