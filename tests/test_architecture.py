"""The package's shape: no import circle between modules, no import up the floors between folders.

The floors, lowest first, are docs/architecture.md's: a module may import modules of its own folder and of the
folders below it, never of a folder above (type-only and function-level imports included: they are arrows too).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]

# The floors of docs/architecture.md, lowest first. A folder's name stands for the folder; a root module for itself.
FLOORS = [
    ["core"],
    ["memopt", "registry", "taxonomy"],
    ["data"],
    ["lm"],
    ["judge"],
    ["simlm"],
    ["systems"],
    ["trace"],
    ["evaluate"],
    ["attribution"],
    ["feedback"],
    ["report"],
    ["label"],
    ["export"],
    ["live"],
    ["optimize"],
    ["tracking"],
    ["bench"],
    ["cli"],
    ["__main__"],
]
FLOOR = {unit: i for i, units in enumerate(FLOORS) for unit in units}


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_of(p): p for p in sorted((ROOT / "memopt").rglob("*.py"))}


def _imports(path: Path, module: str, modules: dict[str, Path]) -> set[str]:
    """The memopt modules ``path`` imports, anywhere in it (top level, functions, ``if TYPE_CHECKING``)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name.startswith("memopt") and name != module:
                found.add(name)
    return found


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "memopt"


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    modules = _modules()
    g = nx.DiGraph()
    for module, path in modules.items():
        g.add_node(module)
        for target in _imports(path, module, modules):
            g.add_edge(module, target)
    return g


def test_every_folder_and_root_module_has_a_floor(graph):
    units = {_unit(m) for m in graph}
    assert units - set(FLOOR) == set(), "a folder or root module that docs/architecture.md does not place"


def test_no_import_circle(graph):
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert circles == []


def test_no_import_runs_up_the_floors(graph):
    upward = sorted(f"{a} -> {b}" for a, b in graph.edges if FLOOR[_unit(b)] > FLOOR[_unit(a)])
    assert upward == []


def test_the_root_holds_a_handful_of_modules():
    loose = sorted(p.name for p in (ROOT / "memopt").glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "registry.py", "taxonomy.py"]
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for name in loose:
        assert name in architecture, f"docs/architecture.md does not say why memopt/{name} is at the root"


def test_a_circle_is_caught(tmp_path):
    """The checker itself: a two-module circle and an upward import in a throwaway tree are found."""
    pkg = tmp_path / "memopt"
    (pkg / "core").mkdir(parents=True)
    (pkg / "data").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "data" / "__init__.py").write_text("")
    (pkg / "core" / "a.py").write_text("from memopt.data.b import x\n")
    (pkg / "data" / "b.py").write_text("def f():\n    from memopt.core import a\n")
    modules = {_module_of_in(tmp_path, p): p for p in pkg.rglob("*.py")}
    g = nx.DiGraph((m, t) for m, p in modules.items() for t in _imports(p, m, modules))
    assert ("memopt.core.a", "memopt.data.b") in g.edges and ("memopt.data.b", "memopt.core.a") in g.edges
    assert any(len(c) > 1 for c in nx.strongly_connected_components(g))


def _module_of_in(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_a_moved_import_path_still_imports_and_says_where_it_went():
    import importlib
    import sys

    from memopt.core.moved import MOVED
    from memopt.systems.store import MemoryStore

    for old in ("memopt.store", "memopt.experiment"):
        sys.modules.pop(old, None)
    with pytest.warns(FutureWarning, match=r"memopt\.store moved to memopt\.systems\.store"):
        old = importlib.import_module("memopt.store")
    assert old.MemoryStore is MemoryStore
    with pytest.warns(FutureWarning, match="memopt.optimize.experiment"):
        from memopt.experiment import load_experiment  # noqa: F401
    for old_path, new_path in MOVED.items():  # every entry names a module that exists, at a path that does not
        assert importlib.util.find_spec(new_path) is not None, new_path
        assert not (ROOT / (old_path.replace(".", "/") + ".py")).exists(), old_path
