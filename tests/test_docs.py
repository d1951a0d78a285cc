"""The README and docs/ stay true: set-up commands and size, the directive table, every command, the nav."""

from __future__ import annotations

import re
import subprocess
import sys

import yaml

from memopt.cli.reference import expand
from memopt.simlm.directives import catalogue_table
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
DOCS = ROOT / "docs"


def test_readme_starts_with_the_two_setup_commands():
    blocks = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    assert README.startswith("# memopt\n\n```bash\n")
    install, tests = blocks[0], blocks[1]
    # any Python >= 3.11: python3, never python3.11
    assert install.startswith("python3 -m venv") and tests.startswith("python3 -m venv")
    assert "pip install -e ." in install and "memopt " in install
    assert 'pip install -e ".[dev]"' in tests and "pytest -q" in tests
    assert re.search(r'pip install (--quiet )?-e "\.\[dev\]"', (ROOT / ".ci" / "run").read_text())


def test_readme_fits_on_a_screen_and_links_only_existing_pages():
    assert README.count("\n") <= 120  # a front door: the tour and the evidence in short, the rest in docs/
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert links
    for link in links:
        assert (ROOT / link).is_file(), link


def test_every_docs_page_is_in_the_nav_and_back():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(nav):
        for item in nav:
            for value in item.values():
                yield from pages(value) if isinstance(value, list) else [value]

    assert sorted(pages(config["nav"])) == sorted(p.name for p in DOCS.glob("*.md"))


def test_directive_table_is_the_catalogue():
    page = (DOCS / "simlm.md").read_text()
    section = page.split("<!-- directives:start -->\n")[1].split("\n<!-- directives:end -->")[0]
    assert section == catalogue_table()


def test_every_command_in_help_is_documented():
    done = subprocess.run([sys.executable, "-m", "memopt", "--help"], capture_output=True, text=True, timeout=60)
    commands = re.findall(r"│ (\w[\w-]*)\s{2,}", done.stdout)
    assert commands, done.stdout
    page = expand((DOCS / "commands.md").read_text())  # the page's reference is made from the CLI at build time
    for command in commands:
        assert f"memopt {command}" in page, command
