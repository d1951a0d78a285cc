"""Export tuned prompts, from an optimize run or a prompts directory, into the formats other systems read.

Sources (`memopt.tracking.sources.load_source`; this module reads directories, `load_directory`):

- a prompts directory ``<dir>/<pipeline>/<op>.md`` (what `memopt.systems.prompts.write_prompts` writes); with
  several pipelines in it, ``pipeline`` picks one;
- the id of an optimize run: its parent run holds the artifact directory ``best_prompts/`` in the same
  shape and the param ``pipeline``. The MLflow store is ``tracking_uri``, else
  ``$MLFLOW_TRACKING_URI``, else ``sqlite:///mlflow.db``.

Formats (`export`; all or nothing: a file through a temporary file and a rename, the text format's folder built
beside it and swapped in at once, `memopt.core.files.write_folder`; a refused write is one error and leaves the
old export as it was):

- ``text``: a prompts directory ``<out>/<pipeline>/<op>.md`` that ``memopt run --prompts`` accepts.
- ``dspy``: the pipeline as a DSPy program. ``--out DIR`` (no suffix) saves the whole program
  (``system.save(DIR, save_program=True)``: instructions and knobs), which ``dspy.load(DIR, allow_pickle=True)``
  loads the way DSPy loads any saved program (memopt must be installed where it is loaded: the program's class is
  memopt's); ``--out FILE.json`` saves its state only, which ``make_system(name, **knobs).load(FILE)`` restores
  (`dspy_load_line` says the one line).
- ``mem0`` (mem0ai 1.0.x, ``mem0`` pipeline only): ``{"version": "v1.1",
  "custom_fact_extraction_prompt", "custom_update_memory_prompt"}``. Mem0 parses the extraction reply
  as JSON with a ``facts`` key and adds its own JSON sentence only when the prompt never says "json",
  so the extraction prompt gets an explicit output line, ``Return the facts as JSON: {"facts": [...]}``.
  Mem0 adds no date to a custom prompt, so the extraction prompt ends with the line
  ``Today's date is {session_date}.``, placeholder kept literal: the caller fills it before each
  ``add()`` (Mem0 re-reads ``config.custom_fact_extraction_prompt`` on every call) with
  ``str.replace``, not ``str.format`` (the JSON example holds braces). The update prompt is exported as
  is: Mem0 appends the memories, the new facts and its own JSON schema to it.
- ``mem0-v2``: ``{"custom_instructions": <extract prompt>}`` for mem0ai 2.x, which has no update
  decision (ADD-only extraction): the ``update`` prompt has no place there. 2.x appends
  ``custom_instructions`` as a section of its own extraction prompt, which supplies the dates (its
  "Observation Date") and its own output schema (``{"memory": [...]}``), so the lines the ``mem0``
  format adds (the ``{"facts": ...}`` JSON line, the date line) are left out, also when re-exporting a
  prompt exported for 1.x. (mem0ai 1.0.x silently ignores ``custom_instructions``: `memopt mem0 check`
  refuses such a config.)

Every format carries the knobs the prompts were tuned with (`memopt.export.knobs`: ``knobs.yaml`` beside
the text files, a ``memopt`` block in the DSPy JSON and the Mem0 config), and `memopt export` runs the
prompt check (`memopt.export.check`) first.

``write_tuned_prompts`` also files the prompts as ``prompts/<pipeline>/tuned/<op>.md`` in the
repository's seed prompts folder.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from memopt.core.errors import ConfigError, DataError
from memopt.core.files import write_atomic, write_folder
from memopt.export.knobs import KNOBS_FILE, MEM0_BLOCK, Knobs, add_to_dspy_json
from memopt.systems import prompts as prompt_files

__all__ = ["FORMATS", "JSON_INSTRUCTION", "DATE_LINE", "Mem0Fragment", "load_directory", "mem0_fragment", "export",
           "write_tuned_prompts", "dspy_load_line"]

FORMATS = ("mem0", "mem0-v2", "dspy", "text")
JSON_INSTRUCTION = 'Return the facts as JSON: {"facts": ["...", "..."]}'
DATE_LINE = "Today's date is {session_date}."
_DATE_NOTE = ("Mem0 adds no date to a custom extraction prompt. The exported prompt ends with the literal line "
              f"{DATE_LINE!r}: before each add(), set config.custom_fact_extraction_prompt (Mem0 re-reads it on "
              "every call) to the prompt with '{session_date}' replaced by the session's date, using str.replace "
              "(str.format would trip on the braces of the JSON example).")
_V2_NOTE = ("mem0ai 2.x has no update decision (ADD-only extraction): the update prompt is not exported; "
            "only the extraction prompt becomes custom_instructions, without the facts-JSON and date lines "
            "(2.x appends it to its own extraction prompt, which dates messages and sets the output format). "
            "mem0ai 1.0.x silently ignores custom_instructions.")


@dataclass(frozen=True)
class Mem0Fragment:
    """A Mem0 config fragment, and what its user must know that is not part of the JSON."""

    config: dict[str, str]
    date_note: str | None
    notes: tuple[str, ...] = ()


def _from_directory(root: Path, pipeline: str | None) -> tuple[str, dict[str, str]]:
    from memopt.systems import system_class

    found = sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.md")))
    if not found:
        hint = f"; {root} itself holds .md files: pass its parent, {root.parent}" if any(root.glob("*.md")) else ""
        raise ConfigError(f"prompts directory {root} holds no prompts: expected <dir>/<pipeline>/<op>.md{hint}.")
    if pipeline is None:
        if len(found) > 1:
            raise ConfigError(f"prompts directory {root} holds several pipelines ({', '.join(found)}); "
                              "choose one with --pipeline.")
        pipeline = found[0]
    elif pipeline not in found:
        raise ConfigError(f"prompts directory {root} has no prompts of pipeline {pipeline!r}; "
                          f"it has {', '.join(found)}.")
    operations = system_class(pipeline).llm_operations()
    return pipeline, prompt_files.load_prompts(pipeline, operations, root, every_operation=True)


def load_directory(root: str | Path, pipeline: str | None = None) -> tuple[str, dict[str, str]]:
    """The pipeline and its instructions (op → text) from a prompts directory ``<root>/<pipeline>/<op>.md``."""
    return _from_directory(Path(root).expanduser(), pipeline)


def mem0_fragment(pipeline: str, instructions: dict[str, str], *, v2: bool = False) -> Mem0Fragment:
    """The Mem0 config fragment (1.x, or 2.x with ``v2``) for the instructions of the ``mem0`` pipeline."""
    fmt = "mem0-v2" if v2 else "mem0"
    if pipeline != "mem0":
        raise ConfigError(f"--format {fmt} exports the mem0 pipeline's prompts, not {pipeline!r}; use --format "
                          "text or dspy for it.")
    needed = ["extract"] if v2 else ["extract", "update"]
    missing = [op for op in needed if not instructions.get(op, "").strip()]
    if missing:
        raise ConfigError(f"--format {fmt} needs the mem0 prompt(s) {', '.join(missing)}; they are missing.")
    lines = [line for line in instructions["extract"].strip().splitlines() if line.strip() != DATE_LINE]
    body = "\n".join(lines).strip()  # the date line of an earlier 1.x export, wherever an edit moved it
    if v2:
        bare = "\n".join(line for line in body.splitlines() if line.strip() != JSON_INSTRUCTION).strip()
        return Mem0Fragment({"custom_instructions": bare}, None, (_V2_NOTE,))
    if JSON_INSTRUCTION not in body:
        body += "\n\n" + JSON_INSTRUCTION
    config = {"version": "v1.1", "custom_fact_extraction_prompt": f"{body}\n{DATE_LINE}",
              "custom_update_memory_prompt": instructions["update"].strip()}
    return Mem0Fragment(config, _DATE_NOTE, ("The answer prompt is not part of Mem0's config.",))


def _atomic_write(path: Path, text: str) -> None:
    write_atomic(path, text)  # a refused write is one DataError; the old file stays


def _check_operations(pipeline: str, instructions: dict[str, str]) -> None:
    from memopt.systems import system_class

    expected = system_class(pipeline).llm_operations()
    unknown = sorted(set(instructions) - set(expected))
    missing = [op for op in expected if not instructions.get(op, "").strip()]
    if unknown or missing:
        raise ConfigError(f"pipeline {pipeline} has the LLM operations {', '.join(expected)}; "
                          + (f"unknown: {', '.join(unknown)}" if unknown else f"missing: {', '.join(missing)}") + ".")


def _write_text_dir(pipeline: str, instructions: dict[str, str], root: Path,
                    knobs: Knobs | None = None) -> list[Path]:
    """The prompts (and knobs) of ``pipeline`` into ``<root>/<pipeline>/``, all or nothing (`write_folder`)."""
    folder = prompt_files.prompt_path(pipeline, next(iter(instructions)), root).parent
    files = {prompt_files.prompt_path(pipeline, op, root).relative_to(folder).as_posix(): text.strip() + "\n"
             for op, text in sorted(instructions.items())}
    if knobs is not None:
        files[KNOBS_FILE] = knobs.yaml()
    write_folder(folder, files)
    return [folder / name for name in files]


def export(pipeline: str, instructions: dict[str, str], fmt: str, out: str | Path, knobs: Knobs | None = None) -> Path:
    """Write the instructions of ``pipeline`` at ``out`` in format ``fmt`` (see `FORMATS`); returns ``out``.

    ``knobs`` (`memopt.export.knobs`) go with them: ``knobs.yaml`` (text), a ``memopt`` block (dspy, mem0).
    """
    out = Path(out)
    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}.")
    if fmt == "text":
        _check_operations(pipeline, instructions)
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out}: is a file; --format text writes a directory <out>/{pipeline}/<op>.md.")
        _write_text_dir(pipeline, instructions, out, knobs)
        return out
    if fmt == "dspy" and out.suffix != ".json":
        return _save_dspy_program(pipeline, instructions, out, knobs)
    if out.is_dir():
        raise ConfigError(f"--out {out}: is a directory; --format {fmt} writes one JSON file.")
    if fmt == "dspy":
        return _save_dspy(pipeline, instructions, out, knobs)
    fragment = mem0_fragment(pipeline, instructions, v2=fmt == "mem0-v2")
    config: dict = dict(fragment.config)
    if knobs is not None:
        config[MEM0_BLOCK] = knobs.mem0_block()
    _atomic_write(out, json.dumps(config, indent=2, ensure_ascii=False) + "\n")
    return out


def _save_dspy(pipeline: str, instructions: dict[str, str], out: Path, knobs: Knobs | None = None) -> Path:
    from memopt.systems import system_class

    if out.suffix != ".json":
        raise ConfigError(f"--out {out}: --format dspy writes a DSPy program JSON file; name it *.json.")
    _check_operations(pipeline, instructions)
    system = system_class(pipeline)(instructions=instructions)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.{secrets.token_hex(4)}.tmp.json")
    try:
        system.save(str(tmp))
        if knobs is not None:
            add_to_dspy_json(tmp, knobs)
        os.replace(tmp, out)
    except (OSError, RuntimeError) as e:  # DSPy's save reports a refused write as a RuntimeError
        refused = e if isinstance(e, OSError) else e.__cause__ or e.__context__
        if not isinstance(refused, OSError):
            raise
        raise DataError(f"--out {out}: cannot be written ({refused.strerror or refused}); it was left as it "
                        "was.") from None
    finally:
        tmp.unlink(missing_ok=True)
    return out


_PROGRAM_FILES = {"program.pkl", "metadata.json", KNOBS_FILE}


def _save_dspy_program(pipeline: str, instructions: dict[str, str], out: Path, knobs: Knobs | None = None) -> Path:
    """The whole program in a directory (DSPy's ``save_program=True``), knobs set on it and in ``knobs.yaml``; an
    earlier export there is replaced, any other folder is refused."""
    import shutil

    from memopt.systems import system_class

    if out.suffix:
        raise ConfigError(f"--out {out}: --format dspy writes a program directory (a path without a suffix, loaded "
                          "with dspy.load) or a state file named *.json.")
    if out.exists() and (not out.is_dir() or not {p.name for p in out.iterdir()} <= _PROGRAM_FILES):
        raise ConfigError(f"--out {out}: exists and is not a DSPy program memopt exported; choose a new directory.")
    _check_operations(pipeline, instructions)
    system = system_class(pipeline)(instructions=instructions, **(knobs.values if knobs is not None else {}))
    tmp = out.with_name(f".{out.name}-{secrets.token_hex(4)}-tmp")  # DSPy wants a folder name without a suffix
    try:
        system.save(str(tmp), save_program=True)
        if knobs is not None:
            (tmp / KNOBS_FILE).write_text(knobs.yaml(), encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def dspy_load_line(pipeline: str, out: str | Path, knobs: Knobs | None = None) -> str:
    """The one line that loads a ``--format dspy`` export in Python."""
    if Path(out).suffix != ".json":
        return f"import dspy; program = dspy.load({str(out)!r}, allow_pickle=True)"
    given = "".join(f", {k}={v}" for k, v in sorted((knobs.values if knobs is not None else {}).items()))
    return (f"from memopt.systems import make_system; program = make_system({pipeline!r}{given}); "
            f"program.load({str(out)!r})")


def write_tuned_prompts(pipeline: str, instructions: dict[str, str], root: str | Path | None = None) -> list[Path]:
    """Write ``<root>/<pipeline>/tuned/<op>.md`` (root: the seed prompts folder); returns the paths."""
    base = Path(root or prompt_files.SEED_PROMPTS)
    if root is None and not base.is_dir():
        raise ConfigError(f"--write-prompts: no seed prompts folder at {base} (run from a source checkout).")
    paths = []
    for op, text in sorted(instructions.items()):
        path = base / pipeline / "tuned" / f"{op}.md"
        _atomic_write(path, text.strip() + "\n")
        paths.append(path)
    return paths
