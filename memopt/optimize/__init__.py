"""Optimizers: rewrite the prompts of the blamed operations, round after round; the experiment file and the run.

What it may import: every stage of the loop below it (data to export, and `memopt.live` for the confirmation in a
real Mem0); never `memopt.tracking`, which subscribes to the run's events (`events`) and is found by name
(``make_tracker("mlflow", experiment)``), as SimLM is as an LM provider.

- `experiment`: the experiment file (pydantic), `load_experiment`; `registry` / `optimizers`: ``@optimizer``;
- `events`: the run's typed events, `RunObserver`, `Tracker` and the registry of trackers;
- `loop`: `run_experiment`, round after round; `reflective`, `gepa`, `propose`, `select`, `scoring`: one round;
- `state`, `resume`, `story`, `summary`: the checkpoint, resuming it, the run in words and figures;
- `storage`, `worker`, `workers`, `estimate`: trials shared with worker processes, ``--estimate``.

Optimizers are registered by name (`memopt.optimize.registry`: ``@optimizer("name")``, the
``memopt.optimizers`` entry points); memopt's own are ``memtrace``, ``score_only`` and ``gepa``
(`memopt.optimize.optimizers`). The names below load on first use, so reading the registry imports no DSPy.
"""

from __future__ import annotations

from memopt.core.lazy import lazy_names

__all__ = ["OptimizeState", "ReflectiveOptimizer", "RoundRecord"]

_HOME = {"ReflectiveOptimizer": "memopt.optimize.reflective", "OptimizeState": "memopt.optimize.state",
         "RoundRecord": "memopt.optimize.state"}


__getattr__ = lazy_names("memopt.optimize", _HOME, globals())
