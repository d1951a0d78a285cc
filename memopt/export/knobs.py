"""The knobs that won, carried by every export: the settings a user needs to reproduce the measured score.

An optimize run tunes prompts *and* knobs (``top_k``, ``similar_k``, and whatever ``optimizer.search``
searched); a prompt exported without them does not reproduce the run's score. They are read:

- from an optimize run (`memopt.tracking.sources.load_knobs`): its ``best_knobs.json`` artifact, with the run
  id and the scores of its ``summary.json`` (val and test F1 of the best round and of the seed prompts);
- from a prompts directory (`load_knobs` here): ``<dir>/<pipeline>/knobs.yaml`` (what ``--format text``
  writes), else the pipeline's defaults (``source: defaults``).

Where they go: ``knobs.yaml`` beside the prompt files (``text``); a top-level ``"memopt"`` object in the
DSPy program JSON (``dspy``; DSPy's ``load`` ignores it) and in the Mem0 config (``mem0``, ``mem0-v2``).
The Mem0 block is documented in docs/mem0.md: it is not a Mem0 key, so pop it
before ``Memory.from_config`` and pass ``search.limit`` to ``Memory.search`` (`memopt mem0 check`
does both).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memopt.core.errors import ConfigError
from memopt.core.files import write_atomic

__all__ = ["Knobs", "load_knobs", "defaults", "add_to_dspy_json", "MEM0_BLOCK", "KNOBS_FILE"]

MEM0_BLOCK = "memopt"
KNOBS_FILE = "knobs.yaml"
_ABOUT = ("memopt's tuned settings, not a Mem0 key: pop this block before Memory.from_config(config) and pass "
          "search.limit as Memory.search(..., limit=...) to reproduce the measured score.")


@dataclass(frozen=True)
class Knobs:
    """Knob values, where they come from (a run id, or ``defaults``), and the scores they were measured with."""

    values: dict[str, int]
    run_id: str | None = None
    scores: dict[str, float | None] = field(default_factory=dict)
    source: str = "run"

    def document(self) -> dict[str, Any]:
        """The knobs as one plain object (``knobs.yaml``, the DSPy JSON's ``memopt`` block)."""
        return {"knobs": dict(self.values), "run_id": self.run_id, "source": self.source, "scores": dict(self.scores)}

    def mem0_block(self) -> dict[str, Any]:
        """The ``memopt`` block of a Mem0 config: the knobs, and ``search.limit`` for ``Memory.search``."""
        search = {"limit": self.values["top_k"]} if "top_k" in self.values else {}
        return {"about": _ABOUT, **self.document(), "search": search}

    def yaml(self) -> str:
        """``knobs.yaml``."""
        import yaml

        return "# memopt: the knobs this prompt was tuned with (run id and scores below)\n" + \
            yaml.safe_dump(self.document(), sort_keys=False)


def _defaults(pipeline: str) -> Knobs:
    from memopt.systems import system_class

    return Knobs(dict(system_class(pipeline).defaults), None, {}, "defaults")


def _from_directory(root: Path, pipeline: str) -> Knobs:
    import yaml

    from memopt.core.files import load_yaml

    path = root / pipeline / KNOBS_FILE
    if not path.is_file():
        return _defaults(pipeline)
    try:
        raw = load_yaml(path.read_text(encoding="utf-8")) or {}
        values = {str(k): int(v) for k, v in (raw.get("knobs") or {}).items()}
        scores = dict(raw.get("scores") or {})
    except (yaml.YAMLError, AttributeError, TypeError, ValueError, OverflowError, RecursionError) as e:
        raise ConfigError(f"{path}: not a knobs file ({' '.join(str(e).split())}); expected 'knobs: {{top_k: 10}}' "
                          "(what memopt export --format text writes).") from None
    for key, value in (raw.get("knobs") or {}).items():  # int() above takes 2.7 for 2 and true for 1
        if isinstance(value, (bool, float)) or values[str(key)] < 1:
            raise ConfigError(f"{path}: knobs.{key}: {value!r} is not a whole number of at least 1 (knobs are counts "
                              "and sizes); fix the file or remove it.")
    return Knobs({**_defaults(pipeline).values, **values}, raw.get("run_id"), scores, str(raw.get("source") or "file"))


def load_knobs(root: str | Path, pipeline: str) -> Knobs:
    """The knobs of a prompts directory (its ``<pipeline>/knobs.yaml``; the pipeline's defaults without one)."""
    return _from_directory(Path(root).expanduser(), pipeline)


def defaults(pipeline: str) -> Knobs:
    """The pipeline's default knobs, as a `Knobs` whose source says so."""
    return _defaults(pipeline)


def add_to_dspy_json(path: Path, knobs: Knobs) -> None:
    """Add the ``memopt`` block to a saved DSPy program JSON (in place)."""
    state = json.loads(path.read_text(encoding="utf-8"))
    state[MEM0_BLOCK] = knobs.document()
    write_atomic(path, json.dumps(state, indent=2, ensure_ascii=False) + "\n")  # masked like every file written
