"""The docs site: reference pages made from the code cover all of it, and the site builds strictly."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

from memopt.cli import reference
from memopt.experiment import Experiment
from tests.conftest import ROOT

DOCS = ROOT / "docs"


def _help_commands(*group: str) -> list[str]:
    """The commands `memopt [GROUP] --help` lists."""
    done = subprocess.run([sys.executable, "-m", "memopt", *group, "--help"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    found = re.findall(r"│ (\w[\w-]*)\s{2,}", done.stdout.split("Commands")[-1])
    assert found, done.stdout
    return found


def test_every_command_of_the_help_is_on_the_commands_page():
    page = reference.commands_markdown()
    groups = {"data", "bench", "mem0", "attach"}
    top = _help_commands()
    assert groups <= set(top)
    for command in top:
        assert f"`memopt {command}" in page, command
    for group in sorted(groups):
        for command in _help_commands(group):
            assert f"### `memopt {group} {command}`" in page, (group, command)


def test_every_option_of_every_command_is_on_the_commands_page():
    import typer

    from memopt.cli import app

    page = reference.commands_markdown()
    root = typer.main.get_command(app)
    stack, seen = [(root, ["memopt"])], 0
    while stack:
        command, path = stack.pop()
        if hasattr(command, "commands"):
            stack += [(sub, [*path, name]) for name, sub in command.commands.items()]
            continue
        section = page.split(f"### `{' '.join(path)}`\n")[1].split("\n### ")[0]
        for param in command.params:
            for opt in param.opts:
                if param.param_type_name == "option":
                    assert re.search(rf"`[^`]*{re.escape(opt)}\b", section), (path, opt)
                    seen += 1
            if param.param_type_name == "argument":
                assert param.name.upper() in section.split("```")[1], (path, param.name)
    assert seen > 100


def _row(page: str, key: str) -> str:
    rows = [line for line in page.splitlines() if line.startswith(f"| `{key}` |")]
    assert len(rows) == 1, key
    return rows[0]


def test_every_experiment_key_is_on_its_page_with_its_default():
    page = reference.experiment_markdown()
    dumped = Experiment.model_validate({"pipeline": "mem0"}).model_dump(mode="json")

    def walk(model, values, prefix=""):
        for name, field in model.model_fields.items():
            section = reference._section_model(field.annotation)
            value = values.get(name)
            if section is not None and value is not None:
                yield from walk(section, value, f"{prefix}{name}.")
                continue
            if section is not None:  # an optional section, absent by default: its keys' defaults
                yield f"{prefix}{name}", "null"
                yield from walk(section, section().model_dump(mode="json"), f"{prefix}{name}.")
                continue
            yield f"{prefix}{name}", "required" if field.is_required() else (
                value if isinstance(value, str) else json.dumps(value))

    expected = dict(walk(Experiment, dumped))
    assert expected["rounds"] == "4" and expected["lm.task"] == "sim" and expected["data.split"] == "[0.5, 0.25, 0.25]"
    assert set(expected) == set(reference.experiment_keys())
    for key, default in expected.items():
        cells = [c.strip() for c in _row(page, key).strip("|").split(" | ")]
        assert cells[2] == (default if default == "required" else f"`{default}`"), (key, cells)
        assert cells[4], f"{key}: no description (give the field one, or a line in EXPERIMENT_NOTES)"


def test_experiment_notes_name_only_real_keys():
    assert set(reference.EXPERIMENT_NOTES) <= set(reference.experiment_keys())


def test_graph_schema_page_holds_the_schema_and_every_query():
    from memopt.trace import graph

    page = reference.graph_schema_markdown()
    assert f"**{graph.SCHEMA_VERSION}**" in page
    for attribute in ("schema_version", "operations", "derived_from", "prompt_version", 'rel="read"'):
        assert attribute in page
    for name in graph.__all__:
        if callable(getattr(graph, name)):
            assert f"| `{name}` |" in page


def test_markers_expand_and_a_typo_is_an_error():
    page = (DOCS / "commands.md").read_text()
    assert "<!-- reference:commands -->" in page
    expanded = reference.expand(page)
    assert "<!-- reference:" not in expanded and "### `memopt optimize`" in expanded
    assert "<!-- reference:experiment -->" in (DOCS / "experiment-file.md").read_text()
    assert "<!-- reference:graph-schema -->" in (DOCS / "graph-schema.md").read_text()
    with pytest.raises(ValueError, match="no such reference"):
        reference.expand("<!-- reference:comands -->\n")


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs: pip install -e '.[docs]'")
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir",
                           str(tmp_path / "site")], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    commands = (tmp_path / "site" / "commands" / "index.html").read_text()
    assert "memopt bench feedback" in commands and "reference:commands" not in commands
    assert not (tmp_path / "site" / "hooks.py").exists()
