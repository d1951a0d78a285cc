"""Choose among candidate instructions and numeric knobs with Optuna (TPE), scored on the val split.

Every trial picks, for each blamed op, either its current instruction or one of its candidates, and a
value for each knob in the search space; its score is the mean F1 on the val split. The current
configuration is the first trial (its score is known), the first candidate of every op together the
second; TPE proposes the rest. Scores are memoised by configuration, and trials stop when the LM-call
budget runs out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from memopt.optimize.scoring import BudgetExhausted

__all__ = ["Choice", "select"]


@dataclass
class Choice:
    """The best configuration found: instruction changes, knob values, its val F1, how many trials ran."""

    instructions: dict[str, str]
    knobs: dict[str, int]
    val_f1: float
    trials: int
    tried: list[dict] = field(default_factory=list)


def select(candidates: dict[str, list[str]], search: dict[str, list[int]], knobs: dict[str, int],
           score: Callable[[dict[str, str], dict[str, int]], float], *, current_f1: float, trials: int,
           seed: int) -> Choice:
    """The configuration with the best val F1 among ``trials`` Optuna trials (the current one included)."""
    import optuna

    optuna.logging.set_verbosity(logging.ERROR)  # a failed or interrupted trial is raised, not also logged
    ops = sorted(candidates)
    memo: dict[tuple, float] = {}
    tried: list[dict] = []

    def configure(params: dict[str, int]) -> tuple[dict[str, str], dict[str, int]]:
        instructions = {op: candidates[op][params[f"op:{op}"] - 1] for op in ops if params[f"op:{op}"] > 0}
        chosen = {**knobs, **{k: params[f"knob:{k}"] for k in search}}
        return instructions, chosen

    def objective(trial: optuna.Trial) -> float:
        params = {f"op:{op}": trial.suggest_categorical(f"op:{op}", list(range(len(candidates[op]) + 1)))
                  for op in ops}
        params |= {f"knob:{k}": trial.suggest_categorical(f"knob:{k}", list(values)) for k, values in search.items()}
        instructions, chosen = configure(params)
        key = (tuple(sorted(instructions.items())), tuple(sorted(chosen.items())))
        if key not in memo:
            try:
                memo[key] = current_f1 if not instructions and chosen == knobs else score(instructions, chosen)
            except BudgetExhausted:
                trial.study.stop()
                raise optuna.TrialPruned() from None
        tried.append({"ops": {op: params[f"op:{op}"] for op in ops}, "knobs": chosen, "val_f1": memo[key]})
        return memo[key]

    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=3)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.enqueue_trial({**{f"op:{op}": 0 for op in ops}, **{f"knob:{k}": knobs[k] for k in search
                                                              if knobs.get(k) in search[k]}})
    study.enqueue_trial({f"op:{op}": 1 for op in ops if candidates[op]})
    study.optimize(objective, n_trials=trials, catch=())
    done = [t for t in study.trials if t.value is not None]
    best = max(done, key=lambda t: (t.value, -t.number))
    instructions, chosen = configure(best.params)
    return Choice(instructions, chosen, float(best.value), len(done), tried)
