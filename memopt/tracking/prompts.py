"""The MLflow prompt registry: prompt names, the secret check, registering a round's prompts, aliases.

A prompt ``<pipeline>.<op>`` gets a new version only when its text differs from the latest one (tags
``round``, ``parent_version``; a commit message per op), every version a round used is linked to the
round's run and the prompt to the run's experiment (MLflow's ``_mlflow_experiment_ids`` prompt tag, so
the experiment's Prompts tab lists it), and the alias ``round-<i>`` points at it; `set_prompt_aliases`
points others (``best``). The check and the registration hold the store lock, so identical prompts of
parallel runs share one version. Prompt text is stored verbatim, never masked: a prompt that holds an
LM credential is refused (`check_prompt_secret`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from contextlib import nullcontext
from typing import Any

from memopt.core.errors import ConfigError
from memopt.lm.redaction import credential_values, redact

__all__ = ["prompt_name", "check_prompt_secret", "check_prompts", "register_prompts", "set_prompt_aliases"]

_PROMPT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_COMMIT_LIMIT = 1000


def prompt_name(pipeline: str, op: str) -> str:
    """The registry name of an operation's prompt, ``<pipeline>.<op>`` (letters, digits, '.', '-', '_')."""
    name = f"{pipeline}.{op}"
    if not _PROMPT_NAME.match(name):
        raise ConfigError(f"prompt name {name!r}: MLflow allows only letters, digits, '.', '-' and '_'.")
    return name


def _commit_message(text: str) -> str | None:
    text = redact(text).strip()
    if len(text) <= _COMMIT_LIMIT:
        return text or None
    cut = text[: _COMMIT_LIMIT - 2]
    return cut[: cut.rfind(" ")] + " …" if " " in cut else cut + " …"


def check_prompt_secret(name: str, text: str) -> None:
    """Refuse a prompt that holds a secret (`memopt.lm.redaction.redact` would mask part of it): prompts are stored
    verbatim, never masked."""
    for variable, value in credential_values().items():
        if value in text:
            raise ConfigError(f"prompt {name}: its text holds the value of ${variable}; remove the key from the "
                              "prompt (prompts are logged to MLflow and exported verbatim).")
    if redact(text) != text:
        raise ConfigError(f"prompt {name}: its text holds a password or secret memopt was given (a URI's password, a "
                          "key of the environment); remove it from the prompt (prompts are logged to MLflow and "
                          "exported verbatim).")


def register_prompts(client: Any, run_id: str, pipeline: str, instructions: Mapping[str, str], *,
                     commit_message: str | Mapping[str, str], round_index: int, lock: Any = nullcontext,
                     experiment_id: str | None = None) -> dict[str, int]:
    """Register changed prompts as new versions (``commit_message`` one text, or one per op), link every
    version used to the run ``run_id`` and every prompt to the experiment, alias them ``round-<i>``; name → version."""
    versions: dict[str, int] = {}
    for op, text in sorted(instructions.items()):
        name = prompt_name(pipeline, op)
        template = text.strip()
        check_prompt_secret(name, template)
        message = _commit_message(commit_message if isinstance(commit_message, str) else
                                  commit_message.get(op, f"round {round_index}"))
        with lock():  # check-then-register: parallel runs reuse an identical latest version
            latest = client.load_prompt(f"prompts:/{name}@latest", allow_missing=True, cache_ttl_seconds=0)
            if latest is None or latest.template != template:
                parent = str(latest.version) if latest is not None else "none"
                latest = client.register_prompt(name, template, commit_message=message,
                                                tags={"round": str(round_index), "parent_version": parent})
            _link_experiment(client, name, experiment_id)
        client.link_prompt_version_to_run(run_id, latest)
        client.set_prompt_alias(name, f"round-{round_index}", int(latest.version))
        versions[name] = int(latest.version)
    return versions


def set_prompt_aliases(client: Any, run_id: str, versions: Mapping[str, int], alias: str) -> None:
    """Point ``alias`` (``best``) of each prompt at the given version and link that version to the run ``run_id``."""
    for name, version in sorted(versions.items()):
        if version:
            client.set_prompt_alias(name, alias, int(version))
            client.link_prompt_version_to_run(run_id, client.get_prompt_version(name, int(version)))


def _link_experiment(client: Any, name: str, experiment_id: str | None) -> None:
    """Add ``experiment_id`` to a prompt's ``_mlflow_experiment_ids`` tag (the experiment's Prompts tab reads it)."""
    if not experiment_id:
        return
    from mlflow.prompt.constants import PROMPT_EXPERIMENT_IDS_TAG_KEY as KEY

    for thread in threading.enumerate():  # MLflow links a loaded or registered prompt in a thread: let it finish
        if thread.name.startswith("link_prompt_to_experiment_thread"):
            thread.join(timeout=60)

    ids = [i for i in client.get_prompt(name).tags.get(KEY, "").split(",") if i.strip()]
    if experiment_id not in ids:
        client.set_prompt_tag(name, KEY, f",{','.join([*ids, experiment_id])},")


def check_prompts(pipeline: str, instructions: Mapping[str, str]) -> None:
    """Check every prompt of a pipeline before the first LM call: a registry name MLflow takes, no credential."""
    for op, text in instructions.items():
        check_prompt_secret(prompt_name(pipeline, op), text)
