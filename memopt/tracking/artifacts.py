"""What a round and a run leave in their MLflow runs: metrics, prompt versions, Markdown, attributions, graphs.

A round's run gets its prompts registered (`register_prompts`, which fills the record's
``prompt_versions``), its metrics (`round_metrics`), ``round.md`` (with the traces section),
``changes.md``, ``attributions.jsonl``, ``feedback.md`` and the graphs of a few failed cases
(`GRAPHS_PER_ROUND`). The parent run gets the data splits as datasets (`split_frames`), the best
prompts and knobs (`save_best`), and at the end the summary, its metrics, the ``best`` aliases, the
stop tag and the Markdown description (`log_summary`). ``log`` and ``tracker`` are a round log and a
tracker of `memopt.tracking.runs` (or `NullTracker`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memopt.core.files import safe_name
from memopt.optimize.story import round_markdown, run_description
from memopt.systems.prompts import write_prompts

if TYPE_CHECKING:
    from memopt.data.model import Conversation
    from memopt.optimize.experiment import Experiment
    from memopt.optimize.reflective import RoundOutcome
    from memopt.optimize.state import OptimizeState, RoundRecord
    from memopt.systems.base import MemorySystem

__all__ = ["GRAPHS_PER_ROUND", "round_metrics", "knob_notes", "log_round", "save_best", "split_frames",
           "optimizer_label", "log_summary"]

GRAPHS_PER_ROUND = 3


def round_metrics(record: RoundRecord) -> dict[str, Any]:
    """The metrics of a round's run: scores, failures, blame, the decision, LM calls and usage per meter."""
    usage = {meter: {k: u.get(k) for k in ("calls", "cached", "input_tokens", "output_tokens", "cost")}
             for meter, u in record.usage.items()}
    return {"train": record.train, "val": record.val, "test": record.test, "failures": record.failures_by_type,
            "blamed": record.blamed_ops, "accepted": float(record.accepted), "lm_calls": record.lm_calls,
            "tokens": record.tokens, "trials": record.trials, "candidates": record.candidates,
            "trials_errored": record.trials_errored, "usage": usage, "attribution": record.attribution}


def knob_notes(system: MemorySystem, blamed: Mapping[str, int]) -> list[str]:
    """One line per blamed op no prompt steers: its failures go to the knob search, not to a proposer."""
    notes = []
    for op, n in blamed.items():
        if op in {s.name for s in system.operations} and not system.prompt_ops(op):
            knobs = ", ".join(system.steering_knobs(op)) or "none"
            notes.append(f"- {op} ({n} blamed): no prompt steers it; its knobs ({knobs}) are tuned only through "
                         "optimizer.search")
    return notes


def _log_graphs(log: Any, outcome: RoundOutcome) -> None:
    from memopt.trace.render import render_html

    for case, attribution in outcome.attributions[:GRAPHS_PER_ROUND]:
        behind = attribution.masked_by  # the replayed graph of a fault behind the first
        name = f"{case.case_id}-behind" if behind else case.case_id
        title = f"{case.case_id}: {attribution.error_type}" + (f" behind {behind} (replayed)" if behind else "")
        html = render_html(case.G, case=case.key, highlight=list(attribution.evidence_path),
                           blamed=attribution.op_id, title=title)
        log.log_text(html, f"graphs/{safe_name(name, '.html')}")  # distinct ids, distinct names


def log_round(log: Any, system: MemorySystem, record: RoundRecord, outcome: RoundOutcome | None,
              before: Mapping[str, str], traces_md: str = "") -> None:
    """Register the round's prompts (into ``record.prompt_versions``) and log its metrics and artifacts."""
    messages = {op: record.commit_messages.get(op, f"round {record.round}: unchanged")
                for op in system.instructions()} if outcome else "starting prompts (round 0)"
    record.prompt_versions = log.register_prompts(system.name, system.instructions(), commit_message=messages,
                                                  round_index=record.round)
    log.log_metrics(round_metrics(record), step=record.round)
    log.log_text(round_markdown(record, dict(before), system.instructions(), knob_notes(system, record.blamed_ops))
                 + traces_md, "round.md")
    if outcome is not None:
        if outcome.rationales or outcome.rejected:
            log.log_text("\n".join([f"- {op}: {why}" for op, why in sorted(outcome.rationales.items())]
                                   + [f"- rejected by the prompt check: {r}" for r in outcome.rejected]) + "\n",
                         "changes.md")
        lines = "".join(json.dumps(a.to_dict()) + "\n" for _, a in outcome.attributions)
        log.log_text(lines, "attributions.jsonl")
        log.log_text("\n\n".join(f"# {op}\n\n{fb.text()}" for op, fb in outcome.feedback.items()), "feedback.md")
        _log_graphs(log, outcome)


def save_best(tracker: Any, state: OptimizeState) -> None:
    """The best prompts (a prompts directory, ``best_prompts/``) and knobs (``best_knobs.json``) of the run."""
    with tempfile.TemporaryDirectory() as tmp:
        write_prompts(state.pipeline, state.best_instructions, tmp)
        tracker.log_artifact(str(Path(tmp) / state.pipeline), "best_prompts")
    tracker.log_dict(state.best_knobs, "best_knobs.json")


def split_frames(splits: Mapping[str, Sequence[Conversation]]) -> dict[str, Any]:
    """One pandas DataFrame per non-empty split (a row per conversation: id, sessions, turns, questions)."""
    import pandas as pd

    return {name: pd.DataFrame([{"sample_id": c.sample_id, "sessions": len(c.sessions), "turns": len(c.turns),
                                 "questions": len(c.cases)} for c in part])
            for name, part in splits.items() if part}


def optimizer_label(experiment: Experiment) -> str:
    """The optimizer in words: ``memtrace (attribution feedback)``."""
    return f"{experiment.optimizer.name} ({experiment.optimizer.feedback_kind} feedback)"


def _description(summary: Mapping[str, Any], experiment: Experiment, sizes: tuple[int, int, int], data: str,
                 prompts: dict[str, int], versions: dict[int, dict[str, int]]) -> str:
    specs = {role: [spec.raw for spec in getattr(experiment.lm, role)] for role in ("task", "judge", "reflection")}
    simulated = any(spec.simulated for role in specs for spec in getattr(experiment.lm, role))
    lms = ", ".join(f"{role} {' + '.join(raw)}" for role, raw in specs.items()) + (" (simulated)" if simulated else "")
    return run_description(summary, data=data, sizes=sizes, lms=lms, optimizer=optimizer_label(experiment),
                           prompts=prompts, versions=versions)


def log_summary(tracker: Any, summary: Mapping[str, Any], state: OptimizeState, experiment: Experiment,
                sizes: tuple[int, int, int], data: str, *, extra: str = "") -> None:
    """The parent run's confirmation metrics, summary, final metrics, ``best`` aliases, stop tag and description
    (``extra`` appended to it)."""
    if "confirm" in summary:
        tracker.log_metrics({f"confirm.{label}.{split}_{key}": value
                             for label in ("seed", "best") for split, m in summary["confirm"][label].items()
                             for key, value in m.items() if key in ("f1", "judge")})
    tracker.log_dict(summary, "summary.json")
    tracker.log_metrics({"summary/baseline": {k: v for k, v in summary["baseline"].items() if k != "errored"},
                         "summary/final": {k: v for k, v in summary["final"].items() if k != "round"},
                         "summary/gain": summary["gain"], "lm_calls": state.lm_calls})
    best = next((r for r in state.records if r.round == state.best_round), state.records[0])
    tracker.set_prompt_aliases(best.prompt_versions, "best")
    if summary.get("stopped"):
        tracker.set_tags({"memopt.stopped": summary["stopped"]})
    tracker.describe(_description(summary, experiment, sizes, data, best.prompt_versions,
                                  {r.round: r.prompt_versions for r in state.records}) + extra)
