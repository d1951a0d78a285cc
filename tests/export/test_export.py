"""`memopt export`: sources (prompts directory, optimize run id), every format, atomic files, CLI exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError, PromptError
from memopt.export.formats import DATE_LINE, JSON_INSTRUCTION, export, mem0_fragment, write_tuned_prompts
from memopt.systems import prompts as prompt_files
from memopt.systems.prompts import load_prompts, write_prompts
from memopt.tracking.sources import load_source

TUNED = {"extract": "Extract the facts of both speakers; resolve relative dates against the session date.",
         "update": "Decide ADD, UPDATE, DELETE or NONE for each new fact; keep compatible facts.",
         "answer": "Answer in a few words from the memories; say 'not mentioned' when they hold nothing."}
RAG = {"answer": "Answer from the retrieved turns.", "rewrite_query": "Rewrite the question as a query."}


def memopt(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memopt", "export", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


@pytest.fixture
def prompts_dir(tmp_path) -> Path:
    """A prompts directory with tuned mem0 prompts and rag prompts."""
    root = tmp_path / "tuned"
    write_prompts("mem0", TUNED, root)
    write_prompts("rag", RAG, root)
    return root


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory) -> Path:
    """An initialised, empty MLflow sqlite store, created once (≈2 s) and copied by each test."""
    import mlflow

    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    mlflow.MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def optimize_run(tmp_path, monkeypatch, empty_db, prompts_dir) -> tuple[str, str]:
    """(tracking URI, run id) of a parent run holding ``best_prompts/mem0/*.md`` and param pipeline=mem0."""
    import mlflow

    shutil.copy(empty_db, tmp_path / "mlflow.db")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client = mlflow.MlflowClient(uri)
    run = client.create_run(client.create_experiment("memopt"), run_name="opt", tags={"memopt.kind": "optimize"})
    client.log_param(run.info.run_id, "pipeline", "mem0")
    client.log_artifacts(run.info.run_id, str(prompts_dir / "mem0"), "best_prompts/mem0")
    return uri, run.info.run_id


def test_directory_source_picks_the_pipeline(prompts_dir, tmp_path):
    with pytest.raises(ConfigError, match=r"several pipelines \(mem0, rag\); choose one with --pipeline"):
        load_source(prompts_dir)
    assert load_source(prompts_dir, pipeline="mem0") == ("mem0", TUNED)
    assert load_source(str(prompts_dir), pipeline="rag") == ("rag", RAG)
    with pytest.raises(ConfigError, match="no prompts of pipeline 'evermemos'; it has mem0, rag"):
        load_source(prompts_dir, pipeline="evermemos")
    with pytest.raises(ConfigError, match="pass its parent"):
        load_source(prompts_dir / "mem0")
    single = tmp_path / "single"
    write_prompts("rag", RAG, single)
    assert load_source(single) == ("rag", RAG)
    (prompts_dir / "mem0" / "update.md").unlink()
    with pytest.raises(PromptError, match="update.md"):
        load_source(prompts_dir, pipeline="mem0")
    with pytest.raises(ConfigError, match="no such prompts directory"):
        load_source(tmp_path / "missing")


def test_text_format_is_a_prompts_directory_that_run_accepts(tmp_path):
    from memopt.systems import make_system

    out = export("mem0", TUNED, "text", tmp_path / "out")
    assert load_prompts("mem0", ["extract", "update", "answer"], out) == TUNED
    assert make_system("mem0", prompts=out).instructions() == TUNED
    assert not [p for p in out.rglob("*") if p.name.startswith(".")], "temp files left behind"
    with pytest.raises(ConfigError, match="missing: answer"):
        export("mem0", {"extract": "E", "update": "U"}, "text", tmp_path / "partial")
    assert not (tmp_path / "partial").exists()


def test_mem0_format_adds_the_json_line_and_a_literal_date_placeholder(tmp_path):
    out = export("mem0", TUNED, "mem0", tmp_path / "mem0.json")
    config = json.loads(out.read_text())
    assert set(config) == {"version", "custom_fact_extraction_prompt", "custom_update_memory_prompt"}
    assert config["version"] == "v1.1"
    extraction = config["custom_fact_extraction_prompt"]
    assert extraction.startswith(TUNED["extract"]) and JSON_INSTRUCTION in extraction
    assert "json" in extraction.lower()  # so Mem0 adds no JSON sentence of its own
    assert extraction.splitlines()[-1] == DATE_LINE == "Today's date is {session_date}."
    assert extraction.replace("{session_date}", "8 May 2023").endswith("Today's date is 8 May 2023.")
    assert config["custom_update_memory_prompt"] == TUNED["update"]
    fragment = mem0_fragment("mem0", TUNED)
    assert fragment.config == config and "{session_date}" in fragment.date_note and "str.replace" in fragment.date_note
    again = mem0_fragment("mem0", {**TUNED, "extract": extraction}).config["custom_fact_extraction_prompt"]
    assert again == extraction, "re-exporting an exported prompt must not repeat the added lines"
    with pytest.raises(ConfigError, match="not 'rag'"):
        export("rag", RAG, "mem0", tmp_path / "rag.json")
    assert not (tmp_path / "rag.json").exists()


def test_mem0_v2_format_is_custom_instructions_only(tmp_path):
    out = export("mem0", TUNED, "mem0-v2", tmp_path / "v2.json")
    assert json.loads(out.read_text()) == {"custom_instructions": TUNED["extract"]}
    assert "no update decision" in mem0_fragment("mem0", TUNED, v2=True).notes[0]


def test_mem0_v2_leaves_out_the_lines_only_mem0_v1_needs():
    """mem0ai 2.x appends custom_instructions to its own prompt, which dates messages and sets the output schema."""
    exported_v1 = mem0_fragment("mem0", TUNED).config["custom_fact_extraction_prompt"]
    assert DATE_LINE in exported_v1 and JSON_INSTRUCTION in exported_v1
    v2 = mem0_fragment("mem0", {**TUNED, "extract": exported_v1}, v2=True)
    assert v2.config == {"custom_instructions": TUNED["extract"]}
    assert "silently ignores custom_instructions" in v2.notes[0]


def test_a_date_line_an_edit_moved_off_the_end_is_never_exported_literally():
    exported_v1 = mem0_fragment("mem0", TUNED).config["custom_fact_extraction_prompt"]
    lines = exported_v1.splitlines()
    moved = "\n".join([lines[-1], *lines[:-1], "- Keep names exactly as written."])  # the date line now comes first
    v2 = mem0_fragment("mem0", {**TUNED, "extract": moved}, v2=True).config["custom_instructions"]
    assert "{session_date}" not in v2 and v2.endswith("- Keep names exactly as written.")
    v1 = mem0_fragment("mem0", {**TUNED, "extract": moved}).config["custom_fact_extraction_prompt"]
    assert v1.count(DATE_LINE) == 1 and v1.endswith(DATE_LINE)  # once, last, where the caller fills it


def test_dspy_format_round_trips_through_save_and_load(tmp_path):
    from memopt.systems import make_system

    out = export("mem0", TUNED, "dspy", tmp_path / "program.json")
    system = make_system("mem0")
    assert system.instructions() != TUNED
    system.load(str(out))
    assert system.instructions() == TUNED
    with pytest.raises(ConfigError, match=r"\*\.json"):
        export("mem0", TUNED, "dspy", tmp_path / "program.pkl")
    with pytest.raises(ConfigError, match="choose one of mem0, mem0-v2, dspy, text"):
        export("mem0", TUNED, "yaml", tmp_path / "x.yaml")


def test_write_prompts_files_tuned_prompts_beside_the_seeds(tmp_path, monkeypatch, prompts_dir):
    from typer.testing import CliRunner

    from memopt.cli import app

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    monkeypatch.setattr(prompt_files, "SEED_PROMPTS", seeds)
    runner = CliRunner()
    plain = runner.invoke(app, ["export", str(prompts_dir), "-p", "mem0", "--format", "text", "--out",
                                str(tmp_path / "a")])
    assert plain.exit_code == 0, plain.output
    assert not list(seeds.rglob("*")), "nothing is written to the seed folder without --write-prompts"
    done = runner.invoke(app, ["export", str(prompts_dir), "-p", "mem0", "--format", "mem0", "--out",
                               str(tmp_path / "m.json"), "--write-prompts"])
    assert done.exit_code == 0, done.output
    tuned = seeds / "mem0" / "tuned"
    assert {p.name for p in tuned.iterdir()} == {"extract.md", "update.md", "answer.md"}
    assert (tuned / "update.md").read_text() == TUNED["update"] + "\n"
    assert str(tuned / "extract.md") in done.output and "{session_date}" in done.output
    assert write_tuned_prompts("rag", RAG, tmp_path / "other") == [tmp_path / "other" / "rag" / "tuned" / f"{op}.md"
                                                                   for op in sorted(RAG)]


def test_run_id_source_reads_best_prompts(optimize_run, monkeypatch):
    uri, run_id = optimize_run
    assert load_source(run_id, tracking_uri=uri) == ("mem0", TUNED)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    assert load_source(run_id) == ("mem0", TUNED)
    with pytest.raises(ConfigError, match="optimized pipeline 'mem0', not 'rag'"):
        load_source(run_id, pipeline="rag")


def test_unknown_or_empty_runs_are_config_errors(optimize_run):
    import mlflow

    uri, run_id = optimize_run
    with pytest.raises(ConfigError) as missing:
        load_source("f" * 32, tracking_uri=uri)
    message = str(missing.value)
    for part in ("f" * 32, uri, "--tracking-uri", "MLFLOW_TRACKING_URI", "sqlite:///mlflow.db"):
        assert part in message, (part, message)
    client = mlflow.MlflowClient(uri)
    bare = client.create_run(client.get_run(run_id).info.experiment_id).info.run_id
    with pytest.raises(ConfigError, match="has no artifact 'best_prompts'"):
        load_source(bare, pipeline="mem0", tracking_uri=uri)


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_cli_exports_from_a_directory_and_a_run(optimize_run, prompts_dir, tmp_path):
    uri, run_id = optimize_run
    done = memopt(str(prompts_dir), "--pipeline", "mem0", "--format", "mem0", "--out", "m.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "→ m.json" in done.stdout and "Today's date is {session_date}." in done.stdout
    assert json.loads((tmp_path / "m.json").read_text())["custom_update_memory_prompt"] == TUNED["update"]
    done = memopt(run_id, "--format", "text", "--out", "from-run", "--tracking-uri", uri, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert load_prompts("mem0", list(TUNED), tmp_path / "from-run") == TUNED
    assert "from-run/mem0/extract.md" in done.stdout


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_cli_bad_input_exits_2_with_one_message(prompts_dir, tmp_path):
    cases = [
        ((str(prompts_dir), "-p", "mem0", "--format", "xml"), "choose one of mem0, mem0-v2, dspy, text"),
        ((str(prompts_dir), "-p", "rag", "--format", "mem0"), "exports the mem0 pipeline's prompts, not 'rag'"),
        ((str(prompts_dir), "--format", "text"), "several pipelines (mem0, rag)"),
        ((str(tmp_path / "nope"), "--format", "text"), "no such prompts directory"),
        (("a" * 32, "--format", "text"), "a" * 32),
    ]
    for args, expected in cases:
        done = memopt(*args, "--out", "out.json", cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "mlflow.db").exists()
