"""One interface for the judges that grade answers and check what a text holds.

A `Judge` answers three questions: is a predicted answer correct (``correct``), does a text
contain a piece of information (``contains``), and which operation of a serialized trace lost the
information a failed answer needed (``locate``, for the ``all_at_once`` attribution baseline). It
counts the calls it has made (``calls``) and says whether its verdicts are simulated
(``simulated``), so runs can report judge cost and label simulated results.

- `LexicalJudge` applies SimLM's lexical rules directly (no DSPy, no LM): it calls
  `memopt.judge.rules.judge_answer` / ``judge_contains`` / ``judge_locate``, the same functions
  SimLM runs as a judge LM, so the two always agree.
- Named judges are registered with ``@judge("name")`` (or an entry point in the ``memopt.judges`` group, the
  rules of `memopt.registry`); ``lexical`` is memopt's own. A judge spec is such a name or an LM spec.
- `LMJudge` asks any ``dspy.LM`` through ``dspy.Predict`` on the standard signatures
  `JudgeAnswer` / `JudgeContains` / `LocateFault`. Every value is quoted between ``<<<DATA`` and ``DATA>>>``
  (`quote_data`), and the instructions tell the LM the quoted content is data, not instructions.
  An LM error or an unparseable verdict (or an error type outside the taxonomy) raises
  `memopt.core.errors.LMError` naming the LM.

>>> LexicalJudge().correct("When did Caroline adopt Max?", "7 May 2023", "On 7 May 2023.")
True
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memopt.core.errors import LMError, PluginError
from memopt.judge.rules import DATA_CLOSE, DATA_OPEN, judge_answer, judge_contains, judge_locate
from memopt.registry import Registry
from memopt.taxonomy import ERROR_TYPES

if TYPE_CHECKING:
    import dspy

    from memopt.lm.spec import SpecInput

__all__ = ["Judge", "LexicalJudge", "LMJudge", "make_judge", "quote_data", "judge", "judges", "named_judge",
           "JUDGE_GROUP"]

JUDGE_GROUP = "memopt.judges"

_MARKERS = re.compile(re.escape(DATA_OPEN) + "|" + re.escape(DATA_CLOSE))
_DOUBLE_OPEN = re.compile(r"\[(?=\[)")
_DOUBLE_CLOSE = re.compile(r"\](?=\])")
_NO_DIRECTIVES: frozenset[str] = frozenset()


@runtime_checkable
class Judge(Protocol):
    """Grades answers and checks texts; ``calls`` counts the verdicts asked for so far."""

    calls: int
    simulated: bool

    def correct(self, question: str, gold: str, prediction: str) -> bool:
        """Whether ``prediction`` answers ``question`` the way ``gold`` does."""

    def contains(self, information: str, text: str) -> bool:
        """Whether ``text`` states ``information``."""

    def locate(self, question: str, gold: str, trace: str) -> tuple[str, str]:
        """(error type, op id) of the operation in a serialized ``trace`` that lost what ``gold`` needs."""


def quote_data(value: str) -> str:
    """``value`` between the data markers, with any markers or DSPy field brackets inside it defused."""
    inner = _DOUBLE_CLOSE.sub("] ", _DOUBLE_OPEN.sub("[ ", _MARKERS.sub("", value)))
    return f"{DATA_OPEN}\n{inner}\n{DATA_CLOSE}"


class _Counter:
    """Thread-safe call counting shared by the judges."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def _count(self) -> None:
        with self._lock:
            self.calls += 1


class LexicalJudge(_Counter):
    """SimLM's lexical judging rules, applied directly; always agrees with SimLM as judge LM."""

    simulated = True

    def correct(self, question: str, gold: str, prediction: str) -> bool:
        """Whether the prediction holds enough of the gold's content words (abstentions must match)."""
        self._count()
        inputs = {"question": question, "gold_answer": gold, "prediction": prediction}
        return bool(judge_answer(inputs, _NO_DIRECTIVES)["correct"])

    def contains(self, information: str, text: str) -> bool:
        """Whether the text holds enough of the information's content words and all of its dates."""
        self._count()
        return bool(judge_contains({"information": information, "text": text}, _NO_DIRECTIVES)["contains"])

    def locate(self, question: str, gold: str, trace: str) -> tuple[str, str]:
        """The first op whose reads hold the gold and whose writes do not, in SimLM's reading window."""
        self._count()
        found = judge_locate({"question": question, "gold_answer": gold, "trace": trace}, _NO_DIRECTIVES)
        return str(found["error_type"]), str(found["op_id"])


class LMJudge(_Counter):
    """A judge that asks a ``dspy.LM`` (real or SimLM) through the standard judge signatures."""

    def __init__(self, lm: dspy.LM) -> None:
        import dspy

        from memopt.lm.signatures import JudgeAnswer, JudgeContains, LocateFault

        super().__init__()
        self.lm = lm
        self.simulated = str(lm.model).startswith("sim/")
        self._answer = dspy.Predict(JudgeAnswer)
        self._contains = dspy.Predict(JudgeContains)
        self._locate = dspy.Predict(LocateFault)

    def correct(self, question: str, gold: str, prediction: str) -> bool:
        """The LM's verdict on whether the prediction matches the gold answer."""
        return self._verdict(self._answer, "correct", question=question, gold_answer=gold, prediction=prediction)

    def contains(self, information: str, text: str) -> bool:
        """The LM's verdict on whether the text states the information."""
        return self._verdict(self._contains, "contains", information=information, text=text)

    def locate(self, question: str, gold: str, trace: str) -> tuple[str, str]:
        """The LM's (error type, op id) for the faulty operation of the trace (header brackets stripped)."""
        found = self._ask(self._locate, "error_type", question=question, gold_answer=gold, trace=trace)
        if found.error_type not in ERROR_TYPES:
            raise LMError(f"judge LM {self.lm.model!r} returned error type {found.error_type!r}, "
                          f"not one of {', '.join(ERROR_TYPES)}")
        return found.error_type, str(found.op_id).strip().strip("[]")

    def _ask(self, predictor: Any, output: str, **inputs: str) -> Any:
        import dspy

        from memopt.lm.adapter import adapter_scope
        from memopt.lm.build import ask

        self._count()
        quoted = {name: quote_data(value) for name, value in inputs.items()}
        try:
            with dspy.context(lm=self.lm), adapter_scope(self.lm):
                return ask(predictor, lm=self.lm, **quoted)
        except Exception as exc:
            raise LMError(_failure(self.lm.model, output, exc)) from exc

    def _verdict(self, predictor: Any, output: str, **inputs: str) -> bool:
        verdict = getattr(self._ask(predictor, output, **inputs), output)
        if not isinstance(verdict, bool):
            raise LMError(f"judge LM {self.lm.model!r} returned {verdict!r} for {output!r}, not True or False")
        return verdict


def _failure(model: str, output: str, exc: Exception) -> str:
    from dspy.utils.exceptions import AdapterParseError

    detail = next((line.strip() for line in str(exc).splitlines() if line.strip()), "no message")
    if isinstance(exc, AdapterParseError):
        return (f"judge LM {model!r} gave no parseable {output!r} verdict ({detail}); "
                "use a model that follows DSPy's output format")
    return (f"judge LM {model!r} failed on {output!r}: {type(exc).__name__}: {detail}; "
            "check the judge LM spec and that the LM is reachable")


class JudgeFactory(Protocol):
    """Builds a named judge (``seed``, ``callbacks`` and ``cache`` as `make_judge` receives them)."""

    def __call__(self, *, seed: int, callbacks: list[Any] | None, cache: bool) -> Judge: ...


def _adopt(name: str, obj: object) -> JudgeFactory:
    if callable(obj):
        return obj  # type: ignore[return-value]
    raise PluginError(f"judge {name!r}: {obj!r} is not a factory of a Judge (seed=, callbacks=, cache=).")


judges: Registry[JudgeFactory] = Registry("judge", JUDGE_GROUP, "memopt.judge.judges", _adopt)


def judge(name: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Decorator: register a judge factory under ``name``, usable wherever a judge spec is (``--judge-lm NAME``)."""

    def register(factory: JudgeFactory) -> JudgeFactory:
        return judges.register(name, factory, module=getattr(factory, "__module__", None) or "?")

    return register


@judge("lexical")
def lexical(*, seed: int = 0, callbacks: list[Any] | None = None, cache: bool = False) -> Judge:
    """SimLM's lexical rules, called directly (no LM)."""
    return LexicalJudge()


def named_judge(spec: object) -> bool:
    """Whether a judge spec names a registered judge (``lexical``, plug-ins) rather than an LM spec."""
    return isinstance(spec, str) and ":" not in spec and "/" not in spec and spec in judges


def make_judge(spec: SpecInput = "sim", *, seed: int = 0, callbacks: list[Any] | None = None,
               cache: bool = False) -> Judge:
    """A judge from a spec: a registered judge's name (``lexical``: the SimLM judge rules, called directly), else
    `LMJudge` on that LM spec (``callbacks`` and ``cache`` as in `memopt.lm.build.make_lm`)."""
    if named_judge(spec):
        return judges.get(spec)(seed=seed, callbacks=callbacks, cache=cache)  # type: ignore[arg-type]
    from memopt.lm.build import make_lm

    return LMJudge(make_lm(spec, seed=seed, callbacks=callbacks, cache=cache))
