"""What a round and a run leave in their MLflow runs: metrics, prompt versions, Markdown, attributions, graphs.

A round's run gets its prompts registered (`register_round`, which fills the record's
``prompt_versions``), its metrics (`round_metrics`: scores first, categories by name, bookkeeping last),
``round.md`` (with the traces and reflections sections), ``changes.md``, ``attributions.jsonl``,
``feedback.md`` (prompts named by their registry versions, not hashes) and the graphs of a few failed
cases (`GRAPHS_PER_ROUND`). The parent run gets the data splits as datasets (`split_frames`), the best
prompts and knobs (`save_best`), and at the end its result metrics, the summary, ``@best`` (moved only when
the run beats its holder, `memopt.tracking.prompts.claim_best`), the stop tag and the Markdown description
(`log_summary`). ``log`` and ``tracker`` are a round log and a
tracker of `memopt.tracking.runs` (or `NullTracker`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memopt.core.files import safe_name
from memopt.optimize.story import category_key, result_metrics, round_markdown, run_description
from memopt.systems.prompts import write_prompts

if TYPE_CHECKING:
    from memopt.data.model import Conversation
    from memopt.optimize.experiment import Experiment
    from memopt.optimize.reflective import RoundOutcome
    from memopt.optimize.state import OptimizeState, RoundRecord
    from memopt.systems.base import MemorySystem

__all__ = ["GRAPHS_PER_ROUND", "round_metrics", "knob_notes", "register_round", "log_round", "save_best",
           "split_frames", "optimizer_label", "log_summary", "score_basis"]

GRAPHS_PER_ROUND = 3


def _by_category_name(scores: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A split's scores with its categories named (``by_category.1-multi-hop``)."""
    if not scores or "by_category" not in scores:
        return scores
    return {**scores, "by_category": {category_key(c): m for c, m in scores["by_category"].items()}}


def round_metrics(record: RoundRecord) -> dict[str, Any]:
    """The metrics of a round's run, the scores first (val, test, train; categories by name), then the decision,
    failures and blame, then the bookkeeping: LM calls and usage per meter, trials, attribution."""
    usage = {meter: {k: u.get(k) for k in ("calls", "cached", "input_tokens", "output_tokens", "cost")}
             for meter, u in record.usage.items()}
    named = _by_category_name
    return {"val": named(record.val), "test": named(record.test), "train": named(record.train),
            "accepted": float(record.accepted), "failures": record.failures_by_type, "blamed": record.blamed_ops,
            "lm_calls": record.lm_calls, "tokens": record.tokens, "trials": record.trials,
            "candidates": record.candidates, "trials_errored": record.trials_errored, "usage": usage,
            "attribution": record.attribution}


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


def register_round(log: Any, system: MemorySystem, record: RoundRecord, outcome: RoundOutcome | None) -> dict[str, int]:
    """Register the prompts a round ended with (each changed op's commit message says why) into
    ``record.prompt_versions``; name → version."""
    messages = {op: record.commit_messages.get(op, f"round {record.round}: unchanged")
                for op in system.instructions()} if outcome else "starting prompts (round 0)"
    record.prompt_versions = log.register_prompts(system.name, system.instructions(), commit_message=messages,
                                                  round_index=record.round)
    return record.prompt_versions


def _versions_named(text: str, hashes: Mapping[str, str]) -> str:
    """``text`` with each prompt hash replaced by the registry version it is (``prompts:/q.mem0.extract/2``)."""
    for digest, uri in hashes.items():
        text = text.replace(digest, uri)
    return text


def log_round(log: Any, system: MemorySystem, record: RoundRecord, outcome: RoundOutcome | None,
              before: Mapping[str, str], traces_md: str = "", hashes: Mapping[str, str] | None = None) -> None:
    """Log a round's metrics and artifacts (its prompts registered first, `register_round`); ``hashes`` names the
    prompt hashes feedback quotes by their registry versions."""
    hashes = hashes or {}
    log.log_metrics(round_metrics(record), step=record.round)
    log.log_text(_versions_named(round_markdown(record, dict(before), system.instructions(),
                                       knob_notes(system, record.blamed_ops)) + traces_md, hashes), "round.md")
    if outcome is not None:
        if outcome.rationales or outcome.rejected:
            log.log_text("\n".join([f"- {op}: {why}" for op, why in sorted(outcome.rationales.items())]
                                   + [f"- rejected by the prompt check: {r}" for r in outcome.rejected]) + "\n",
                         "changes.md")
        lines = "".join(json.dumps(a.to_dict()) + "\n" for _, a in outcome.attributions)
        log.log_text(lines, "attributions.jsonl")
        feedback = "\n\n".join(f"# {op}\n\n{fb.text()}" for op, fb in outcome.feedback.items())
        log.log_text(_versions_named(feedback, hashes), "feedback.md")
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
                 prompts: dict[str, int], versions: dict[int, dict[str, int]], best: str) -> str:
    specs = {role: [spec.raw for spec in getattr(experiment.lm, role)] for role in ("task", "judge", "reflection")}
    simulated = any(spec.simulated for role in specs for spec in getattr(experiment.lm, role))
    lms = ", ".join(f"{role} {' + '.join(raw)}" for role, raw in specs.items()) + (" (simulated)" if simulated else "")
    return run_description(summary, data=data, sizes=sizes, lms=lms, optimizer=optimizer_label(experiment),
                           prompts=prompts, versions=versions, best=best)


def score_basis(state: OptimizeState, experiment: Experiment) -> str:
    """What a val F1 was scored with, so ``@best`` compares like with like: the data and the task model."""
    models = " + ".join(spec.model for spec in experiment.lm.task)
    return f"data {state.data_fingerprint or state.data}; task {models}"


def log_summary(tracker: Any, summary: Mapping[str, Any], state: OptimizeState, experiment: Experiment,
                sizes: tuple[int, int, int], data: str, *, extra: str = "") -> None:
    """The parent run's result metrics (first), confirmation metrics, summary, ``@best``, stop tag, description
    (``extra`` appended to it)."""
    tracker.log_metrics({**result_metrics(summary), "lm_calls": state.lm_calls})
    if "confirm" in summary:
        tracker.log_metrics({f"confirm.{label}.{split}_{key}": value
                             for label in ("seed", "best") for split, m in summary["confirm"][label].items()
                             for key, value in m.items() if key in ("f1", "judge")})
    tracker.log_dict(summary, "summary.json")
    best = next((r for r in state.records if r.round == state.best_round), state.records[0])
    claim = tracker.claim_best(best.prompt_versions, val_f1=summary["final"]["val_f1"],
                               basis=score_basis(state, experiment))
    if summary.get("stopped"):
        tracker.set_tags({"memopt.stopped": summary["stopped"]})
    tracker.describe(_description(summary, experiment, sizes, data, best.prompt_versions,
                                  {r.round: r.prompt_versions for r in state.records},
                                  claim.why if claim is not None else "") + extra)
