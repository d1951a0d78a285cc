"""Hostile plug-ins: real distributions, built and installed (offline) into a folder of their own, that try to
take a shipped system's name, clash with each other, raise or call ``sys.exit`` while imported.

Each case runs ``python -m memopt`` with that folder on ``PYTHONPATH`` and asserts the exit code, the one
line on stderr, no traceback, and that nothing outside the output path changed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import snapshot

# Each test builds and installs real distributions (pip, entry points): slow tests, which CI runs with -m slow.
pytestmark = pytest.mark.slow

DATA = "synthetic:conversations=2,sessions=2,seed=1,questions_per_conversation=6"

IMPOSTOR = '''
from pathlib import Path
import os
Path(os.environ["MEMOPT_TEST_MARKER"]).write_text("the impostor was imported")
from memopt_pipelines_rag import Impostor  # never reached: memopt ships no such module
'''
EXITING = "import sys\nsys.exit(0)\n"
RAISING = "raise RuntimeError('this plug-in is broken on purpose')\n"
TWIN = '''
from memopt.systems.base import MemorySystem

class Twin(MemorySystem):
    pass
'''

PLUGINS = {  # distribution: (module source, entry points)
    "impostor-mem0": (IMPOSTOR, {"mem0": "impostor_mem0:Impostor"}),
    "exiting-plugin": (EXITING, {"exits": "exiting_plugin:Exits"}),
    "raising-plugin": (RAISING, {"raises": "raising_plugin:Raises"}),
    "twin-one": (TWIN, {"twin": "twin_one:Twin"}),
    "twin-two": (TWIN, {"twin": "twin_two:Twin"}),
}


def _package(root: Path, dist: str, source: str, eps: dict[str, str]) -> Path:
    module = dist.replace("-", "_")
    folder = root / dist
    folder.mkdir(parents=True)
    (folder / f"{module}.py").write_text(source)
    points = "\n".join(f'{name} = "{value}"' for name, value in eps.items())
    (folder / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=70.1"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        version = "0.0.1"

        [tool.setuptools]
        py-modules = ["{module}"]

        [project.entry-points."memopt.memory_systems"]
        """) + points + "\n")
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The five plug-ins built from their pyproject files and installed with pip into one folder, offline."""
    tmp = tmp_path_factory.mktemp("plugins")
    sources = [_package(tmp / "src", dist, source, eps) for dist, (source, eps) in PLUGINS.items()]
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--no-index", "--target", str(tmp / "site"), *map(str, sources)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return tmp / "site"


def _memopt(site: Path, cwd: Path, *args: str) -> tuple[int, str, list[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "MEMOPT_TEST_MARKER": str(cwd / "imported.txt")}
    done = subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done.returncode, done.stdout, [line for line in done.stderr.splitlines() if line.strip()]


def test_a_plugin_cannot_take_a_shipped_name(site, tmp_path):
    before = snapshot(tmp_path)
    code, _, err = _memopt(site, tmp_path, "run", "-p", "mem0", "--data", DATA, "--limit", "2", "--out", "r.json")
    assert code == 0
    assert len(err) == 1 and err[0].startswith("warning: memory system 'mem0' ships with memopt"), err
    assert "impostor-mem0 (impostor_mem0:Impostor)" in err[0] and "refused" in err[0]
    assert not (tmp_path / "imported.txt").exists()  # the impostor's code never ran
    assert sorted(set(snapshot(tmp_path)) - set(before)) == ["r.json"]


def test_systems_lists_the_refused_and_broken_plugins_and_exits_2(site, tmp_path):
    code, out, err = _memopt(site, tmp_path, "systems")
    assert code == 2
    mem0_rows = [line for line in out.splitlines() if line.startswith("│ mem0 ")]
    assert len(mem0_rows) == 2 and "extract → search_similar" in mem0_rows[0] and "memopt " in mem0_rows[0]
    assert "refused: memory system 'mem0' ships with memopt" in mem0_rows[1] and "impostor-mem0" in out
    assert "sys.exit(0)" in out and "RuntimeError: this plug-in is broken on purpose" in out
    assert "declared by two plug-ins" in out and "twin-one" in out and "twin-two" in out
    assert not (tmp_path / "imported.txt").exists()


@pytest.mark.parametrize(("name", "names"), [
    ("exits", "importing it called sys.exit(0)"),
    ("raises", "RuntimeError: this plug-in is broken on purpose"),
    ("twin", "declared by two plug-ins, twin-one (twin_one:Twin) and twin-two (twin_two:Twin)"),
])
def test_a_broken_or_ambiguous_plugin_is_one_error_and_the_others_still_run(site, tmp_path, name, names):
    before = snapshot(tmp_path)
    code, _, err = _memopt(site, tmp_path, "run", "-p", name, "--data", DATA, "--out", "r.json")
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: memory system"), err
    assert f"'{name}'" in err[0] and names in err[0], err[0]
    assert snapshot(tmp_path) == before
    code, _, err = _memopt(site, tmp_path, "run", "-p", "rag", "--data", DATA, "--limit", "2", "--out", "r.json")
    assert code == 0 and err == [] and (tmp_path / "r.json").is_file()
