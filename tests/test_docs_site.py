"""The docs site: the getting-started page's commands run, reference pages made from the code cover all of it, no
page is too long to read, and the site builds strictly."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.cli import reference
from memopt.optimize.experiment import Experiment
from tests.conftest import ROOT

DOCS = ROOT / "docs"
NOT_RUN = "# not run by the docs test"  # the page's own words on a command the test leaves out
MAX_PAGE_LINES = 400


def shell_commands(page: str) -> list[str]:
    """The commands of a page's ``bash`` blocks, in order (one per line, comment lines left out)."""
    blocks = re.findall(r"```bash\n(.*?)\n```", page, re.S)
    lines = [line.strip() for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _env(home: Path) -> dict[str, str]:
    """The environment of a user in a fresh folder: this checkout's memopt first, no setting of ours leaking in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMOPT_", "MLFLOW_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["MEMOPT_CACHE_DIR"] = str(home / ".memopt" / "cache")
    return env


def run_getting_started(tmp_path: Path, *, quickstart: bool) -> dict[str, str]:
    """Run the commands of docs/getting-started.md in order in a fresh folder holding the experiment files, and
    return each one's output. RUN_ID becomes the run id the quickstart printed; without ``quickstart`` the quickstart
    and the commands that need its run are left out."""
    commands = shell_commands((DOCS / "getting-started.md").read_text())
    skipped = [c for c in commands if NOT_RUN in c]
    assert [c.split()[0] for c in skipped] == ["python3", "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false"], skipped
    shutil.copytree(ROOT / "experiments", tmp_path / "experiments")
    run_id, outputs = None, {}
    for command in (c for c in commands if NOT_RUN not in c):
        if not quickstart and (command.startswith("memopt optimize") or "RUN_ID" in command):
            continue
        if "RUN_ID" in command:
            assert run_id, f"{command}: no run id printed before it"
            command = command.replace("RUN_ID", run_id)
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=_env(tmp_path), capture_output=True,
                              text=True, timeout=900)
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        outputs[command] = done.stdout
        if command.startswith("memopt optimize"):
            run_id = re.search(r"\brun ([0-9a-f]{32})\b", done.stdout).group(1)
    outputs["run id"] = run_id or ""
    return outputs


@pytest.mark.slow  # over 2 s on a quiet machine (CI runs it with -m slow)
def test_getting_started_tour_runs(tmp_path):
    """The page's commands but the quickstart and the export of its run (the slow test below runs those too)."""
    outputs = run_getting_started(tmp_path, quickstart=False)
    assert len(outputs) >= 7
    assert "ExtractionError" in next(v for k, v in outputs.items() if k.startswith("memopt attribute"))
    assert "mem0" in outputs["memopt systems"] and "extract" in outputs["memopt systems mem0"]
    for made in ("results.json", "attributions.jsonl", "q0.html", "graphs/synth-0-000.json"):
        assert (tmp_path / made).is_file(), made


@pytest.mark.slow
def test_getting_started_commands_run(tmp_path):
    """Every command of the page, the quickstart first; then what the page says to open in MLflow is in the store."""
    outputs = run_getting_started(tmp_path, quickstart=True)
    assert (tmp_path / "mem0_config.json").is_file() and outputs["run id"]
    done = subprocess.run([sys.executable, "-c", MLFLOW_CHECK, outputs["run id"]], cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


# What the page tells a user to open in MLflow, read back from the quickstart's store (a process of its own: MLflow's
# tracking URI is process-wide).
MLFLOW_CHECK = """
import sys, mlflow
mlflow.set_tracking_uri("sqlite:///mlflow.db")
runs = mlflow.search_runs([mlflow.get_experiment_by_name("memopt-quickstart").experiment_id], output_format="list")
parent = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
assert [r.info.run_id for r in parent] == [sys.argv[1]], parent
assert parent[0].info.run_name.startswith("quickstart-memtrace-seed0-"), parent[0].info.run_name
rounds = sorted(r.info.run_name for r in runs if r not in parent)
assert rounds == ["round-0 (starting prompts)", "round-1", "round-2", "round-3", "round-4"], rounds
for op in ("extract", "update", "answer"):
    assert mlflow.genai.load_prompt(f"prompts:/memopt-quickstart.mem0.{op}@best").template  # scoped by experiment
"""


def test_readme_tour_is_the_tested_tour():
    """The README's tour runs only commands the getting-started test runs (or, for the server, names as not run)."""
    def bare(command: str) -> str:
        return command.split("  #")[0].strip()

    tested = {bare(c) for c in shell_commands((DOCS / "getting-started.md").read_text())}
    tour = shell_commands((ROOT / "README.md").read_text())[2:]
    assert len(tour) >= 4
    for command in tour:
        assert bare(command) in tested, command


def test_no_page_is_too_long_to_read():
    """Every page, the reference pages as the build makes them, within MAX_PAGE_LINES."""
    long = {p.name: n for p in DOCS.glob("*.md") if (n := reference.expand(p.read_text()).count("\n")) > MAX_PAGE_LINES}
    assert not long, f"pages over {MAX_PAGE_LINES} lines: {long}"


def _help_commands(*group: str) -> list[str]:
    """The commands `memopt [GROUP] --help` lists."""
    done = subprocess.run([sys.executable, "-m", "memopt", *group, "--help"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    found = re.findall(r"│ (\w[\w-]*)\s{2,}", done.stdout.split("Commands")[-1])
    assert found, done.stdout
    return found


def test_every_command_of_the_help_is_on_a_commands_page():
    commands = reference.expand((DOCS / "commands.md").read_text())
    bench = reference.expand((DOCS / "bench-commands.md").read_text())
    groups = {"data", "bench", "mem0", "attach"}
    top = _help_commands()
    assert groups <= set(top)
    for command in top:
        assert f"`memopt {command}" in commands, command
    for group in sorted(groups):
        for command in _help_commands(group):
            page = bench if group == "bench" else commands
            assert f"### `memopt {group} {command}`" in page, (group, command)
    assert "### `memopt bench" not in commands and "### `memopt optimize`" not in bench


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
            if param.hidden:  # a deprecated name kept working (`optimize --workers`), not documented as an option
                continue
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
    assert "<!-- reference:bench-commands -->" in (DOCS / "bench-commands.md").read_text()
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
    bench = (tmp_path / "site" / "bench-commands" / "index.html").read_text()
    assert "memopt optimize" in commands and "memopt bench feedback" in bench and "reference:" not in commands + bench
    assert not (tmp_path / "site" / "hooks.py").exists()
