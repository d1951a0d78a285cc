"""The MLflow prompt registry: prompt names and their scope, the secret check, a round's versions, ``@best``.

- **Names.** A prompt registers as ``<scope>.<pipeline>.<op>``. The scope is ``mlflow.prompt_prefix`` when the
  experiment sets one, else the MLflow experiment's name made registry-safe (`prompt_scope`), so two
  experiments never share a prompt by default; ``prompt_prefix: ""`` registers ``<pipeline>.<op>``. A run
  records its scope in the tag ``memopt.prompt_scope``; a run without it (logged by memopt 0.2) keeps the
  names it started with when resumed.
- **Versions.** A text the registry already holds under a name is never registered again: the version that
  holds it is reused (so the registry keeps one version per distinct text). A new version carries the tags
  ``round``, ``parent_version`` (the latest before it) and ``memopt.created_by`` (the parent run). Every
  version a round used is linked to the round's run, the prompt to the run's experiment (MLflow's
  ``_mlflow_experiment_ids`` prompt tag: the experiment's Prompts tab) and tagged with the run's rounds,
  ``memopt.rounds.<parent run id> = "0, 2"``: round markers belong to their run, there are no global
  ``round-<i>`` aliases. Check and registration hold the store lock, so parallel runs of one machine share
  one version per text.
- **``@best``** moves to a run's best versions only when that run's val F1 beats the val F1 tagged on the
  versions holding it (``memopt.best.val_f1``, with ``memopt.best.basis``: the data fingerprint and task
  model it was scored with, and ``memopt.best.run``), and only on the same basis: a holder scored on other
  data, or with another task model, keeps it (`claim_best`). A holder with no score (set by memopt 0.2) is
  no obstacle.
- Prompt text is stored verbatim, never masked: a prompt that holds an LM credential is refused
  (`check_prompt_secret`).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from memopt.core.errors import ConfigError
from memopt.lm.redaction import credential_values, redact

__all__ = ["prompt_name", "prompt_scope", "check_prompt_secret", "check_prompts", "register_prompts", "claim_best",
           "BestClaim", "SCOPE_TAG", "ROUNDS_TAG", "BEST_VAL", "BEST_BASIS", "BEST_RUN"]

_PROMPT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
_COMMIT_LIMIT = 1000
SCOPE_TAG = "memopt.prompt_scope"  # run tag: the scope of the run's prompt names ("" for none)
ROUNDS_TAG = "memopt.rounds."  # + parent run id: version tag, the rounds of that run that used the version
BEST_VAL, BEST_BASIS, BEST_RUN = "memopt.best.val_f1", "memopt.best.basis", "memopt.best.run"


def prompt_name(pipeline: str, op: str) -> str:
    """The registry name of an operation's prompt, ``<pipeline>.<op>`` (letters, digits, '.', '-', '_')."""
    name = f"{pipeline}.{op}"
    if not _PROMPT_NAME.match(name):
        raise ConfigError(f"prompt name {name!r}: MLflow allows only letters, digits, '.', '-' and '_'.")
    return name


def prompt_scope(experiment: str) -> str:
    """The default scope of an experiment's prompt names: its name with every run of other characters than letters,
    digits, '-' and '_' made one '-' (``"My exp/v2"`` → ``My-exp-v2``), at most 64 characters."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", experiment).strip("-_")[:64].strip("-_")
    return slug or "experiment-" + hashlib.sha256(experiment.encode("utf-8")).hexdigest()[:8]


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


def _versions(client: Any, name: str) -> list[Any]:
    """Every version of prompt ``name`` (none when the prompt does not exist yet)."""
    if client.get_prompt(name) is None:
        return []
    found, token = [], None
    while True:
        page = client.search_prompt_versions(name, max_results=100, page_token=token)
        found += list(page)
        token = getattr(page, "token", None)
        if not token:
            return found


def _version_of(client: Any, name: str, template: str, message: str | None, round_index: int,
                parent_run_id: str | None) -> Any:
    """The version of ``name`` holding ``template``: the oldest one that does, else a new one."""
    versions = _versions(client, name)
    same = [v for v in versions if v.template == template]
    if same:
        return min(same, key=lambda v: int(v.version))
    parent = str(max(int(v.version) for v in versions)) if versions else "none"
    tags = {"round": str(round_index), "parent_version": parent}
    if parent_run_id:
        tags["memopt.created_by"] = parent_run_id
    return client.register_prompt(name, template, commit_message=message, tags=tags)


def _mark_round(client: Any, name: str, version: Any, parent_run_id: str, round_index: int) -> None:
    """Add ``round_index`` to the version's ``memopt.rounds.<run>`` tag (its rounds in that run)."""
    key = ROUNDS_TAG + parent_run_id
    rounds = [r.strip() for r in (version.tags or {}).get(key, "").split(",") if r.strip()]
    if str(round_index) not in rounds:
        rounds = sorted({*rounds, str(round_index)}, key=int)
        client.set_prompt_version_tag(name, version.version, key, ", ".join(rounds))


def register_prompts(client: Any, run_id: str, pipeline: str, instructions: Mapping[str, str], *,
                     commit_message: str | Mapping[str, str], round_index: int, lock: Any = nullcontext,
                     experiment_id: str | None = None, parent_run_id: str | None = None) -> dict[str, int]:
    """The version of each prompt (a new one only for a text the name does not hold yet; ``commit_message`` one
    text, or one per op), linked to the run ``run_id``, the prompt to the experiment, the version tagged with the
    round of ``parent_run_id``; name → version."""
    versions: dict[str, int] = {}
    for op, text in sorted(instructions.items()):
        name = prompt_name(pipeline, op)
        template = text.strip()
        check_prompt_secret(name, template)
        message = _commit_message(commit_message if isinstance(commit_message, str) else
                                  commit_message.get(op, f"round {round_index}"))
        with lock():  # check-then-register: parallel runs of this machine share one version per text
            version = _version_of(client, name, template, message, round_index, parent_run_id)
            _link_experiment(client, name, experiment_id)
        if parent_run_id:
            _mark_round(client, name, version, parent_run_id, round_index)
        client.link_prompt_version_to_run(run_id, version)
        versions[name] = int(version.version)
    return versions


@dataclass(frozen=True)
class BestClaim:
    """What became of ``@best`` when a run ended: ``moved`` to its versions or not, and against whom (the run
    and val F1 of the versions that held it; None when none had a score), in words (``why``)."""

    moved: bool
    holder_run: str | None
    holder_val: float | None
    why: str


def claim_best(client: Any, run_id: str, versions: Mapping[str, int], *, val_f1: float | None, basis: str,
               lock: Any = nullcontext) -> BestClaim:
    """Point ``@best`` of each prompt at the run's versions when its ``val_f1`` beats the holders' on the same
    ``basis`` (see the module docstring), tag them with the score, and link them to the run ``run_id``."""
    names = sorted(name for name, version in versions.items() if version)
    with lock():
        holders = [v for name in names
                   if (v := client.load_prompt(f"prompts:/{name}@best", allow_missing=True, cache_ttl_seconds=0))]
        scored = [v for v in holders if BEST_VAL in (v.tags or {}) and v.tags.get(BEST_RUN) != run_id]
        other = [v for v in scored if v.tags.get(BEST_BASIS) != basis]
        same = [v for v in scored if v.tags.get(BEST_BASIS) == basis]
        top = max(same, key=lambda v: float(v.tags[BEST_VAL]), default=None)
        holder = top or (other[0] if other else None)
        holder_run = holder.tags.get(BEST_RUN) if holder is not None else None
        holder_val = float(holder.tags[BEST_VAL]) if holder is not None else None
        if not names or val_f1 is None:
            return BestClaim(False, holder_run, holder_val, "no scored prompt versions")
        if other:
            return BestClaim(False, holder_run, holder_val, f"stayed with run {holder_run} (val F1 {holder_val:.3f}, "
                             f"scored on another basis: {other[0].tags.get(BEST_BASIS)})")
        if top is not None and not val_f1 > float(top.tags[BEST_VAL]):
            return BestClaim(False, holder_run, holder_val, f"stayed with run {holder_run} (val F1 {holder_val:.3f} "
                             f"≥ this run's {val_f1:.3f})")
        for name in names:
            version = int(versions[name])
            client.set_prompt_alias(name, "best", version)
            for key, value in ((BEST_VAL, f"{val_f1:.6f}"), (BEST_BASIS, basis), (BEST_RUN, run_id)):
                client.set_prompt_version_tag(name, version, key, value)
            client.link_prompt_version_to_run(run_id, client.get_prompt_version(name, version))
    beaten = f" (val F1 {val_f1:.3f} > {holder_val:.3f} of run {holder_run})" if top is not None else ""
    return BestClaim(True, holder_run, holder_val, f"moved to this run's versions{beaten}")


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
