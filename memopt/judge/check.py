"""Is the judge worth trusting? Its agreement with the metric on cases whose verdict is not in doubt.

A judge that calls every answer correct (a wrong model name, a prompt it cannot follow, a local model too
small for the task) makes every failure vanish: nothing is attributed, nothing is proposed, and a run spends
its budget learning nothing. Before a run trusts its judge, `check_judge` asks it about clear-cut cases:

- from the run's own questions (gold answers that are not abstentions): the gold answer itself (LoCoMo F1 1:
  correct), an empty answer and another question's gold answer sharing no word with it (F1 0: wrong);
- `KNOWN_PAIRS`: a few fixed answers whose verdict anyone would give (a date written another way is correct,
  a different date, a different person or "I don't know" is not).

The judge passes when it agrees on at least `MIN_AGREEMENT` of the cases of each verdict, correct and wrong,
so a judge that says yes (or no) to everything fails however the cases are balanced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memopt.core.errors import one_line
from memopt.judge.metrics import is_abstention, locomo_f1

__all__ = ["Probe", "JudgeCheck", "KNOWN_PAIRS", "MIN_AGREEMENT", "judge_probes", "check_judge", "check_on_cases",
           "disagreement", "GROSS_HIGH", "GROSS_LOW"]

MIN_AGREEMENT = 0.75
PER_KIND = 4  # questions of the data used per kind of probe
GROSS_HIGH, GROSS_LOW = 0.9, 0.2  # a run's judge accuracy and F1 this far apart: the judge is suspect


@dataclass(frozen=True)
class Probe:
    """One case with a verdict not in doubt: the judge should say ``expected``."""

    question: str
    gold: str
    prediction: str
    expected: bool
    kind: str  # exact, empty, unrelated, known


KNOWN_PAIRS = (
    Probe("When did Maya start her new job?", "4 March 2021", "She started on March 4, 2021.", True, "known"),
    Probe("When did Maya start her new job?", "4 March 2021", "In August 2019.", False, "known"),
    Probe("Who gave Leon the old guitar?", "his uncle Pete", "Leon's uncle Pete gave it to him.", True, "known"),
    Probe("Who gave Leon the old guitar?", "his uncle Pete", "His neighbour Sarah.", False, "known"),
    Probe("What instrument does Ines play?", "the cello", "I don't know.", False, "known"),
)


@dataclass
class JudgeCheck:
    """What the judge said about each probe, and whether it passed."""

    probes: list[Probe]
    verdicts: list[bool | None]  # None: the judge call failed
    errors: list[str] = field(default_factory=list)

    def agreement(self, expected: bool) -> float | None:
        """The share of the probes expecting ``expected`` on which the judge agreed (None without such probes)."""
        mine = [v for p, v in zip(self.probes, self.verdicts, strict=True) if p.expected is expected]
        return sum(v is expected for v in mine) / len(mine) if mine else None

    @property
    def passed(self) -> bool:
        """Whether the judge agreed on at least `MIN_AGREEMENT` of the correct and of the wrong answers."""
        return all((a := self.agreement(e)) is not None and a >= MIN_AGREEMENT for e in (True, False))

    def summary(self) -> str:
        """One sentence: the agreement per verdict, and the judge's words on a case it got wrong."""
        right, wrong = self.agreement(True), self.agreement(False)
        text = (f"it agreed with the metric on {right:.0%} of {self._count(True)} clear-cut correct answers and "
                f"{wrong:.0%} of {self._count(False)} clear-cut wrong ones (empty, unrelated, known pairs)")
        missed = next((p for p, v in zip(self.probes, self.verdicts, strict=True) if v is not None
                       and v is not p.expected), None)
        if missed is not None:
            text += (f"; e.g. it called {repr(missed.prediction) if missed.prediction else 'an empty answer'} "
                     f"{'correct' if not missed.expected else 'wrong'} for {missed.question!r} (gold "
                     f"{missed.gold!r})")
        if self.errors:
            text += f"; {len(self.errors)} call(s) failed (first: {self.errors[0]})"
        return text

    def behaviour(self) -> str:
        """What this judge does wrong, and what it would do to a run, in one sentence."""
        right, wrong = self.agreement(True) or 0.0, self.agreement(False) or 0.0
        if right < MIN_AGREEMENT <= wrong:
            return ("it rejects correct answers (it is far stricter than the metric): every answer would look failed, "
                    "so attribution would blame operations for answers that are right")
        if wrong < MIN_AGREEMENT <= right:
            return ("it accepts wrong answers (it is far more lenient than the metric): a judge that agrees with "
                    "everything hides every failure, so nothing would be attributed or improved")
        return ("it disagrees with the metric both ways, on correct and on wrong answers (no better than chance): "
                "its verdicts would point attribution at the wrong cases")

    def _count(self, expected: bool) -> int:
        return sum(p.expected is expected for p in self.probes)


def _words(text: str) -> set[str]:
    return {w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if len(w) > 1}


def judge_probes(cases: Sequence[tuple[str, str]], per_kind: int = PER_KIND) -> list[Probe]:
    """Clear-cut probes from ``(question, gold)`` pairs of the data (see the module docstring), then `KNOWN_PAIRS`."""
    usable = [(q, str(g)) for q, g in cases if str(g).strip() and not is_abstention(str(g))]
    usable = list(dict.fromkeys(usable))[: max(per_kind * 3, 12)]
    probes: list[Probe] = []
    for question, gold in usable[:per_kind]:
        if locomo_f1(gold, gold, 1) == 1.0:
            probes.append(Probe(question, gold, gold, True, "exact"))
    for question, gold in usable[:per_kind]:
        probes.append(Probe(question, gold, "", False, "empty"))
    unrelated = 0
    for question, gold in usable:
        other = next((g for _, g in usable if not _words(g) & _words(gold) and not _words(g) & _words(question)),
                     None)
        if other is not None and locomo_f1(other, gold, 1) == 0.0:
            probes.append(Probe(question, gold, other, False, "unrelated"))
            unrelated += 1
        if unrelated >= per_kind:
            break
    return probes + list(KNOWN_PAIRS)


def check_judge(correct: Callable[[str, str, str], bool], probes: Sequence[Probe], *,
                ask_all: Callable[[Callable[[Probe], bool | None], list[Probe]], list[bool | None]] | None = None
                ) -> JudgeCheck:
    """Ask the judge (its ``correct(question, gold, prediction)``) about every probe; a failed call counts as a
    disagreement and its error is kept. ``ask_all`` maps the asking over the probes (e.g. in parallel)."""
    errors: list[str] = []

    def ask(probe: Probe) -> bool | None:
        try:
            return bool(correct(probe.question, probe.gold, probe.prediction))
        except Exception as e:  # noqa: BLE001 - a judge that cannot answer fails its check, it does not crash it
            errors.append(one_line(e))
            return None

    verdicts = ask_all(ask, list(probes)) if ask_all is not None else [ask(p) for p in probes]
    return JudgeCheck(list(probes), verdicts, errors)


def check_on_cases(correct: Callable[[str, str, str], bool], cases: Sequence[tuple[str, str]], *,
                   workers: int = 1) -> JudgeCheck:
    """`check_judge` on the probes of a run's own ``(question, gold)`` cases, ``workers`` probes at a time."""
    from memopt.core.parallel import map_ordered

    return check_judge(correct, judge_probes(cases),
                       ask_all=lambda ask, items: map_ordered(ask, items, workers=workers))


def disagreement(judge: float | None, f1: float | None, n: int, *, option: str = "--judge-lm") -> str | None:
    """One line when a run's judge accuracy and its F1 disagree grossly (judge at least `GROSS_HIGH` with F1 under
    `GROSS_LOW`, or the reverse) over at least 3 answers, saying what to check; None when they do not."""
    if judge is None or f1 is None or n < 3:
        return None
    if judge >= GROSS_HIGH and f1 < GROSS_LOW:
        how = f"called {judge:.0%} of {n} answers correct while their F1 is {f1:.3f}: it may accept wrong answers"
    elif judge < GROSS_LOW and f1 >= GROSS_HIGH:
        how = f"called only {judge:.0%} of {n} answers correct while their F1 is {f1:.3f}: it may reject right ones"
    else:
        return None
    return (f"the judge {how}; check {option} (the model name, its endpoint, a model able to grade answers) and "
            "read a few judged cases before trusting the judge figure")
