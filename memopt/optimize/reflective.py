"""The ``memtrace`` optimizer and its feedback controls: reflective prompt rewriting, round by round.

Each round of `ReflectiveOptimizer.step` reads as: evaluate the current system on the train split
(traced) → attribute its failures → build feedback per blamed operation → ask the reflection LM for
``candidates`` revised instructions for the most blamed LLM ops (only those) → select among
candidates and knobs with Optuna on the val split → keep the best if it beats the current val F1.

``feedback`` names a registered feedback kind (`memopt.feedback.kinds`): what the reflection LM reads,
and, by the kind's ``uses_attribution``, which ops are rewritten:

- kinds that use attribution (``attribution``, memopt's; the ``misleading`` and ``empty`` controls)
  rewrite memopt's blamed ops. memopt's own kinds (`ranks_ops`) rank them by the failures the trace
  explains (`memopt.feedback.build.Feedback.explained`), and set aside the ops whose rewrites lost in the
  rounds before until the others had their turn (an accepted round resets this); the controls take
  the ``ops_per_round`` most blamed, as they were measured;
- kinds without (``outcome``, ``score``): like a GEPA user, they take the LLM ops round-robin
  (``ops_per_round`` per round) and the train split is evaluated untraced.

The ``score_only`` optimizer name is this optimizer with ``feedback="score"``. The
``blame_response`` ablation is this optimizer with the ``blame_response`` attribution method
(every failure blamed on the answer op).

After a rejected round the system is unchanged, so every kind reuses the last training run instead
of running it again (``reuse_train``; its failures' attributions are replayed, and the round's
sample attributes new ones): the calls go to attribution and trials.

A blamed tool op has no prompt: its feedback goes to the LLM ops its `OpSpec` says steer it
(``retrieve`` → ``rewrite_query``); one only knobs steer (``truncate``, ``fuse``) is left to the
knob search (``search``).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memopt.attribution.case import FailedCase, failed_cases, is_failed
from memopt.attribution.masked import masked_faults
from memopt.attribution.methods import attribute
from memopt.attribution.replay import AttributionCache, fingerprints, stratified_sample
from memopt.attribution.types import Attribution
from memopt.core.errors import one_line
from memopt.core.parallel import map_ordered
from memopt.data.model import Conversation
from memopt.feedback.build import Feedback
from memopt.feedback.kinds import FeedbackKind, FeedbackRequest, get_kind
from memopt.optimize.propose import Proposal, Reflection, reflect
from memopt.optimize.scoring import Scored, Scorer
from memopt.optimize.select import Choice, select
from memopt.optimize.state import RoundRecord
from memopt.systems.base import MemorySystem
from memopt.trace.replay import replay_lm

__all__ = ["ReflectiveOptimizer", "RoundOutcome", "StateRepeated"]

logger = logging.getLogger(__name__)


class StateRepeated(Exception):
    """A round would see the prompts, knobs and feedback an earlier round saw: it would propose the same
    candidates again, so the run stops (``optimizer.stop_on_repeat``)."""


@dataclass
class RoundOutcome:
    """What one round found and decided."""

    train: Scored
    attributions: list[tuple[FailedCase, Attribution]]
    feedback: dict[str, Feedback]
    candidates: dict[str, list[str]]
    choice: Choice
    accepted: bool
    blamed_ops: dict[str, int] = field(default_factory=dict)
    failures_by_type: dict[str, int] = field(default_factory=dict)
    attribution_errors: int = 0
    rationales: dict[str, str] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    attribution: dict[str, int] = field(default_factory=dict)  # failed, sampled, replayed, attributed,
    # judge_calls, masked
    inputs_digest: str = ""  # of the prompts, knobs and feedback the round saw (``stop_on_repeat`` compares them)
    reflections: list[Reflection] = field(default_factory=list)  # each call of the reflection LM: asked, answered
    reused_train: bool = False  # the train split was not run again (a rejected round before left the system as it was)
    unattributed: dict[str, str] = field(default_factory=dict)  # failures without an attribution: case id → why
    unblamed: str = ""  # why nothing was attributed, when the round's feedback needed attributions and got none


@dataclass
class ReflectiveOptimizer:
    """Reflective rewriting of the blamed operations' prompts (see the module docstring)."""

    scorer: Scorer
    # proposals
    candidates: int = 4
    ops_per_round: int = 2
    feedback: str = "attribution"  # a registered feedback kind (`memopt.feedback.kinds`)
    # attribution
    attribution: str = "memtrace"
    verify: bool = False
    sample: int | None = None  # new attributions per round, stratified (category × blamed-op candidate); None: all
    replay: bool = True  # reuse attributions of byte-identical cases (`memopt.attribution.replay`)
    masked: bool = True  # also probe the answer op behind an upstream fault (`memopt.attribution.masked`)
    flagged: frozenset[str] = frozenset()  # cases labelled as no memory failure: left out (`attribution.labels`)
    # stopping
    stop_on_repeat: bool = False
    # budget: reuse the last training run when the system did not change (a rejected round)
    reuse_train: bool = True
    # selection
    trials: int = 8
    trial_batch: int = 4
    search: dict[str, list[int]] = field(default_factory=dict)
    min_gain: float = 0.0
    # reproducibility
    seed: int = 0
    # the prompt check every candidate passes before it is tried (`memopt.export.check.PromptGuard`)
    guard: Any = None
    trial_pool: Any = None  # hook: a `memopt.optimize.workers.TrialPool` when optimizer.storage is set
    cache: AttributionCache = field(default_factory=AttributionCache)
    seen: dict[str, int] = field(default_factory=dict)  # digest of a round's inputs → the round that saw them
    stale: dict[str, int] = field(default_factory=dict)  # op → rounds in a row its rewrites were tried and lost
    last_train: tuple[str, Scored] | None = field(default=None, repr=False)  # (system digest, its training run)
    trial_calls: int = 0  # the most LM calls one trial configuration has taken: the budget sizes a batch by it
    unattributed: dict[str, str] = field(default_factory=dict)  # the last round's failures left unattributed: why
    last_accepted: bool = True  # whether the last round changed the system (then its training run is not reused)

    def step(self, system: MemorySystem, round_index: int, *, trainset: list[Conversation],
             valset: list[Conversation], current_val: float) -> RoundOutcome:
        """One round: evaluate → attribute → feedback → propose → select (the caller logs and checkpoints)."""
        prior = self.last_train[1] if self.last_train is not None else None
        train = self._evaluate(system, trainset)
        reused = train is prior  # the last training run again: its cases were traced by the round that ran them
        self.unattributed = {}
        blamed, unattributed, spent = self._attribute(train) if self.attributes else ([], 0, {})
        feedback = self._feedback(system, train, blamed, round_index)
        digest = self._check_repeat(system, feedback, round_index)
        reflections = self._propose(system, feedback)
        proposals = {r.op: r.proposals for r in reflections}
        candidates, rationales, rejected = self._check(proposals, feedback)
        choice = self._select(system, candidates, valset, current_val, round_index)
        accepted = bool(choice.instructions or choice.knobs != system.knobs) and choice.val_f1 > current_val + \
            self.min_gain
        counts: dict[str, int] = {}
        types: dict[str, int] = {}
        for _, a in blamed:
            if a.masked_by:  # a second fault of a failure already counted (`RoundOutcome.attribution`)
                continue
            counts[a.operation] = counts.get(a.operation, 0) + 1
            types[a.error_type] = types.get(a.error_type, 0) + 1
        chosen = {op: rationales[(op, text)] for op, text in choice.instructions.items()}
        self._learn(feedback, accepted)
        self.last_accepted = accepted
        why = dict(self.unattributed) if self.attributes else \
            {r.case_id: f"not attributed: feedback {self.feedback} reads no attribution" for r in train.results
             if not r.error and is_failed(r.to_dict())}
        return RoundOutcome(train, blamed, feedback, candidates, choice, accepted, counts, types, unattributed,
                            chosen, rejected, spent, digest, reflections, reused, why,
                            unblamed=_unblamed(train, spent, unattributed) if self.attributes and not blamed else "")

    def resume(self, records: Sequence[RoundRecord]) -> None:
        """Continue after a checkpoint's rounds: the ops they set aside are set aside again (`_learn` replayed on
        each round's rewritten ops and decision), so a resumed run picks the ops an uninterrupted one would, and
        the inputs they saw are remembered (``stop_on_repeat``), so it stops where an uninterrupted one would."""
        for record in records:
            if record.round > 0:
                self._learn(record.feedback, record.accepted)
                if record.inputs_digest:  # checkpoints written before digests were kept have none
                    self.seen.setdefault(record.inputs_digest, record.round)

    def memory(self) -> dict[str, Any]:
        """What the next round's decisions depend on beyond the records, for the checkpoint (`restore` reads it
        back): the attribution cache (replays, strata, masked faults), the trial size the budget sizes batches by,
        and, after a rejected round, the training run the next round reuses."""
        from memopt.trace.io import graph_to_json

        train = None
        if self.last_train is not None and not self.last_accepted:
            key, scored = self.last_train
            train = {"key": key, "results": [r.to_dict() for r in scored.results], "metrics": scored.metrics,
                     "graphs": {sid: graph_to_json(G) for sid, G in scored.graphs.items()}}
        return {"cache": self.cache.to_dict(), "trial_calls": self.trial_calls, "last_train": train}

    def restore(self, memory: dict[str, Any]) -> None:
        """Take up `memory`'s form of a checkpoint (after `resume`): the next round decides as it would have."""
        from memopt.evaluate.run import CaseResult
        from memopt.trace.io import graph_from_json

        self.cache = AttributionCache.from_dict(memory.get("cache") or {})
        self.trial_calls = int(memory.get("trial_calls") or 0)
        train = memory.get("last_train")
        if train:
            graphs = {sid: graph_from_json(G, source="the checkpoint's training run")
                      for sid, G in train["graphs"].items()}
            self.last_train = (train["key"], Scored([CaseResult(**r) for r in train["results"]], train["metrics"],
                                                    graphs))
            self.last_accepted = False

    def _learn(self, rewritten: Iterable[str], accepted: bool) -> None:
        """Remember which rewritten ops lost (`ranks_ops`): an accepted round changes the system, so every op may
        pay again; a rejected one sets its ops aside until the others had their turn."""
        if not self.ranks_ops:
            return
        if accepted:
            self.stale.clear()
        else:
            for op in rewritten:
                self.stale[op] = self.stale.get(op, 0) + 1

    def _check_repeat(self, system: MemorySystem, feedback: dict[str, Feedback], round_index: int) -> str:
        """The digest of the prompts, knobs and feedback this round sees; raise `StateRepeated` when an earlier round
        saw them (``stop_on_repeat``)."""
        key = _digest([system.instructions(), dict(system.knobs), {op: fb.text() for op, fb in feedback.items()}])
        if not self.stop_on_repeat:
            return key
        if key in self.seen:
            raise StateRepeated(f"round {round_index} would see the prompts, knobs and feedback of round "
                                f"{self.seen[key]} (and propose the same candidates)")
        self.seen[key] = round_index
        return key

    # 1. evaluate
    def _evaluate(self, system: MemorySystem, trainset: list[Conversation]) -> Scored:
        """The training run of ``system``: the last one again when the system is unchanged (``reuse_train``: a
        rejected round leaves the prompts and knobs as they were, so its cases are the ones already run and judged)."""
        self.scorer.check()
        key = _digest([system.name, system.instructions(), dict(system.knobs), self.attributes,
                       [c.sample_id for c in trainset]])
        if self.reuse_train and self.last_train is not None and self.last_train[0] == key:
            return self.last_train[1]
        train = self.scorer.score(system, trainset, judged=True, traced=self.attributes, phase="train",
                                  check_errors=True)
        if self.reuse_train:
            self.last_train = (key, train)
        return train

    # 2. attribute
    def _attribute(self, train: Scored) -> tuple[list[tuple[FailedCase, Attribution]], int, dict[str, int]]:
        """The attributed failures (replayed or new, a stratified sample of them), how many could not be attributed
        (a judge call failed), and what it took: failed, sampled, replayed, attributed, judge_calls."""
        by_id = {r.case_id: r.to_dict() for r in train.results}
        # Sorted by case key (the order of the results), so concurrency never reorders attributions or feedback.
        rank = {case_id: i for i, case_id in enumerate(by_id)}
        cases = sorted((case for G in train.graphs.values() for case in failed_cases(G, by_id)
                        if case.case_id not in self.flagged),
                       key=lambda case: (rank.get(case.case_id, len(rank)), case.case_id))
        prints = fingerprints(cases, method=self.attribution, verify=self.verify) if self.replay else {}
        replayed = {c.case_id: found for c in cases if (found := self.cache.get(prints.get(c.case_id, ""))) is not None}
        fresh = stratified_sample([c for c in cases if c.case_id not in replayed], self.sample, self.cache.candidate)
        todo = {c.case_id for c in fresh}
        self.scorer.progress.phase(f"{self.scorer.label} · attribute", len(fresh))

        def blame(case: FailedCase) -> Attribution | None:
            self.scorer.check()  # a round the budget cannot finish stops here, not after its attributions
            try:
                with replay_lm(self.scorer.task_lm):  # a method's replays (verify, counterfactual) are counted
                    return attribute(case, self.scorer.judge, self.attribution, verify=self.verify)
            except Exception as e:  # a judge call that failed fails this case's attribution, never the round
                logger.warning("attribution of %s failed (%s); it is left out of the feedback", case.case_id,
                               one_line(e))
                return None
            finally:
                self.scorer.progress.advance()

        found = map_ordered(blame, fresh, workers=self.scorer.workers)
        firsts = [(case, a) for case, a in zip(fresh, found, strict=True) if a is not None]
        behind = self._behind(firsts)
        new = {case.case_id: (a, behind.get(case.case_id)) for case, a in firsts}
        for case_id, (attribution, second) in new.items():
            self.cache.put(prints.get(case_id), attribution, second)
        kept: list[tuple[FailedCase, Attribution]] = []
        for c in cases:
            if c.case_id in replayed:
                first, second = replayed[c.case_id], self.cache.behind(prints.get(c.case_id, ""))
            elif c.case_id in new:
                first, second = new[c.case_id]
            else:
                continue
            kept += [(c, first), *([second] if second is not None else [])]
        failed_ids = {c.case_id for c in cases}
        self.unattributed = {c.case_id: (f"not in the round's attribution sample (attribution.sample: {self.sample} "
                                         f"new attributions of {len(cases) - len(replayed)} failures)")
                             for c in cases if c.case_id not in replayed and c.case_id not in todo}
        self.unattributed |= {case.case_id: "its attribution failed (a judge call errored)"
                              for case, a in zip(fresh, found, strict=True) if a is None}
        self.unattributed |= {r.case_id: "not attributable: its graph holds no answer step"
                              for r in train.results if r.case_id not in failed_ids and not r.error
                              and is_failed(r.to_dict())}
        spent = {"failed": len(cases), "sampled": len(todo), "replayed": len(replayed), "attributed": len(new),
                 "judge_calls": sum(a.judge_calls + (b[1].judge_calls if b else 0) for a, b in new.values()),
                 "masked": sum(a.masked_by is not None for _, a in kept)}
        return kept, sum(f is None for f in found), spent

    def _behind(self, firsts: list[tuple[FailedCase, Attribution]]) -> dict[str, tuple[FailedCase, Attribution]]:
        """The answer op's faults behind the first faults (``masked``), by case id (`masked_faults`: one replay per
        conversation, conversations in parallel, the budget checked before each)."""
        if not self.masked:
            return {}
        return masked_faults(firsts, self.scorer.judge, lm=self.scorer.task_lm, workers=self.scorer.workers,
                             before=self.scorer.check)

    # 3. feedback
    @property
    def attributes(self) -> bool:
        """Whether this feedback kind needs the round's attributions (to choose the ops, or for its text)."""
        return self.kind.uses_attribution

    @property
    def kind(self) -> FeedbackKind:
        """The registered feedback kind named by ``feedback``."""
        return get_kind(self.feedback)

    def _feedback(self, system: MemorySystem, train: Scored, blamed: list[tuple[FailedCase, Attribution]],
                  round_index: int) -> dict[str, Feedback]:
        chosen: list[str] = []
        if not self.attributes:
            ops = system.llm_operations()
            start = ((round_index - 1) * self.ops_per_round) % len(ops)
            chosen = [ops[(start + i) % len(ops)] for i in range(min(self.ops_per_round, len(ops)))]
        mapping = {spec.name: system.prompt_ops(spec.name) for spec in system.operations}
        found = self.kind(FeedbackRequest(blamed, mapping, chosen, system.prompt_versions(), train.metrics,
                                          train.results, round_index))
        if self.ranks_ops:
            found = dict(sorted(found.items(), key=lambda kv: (self.stale.get(kv[0], 0),
                                                               -int(getattr(kv[1], "explained", 0)))))
        return dict(list(found.items())[: self.ops_per_round])

    @property
    def ranks_ops(self) -> bool:
        """Whether the blamed ops are ranked by what the round learnt (memopt's attribution kinds, not the ``empty``
        and ``misleading`` controls, which keep the plain ranking by blame): ops whose rewrites lost in the rounds
        before come last (`stale`), then the ops whose failures the trace explains most (`Feedback.explained`);
        ties keep the order by blame."""
        kind = self.kind
        return kind.uses_attribution and (not kind.control or kind.rendering_of is not None)

    # 4. propose
    def _propose(self, system: MemorySystem, feedback: dict[str, Feedback]) -> list[Reflection]:
        """One call of the reflection LM per op with feedback, in the order of ``feedback``."""
        current = system.instructions()
        self.scorer.check()

        def propose(op: str) -> Reflection:
            return reflect(self.scorer.reflection_lm, op=op,
                           operation=f"{system.name}.{op}: {system.op_spec(op).description}",
                           current=current[op], feedback=feedback[op].text(), k=self.candidates)

        return map_ordered(propose, list(feedback), workers=self.scorer.concurrency["reflection"])

    # 4b. check: a candidate with a contradiction or leaked training data is never tried
    def _check(self, proposals: dict[str, list[Proposal]], feedback: dict[str, Feedback]
               ) -> tuple[dict[str, list[str]], dict[tuple[str, str], str], list[str]]:
        candidates: dict[str, list[str]] = {}
        rationales: dict[tuple[str, str], str] = {}
        rejected: list[str] = []
        for op, found in proposals.items():
            candidates[op] = []
            for proposal in found:
                blocked = self.guard.blocks(op, proposal.text, feedback[op].text()) if self.guard else []
                if blocked:
                    rejected += [f"{op}: {issue.kind}: {issue.message}" for issue in blocked]
                    continue
                candidates[op].append(proposal.text)
                rationales[(op, proposal.text)] = proposal.rationale
        return candidates, rationales, rejected

    # 5. select
    def _select(self, system: MemorySystem, candidates: dict[str, list[str]], valset: list[Conversation],
                current_val: float, round_index: int) -> Choice:
        def score(instructions: dict[str, str], knobs: dict[str, int]) -> float | None:
            trial = system.with_instructions(instructions).with_knobs(**knobs)
            metrics = self.scorer.score(trial, valset, judged=False).metrics
            return None if self.scorer.errored(metrics) else float(metrics["f1"])

        cases = sum(len(c.cases) for c in valset)
        name = ""
        last = {"calls": 0, "configurations": 0}  # the batch before: calls when it started, configurations it scored

        def batch(size: int, first: int) -> int:
            """How many trials the next batch may ask: as many as the budget left pays for at the dearest trial yet."""
            nonlocal name
            self.scorer.check()
            calls = self.scorer.usage().calls
            if last["configurations"]:
                per = -(-(calls - last["calls"]) // last["configurations"])
                self.trial_calls = max(self.trial_calls, per)
            left = self.scorer.budget - calls - self.scorer.last_report_calls
            size = min(size, left // max(self.trial_calls, cases, 1))
            last.update(calls=calls, configurations=0)
            if size >= 1:
                name = f"{self.scorer.label} · trials {first}–{first + size - 1} of {self.trials}"
                self.scorer.progress.phase(name, size * cases)
            return size

        def scoring(configurations: int) -> None:  # the batch's new configurations: the phase's fixed denominator
            last["configurations"] = configurations
            self.scorer.progress.phase(name, configurations * cases)

        score_many = None
        if self.trial_pool is not None:  # hook: memopt worker processes score the trials (memopt.optimize.workers)
            score_many = self.trial_pool.scorer_for(system, round_index, self.scorer, cases)
        return select(candidates, self.search, dict(system.knobs), score, current_f1=current_val,
                      trials=self.trials, seed=self.seed + round_index, batch=self.trial_batch,
                      workers=self.trial_batch if self.scorer.workers > 1 else 1, on_batch=batch, on_scoring=scoring,
                      score_many=score_many)

    def describe(self) -> dict[str, Any]:
        """The optimizer's configuration, for logging."""
        return {"optimizer": "memtrace", "feedback": self.feedback,
                "ops_chosen_by": ("attribution, explained failures first, ops that lost last" if self.ranks_ops else
                                  "attribution" if self.attributes else "round-robin"),
                "attribution": self.attribution, "candidates": self.candidates, "ops_per_round": self.ops_per_round,
                "trials": self.trials, "trial_batch": self.trial_batch, "search": self.search,
                "min_gain": self.min_gain, "verify": self.verify, "sample": self.sample, "replay": self.replay,
                "stop_on_repeat": self.stop_on_repeat, "reuse_train": self.reuse_train}


def _unblamed(train: Scored, spent: dict[str, int], unattributed: int) -> str:
    """Why a round that needed attributions has none, in words a person can act on."""
    metrics, failed = train.metrics, spent.get("failed", 0)
    judge, f1, n = metrics.get("judge"), metrics.get("f1"), metrics.get("n", len(train.results))
    if failed == 0 and judge is not None and f1 is not None and judge >= 0.999 > f1:
        return (f"nothing to attribute: the judge called all {n} train answers correct while their F1 is "
                f"{f1:.3f}; a judge that agrees with everything hides every failure (check lm.judge)")
    if failed == 0:
        return f"nothing to attribute: no train answer failed ({n} answers, F1 {f1 if f1 is None else round(f1, 3)})"
    if unattributed:
        return (f"nothing attributed: the attribution of {unattributed} of {failed} failed train answers failed "
                "(their judge calls errored; see the warnings above)")
    return f"nothing attributed: none of the {failed} failed train answers was sampled or could be blamed on an op"


def _digest(value: Any) -> str:
    """SHA-256 of ``value`` as canonical JSON: the identity of a round's inputs or of a training run."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode("utf-8")).hexdigest()
