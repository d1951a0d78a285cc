"""Choose among candidate instructions and numeric knobs with Optuna (TPE), scored on the val split.

Every trial picks, for each blamed op, either its current instruction or one of its candidates, and a
value for each knob in the search space; its score is the mean F1 on the val split. The current
configuration is the first trial (its score is known), the first candidate of every op together the
second; TPE proposes the rest. Trials are asked in batches of ``batch`` (Optuna's ask/tell, TPE with
the constant liar) and a batch's configurations are scored in parallel; the batch size, not the
number of threads, decides what TPE sees, so the choice is the same at any concurrency. Scores are
memoised by configuration; a configuration whose evaluation errored beyond the limit (``score``
returns None) is recorded as errored and never chosen; no new batch starts once the budget is spent, and a
batch asks no more trials than the budget left can pay for (``on_batch``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memopt.core.parallel import map_ordered
from memopt.optimize.scoring import BudgetExhausted

__all__ = ["Choice", "select", "ERRORED"]

ERRORED = -1.0  # the value Optuna is told for a configuration whose evaluation errored beyond the limit


@dataclass
class Choice:
    """The best configuration found: instruction changes, knob values, its val F1, how many trials ran."""

    instructions: dict[str, str]
    knobs: dict[str, int]
    val_f1: float
    trials: int
    tried: list[dict] = field(default_factory=list)
    errored_trials: int = 0


def _key(instructions: dict[str, str], knobs: dict[str, int]) -> tuple:
    return tuple(sorted(instructions.items())), tuple(sorted(knobs.items()))


def select(candidates: dict[str, list[str]], search: dict[str, list[int]], knobs: dict[str, int],
           score: Callable[[dict[str, str], dict[str, int]], float | None], *, current_f1: float, trials: int,
           seed: int, batch: int = 1, workers: int = 1,
           on_batch: Callable[[int, int], int | None] | None = None,
           on_scoring: Callable[[int], None] | None = None,
           score_many: Callable[[list[tuple[dict[str, str], dict[str, int]]]], list[float | None]] | None = None
           ) -> Choice:
    """The configuration with the best val F1 among ``trials`` Optuna trials (the current one included).

    A batch's configurations are scored ``workers`` at a time. ``on_batch(size, first)`` is called before each
    batch and returns how many trials it may ask (None: ``size``; 0, or raising `BudgetExhausted`, stops);
    ``on_scoring(n)`` once its ``n`` not yet scored configurations
    are known (memoised ones are not scored again). ``score_many`` (hook: `memopt.optimize.workers`), when given,
    scores a batch's new configurations instead of ``score`` (by worker processes); the choice is the same.
    """
    import optuna

    optuna.logging.set_verbosity(logging.ERROR)  # a failed or interrupted trial is raised, not also logged
    ops = sorted(candidates)
    memo: dict[tuple, float | None] = {_key({}, knobs): current_f1}
    tried: list[dict] = []

    def configure(params: dict[str, int]) -> tuple[dict[str, str], dict[str, int]]:
        instructions = {op: candidates[op][params[f"op:{op}"] - 1] for op in ops if params[f"op:{op}"] > 0}
        chosen = {**knobs, **{k: params[f"knob:{k}"] for k in search}}
        return instructions, chosen

    def suggest(trial: Any) -> dict[str, int]:
        params = {f"op:{op}": trial.suggest_categorical(f"op:{op}", list(range(len(candidates[op]) + 1)))
                  for op in ops}
        return params | {f"knob:{k}": trial.suggest_categorical(f"knob:{k}", list(values))
                         for k, values in search.items()}

    # numpy takes seeds 0 to 2**32 - 1 only: the experiment's seed (any integer) plus the round, folded into them
    sampler = optuna.samplers.TPESampler(seed=seed % 2**32, n_startup_trials=3, constant_liar=True)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.enqueue_trial({**{f"op:{op}": 0 for op in ops}, **{f"knob:{k}": knobs[k] for k in search
                                                              if knobs.get(k) in search[k]}})
    study.enqueue_trial({f"op:{op}": 1 for op in ops if candidates[op]})
    asked = 0
    while asked < trials:
        size = min(max(1, batch), trials - asked)
        try:
            allowed = on_batch(size, asked + 1) if on_batch is not None else None
        except BudgetExhausted:
            break
        if allowed is not None:
            if allowed < 1:
                break
            size = min(size, allowed)
        pending = [study.ask() for _ in range(size)]
        configs = [configure(suggest(trial)) for trial in pending]
        todo = list({_key(*c): c for c in configs if _key(*c) not in memo}.items())
        if on_scoring is not None:
            on_scoring(len(todo))
        if score_many is not None:  # hook: workers score the batch (memopt.optimize.workers)
            scores = score_many([config for _, config in todo])
        else:
            scores = map_ordered(lambda item: score(*item[1]), todo, workers=workers)
        memo.update(zip((key for key, _ in todo), scores, strict=True))
        for trial, (instructions, chosen) in zip(pending, configs, strict=True):
            value = memo[_key(instructions, chosen)]
            study.tell(trial, ERRORED if value is None else value)
            tried.append({"ops": {op: trial.params[f"op:{op}"] for op in ops}, "knobs": chosen,
                          "val_f1": value, "errored": value is None})
        asked += size
    done = [t for t in study.trials if t.value is not None and t.value != ERRORED]
    if not done:
        return Choice({}, dict(knobs), current_f1, 0, tried, sum(t["errored"] for t in tried))
    best = max(done, key=lambda t: (t.value, -t.number))
    instructions, chosen = configure(best.params)
    return Choice(instructions, chosen, float(best.value), len(done), tried, sum(t["errored"] for t in tried))
