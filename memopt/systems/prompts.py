"""Prompt files: the instructions of every LLM operation, one plain-text file per operation.

Layout: ``<dir>/<pipeline>/<operation>.md``; the whole file (stripped) is the instruction text.
The seed prompts of the shipped systems live in the repository's ``prompts/`` folder, a plug-in's in
its own package (``MemorySystem.seed_prompts``, the same shape); ``--prompts DIR`` points at another
directory of the same shape (for example one written by ``memopt export --format text``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from memopt.core.errors import PromptError
from memopt.core.files import safe_name, write_atomic

__all__ = ["SEED_PROMPTS", "prompt_path", "load_prompts", "prompt_hash", "write_prompts", "MAX_PROMPT_BYTES"]

SEED_PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
MAX_PROMPT_BYTES = 100_000  # an instruction, not data: Mem0's longest is under 10 kB; a bigger file is the wrong one


def prompt_hash(text: str) -> str:
    """Short content hash of an instruction text (12 hex digits of SHA-256)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:12]


def prompt_path(pipeline: str, operation: str, directory: str | Path | None = None) -> Path:
    """Where the prompt of ``pipeline.operation`` lives under ``directory`` (default: the seed prompts).

    Both names must be plain file names (`memopt.core.files.safe_name` keeps them as they are): a name read
    from a checkpoint or a run can never point outside ``directory``.
    """
    for what, name in (("pipeline", pipeline), ("operation", operation)):
        if safe_name(name) != name:
            raise PromptError(f"{what} name {name!r} is not a plain file name (letters, digits, '.', '-', '_').")
    return Path(directory or SEED_PROMPTS) / pipeline / f"{operation}.md"


def load_prompts(pipeline: str, operations: list[str], directory: str | Path | None = None, *,
                 every_operation: bool = False) -> dict[str, str]:
    """Read the instruction text of each operation; a missing or empty file is a `PromptError`, and so, when
    ``operations`` are ``every_operation`` of the pipeline, is a ``.md`` file named after none (it would never be
    read: a typo such as ``anwser.md``)."""
    root = Path(directory or SEED_PROMPTS)
    if not root.is_dir():
        hint = " (run from a source checkout, or pass --prompts DIR)" if directory is None else ""
        raise PromptError(f"prompts directory {root} does not exist{hint}.")
    if not (root / pipeline).is_dir():
        raise PromptError(f"prompts directory {root} has no {pipeline}/ folder; expected "
                          f"{root / pipeline}/<operation>.md for {', '.join(operations)}.")
    strays = sorted(f.name for f in (root / pipeline).glob("*.md") if f.stem not in operations and f.is_file()) \
        if every_operation else []
    if strays:
        raise PromptError(f"prompts directory {root}: {pipeline}/{strays[0]} is the prompt of no operation of "
                          f"{pipeline} (its operations: {', '.join(sorted(operations))}), so it would never be read; "
                          "rename it after the operation it is for, or move it out of the folder.")
    texts = {}
    for op in operations:
        path = prompt_path(pipeline, op, root)
        if not path.is_file():
            raise PromptError(f"missing prompt file {path} (operation {pipeline}.{op}).")
        if (size := path.stat().st_size) > MAX_PROMPT_BYTES:
            raise PromptError(f"prompt file {path} is {size:,} bytes; an instruction of more than "
                              f"{MAX_PROMPT_BYTES:,} bytes is refused (is it the right file?).")
        try:
            text = path.read_text(encoding="utf-8-sig").strip()  # a byte order mark is not part of the instruction
        except UnicodeDecodeError:
            raise PromptError(f"prompt file {path} is not UTF-8 text.") from None
        if not text:
            raise PromptError(f"prompt file {path} is empty; write the instruction of {pipeline}.{op} in it.")
        if "\x00" in text:
            raise PromptError(f"prompt file {path} holds a NUL character (at offset {text.index(chr(0))}): not an "
                              "instruction text; is it the right file?")
        texts[op] = text
    return texts


def write_prompts(pipeline: str, texts: dict[str, str], directory: str | Path) -> list[Path]:
    """Write instruction texts as ``<directory>/<pipeline>/<op>.md``; returns the paths written."""
    paths = []
    for op, text in sorted(texts.items()):
        path = prompt_path(pipeline, op, directory)
        write_atomic(path, text.strip() + "\n")  # masked like every file written
        paths.append(path)
    return paths
