"""`run_experiment`: the Python API behind `memopt optimize` — rounds, MLflow, checkpoints, resume.

Round 0 scores the starting prompts (and registers them as the first prompt versions). Each later
round runs the optimizer's step, keeps its choice only if the val F1 improves, reports val and test
scores (F1 and judge accuracy) of the resulting system, registers the prompts that changed, logs
metrics and artifacts (attributions, feedback, a Markdown summary with prompt diffs, graphs of a few
failed cases) to a nested MLflow run, and checkpoints the state to the parent run. ``resume``
continues after the last completed round of a parent run; a round killed half-way is run again.

Stopping: when the call budget or ``--max-cost`` is spent, or a round would see the prompts, knobs
and feedback of an earlier round (``optimizer.stop_on_repeat``: it would propose the same candidates
again), the round in flight is dropped and the run ends FINISHED with the last completed round
(``summary["stopped"]`` says why). When an
evaluation errors beyond ``max_error_rate`` (`EvaluationFailed`), the round and the parent run end
FAILED with the state of the last completed round checkpointed; the summary carries the message.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memopt.data.model import Conversation
from memopt.data.source import load_data, select
from memopt.data.splits import split_ids
from memopt.errors import ConfigError, EvaluationFailed, MemoptError, TrackingError
from memopt.experiment import Experiment
from memopt.feedback_kinds import get_kind
from memopt.files import safe_name
from memopt.interrupts import deferred
from memopt.optimize.reflective import RoundOutcome, StateRepeated
from memopt.optimize.registry import Optimizer
from memopt.optimize.resume import EXPERIMENT_ARTIFACT, STATE_ARTIFACT, load_checkpoint
from memopt.optimize.scoring import METERS, ROLE_OF, BudgetExhausted, LMSettings, Scorer
from memopt.optimize.state import OptimizeState, RoundRecord
from memopt.optimize.story import (
    candidates_of,
    commit_message,
    decision_of,
    parent_metrics,
    round_markdown,
    run_description,
    trials_of,
)
from memopt.prompts import write_prompts
from memopt.systems.base import MemorySystem
from memopt.tracking_traces import CaseTraces

__all__ = ["run_experiment", "check_experiment", "make_scorer", "splits_of", "data_fingerprint", "summary_of",
           "usage_summary", "case_traces_of", "STATE_ARTIFACT", "BUDGET_COVERS"]


GRAPHS_PER_ROUND = 3
BUDGET_COVERS = "task, judge, reflection and reporting calls (cached replies included)"


def splits_of(experiment: Experiment) -> tuple[str, list[Conversation], list[Conversation], list[Conversation]]:
    """(data name, train, val, test) conversations of an experiment; train and val must not be empty."""
    name, conversations = load_data(experiment.data.source)
    conversations = select(conversations, experiment.data.conversations)
    split = split_ids([c.sample_id for c in conversations], experiment.data.split, seed=experiment.data.split_seed)
    if not split.train or not split.val:
        raise ConfigError(f"data {name}: {len(conversations)} conversation(s) split (train, val, test) = "
                          f"{split.sizes()}; optimize needs at least one conversation in train and one in val "
                          "(use more conversations, or change data.split).")
    by_id = {c.sample_id: c for c in conversations}
    return name, *([by_id[i] for i in part] for part in (split.train, split.val, split.test))


def data_fingerprint(*parts: list[Conversation]) -> str:
    """A content hash of the conversations of each split part (16 hex digits): the data identity of a run."""
    from memopt.data.locomo import to_locomo

    blob = json.dumps([[to_locomo(c) for c in part] for part in parts], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def check_experiment(experiment: Experiment) -> None:
    """Check what can be checked before the first LM call: method and LM names, knob values (errors name the key)."""
    from memopt.attribution.registry import get_method
    from memopt.systems import system_class

    if experiment.confirm is not None and experiment.pipeline != "mem0":
        raise ConfigError(f"confirm.system mem0 confirms the mem0 pipeline's prompts, not {experiment.pipeline!r}; "
                          "remove confirm, or optimize pipeline mem0.")
    if experiment.confirm is not None and not experiment.confirm.offline and not experiment.confirm.config:
        raise ConfigError("confirm.offline is false: confirm.config must name your Mem0 config (YAML or JSON) "
                          "with its LLM, embedder and stores.")
    for key, lookup, name in (("attribution.method", get_method, experiment.attribution.method),
                              ("optimizer.feedback", get_kind, experiment.optimizer.feedback_kind)):
        try:
            lookup(name)  # a plug-in that does not load fails here, naming the key, before any LM call
        except MemoptError as e:
            raise ConfigError(f"{key}: {e}") from None
    system = system_class(experiment.pipeline)
    checks = [("knobs", experiment.knobs)]
    checks += [(f"optimizer.search.{knob}", {knob: value}) for knob, values in experiment.optimizer.search.items()
               for value in values]
    for key, knobs in checks:
        try:
            system.check_knobs(knobs)
        except ConfigError as e:
            raise ConfigError(f"{key}: {e}") from None
    empty = [knob for knob, values in experiment.optimizer.search.items() if not values]
    if empty:
        raise ConfigError(f"optimizer.search.{empty[0]}: give at least one value to search.")


def case_traces_of(experiment: Experiment) -> CaseTraces:
    """How the experiment's rounds log their cases as MLflow traces (``mlflow.traces``, ``mlflow.max_traces``)."""
    return CaseTraces(experiment.mlflow.traces, experiment.mlflow.max_traces,
                      " + ".join(spec.raw for spec in experiment.lm.judge), experiment.seed)


def _optimizer(experiment: Experiment, scorer: Scorer) -> Optimizer:
    from memopt.optimize.registry import get_optimizer

    return get_optimizer(experiment.optimizer.name)(experiment, scorer)


def make_scorer(experiment: Experiment) -> Scorer:
    """The `Scorer` of an experiment: its LMs with their concurrency, timeout, retries and cache; its budget."""
    lm = experiment.lm
    if experiment.budget.max_cost_usd is not None:
        _check_priced(experiment)
    settings = LMSettings(concurrency=lm.concurrency, timeout=lm.timeout, num_retries=lm.num_retries,
                          parse_retries=lm.parse_retries, cache=lm.cache, engine=lm.engine)
    return Scorer(lm.task, lm.judge, lm.reflection, budget=experiment.budget.max_lm_calls, seed=experiment.seed,
                  max_cost=experiment.budget.max_cost_usd, lm=settings, max_error_rate=experiment.max_error_rate)


def _check_priced(experiment: Experiment) -> None:
    from memopt.lm.costs import priced

    unknown = [f"lm.{role} {spec.raw!r}" for role in ("task", "judge", "reflection")
               for spec in getattr(experiment.lm, role) if not priced(spec)]
    if unknown:
        raise ConfigError(f"budget.max_cost_usd (--max-cost): LiteLLM has no price for {', '.join(unknown)}, so the "
                          "cost cannot be counted; use budget.max_lm_calls (--budget) instead, or a model name "
                          "LiteLLM prices.")


def _metrics(record: RoundRecord) -> dict[str, Any]:
    usage = {meter: {k: u.get(k) for k in ("calls", "cached", "input_tokens", "output_tokens", "cost")}
             for meter, u in record.usage.items()}
    return {"train": record.train, "val": record.val, "test": record.test, "failures": record.failures_by_type,
            "blamed": record.blamed_ops, "accepted": float(record.accepted), "lm_calls": record.lm_calls,
            "tokens": record.tokens, "trials": record.trials, "candidates": record.candidates,
            "trials_errored": record.trials_errored, "usage": usage, "attribution": record.attribution}


def _knob_notes(system: MemorySystem, blamed: dict[str, int]) -> list[str]:
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
        html = render_html(case.G, case=case.key, highlight=list(attribution.evidence_path),
                           blamed=attribution.op_id, title=f"{case.case_id}: {attribution.error_type}")
        log.log_text(html, f"graphs/{safe_name(case.case_id, '.html')}")  # distinct ids, distinct names


def _commit_messages(record: RoundRecord, outcome: RoundOutcome | None, before_val: float | None,
                     rationale: dict[str, str] | None = None) -> dict[str, str]:
    """The commit message of each prompt the round changed (what changed, why, the val F1 it moved)."""
    if outcome is None:
        return {}
    def why(op: str) -> str:
        fb = outcome.feedback.get(op)
        if fb is None:
            return "the round's trials"
        if fb.kind == "attribution" and fb.counts:
            return ", ".join(f"{error} × {n}" for error, n in fb.counts.items()) + " blamed on it"
        return f"{fb.kind} feedback"

    return {op: commit_message(op, why(op), record.round, before_val, record.val.get("f1"),
                               (rationale or {}).get(op, "")) for op in record.changed_ops}


def _log_round(log: Any, system: MemorySystem, record: RoundRecord, outcome: RoundOutcome | None,
               before: dict[str, str], traces_md: str = "") -> None:
    messages = {op: record.commit_messages.get(op, f"round {record.round}: unchanged")
                for op in system.instructions()} if outcome else "starting prompts (round 0)"
    record.prompt_versions = log.register_prompts(system.name, system.instructions(), commit_message=messages,
                                                  round_index=record.round)
    log.log_metrics(_metrics(record), step=record.round)
    log.log_text(round_markdown(record, before, system.instructions(), _knob_notes(system, record.blamed_ops))
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


def _record(index: int, scorer: Scorer, system: MemorySystem, valset: list[Conversation],
            testset: list[Conversation], outcome: RoundOutcome | None, started: float, *,
            before: dict[str, str] | None = None, before_knobs: dict[str, int] | None = None,
            current_val: float | None = None, min_gain: float = 0.0) -> RoundRecord:
    reports = scorer.report(system, {"val": valset, **({"test": testset} if testset else {})})
    usage = scorer.usage()
    record = RoundRecord(
        round=index, train=outcome.train.metrics if outcome and outcome.train.results else None, val=reports["val"],
        test=reports.get("test"),
        blamed_ops=outcome.blamed_ops if outcome else {}, failures_by_type=outcome.failures_by_type if outcome else {},
        accepted=outcome.accepted if outcome else False,
        changed_ops=sorted(outcome.choice.instructions) if outcome and outcome.accepted else [],
        candidates=sum(map(len, outcome.candidates.values())) if outcome else 0,
        trials=outcome.choice.trials if outcome else 0,
        feedback={op: fb.text() for op, fb in outcome.feedback.items()} if outcome else {},
        lm_calls=usage.calls, tokens=usage.tokens, seconds=time.perf_counter() - started,
        usage={meter: asdict(u) for meter, u in scorer.usage_by_meter().items()},
        trials_errored=outcome.choice.errored_trials if outcome else 0,
        attribution_errors=outcome.attribution_errors if outcome else 0, knobs=dict(system.knobs),
        attribution=dict(outcome.attribution) if outcome else {})
    if outcome is not None:
        tried = outcome.choice.tried
        record.trials_log = trials_of(tried)
        record.proposals = candidates_of(outcome.candidates, before or {}, tried)
        record.decision = decision_of(outcome.accepted, tried, outcome.choice.val_f1, current_val or 0.0, min_gain,
                                      before_knobs or {}) if tried else \
            ("kept its proposal" if outcome.accepted else "kept the current prompts (no trials)")
        record.commit_messages = _commit_messages(record, outcome, current_val, outcome.rationales)
    return record


def _save_best(tracker: Any, state: OptimizeState) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        write_prompts(state.pipeline, state.best_instructions, tmp)
        tracker.log_artifact(str(Path(tmp) / state.pipeline), "best_prompts")
    tracker.log_dict(state.best_knobs, "best_knobs.json")


def usage_summary(usage: dict[str, dict[str, Any]], experiment: Experiment) -> dict[str, Any]:
    """LM usage per meter and in total (calls asked / made / from cache, tokens, cost), for the summary."""
    from memopt.lm.costs import cost_label, free, usage_report
    from memopt.lm.usage import ModelUsage

    specs = {m: getattr(experiment.lm, ROLE_OF[m]) for m in METERS}
    per = {m: usage_report(ModelUsage(**usage[m]) if m in usage else ModelUsage(), specs[m]) for m in METERS}
    total = sum((ModelUsage(**usage[m]) for m in METERS if m in usage), ModelUsage())
    costs = [r["cost_usd"] for r in per.values()]
    cost = None if any(c is None for c in costs) else round(sum(costs), 6)
    everything = [s for m in METERS for s in specs[m]]
    return {**per, "total": {**usage_report(total, everything), "cost_usd": cost,
                             "cost": cost_label(cost, free(everything))}}


def summary_of(state: OptimizeState, experiment: Experiment, *, stopped: str | None = None,
               status: str = "FINISHED") -> dict[str, Any]:
    """The ``--out summary.json`` document."""
    base = state.baseline
    best = next((r for r in state.records if r.round == state.best_round), base)
    return {
        "run_id": state.run_id, "experiment": experiment.name, "pipeline": state.pipeline, "status": status,
        "stopped": stopped,
        "baseline": {"val_f1": base.val.get("f1"), "test_f1": (base.test or {}).get("f1"),
                     "val_judge": base.val.get("judge"), "test_judge": (base.test or {}).get("judge"),
                     "errored": base.errored},
        "final": {"round": best.round, "val_f1": best.val.get("f1"), "test_f1": (best.test or {}).get("f1"),
                  "val_judge": best.val.get("judge"), "test_judge": (best.test or {}).get("judge")},
        "gain": {k: None if base_v is None or best_v is None else round(best_v - base_v, 6)
                 for k, base_v, best_v in (("val_f1", base.val.get("f1"), best.val.get("f1")),
                                           ("test_f1", (base.test or {}).get("f1"), (best.test or {}).get("f1")),
                                           ("val_judge", base.val.get("judge"), best.val.get("judge")),
                                           ("test_judge", (base.test or {}).get("judge"),
                                            (best.test or {}).get("judge")))},
        "lm_calls": state.lm_calls, "tokens": state.tokens, "best_knobs": state.best_knobs,
        "budget": {"max_lm_calls": experiment.budget.max_lm_calls, "max_cost_usd": experiment.budget.max_cost_usd,
                   "covers": BUDGET_COVERS},
        "usage": usage_summary(state.usage, experiment),
        "rounds": [{**r.summary(), "usage": _round_usage(r, experiment)} for r in state.records[1:]],
    }


def _round_usage(record: RoundRecord, experiment: Experiment) -> dict[str, Any]:
    """LM usage of the whole run up to the end of a round: calls asked / made / from cache, tokens, cost."""
    total = usage_summary(record.usage, experiment)["total"]
    return {k: total[k] for k in ("calls", "made", "cached", "errors", "input_tokens", "output_tokens", "cost_usd",
                                  "cost")}


def _params(experiment: Experiment, data_name: str, fingerprint: str,
            optimizer: Optimizer) -> dict[str, Any]:
    from memopt.lm.spec import describe_lm

    params: dict[str, Any] = {"pipeline": experiment.pipeline, "data": data_name, "data.fingerprint": fingerprint,
                              "rounds": experiment.rounds, "budget.max_lm_calls": experiment.budget.max_lm_calls,
                              "budget.max_cost_usd": experiment.budget.max_cost_usd, "budget.covers": BUDGET_COVERS,
                              "seed": experiment.seed, "experiment": experiment.name}
    for role in ("task", "judge", "reflection"):
        infos = [describe_lm(spec) for spec in getattr(experiment.lm, role)]
        params[f"lm.{role}"] = ", ".join(info["model"] + (f"@{info['api_base']}" if info["api_base"] else "")
                                         for info in infos)
    params["lm.simulated"] = any(spec.simulated for r in ("task", "judge", "reflection")
                                 for spec in getattr(experiment.lm, r))
    params.update({f"lm.{k}": getattr(experiment.lm, k) for k in ("concurrency", "timeout", "num_retries",
                                                                   "parse_retries", "cache")})
    params.update({f"optimizer.{k}": v for k, v in optimizer.describe().items()})
    return params


def _run_name(experiment: Experiment) -> str:
    """The parent run's name: experiment and optimizer, the feedback kind when it is a control, the seed and the
    start time (so two runs of one experiment have distinct names)."""
    o = experiment.optimizer
    control = o.feedback is not None and get_kind(o.feedback).control
    return (f"{experiment.name}-{o.name}" + (f"-{o.feedback}" if control else "")
            + f"-seed{experiment.seed}-{time.strftime('%Y%m%d-%H%M%S')}")


def _split_frames(trainset: list[Conversation], valset: list[Conversation],
                  testset: list[Conversation]) -> dict[str, Any]:
    """One pandas DataFrame per split (a row per conversation: id, sessions, turns, questions), for MLflow."""
    import pandas as pd

    return {name: pd.DataFrame([{"sample_id": c.sample_id, "sessions": len(c.sessions), "turns": len(c.turns),
                                 "questions": len(c.cases)} for c in part])
            for name, part in (("train", trainset), ("val", valset), ("test", testset)) if part}


def run_experiment(experiment: Experiment, *, resume: str | None = None, tracker: Any = None,
                   on_round: Callable[[RoundRecord], None] | None = None, scorer: Scorer | None = None,
                   progress: Any = None) -> dict[str, Any]:
    """Run (or resume) an optimization; returns the summary (see `summary_of`).

    Everything is checked before the first LM call (`check_experiment`, the data, the prompts, on
    resume the pipeline and the data fingerprint). Interrupted (Ctrl-C, SIGTERM) or failed, the parent
    run ends KILLED or FAILED with its last checkpoint, and ``resume`` continues from it, also when
    round 0 never finished. ``progress`` (`memopt.progress.RoundProgress`) shows a live line within
    each round.
    """
    from memopt.systems import make_system

    check_experiment(experiment)
    data_name, trainset, valset, testset = splits_of(experiment)
    fingerprint = data_fingerprint(trainset, valset, testset)
    scorer = scorer or make_scorer(experiment)
    if progress is not None:
        scorer.progress = progress
    optimizer = _optimizer(experiment, scorer)
    if tracker is None:
        from memopt.tracking import Tracker

        tracker = Tracker(experiment.mlflow.tracking_uri, experiment.mlflow.experiment)
    seed_system = make_system(experiment.pipeline, prompts=experiment.prompts, **experiment.knobs)
    _check_prompts(seed_system)
    optimizer.guard = _guard(seed_system, trainset + valset + testset)
    state = load_checkpoint(tracker, resume, experiment, data_name, fingerprint) if resume is not None else None
    if state is not None:
        scorer.resume_from(state.usage, state.lm_calls, state.tokens)
    status, stopped, summary, raising = "FINISHED", None, None, True
    if hasattr(tracker, "open"):
        tracker.open()  # a store that cannot be used fails here, before any LM call, and never while signals wait
    try:
        with deferred():
            if resume is not None:
                tracker.resume(resume)
            else:
                tracker.start(_run_name(experiment), _params(experiment, data_name, fingerprint, optimizer))
                tracker.log_text(experiment.model_dump_json(indent=1), EXPERIMENT_ARTIFACT)
                tracker.describe(f"**memopt optimize** · experiment `{experiment.name}` · pipeline "
                                 f"`{experiment.pipeline}` · running ({experiment.rounds} rounds).")
                tracker.log_datasets(data_name, _split_frames(trainset, valset, testset))
        if state is None:
            state = _baseline(tracker, seed_system, scorer, valset, testset, on_round,
                              data=data_name, fingerprint=fingerprint, rounds=experiment.rounds)
        traces = case_traces_of(experiment)
        while state.next_round <= experiment.rounds:
            scorer.check()
            _round(tracker, optimizer, state, seed_system, scorer, trainset, valset, testset, on_round, traces,
                   experiment.rounds)
        raising = False
    except BudgetExhausted as e:
        if state is None:  # round 0 never finished: nothing to report
            status = "FAILED"
            raise
        stopped, raising = f"budget exhausted: {e}", False
    except StateRepeated as e:  # the round in flight is dropped, as when the budget runs out
        stopped, raising = f"state repeated: {e}", False
    except EvaluationFailed as e:
        status, stopped = "FAILED", str(e)
        if state is None:
            raise
        raising = False
    except Exception:
        status = "FAILED"
        raise
    except BaseException:
        status = "KILLED"
        raise
    finally:
        if _attached(tracker):
            with deferred(), suppress(*((TrackingError,) if raising else ())):  # report the error in flight
                confirm = (lambda done: _confirm(experiment, seed_system.instructions(), done.best_instructions,
                                                 valset, testset)) if experiment.confirm else None
                summary = _finish(tracker, state, experiment, scorer, status, stopped, confirm,
                                  (len(trainset), len(valset), len(testset)), data_name)
    return summary


def _attached(tracker: Any) -> bool:
    try:
        return bool(tracker.run_id)
    except RuntimeError:
        return False


def _confirm(experiment: Experiment, seed: dict[str, str], best: dict[str, str], valset: list[Conversation],
             testset: list[Conversation]) -> dict[str, Any]:
    """The seed and best prompts scored in the confirming real system (``experiment.confirm``) on val and test."""
    from memopt.live.attach import load_config
    from memopt.live.confirm import confirm_in_mem0

    spec = experiment.confirm
    assert spec is not None
    config = load_config(spec.config) if spec.config else None
    figures = confirm_in_mem0({"seed": seed, "best": best}, {"val": valset, "test": testset}, offline=spec.offline,
                              config=config, top_k=spec.top_k)
    return {"system": spec.system, "offline": spec.offline, "simulated": spec.offline, **figures}


def _finish(tracker: Any, state: OptimizeState | None, experiment: Experiment, scorer: Scorer, status: str,
            stopped: str | None, confirm: Callable[[OptimizeState], dict[str, Any]] | None = None,
            sizes: tuple[int, int, int] = (0, 0, 0), data: str = "") -> dict[str, Any] | None:
    """Checkpoint, best prompts, summary and final metrics of the parent run, then end it with ``status``.

    What was spent, a dropped round's calls included, stays counted (and billed) after a resume.
    """
    try:
        if state is None:
            return None
        return _finish_logs(tracker, state, experiment, scorer, status, stopped, confirm, sizes, data)
    except TrackingError:
        status = "FAILED"  # the run's end could not be logged in full: it must not read FINISHED
        raise
    finally:
        tracker.finish(status)


def _finish_logs(tracker: Any, state: OptimizeState, experiment: Experiment, scorer: Scorer, status: str,
                 stopped: str | None, confirm: Callable[[OptimizeState], dict[str, Any]] | None,
                 sizes: tuple[int, int, int], data: str) -> dict[str, Any]:
    """The parent run's final checkpoint, best prompts, summary (with the confirmation), metrics, @best aliases,
    stop tag and description."""
    total = scorer.usage()
    state.usage = {meter: asdict(u) for meter, u in scorer.usage_by_meter().items()}
    state.lm_calls, state.tokens = total.calls, total.tokens
    tracker.log_dict(state.to_dict(), STATE_ARTIFACT)
    _save_best(tracker, state)
    summary = summary_of(state, experiment, stopped=stopped, status=status)
    if confirm is not None and status == "FINISHED":
        summary["confirm"] = confirm(state)
        tracker.log_metrics({f"confirm.{label}.{split}_{key}": value
                             for label in ("seed", "best") for split, m in summary["confirm"][label].items()
                             for key, value in m.items() if key in ("f1", "judge")})
    tracker.log_dict(summary, "summary.json")
    tracker.log_metrics({"summary/baseline": {k: v for k, v in summary["baseline"].items() if k != "errored"},
                         "summary/final": {k: v for k, v in summary["final"].items() if k != "round"},
                         "summary/gain": summary["gain"], "lm_calls": state.lm_calls})
    best = next((r for r in state.records if r.round == state.best_round), state.records[0])
    tracker.set_prompt_aliases(best.prompt_versions, "best")
    if stopped:
        tracker.set_tags({"memopt.stopped": stopped})
    tracker.describe(_description(summary, experiment, optimizer_label(experiment), sizes, data,
                                  best.prompt_versions, {r.round: r.prompt_versions for r in state.records}))
    return summary


def _guard(seed_system: MemorySystem, seen: list[Conversation]) -> Any:
    """The prompt check every candidate passes: against the seed prompts and the data of every split."""
    from memopt.prompt_check import PromptGuard, TrainingData

    return PromptGuard(seed_system.name, seed_system.instructions(), TrainingData.of(seen))


def optimizer_label(experiment: Experiment) -> str:
    """The optimizer in words: ``memtrace (attribution feedback)``."""
    return f"{experiment.optimizer.name} ({experiment.optimizer.feedback_kind} feedback)"


def _description(summary: dict[str, Any], experiment: Experiment, optimizer: str, sizes: tuple[int, int, int],
                 data: str, prompts: dict[str, int], versions: dict[int, dict[str, int]]) -> str:
    specs = {role: [spec.raw for spec in getattr(experiment.lm, role)] for role in ("task", "judge", "reflection")}
    simulated = any(spec.simulated for role in specs for spec in getattr(experiment.lm, role))
    lms = ", ".join(f"{role} {' + '.join(raw)}" for role, raw in specs.items()) + (" (simulated)" if simulated else "")
    return run_description(summary, data=data, sizes=sizes, lms=lms, optimizer=optimizer, prompts=prompts,
                           versions=versions)


def _check_prompts(system: MemorySystem) -> None:
    from memopt.tracking import check_prompt_secret, prompt_name

    for op, text in system.instructions().items():
        check_prompt_secret(prompt_name(system.name, op), text)


def _baseline(tracker: Any, system: MemorySystem, scorer: Scorer, valset: list[Conversation],
              testset: list[Conversation], on_round: Callable[[RoundRecord], None] | None, *, data: str,
              fingerprint: str, rounds: int) -> OptimizeState:
    started = time.perf_counter()
    scorer.label = f"round 0/{rounds}"
    with tracker.round(0, "round-0 (starting prompts)") as log:
        record = _record(0, scorer, system, valset, testset, None, started)
        _log_round(log, system, record, None, system.instructions())
        tracker.log_metrics(parent_metrics(record, float(record.val["f1"])), step=0)
        with deferred():  # the checkpoint and the end of the round's run go together
            state = OptimizeState(system.name, 1, system.instructions(), dict(system.knobs), float(record.val["f1"]),
                                  0, float(record.val["f1"]), system.instructions(), dict(system.knobs), [record],
                                  record.lm_calls, record.tokens, tracker.run_id, data=data,
                                  data_fingerprint=fingerprint, usage=record.usage)
            tracker.log_dict(state.to_dict(), STATE_ARTIFACT)
            log.end()
    if on_round is not None:
        on_round(record)
    return state


def _round(tracker: Any, optimizer: Optimizer, state: OptimizeState,
           seed_system: MemorySystem, scorer: Scorer, trainset: list[Conversation], valset: list[Conversation],
           testset: list[Conversation], on_round: Callable[[RoundRecord], None] | None, traces: CaseTraces,
           rounds: int) -> None:
    """Run one round; raises `BudgetExhausted` or `StateRepeated` (the round is dropped, its run tagged
    ``memopt.stopped``) or `EvaluationFailed` (its run FAILED)."""
    index = state.next_round
    started = time.perf_counter()
    scorer.label = f"round {index}/{rounds}"
    current = seed_system.with_instructions(state.instructions).with_knobs(**state.knobs)
    before = current.instructions()
    exhausted: BudgetExhausted | StateRepeated | None = None
    with tracker.round(index) as log:
        try:
            outcome = optimizer.step(current, index, trainset=trainset, valset=valset, current_val=state.current_val)
        except (BudgetExhausted, StateRepeated) as e:
            why = "budget exhausted" if isinstance(e, BudgetExhausted) else "state repeated"
            log.set_tags({"memopt.stopped": f"{why}: {e}"})
            exhausted = e
        else:
            instructions, knobs, current_val = state.instructions, state.knobs, state.current_val
            if outcome.accepted:
                instructions = {**state.instructions, **outcome.choice.instructions}
                knobs, current_val = dict(outcome.choice.knobs), outcome.choice.val_f1
                current = seed_system.with_instructions(instructions).with_knobs(**knobs)
            record = _record(index, scorer, current, valset, testset, outcome, started, before=before,
                             before_knobs=dict(state.knobs), current_val=state.current_val,
                             min_gain=float(getattr(optimizer, "min_gain", 0.0)))
            traced = traces.log(log, outcome, round_index=index, versions=state.records[-1].prompt_versions)
            _log_round(log, current, record, outcome, before, traced.markdown(getattr(tracker, "tracking_uri", "")))
            with deferred():  # the state changes, its checkpoint and the end of the round's run go together
                state.instructions, state.knobs, state.current_val = instructions, knobs, current_val
                state.records.append(record)
                state.lm_calls, state.tokens, state.usage = record.lm_calls, record.tokens, record.usage
                if outcome.accepted and state.current_val > state.best_val:
                    state.best_round, state.best_val = index, state.current_val
                    state.best_instructions, state.best_knobs = dict(state.instructions), dict(state.knobs)
                state.next_round = index + 1
                tracker.log_metrics(parent_metrics(record, state.best_val), step=index)
                tracker.log_dict(state.to_dict(), STATE_ARTIFACT)
                log.end()
    if exhausted is not None:
        raise exhausted
    if on_round is not None:
        on_round(record)
