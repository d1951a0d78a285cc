"""`run_experiment`: the Python API behind `memopt optimize` — rounds, checkpoints, resume, told as events.

Round 0 scores the starting prompts. Each later round runs the optimizer's step, keeps its choice
only if the val F1 improves, reports val and test scores (F1 and judge accuracy) of the resulting
system and moves the state on. ``resume`` continues after the last completed round of a parent run;
a round killed half-way is run again.

The loop records nothing itself: it emits typed events (`memopt.optimize.events`) to the run's tracker
(MLflow by default, `memopt.tracking`: prompt versions, metrics, artifacts, traces, the checkpoint
of every round) and to any observers given. `OptimizeRun` holds what one run works with.

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
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from typing import Any

from memopt.core.errors import ConfigError, EvaluationFailed, MemoptError, TrackingError
from memopt.core.interrupts import deferred
from memopt.data.model import Conversation
from memopt.data.source import load_data, select
from memopt.data.splits import split_ids
from memopt.feedback.kinds import get_kind
from memopt.optimize.events import (
    BestChanged,
    Observers,
    RoundDropped,
    RoundEnded,
    RoundFinished,
    RoundScored,
    RoundStarted,
    RunEnding,
    RunEvent,
    RunFinished,
    RunObserver,
    RunResumed,
    RunStarted,
    RunSummarized,
    Tracker,
    make_tracker,
)
from memopt.optimize.experiment import Experiment
from memopt.optimize.judging import check_run_judge
from memopt.optimize.reflective import RoundOutcome, StateRepeated
from memopt.optimize.registry import Optimizer
from memopt.optimize.resume import STATE_ARTIFACT, load_checkpoint
from memopt.optimize.scoring import BudgetExhausted, LMSettings, Scorer
from memopt.optimize.state import OptimizeState, RoundRecord
from memopt.optimize.story import candidates_of, commit_message, decision_of, trials_of
from memopt.optimize.summary import BUDGET_COVERS, summary_of, usage_summary
from memopt.optimize.workers import attach_pool
from memopt.systems.base import MemorySystem

__all__ = ["run_experiment", "OptimizeRun", "check_experiment", "make_scorer", "splits_of", "data_fingerprint",
           "summary_of", "usage_summary", "STATE_ARTIFACT", "BUDGET_COVERS"]



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
        attribution=dict(outcome.attribution) if outcome else {},
        inputs_digest=outcome.inputs_digest if outcome else "")
    if outcome is not None:
        tried = outcome.choice.tried
        record.trials_log = trials_of(tried)
        record.proposals = candidates_of(outcome.candidates, before or {}, tried)
        record.decision = decision_of(outcome.accepted, tried, outcome.choice.val_f1, current_val or 0.0, min_gain,
                                      before_knobs or {}) if tried else \
            ("kept its proposal" if outcome.accepted else "kept the current prompts (no trials)")
        record.commit_messages = _commit_messages(record, outcome, current_val, outcome.rationales)
        if outcome.unblamed and not outcome.accepted:
            record.decision += f" ({outcome.unblamed})"
    return record


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


@dataclass
class OptimizeRun:
    """One optimize run in progress: the experiment, its data, scorer, optimizer and seed system, who listens
    (the tracker first), and the state of the last completed round (None before round 0 ends)."""

    experiment: Experiment
    scorer: Scorer
    optimizer: Optimizer
    seed_system: MemorySystem
    data: str
    trainset: list[Conversation]
    valset: list[Conversation]
    testset: list[Conversation]
    listeners: Observers
    on_round: Callable[[RoundRecord], None] | None = None
    state: OptimizeState | None = None
    judge: dict[str, Any] = field(default_factory=dict)  # the judge check (`memopt.optimize.judging`)

    @property
    def tracker(self) -> Tracker:
        """The observer that keeps the run's record."""
        return self.listeners.tracker

    def splits(self) -> dict[str, list[Conversation]]:
        """The data splits by name."""
        return {"train": self.trainset, "val": self.valset, "test": self.testset}

    def emit(self, event: RunEvent) -> None:
        """Tell the tracker, then the observers (`Observers.emit`)."""
        self.listeners.emit(event)

    @contextmanager
    def round(self, index: int, name: str | None = None) -> Iterator[None]:
        """`RoundStarted`, the round, then `RoundEnded` FINISHED, FAILED (an exception) or KILLED (interrupted). A
        signal while the round's run is being opened is held until it is open, then ends it KILLED like one that
        comes later (never a nested run left RUNNING)."""
        try:
            with deferred():
                self.emit(RoundStarted(index, self.experiment.rounds, name))
            yield
        except BaseException as e:
            self.emit(RoundEnded(index, "FAILED" if isinstance(e, Exception) else "KILLED"))
            raise
        self.emit(RoundEnded(index, "FINISHED"))


def run_experiment(experiment: Experiment, *, resume: str | None = None, tracker: Tracker | str | None = None,
                   observers: Sequence[RunObserver] = (), on_round: Callable[[RoundRecord], None] | None = None,
                   scorer: Scorer | None = None, progress: Any = None,
                   experiment_file: str | None = None) -> dict[str, Any] | None:
    """Run (or resume) an optimization; returns the summary (see `summary_of`).

    Everything is checked before the first LM call (`check_experiment`, the data, the prompts, on
    resume the pipeline and the data fingerprint). Interrupted (Ctrl-C, SIGTERM) or failed, the parent
    run ends KILLED or FAILED with its last checkpoint, and ``resume`` continues from it, also when
    round 0 never finished. ``tracker`` keeps the record: a `Tracker`, or the name of a registered one
    (``"untracked"``; default ``"mlflow"``, the experiment's ``mlflow`` section); ``observers`` hear every
    event too (`memopt.optimize.events`). ``progress`` (`memopt.core.progress.RoundProgress`) shows a live line
    within each round. ``experiment_file`` (the YAML it was read from) is named by the command it prints to
    start `memopt worker`s (``optimizer.storage``).

    A run starts with an empty ingestion cache (`clear_ingest_cache`), so what it spends and finds does not
    depend on what ran before it in the process (a bench's earlier runs, a notebook's earlier cells).
    """
    from memopt.systems import clear_ingest_cache, make_system

    check_experiment(experiment)
    clear_ingest_cache()
    data_name, trainset, valset, testset = splits_of(experiment)
    fingerprint = data_fingerprint(trainset, valset, testset)
    scorer = scorer or make_scorer(experiment)
    if progress is not None:
        scorer.progress = progress
    optimizer = _optimizer(experiment, scorer)
    pool = attach_pool(experiment, optimizer, fingerprint, experiment_file)  # optimizer.storage: `memopt worker`s
    tracker = make_tracker(tracker or "mlflow", experiment) if tracker is None or isinstance(tracker, str) else tracker
    seed_system = make_system(experiment.pipeline, prompts=experiment.prompts, **experiment.knobs)
    tracker.check_prompts(seed_system.name, seed_system.instructions())
    optimizer.guard = _guard(seed_system, trainset + valset + testset)
    run = OptimizeRun(experiment, scorer, optimizer, seed_system, data_name, trainset, valset, testset,
                      Observers(tracker, observers), on_round)
    run.state = load_checkpoint(tracker, resume, experiment, data_name, fingerprint) if resume is not None else None
    if run.state is not None:
        scorer.resume_from(run.state.usage, run.state.lm_calls, run.state.tokens)
        if (picks_up := getattr(optimizer, "resume", None)) is not None:  # optional (`Optimizer`)
            picks_up(run.state.records)
        _restore(run, run.state.memory)
    status, stopped, summary, raising = "FINISHED", None, None, True
    tracker.open()  # a store that cannot be used fails here, before any LM call, and never while signals wait
    run.judge = check_run_judge(experiment, scorer, trainset + valset,  # before round 0 trusts the judge
                                run.state.memory.get("judge") if run.state is not None else None)
    try:
        with deferred():
            if resume is not None:
                run.emit(RunResumed(resume, experiment, data_name, run.splits()))
            else:
                run.emit(RunStarted(experiment, _run_name(experiment),
                                    _params(experiment, data_name, fingerprint, optimizer), data_name, run.splits()))
            if pool is not None:  # announce the run to `memopt worker` processes
                pool.open(tracker.run_id)
        if run.state is None:
            _baseline(run, fingerprint)
        while run.state.next_round <= experiment.rounds:
            scorer.check()
            _round(run)
        raising = False
    except BudgetExhausted as e:
        if run.state is None:  # round 0 never finished: nothing to report
            status = "FAILED"
            raise
        stopped, raising = f"budget exhausted: {e}", False
    except StateRepeated as e:  # the round in flight is dropped, as when the budget runs out
        stopped, raising = f"state repeated: {e}", False
    except EvaluationFailed as e:
        status, stopped = "FAILED", str(e)
        if run.state is None:
            raise
        raising = False
    except Exception:
        status = "FAILED"
        raise
    except BaseException:
        status = "KILLED"
        raise
    finally:
        if pool is not None:  # the run's workers exit
            with suppress(Exception):
                pool.close()
        if _attached(tracker):
            with deferred(), suppress(*((TrackingError,) if raising else ())):  # report the error in flight
                summary = _finish(run, status, stopped)
    return summary


def _attached(tracker: Tracker) -> bool:
    try:
        return bool(tracker.run_id)
    except RuntimeError:
        return False


def _guard(seed_system: MemorySystem, seen: list[Conversation]) -> Any:
    """The prompt check every candidate passes: against the seed prompts and the data of every split."""
    from memopt.export.check import PromptGuard, TrainingData

    return PromptGuard(seed_system.name, seed_system.instructions(), TrainingData.of(seen))



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


def _finish(run: OptimizeRun, status: str, stopped: str | None) -> dict[str, Any] | None:
    """The final state (usage included), the summary (with the confirmation), then the end of the run with
    ``status``: `RunEnding`, `RunSummarized`, `RunFinished`.

    What was spent, a dropped round's calls included, stays counted (and billed) after a resume.
    """
    state, experiment, summary = run.state, run.experiment, None
    try:
        if state is None:
            return None
        total = run.scorer.usage()
        state.usage = {meter: asdict(u) for meter, u in run.scorer.usage_by_meter().items()}
        state.lm_calls, state.tokens = total.calls, total.tokens
        run.emit(RunEnding(state))
        summary = summary_of(state, experiment, stopped=stopped, status=status)
        if experiment.confirm is not None and status == "FINISHED":
            summary["confirm"] = _confirm(experiment, run.seed_system.instructions(), state.best_instructions,
                                          run.valset, run.testset)
        run.emit(RunSummarized(summary, state))
        return summary
    except TrackingError:
        status = "FAILED"  # the run's end could not be logged in full: it must not read FINISHED
        raise
    finally:
        run.emit(RunFinished(status, summary))


def _memory(run: OptimizeRun) -> dict[str, Any]:
    """What the next round depends on beyond the records (`OptimizeState.memory`): the optimizer's own (an
    optimizer with a ``memory()`` method), and the calls the scorer keeps for the round's report."""
    remembers = getattr(run.optimizer, "memory", None)
    return {"optimizer": remembers() if remembers is not None else None,
            "scorer": {"last_report_calls": run.scorer.last_report_calls}, "judge": dict(run.judge)}


def _restore(run: OptimizeRun, memory: dict[str, Any]) -> None:
    """Take up a checkpoint's `_memory` (an older checkpoint has none: the run resumes as it did before)."""
    run.scorer.last_report_calls = int((memory.get("scorer") or {}).get("last_report_calls") or 0)
    restore = getattr(run.optimizer, "restore", None)
    if restore is not None and memory.get("optimizer"):
        restore(memory["optimizer"])


def _baseline(run: OptimizeRun, fingerprint: str) -> None:
    """Round 0: the starting prompts scored; the first state."""
    started = time.perf_counter()
    system = run.seed_system
    run.scorer.label = f"round 0/{run.experiment.rounds}"
    with run.round(0, "round-0 (starting prompts)"):
        record = _record(0, run.scorer, system, run.valset, run.testset, None, started)
        record.warnings = [run.judge["warning"]] if run.judge.get("warning") else []
        run.emit(RoundScored(record, None, system, system.instructions(), reported=dict(run.scorer.last_report)))
        with deferred():  # the checkpoint and the end of the round's run go together
            val = float(record.val["f1"])
            run.state = OptimizeState(system.name, 1, system.instructions(), dict(system.knobs), val, 0, val,
                                      system.instructions(), dict(system.knobs), [record], record.lm_calls,
                                      record.tokens, run.tracker.run_id, data=run.data, data_fingerprint=fingerprint,
                                      usage=record.usage, memory=_memory(run))
            run.emit(RoundFinished(record, run.state))
    run.emit(BestChanged(0, run.state.best_val, dict(run.state.best_instructions), dict(run.state.best_knobs)))
    if run.on_round is not None:
        run.on_round(record)


def _round(run: OptimizeRun) -> None:
    """Run one round; raises `BudgetExhausted` or `StateRepeated` (the round is dropped, its run tagged
    ``memopt.stopped``) or `EvaluationFailed` (its run FAILED)."""
    state = run.state
    assert state is not None
    index = state.next_round
    started = time.perf_counter()
    run.scorer.label = f"round {index}/{run.experiment.rounds}"
    current = run.seed_system.with_instructions(state.instructions).with_knobs(**state.knobs)
    before = current.instructions()
    exhausted: BudgetExhausted | StateRepeated | None = None
    improved = False
    with run.round(index):
        try:
            outcome = run.optimizer.step(current, index, trainset=run.trainset, valset=run.valset,
                                         current_val=state.current_val)
        except (BudgetExhausted, StateRepeated) as e:
            why = "budget exhausted" if isinstance(e, BudgetExhausted) else "state repeated"
            run.emit(RoundDropped(index, f"{why}: {e}"))
            exhausted = e
        else:
            instructions, knobs, current_val = state.instructions, state.knobs, state.current_val
            if outcome.accepted:
                instructions = {**state.instructions, **outcome.choice.instructions}
                knobs, current_val = dict(outcome.choice.knobs), outcome.choice.val_f1
                current = run.seed_system.with_instructions(instructions).with_knobs(**knobs)
            record = _record(index, run.scorer, current, run.valset, run.testset, outcome, started, before=before,
                             before_knobs=dict(state.knobs), current_val=state.current_val,
                             min_gain=float(getattr(run.optimizer, "min_gain", 0.0)))
            record.warnings = [run.judge["warning"]] if run.judge.get("warning") else []
            run.emit(RoundScored(record, outcome, current, before, state.records[-1].prompt_versions,
                                 dict(run.scorer.last_report)))
            with deferred():  # the state changes, its checkpoint and the end of the round's run go together
                state.instructions, state.knobs, state.current_val = instructions, knobs, current_val
                state.records.append(record)
                state.lm_calls, state.tokens, state.usage = record.lm_calls, record.tokens, record.usage
                state.memory = _memory(run)
                if outcome.accepted and state.current_val > state.best_val:
                    state.best_round, state.best_val = index, state.current_val
                    state.best_instructions, state.best_knobs = dict(state.instructions), dict(state.knobs)
                    improved = True
                state.next_round = index + 1
                run.emit(RoundFinished(record, state))
    if exhausted is not None:
        raise exhausted
    if improved:
        run.emit(BestChanged(index, state.best_val, dict(state.best_instructions), dict(state.best_knobs)))
    if run.on_round is not None:
        run.on_round(record)
