"""The prompt check: would a person ship this tuned prompt? Run before a candidate is accepted and before export.

Each prompt is compared with its seed (the sentences the seed did not hold are *new*):

- ``secret`` (blocks): the prompt holds a credential of the environment, a password memopt was given, a URI's
  password or a secret-looking token (`memopt.export.credentials`; the message never shows it), seed or not;
- ``injection`` (blocks): a sentence that turns the model against its operator or users: overriding the
  instructions, disclosing the prompt or secrets, sending data out, tools and code, jailbreaks, other users'
  memories, obeying instructions found in the data, smuggled text (`memopt.export.injection`); one the seed holds
  too still blocks (a seed folder is no warrant: it may be the very folder checked), and the message says so;
- ``contradiction`` (blocks): a pair of rules, one of them new, that prescribe different actions for one
  condition with no stated exception or priority (`memopt.export.contradiction`: this module's own reading of
  rules, not SimLM's reader of instructions);
- ``leakage`` (blocks): a new sentence holds the data the run saw that the seed does not hold: a speaker's or
  another proper name, an amount, a count with what it counts, a clock time or duration, a date of the data, a
  training question, a run of ``NGRAM`` words from its turns or questions, or three words only one user's
  conversation uses (`memopt.export.leakage`); or it is copied from the feedback and holds an item of a gold
  answer ("Only watching movies and left out making desserts.", from an observation on the gold "Watching movies,
  making desserts"; abstentions are no one's data): exported, one user's conversation would end up in every user's
  prompt. A gold item outside a copied sentence is not blocked: items such as "two weeks", "a pet" or "7 May 2023"
  are also the words of ordinary rules and examples;
- ``fragment`` (warns): a new sentence without a verb, or copied from the feedback the reflection read;
- ``growth`` (warns): the prompt is more than ``MAX_GROWTH`` longer than its seed.

`PromptGuard` carries the seed prompts and the data of one run, and checks candidates as they are proposed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from memopt.data.model import Conversation
from memopt.export.contradiction import contradictions
from memopt.export.credentials import mask_secrets, secrets_in
from memopt.export.injection import injections
from memopt.export.leakage import NGRAM, DataFacts, leaks, names_in
from memopt.simlm import is_fragment, sentence_spans

__all__ = ["Issue", "CheckReport", "TrainingData", "PromptGuard", "check_prompt", "check_prompts", "gold_items",
           "NGRAM", "MAX_GROWTH", "BLOCKING"]

MAX_GROWTH = 0.25
BLOCKING = frozenset({"secret", "injection", "contradiction", "leakage"})
_SEED_TOO = " (the seed prompt holds it too: a seed is no warrant for it)"
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
        """The issues that block (secrets, injection, contradictions, leakage)."""
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
    """What a run saw that must not end up in a prompt: speaker names, word runs of turns and questions, the items
    of gold answers (as word tuples), and everything else of it a prompt could repeat (`memopt.export.leakage`)."""

    names: frozenset[str]
    ngrams: frozenset[tuple[str, ...]]
    answers: frozenset[tuple[str, ...]] = frozenset()
    facts: DataFacts | None = None

    @classmethod
    def of(cls, conversations: Iterable[Conversation]) -> TrainingData:
        """The names, ``NGRAM``-word runs (every turn and question), gold answer items and the `DataFacts` of these
        conversations."""
        conversations = list(conversations)
        names: set[str] = set()
        grams: set[tuple[str, ...]] = set()
        answers: set[tuple[str, ...]] = set()
        for conv in conversations:
            names.update(n for n in (conv.speaker_a, conv.speaker_b) if n and n.strip())
            texts = [t.text for s in conv.sessions for t in s.turns] + [c.question for c in conv.cases]
            for text in texts:
                grams |= _ngrams(_words(text))
            answers.update(item for case in conv.cases for item in gold_items(case.gold))
        return cls(frozenset(names), frozenset(grams), frozenset(answers), DataFacts.of(conversations))


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


def _old(seed: str | None) -> set[str]:
    """The seed's sentences, normalised, however a reader splits them (a finding in them is not the tuning's)."""
    if seed is None:
        return set()
    from memopt.core.text import sentences

    split = [s.text for s in sentence_spans(seed)]
    split += [s for line in seed.splitlines() for s in sentences(line.strip(" -*•\t"))]
    return {_norm(s) for s in split} | {_norm(line) for line in seed.splitlines()}


def check_prompt(op: str, kind: str, text: str, *, seed: str | None = None, data: TrainingData | None = None,
                 feedback: str = "") -> list[Issue]:
    """The issues of one prompt (operation kind ``kind``) against its seed, the run's data and its feedback."""
    spans = sentence_spans(text)
    old = _old(seed)
    new = [s.text for s in spans if _norm(s.text) not in old]
    issues: list[Issue] = []
    seed_secrets = secrets_in(seed or "")
    for what in secrets_in(text):
        issues.append(Issue(op, "secret", f"the prompt holds {what} (not shown); remove it: prompts are logged and "
                                          f"exported verbatim{_SEED_TOO if what in seed_secrets else ''}"))
    for sentence, what in injections(text):
        issues.append(Issue(op, "injection", f"{what} in {sentence!r}{_SEED_TOO if _norm(sentence) in old else ''}"))
    for first, second, why in contradictions(text):
        if _norm(first) not in old or _norm(second) not in old:
            issues.append(Issue(op, "contradiction", f"{second!r} contradicts {first!r} ({why})"))
    copied = _norm(feedback)
    copies = {sentence for sentence in new if copied and len(_words(sentence)) >= 3 and _norm(sentence) in copied}
    if data is not None:
        seed_text = seed or ""
        seed_words = _words(seed_text)
        seed_grams = _ngrams(seed_words)
        for sentence in new:
            names = names_in(sentence, data.names | (data.facts.names if data.facts else set()),
                             data.facts.common if data.facts else set(), seed=seed_text)
            names = [n for n in names if n in data.names]  # other names of the data: `leaks` reports them
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
            found = leaks(sentence, data.facts, seed=seed_text) if data.facts is not None and not (
                names or runs or golds) else []  # one issue a sentence
            if found:
                issues.append(Issue(op, "leakage", f"{'; '.join(found)} of the data in {sentence!r}"))
    for sentence in new:
        if is_fragment(sentence) and not sentence.rstrip().endswith(":"):
            issues.append(Issue(op, "fragment", f"no verb: {sentence!r}"))
        elif sentence in copies:
            issues.append(Issue(op, "fragment", f"copied from the feedback: {sentence!r}"))
    if seed and len(text) > len(seed) * (1 + MAX_GROWTH):
        issues.append(Issue(op, "growth", f"{len(text)} characters, {len(text) / len(seed) - 1:+.0%} against the "
                                          f"seed's {len(seed)} (more than {MAX_GROWTH:.0%})"))
    return [Issue(i.op, i.kind, mask_secrets(i.message)) for i in issues]


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
        report.notes.append("no data: leakage (names, numbers, dates, word runs of the turns) is not checked")
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
