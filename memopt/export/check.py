"""The prompt check: would a person ship this tuned prompt? Run before a candidate is accepted and before export.

Each prompt is compared with its seed (the sentences the seed did not hold are *new*):

- ``contradiction`` (blocks): a pair of sentences, one of them new, that conflict on a directive
  (`memopt.simlm.edits.conflicts`: opposite stances, or a restriction the other rule does not have);
- ``leakage`` (blocks): a new sentence holds a speaker name of the data the run saw, or a run of
  ``NGRAM`` words from its turns or questions, that the seed does not hold; or it is copied from the
  feedback and holds an item of a gold answer ("Only watching movies and left out making desserts.",
  from an observation on the gold "Watching movies, making desserts"; abstentions are no one's data):
  exported, one user's conversation would end up in every user's prompt. A gold item outside a copied
  sentence is not blocked: items such as "two weeks", "a pet" or "7 May 2023" are also the words of
  ordinary rules and examples;
- ``fragment`` (warns): a new sentence without a verb, or copied from the feedback the reflection read;
- ``growth`` (warns): the prompt is more than ``MAX_GROWTH`` longer than its seed.

`PromptGuard` carries the seed prompts and the data of one run, and checks candidates as they are proposed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from memopt.data.model import Conversation
from memopt.simlm import conflicts, is_fragment, sentence_spans

__all__ = ["Issue", "CheckReport", "TrainingData", "PromptGuard", "check_prompt", "check_prompts", "gold_items",
           "NGRAM", "MAX_GROWTH", "BLOCKING"]

NGRAM = 6
MAX_GROWTH = 0.25
BLOCKING = frozenset({"contradiction", "leakage"})
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


@dataclass(frozen=True)
class Issue:
    """One finding: which prompt, what kind (``BLOCKING`` kinds block), and what a person should look at."""

    op: str
    kind: str
    message: str

    @property
    def blocking(self) -> bool:
        """Whether this issue blocks acceptance and export."""
        return self.kind in BLOCKING


@dataclass
class CheckReport:
    """The issues of a set of prompts, and what was checked."""

    pipeline: str
    issues: list[Issue] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def blocking(self) -> list[Issue]:
        """The issues that block (contradictions, leakage)."""
        return [i for i in self.issues if i.blocking]

    def text(self) -> str:
        """The report as plain lines (what `memopt check-prompts` prints)."""
        lines = [f"prompt check of {self.pipeline} ({', '.join(self.checked)}): "
                 f"{len(self.blocking)} blocking, {len(self.issues) - len(self.blocking)} warning(s)"]
        lines += [f"  {'BLOCK' if i.blocking else 'warn '} {i.op} {i.kind}: {i.message}" for i in self.issues]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def _ngrams(words: list[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@dataclass(frozen=True)
class TrainingData:
    """What a run saw that must not end up in a prompt: speaker names, word runs of turns and questions, and the
    items of gold answers (as word tuples)."""

    names: frozenset[str]
    ngrams: frozenset[tuple[str, ...]]
    answers: frozenset[tuple[str, ...]] = frozenset()

    @classmethod
    def of(cls, conversations: Iterable[Conversation]) -> TrainingData:
        """The names, ``NGRAM``-word runs (every turn and question) and gold answer items of these conversations."""
        names: set[str] = set()
        grams: set[tuple[str, ...]] = set()
        answers: set[tuple[str, ...]] = set()
        for conv in conversations:
            names.update(n for n in (conv.speaker_a, conv.speaker_b) if n and n.strip())
            texts = [t.text for s in conv.sessions for t in s.turns] + [c.question for c in conv.cases]
            for text in texts:
                grams |= _ngrams(_words(text))
            answers.update(item for case in conv.cases for item in gold_items(case.gold))
        return cls(frozenset(names), frozenset(grams), frozenset(answers))


def gold_items(gold: str) -> list[tuple[str, ...]]:
    """The items of a gold answer (`memopt.core.text.answer_items`) as word tuples; none for an abstention."""
    from memopt.core.text import answer_items
    from memopt.judge.metrics import is_abstention

    return [] if is_abstention(gold) else [tuple(_words(item)) for item in answer_items(gold)]


def _holds(words: list[str], item: tuple[str, ...]) -> bool:
    """Whether ``item`` occurs in ``words`` as a run of whole words."""
    n = len(item)
    return any(tuple(words[i:i + n]) == item for i in range(len(words) - n + 1))


def _kind(pipeline: str, op: str) -> str:
    from memopt.simlm import operation_kind
    from memopt.systems import system_class

    try:
        description = system_class(pipeline).op_spec(op).description
    except Exception:  # a prompt without an op spec: read its name
        description = ""
    return operation_kind(f"{pipeline}.{op}: {description}") or operation_kind(op) or "answer"


def _norm(sentence: str) -> str:
    return " ".join(_words(sentence))


def check_prompt(op: str, kind: str, text: str, *, seed: str | None = None, data: TrainingData | None = None,
                 feedback: str = "") -> list[Issue]:
    """The issues of one prompt (operation kind ``kind``) against its seed, the run's data and its feedback."""
    spans = sentence_spans(text)
    old = {_norm(s.text) for s in sentence_spans(seed)} if seed is not None else set()
    new = [s.text for s in spans if _norm(s.text) not in old]
    issues: list[Issue] = []
    seen: set[tuple[str, str]] = set()
    for rule in new:
        for other in spans:
            if other.text == rule or (other.text, rule) in seen:
                continue
            found = conflicts(kind, rule, other.text) or conflicts(kind, other.text, rule)
            if found:
                seen.add((rule, other.text))
                issues.append(Issue(op, "contradiction", f"{rule!r} contradicts {other.text!r} "
                                                         f"({', '.join(sorted(set(found)))})"))
    copied = _norm(feedback)
    copies = {sentence for sentence in new if copied and len(_words(sentence)) >= 3 and _norm(sentence) in copied}
    if data is not None:
        seed_text = seed or ""
        seed_words = _words(seed_text)
        seed_grams = _ngrams(seed_words)
        for sentence in new:
            names = sorted(n for n in data.names if re.search(rf"(?<!\w){re.escape(n)}(?!\w)", sentence)
                           and not re.search(rf"(?<!\w){re.escape(n)}(?!\w)", seed_text))
            if names:
                issues.append(Issue(op, "leakage", f"speaker name(s) {', '.join(names)} of the data in {sentence!r}"))
            runs = sorted((_ngrams(_words(sentence)) & data.ngrams) - seed_grams)
            if runs:
                issues.append(Issue(op, "leakage", f"{len(runs)} run(s) of {NGRAM} words from the data's turns or "
                                                   f"questions in {sentence!r} (first: {' '.join(runs[0])!r})"))
            words = _words(sentence)
            golds = sorted(" ".join(item) for item in data.answers
                           if _holds(words, item) and not _holds(seed_words, item)) if sentence in copies else []
            if golds:
                issues.append(Issue(op, "leakage", f"gold answer item(s) {', '.join(map(repr, golds[:3]))} of the "
                                                   f"data in {sentence!r}"))
    for sentence in new:
        if is_fragment(sentence) and not sentence.rstrip().endswith(":"):
            issues.append(Issue(op, "fragment", f"no verb: {sentence!r}"))
        elif sentence in copies:
            issues.append(Issue(op, "fragment", f"copied from the feedback: {sentence!r}"))
    if seed and len(text) > len(seed) * (1 + MAX_GROWTH):
        issues.append(Issue(op, "growth", f"{len(text)} characters, {len(text) / len(seed) - 1:+.0%} against the "
                                          f"seed's {len(seed)} (more than {MAX_GROWTH:.0%})"))
    return issues


def check_prompts(pipeline: str, instructions: Mapping[str, str], *, seed: Mapping[str, str] | None = None,
                  data: TrainingData | None = None, feedback: Mapping[str, str] | None = None) -> CheckReport:
    """Check every prompt of a pipeline (see the module docstring); the report says what was not checked."""
    report = CheckReport(pipeline, checked=sorted(instructions))
    for op, text in sorted(instructions.items()):
        report.issues += check_prompt(op, _kind(pipeline, op), text, seed=(seed or {}).get(op), data=data,
                                      feedback=(feedback or {}).get(op, ""))
    if seed is None:
        report.notes.append("no seed prompts: every sentence is checked as new, growth is not checked")
    if data is None:
        report.notes.append("no data: leakage (speaker names, word runs of the turns) is not checked")
    return report


@dataclass
class PromptGuard:
    """The check of one run's candidates: its seed prompts and the data it saw (every split)."""

    pipeline: str
    seed: dict[str, str]
    data: TrainingData | None = None
    kinds: dict[str, str] = field(default_factory=dict)

    def issues(self, op: str, text: str, feedback: str = "") -> list[Issue]:
        """The issues of one candidate prompt of ``op``."""
        if op not in self.kinds:
            self.kinds[op] = _kind(self.pipeline, op)
        return check_prompt(op, self.kinds[op], text, seed=self.seed.get(op), data=self.data, feedback=feedback)

    def blocks(self, op: str, text: str, feedback: str = "") -> list[Issue]:
        """The blocking issues of one candidate (empty: it may be accepted)."""
        return [i for i in self.issues(op, text, feedback) if i.blocking]
