"""`confirm_in_mem0`: score prompts inside the real Mem0 (attached, `memopt.live.attach`), as an optimize
run's confirming system.

memopt's re-implementation (`pipelines/mem0.py`) stays the cheap inner loop of `memopt optimize`; with
``confirm: {system: mem0}`` in the experiment, the seed prompts and the best prompts are then run through
the real Mem0 on the val and test conversations, and both figures are logged. The ``mem0`` pipeline's
blamed ops map to Mem0's config keys as `memopt export --format mem0` maps them: ``extract`` →
``custom_fact_extraction_prompt`` (with the session-date line), ``update`` → ``custom_update_memory_prompt``;
``answer`` is memopt's answer op over ``Memory.search`` (Mem0 has no answer step). Offline (the default),
Mem0 runs on SimLM as `memopt attach mem0 --offline` runs it; ``offline: false`` (the experiment's own
confirmation that the stores it names may be written, as ``--yes`` is attach's) uses the Mem0 config
given in ``config`` (a YAML or JSON file: its LLM, embedder and stores).
"""

from __future__ import annotations

import tempfile
from typing import Any

from memopt.data.model import Conversation

__all__ = ["confirm_in_mem0"]


def confirm_in_mem0(prompts: dict[str, dict[str, str]], splits: dict[str, list[Conversation]], *,
                    offline: bool = True, config: dict[str, Any] | None = None,
                    top_k: int = 10) -> dict[str, dict[str, dict[str, float]]]:
    """F1 and judge accuracy of each labelled prompt set (``{"seed": {...}, "best": {...}}``) in the real Mem0,
    per split: ``{label: {split: {"f1", "judge", "n"}}}``."""
    from memopt.export.formats import mem0_fragment
    from memopt.live.attach import attach_mem0

    out: dict[str, dict[str, dict[str, float]]] = {}
    for label, instructions in prompts.items():
        fragment = {**(config or {}), **mem0_fragment("mem0", instructions).config}
        out[label] = {}
        for split, conversations in splits.items():
            if not conversations:
                continue
            with tempfile.TemporaryDirectory(prefix="memopt-confirm-") as tmp:
                run = attach_mem0(fragment, conversations, tmp, answer_prompt=instructions.get("answer"),
                                  offline=offline, write_stores=not offline, top_k=top_k)
            out[label][split] = {"f1": run.metrics["f1"], "judge": run.metrics["judge"], "n": run.metrics["n"]}
    return out
