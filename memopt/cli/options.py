"""Options shared by several commands, defined once (each can also come from a MEMOPT_* variable)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from memopt.core.errors import ConfigError, DataError
from memopt.core.files import read_text

if TYPE_CHECKING:
    from memopt.lm.spec import LMSpec

__all__ = ["LM", "JUDGE_LM", "DATA", "PROMPTS", "SEED", "CONCURRENCY", "LM_CONCURRENCY", "WORKERS_DEPRECATED",
           "concurrency_of", "TIMEOUT", "NO_CACHE", "parse_knobs", "parse_ids", "lm_list", "judge_lm"]

LM = typer.Option("sim", "--lm", envvar="MEMOPT_LM",
                  help="Task LM spec: 'sim' (SimLM, simulated), 'local' (SmolLM2-135M on llama.cpp, needs "
                       "memopt[local]), 'openai/gpt-4.1-mini', 'MODEL@http://host:port/v1'.")
JUDGE_LM = typer.Option("sim", "--judge-lm", envvar="MEMOPT_JUDGE_LM",
                        help="Judge LM spec (grades answers); 'none' skips judging.")
DATA = typer.Option("synthetic", "--data", envvar="MEMOPT_DATA",
                    help="LoCoMo JSON file, or 'synthetic[:conversations=N,sessions=M,seed=S]' (bundled default).")
PROMPTS = typer.Option(None, "--prompts", envvar="MEMOPT_PROMPTS",
                       help="Directory of prompts shaped <dir>/<pipeline>/<op>.md (default: the seed prompts).")
SEED = typer.Option(0, "--seed", help="Seed (SimLM, data generation, splits, optimizers).")
CONCURRENCY = typer.Option(None, "--concurrency", "--workers", "-c", "-w", min=1, max=256, envvar="MEMOPT_CONCURRENCY",
                           help="LM calls in flight at once per LM role: conversations, questions, trials and "
                                "attributions run in parallel up to it (default: 8 for APIs and servers, 1 for sim "
                                "and local; --workers is the old name).")
LM_CONCURRENCY = typer.Option(None, "--concurrency", "-c", min=1, max=256, envvar="MEMOPT_CONCURRENCY",
                              help="LM calls in flight at once per LM role: conversations, questions, trials and "
                                   "attributions run in parallel up to it (default: 8 for APIs and servers, 1 for "
                                   "sim and local). Not worker processes: those are `memopt worker`.")
WORKERS_DEPRECATED = typer.Option(None, "--workers", "-w", min=1, max=256, hidden=True,
                                  help="Deprecated: the old name of --concurrency.")


def concurrency_of(concurrency: int | None, workers: int | None) -> int | None:
    """``--concurrency``, or the deprecated ``--workers`` with a warning on stderr saying what it is."""
    if workers is None:
        return concurrency
    if concurrency is not None and concurrency != workers:
        raise ConfigError(f"--workers {workers} and --concurrency {concurrency}: --workers is the old name of "
                          "--concurrency; give --concurrency only.")
    typer.echo(f"warning: --workers is deprecated: it sets LM concurrency (calls in flight), not worker processes; "
               f"use --concurrency {workers}. Worker processes that score trials are `memopt worker` "
               "(docs/scaling-out.md).", err=True)
    return workers


TIMEOUT = typer.Option(None, "--timeout", min=0.1, help="Seconds an LM call may take (default 120); then it is "
                                                        "retried, and after the last retry that case errors.")
NO_CACHE = typer.Option(False, "--no-cache", help="Do not use the on-disk reply cache of real LMs "
                                                 "($MEMOPT_CACHE_DIR, else .memopt/cache).")

ENGINE = typer.Option("litellm", "--engine", envvar="MEMOPT_LM_ENGINE",
                      help="How real providers are called: 'litellm' (DSPy's LiteLLM engine) or 'dspy' (DSPy's own "
                           "default client: about a third of the client CPU per call). SimLM ignores it.")


def lm_list(values: list[str] | None, default: str = "sim", option: str = "--lm") -> list[LMSpec]:
    """``--lm`` values parsed once into specs: one, or several (``--lm A --lm B``) endpoints to load-balance."""
    from memopt.lm.spec import parse_lm_specs

    values = [v for v in values or [] if v.strip()] or [default]
    try:
        return parse_lm_specs(values)
    except ConfigError as e:
        raise ConfigError(f"{option}: {e}") from None


def judge_lm(value: str) -> list[LMSpec] | None:
    """The ``--judge-lm`` value parsed once into specs; None for ``none`` (no judging)."""
    return None if value.strip().lower() == "none" else lm_list([value], option="--judge-lm")


def parse_knobs(values: list[str] | None) -> dict[str, int]:
    """``["top_k=5", "chunk_size=3"]`` → ``{"top_k": 5, "chunk_size": 3}``; bad items are a ConfigError."""
    knobs: dict[str, int] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip().lstrip("-").isdigit() or len(value.strip()) > 18:
            raise ConfigError(f"--knob {_cut(item)!r}: expected NAME=INTEGER, e.g. --knob top_k=5.")
        knobs[key.strip()] = int(value)
    return knobs


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def parse_ids(value: str | None, option: str) -> list[str] | None:
    """A comma-separated id list of ``option`` (None when the option is not given); given with no id in it (``,``,
    ``""``) it is a `ConfigError`, not a silent "all"."""
    if value is None:
        return None
    ids = [v.strip() for v in value.split(",") if v.strip()]
    if not ids:
        raise ConfigError(f"{option} {value!r}: no id in it; give comma-separated ids, or leave {option} out for all.")
    return ids


def prompts_dir(value: Path | None) -> Path | None:
    """Validate a --prompts directory early (it must exist)."""
    if value is not None and not value.is_dir():
        raise ConfigError(f"--prompts {value}: no such directory (expected <dir>/<pipeline>/<op>.md files).")
    return value


def answer_prompt_text(path: Path | None) -> str | None:
    """The text of an ``--answer-prompt`` file (None without one); a missing or non-UTF-8 file is one clear error."""
    if path is None:
        return None
    if not path.is_file():
        raise ConfigError(f"--answer-prompt {path}: no such file.")
    try:
        return read_text(path, missing="no such file.").strip()
    except DataError as e:
        raise DataError(f"--answer-prompt {e} Save the answer instructions as UTF-8 text.") from None
