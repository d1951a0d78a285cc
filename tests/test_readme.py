"""The README stays true: its set-up commands, its directive table, its command list."""

from __future__ import annotations

import re
import subprocess
import sys

from memopt.lm.directives import catalogue_table
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()


def test_readme_starts_with_the_two_setup_commands():
    blocks = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    assert README.startswith("# memopt\n\n```bash\n")
    install, tests = blocks[0], blocks[1]
    # any Python >= 3.11: python3, never python3.11
    assert install.startswith("python3 -m venv") and tests.startswith("python3 -m venv")
    assert "pip install -e ." in install and "memopt " in install
    assert 'pip install -e ".[dev]"' in tests and "pytest -q" in tests
    assert re.search(r'pip install (--quiet )?-e "\.\[dev\]"', (ROOT / ".ci" / "run").read_text())


def test_readme_directive_table_is_the_catalogue():
    section = README.split("<!-- directives:start -->\n")[1].split("\n<!-- directives:end -->")[0]
    assert section == catalogue_table()


def test_every_command_in_help_is_documented():
    done = subprocess.run([sys.executable, "-m", "memopt", "--help"], capture_output=True, text=True, timeout=60)
    commands = re.findall(r"│ (\w[\w-]*)\s{2,}", done.stdout)
    assert commands, done.stdout
    for command in commands:
        assert f"memopt {command}" in README, command
