"""A written report: a reflection LM turns each mechanism group into a paragraph, then writes the overall summary.

In the manner of MemTrace's system-level report: the LM reads an overview of the system (the system prior's,
else the operations the graphs declare), then, group by group, the mechanism with its counts, the sentences of the
blamed op's prompt that bear on it and its representative cases (question, expected, given answer, why), and
writes one paragraph; then it reads the groups' titles and paragraphs and writes the summary. Two typed DSPy
signatures, one call per group and one for the summary, on a `dspy.LM` from `memopt.lm.build.make_lm`.

SimLM is a simulator of memory operations and writes no prose, so a simulated spec is refused: without a real
LM the report is the deterministic grouping alone. An LM call that fails ends the writing there: the groups
written so far keep their paragraphs, and the report says why the rest have none (`GroupWriter.error`).
"""

from __future__ import annotations

import time
from typing import Any

from memopt.core.errors import ConfigError, one_line

__all__ = ["GroupWriter", "MAX_CASES"]

MAX_CASES = 8  # cases of a group the LM reads (its representatives first)


def _signatures() -> tuple[type, type]:
    import dspy

    class DescribeMechanism(dspy.Signature):
        """Explain one recurring failure mechanism of an LLM memory system to the engineers who run it: what goes
        wrong, in which operation, what in its prompt lets it happen, and what to change first. One paragraph of
        plain words, no node ids, no invented figures."""

        system_overview: str = dspy.InputField(desc="the memory system and its operations")
        mechanism: str = dspy.InputField(desc="the blamed operation, the error type, what it lost, how many cases")
        prompt_sentences: str = dspy.InputField(desc="sentences of the blamed operation's prompt that bear on it")
        cases: str = dspy.InputField(desc="cases of the group: question, expected answer, given answer, why")
        paragraph: str = dspy.OutputField(desc="the paragraph")

    class SummariseDiagnosis(dspy.Signature):
        """Write the overall summary of a diagnostic report on an LLM memory system: the recurring mechanisms by
        weight, how they relate, and the one change to make first. Three to five sentences of plain words."""

        system_overview: str = dspy.InputField(desc="the memory system and its operations")
        mechanisms: str = dspy.InputField(desc="each group: title, share of the failures, paragraph")
        overall: str = dspy.OutputField(desc="the summary")

    return DescribeMechanism, SummariseDiagnosis


class GroupWriter:
    """Writes ``paragraph`` into each group of a report and its ``summary`` with a real LM (see the module
    docstring)."""

    def __init__(self, spec: Any, *, timeout: float | None = 120.0, cache: bool = False) -> None:
        from memopt.lm.build import make_lm
        from memopt.lm.spec import parse_lm_specs
        from memopt.lm.usage import UsageMeter

        specs = parse_lm_specs(spec)
        if all(s.simulated for s in specs):
            raise ConfigError(f"--lm {specs[0].raw}: SimLM simulates memory operations and writes no prose; pass a "
                              "real LM (openai/gpt-4.1-mini, MODEL@http://host:port/v1) for written paragraphs, or "
                              "leave --lm out for the deterministic report.")
        self.spec = ", ".join(s.raw for s in specs)
        self.meter = UsageMeter()
        self.lm = make_lm(specs, callbacks=[self.meter], timeout=timeout, cache=cache)
        self.seconds = 0.0
        self.error: str | None = None

    @property
    def calls(self) -> int:
        """LM calls made so far."""
        return self.meter.total().calls

    def write(self, report: dict[str, Any]) -> None:
        """Fill in the paragraphs and the summary of ``report`` (in place)."""
        import dspy

        from memopt.lm.build import ask

        describe, summarise = _signatures()
        started = time.perf_counter()
        with dspy.context(lm=self.lm):
            for group in report["groups"]:
                group["paragraph"] = self._ask(dspy.Predict(describe), "paragraph", ask,
                                               system_overview=report["overview"], mechanism=_mechanism(group),
                                               prompt_sentences="\n".join(group["sentences"]) or "(none)",
                                               cases=_cases(group))
                if self.error:
                    break
            if not self.error and report["groups"]:
                lines = [f"- {g['title']} ({g['share']:.0%} of the failures): {g['paragraph'] or ''}"
                         for g in report["groups"]]
                report["summary"] = self._ask(dspy.Predict(summarise), "overall", ask,
                                              system_overview=report["overview"], mechanisms="\n".join(lines))
        self.seconds += time.perf_counter() - started
        report["writer_error"] = self.error

    def _ask(self, predictor: Any, field: str, ask: Any, **inputs: str) -> str | None:
        try:
            text = str(getattr(ask(predictor, lm=self.lm, **inputs), field) or "").strip()
        except Exception as e:  # noqa: BLE001 — the report is still written, saying where the writing stopped
            self.error = f"{self.spec}: {one_line(e)}"
            return None
        return text or None


def _mechanism(group: dict[str, Any]) -> str:
    return (f"{group['title']}: {group['n']} failed cases ({group['share']:.0%}) in {group['conversations']} "
            f"conversation(s); first change suggested: {group['advice']}")


def _cases(group: dict[str, Any]) -> str:
    lines = [f"- Q: {c['question']} | expected: {c['expected']} | answered: {c['prediction']} | why: {c['reason']}"
             for c in group["representatives"][:MAX_CASES]]
    more = group["n"] - len(lines)
    return "\n".join(lines + ([f"({more} more cases like these)"] if more > 0 else []))
