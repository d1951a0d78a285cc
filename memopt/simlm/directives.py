"""SimLM's directive catalogue: how the instructions it is sent change what it does.

SimLM is a simulator. For each operation it performs plain-NLP behaviour, and each *directive* is
one capability an instruction can grant. SimLM reads every sentence of the instructions by the
*concepts* it talks about (`memopt.simlm.concepts`: a relative time expression, every speaker, a
contradiction, ...) and the polarity they stand in (`memopt.simlm.instructions`: negation, contrast,
quotes). Each directive's ``cues`` say which concepts, in which polarity, speak for it (+1) or
against it (-1): "Convert relative dates to calendar dates" speaks for ``resolve_dates``, "Do not
convert relative dates" and "Keep relative dates as they are" against it. When several sentences
speak about the same directive, the last one decides (later instructions refine earlier ones).
A prompt without the directive shows the directive's ``failure``; with it, the ``behaviour``. A few-shot
demonstration whose output shows the behaviour also turns it on (`memopt.simlm.demonstrations`).

What SimLM reads (`directive_stances`) is the *agreement* of those rules with a text classifier trained on every
corpus of instruction sentences SimLM ships (`memopt.simlm.learned`): per sentence, a rule's grant stays on only
where the classifier gives its directive enough probability, the classifier alone turns on a directive it is sure
of, and a rule's "switched off" stands unless the classifier is surer still. `rule_stances` is the rules alone.
The rules are frozen: they change only for a construction no amount of data can teach, with a test of its own.

The reflection step of SimLM (proposing revised instructions) writes directives in the words of
``phrasings``; every phrasing turns on its directive and no other directive of the same operation
(asserted in tests). ``examples_on`` / ``examples_off`` are sentences that do and do not turn it on.

This catalogue is public data (``catalogue.yaml`` beside this module), rendered in docs/simlm.md (``memopt
directives`` prints it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from memopt.simlm.concepts import CONCEPTS
from memopt.simlm.demonstrations import demonstrated
from memopt.simlm.instructions import read_sentences
from memopt.simlm.learned import Classifier, agreement, probabilities, shipped
from memopt.simlm.stance import Cue, sentence_stance

__all__ = ["Cue", "Directive", "CATALOGUE", "IRRELEVANT", "active_directives", "directive_stances",
           "directives_for", "catalogue_table", "classifier", "read_stances", "rule_stances", "sentence_readings",
           "CATALOGUE_SENTENCES"]


@dataclass(frozen=True)
class Directive:
    """One entry of the catalogue."""

    id: str
    operations: tuple[str, ...]
    reads: str
    cues: tuple[Cue, ...]
    failure: str
    behaviour: str
    phrasings: tuple[str, ...]
    examples_on: tuple[str, ...]
    examples_off: tuple[str, ...]
    trade_off: str = ""


def _catalogue() -> tuple[tuple[Directive, ...], tuple[str, ...]]:
    """The catalogue's directives and the tone and format sentences (`IRRELEVANT`), as data in catalogue.yaml: each
    cue there is [sign, carriers, requires] and "negated" for a cue that reads only negated carriers."""
    import yaml

    data = yaml.load(Path(__file__).with_name("catalogue.yaml").read_text(encoding="utf-8"),
                     Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    lists = ("operations", "phrasings", "examples_on", "examples_off")
    return tuple(Directive(**{**d, **{k: tuple(d[k]) for k in lists},
                              "cues": tuple(Cue(sign, tuple(carriers), tuple(requires), bool(negated))
                                            for sign, carriers, requires, *negated in d["cues"])})
                 for d in data["directives"]), tuple(data["irrelevant"])


CATALOGUE, IRRELEVANT = _catalogue()


CATALOGUE_SENTENCES = tuple(
    [(text, d.id) for d in CATALOGUE for text in (*d.phrasings, *d.examples_on)]
    + [(text, "none") for d in CATALOGUE for text in d.examples_off] + [(text, "none") for text in IRRELEVANT])


def directives_for(operation: str) -> tuple[Directive, ...]:
    """The directives that affect one SimLM operation kind."""
    return tuple(d for d in CATALOGUE if operation in d.operations)


def rule_stances(operation: str, instructions: str) -> dict[str, int]:
    """The rules alone: +1 / -1 for each directive of ``operation`` the instructions grant / forbid (the last
    sentence about a directive decides; a demonstration of its behaviour grants it)."""
    directives = directives_for(operation)
    stances = dict.fromkeys((d.id for d in directives), 0)
    for sentence in read_sentences(instructions):
        for d in directives:
            stances[d.id] = sentence_stance(d.cues, sentence) or stances[d.id]
    stances.update((d.id, 1) for d in directives if demonstrated(d.id, instructions))
    return {k: v for k, v in stances.items() if v}


def classifier() -> Classifier:
    """The classifier SimLM reads with: trained on every corpus it ships and on the catalogue's own sentences (its
    phrasings and the sentences it says turn a directive on, as that directive; those it says do not, and
    `IRRELEVANT`, as none)."""
    return shipped(CATALOGUE_SENTENCES)


@lru_cache(maxsize=65536)
def _scores(text: str) -> dict[str, float]:
    return classifier().scores(text)


def sentence_readings(operation: str, instructions: str, model: Classifier | None = None
                      ) -> list[tuple[str, dict[str, int]]]:
    """Each sentence of the instructions with what it says about the directives of ``operation`` (+1 on, -1 off), as
    SimLM reads it with ``model`` as its classifier (default: `classifier`): the agreement of the rules and the
    classifier (`memopt.simlm.learned.agreement`)."""
    directives = directives_for(operation)
    allowed = ("none", *(d.id for d in directives))
    out = []
    for sentence in read_sentences(instructions):
        rules = {d.id: sentence_stance(d.cues, sentence) for d in directives}
        scores = _scores(sentence.text) if model is None else model.scores(sentence.text)
        on = agreement({k: v for k, v in rules.items() if v}, probabilities(scores, allowed),
                       scoped=any(w.scope for w in sentence.whole.words))
        said = {d.id: 1 if d.id in on else -1 if rules[d.id] < 0 else 0 for d in directives}
        out.append((sentence.text, {k: v for k, v in said.items() if v}))
    return out


def read_stances(operation: str, instructions: str, model: Classifier | None = None) -> dict[str, int]:
    """What SimLM reads in the instructions (`sentence_readings`): the last sentence about a directive decides; a
    demonstration of a directive's behaviour grants it."""
    stances: dict[str, int] = {}
    for _, said in sentence_readings(operation, instructions, model):
        stances.update(said)
    stances.update((d.id, 1) for d in directives_for(operation) if demonstrated(d.id, instructions))
    return stances


@lru_cache(maxsize=4096)
def directive_stances(operation: str, instructions: str) -> dict[str, int]:
    """+1 for each directive of ``operation`` the instructions grant, -1 for each they forbid or contradict, as
    SimLM reads them (`read_stances`)."""
    return read_stances(operation, instructions)


@lru_cache(maxsize=4096)
def active_directives(operation: str, instructions: str) -> frozenset[str]:
    """Ids of the directives of ``operation`` that ``instructions`` grant (stance +1)."""
    return frozenset(k for k, v in directive_stances(operation, instructions).items() if v > 0)


def _cell(texts: tuple[str, ...]) -> str:
    return "<br>".join(f"“{t}”" for t in texts).replace("|", "\\|")


def _label(requirement: str) -> str:
    options = []
    for option in requirement.split("|"):
        name = f"`{option.strip('!').rstrip('-').lower()}`"
        name = f"no {name}" if option.startswith("!") else name
        options.append(f"{name} negated" if option.endswith("-") else name)
    return " or ".join(options)


def _rule(cue: Cue) -> str:
    text = " + ".join(_label(c) for c in cue.carriers) + (" negated" if cue.negated_only else "")
    needs = [f"({_label(r)})" if "|" in r else _label(r) for r in cue.requires]
    return f"{text} with {' and '.join(needs)}" if needs else text


def catalogue_table() -> str:
    """The catalogue as Markdown (for docs/simlm.md and `memopt directives`): directives, their cues, concepts."""
    rows = ["| id | operations | reads | turns it on | does not turn it on | without it | with it | trade-off |",
            "|---|---|---|---|---|---|---|---|"]
    for d in CATALOGUE:
        rows.append(f"| `{d.id}` | {', '.join(d.operations)} | {d.reads} | {_cell(d.examples_on)} | "
                    f"{_cell(d.examples_off)} | {d.failure} | {d.behaviour} | {d.trade_off or '—'} |")
    rows += ["", "| id | speaks for it (negated: against it) | speaks against it (negated: for it) |",
             "|---|---|---|"]
    for d in CATALOGUE:
        grant = "<br>".join(_rule(c) for c in d.cues if c.sign > 0 or c.negated_only)
        forbid = "<br>".join(_rule(c) for c in d.cues if c.sign < 0 and not c.negated_only)
        rows.append(f"| `{d.id}` | {grant} | {forbid} |")
    used = sorted({name.strip("!").rstrip("-") for d in CATALOGUE for c in d.cues for r in (*c.carriers, *c.requires)
                   for name in r.split("|")})
    rows += ["", "| concept | what it reads |", "|---|---|"]
    rows += [f"| `{name.lower()}` | {CONCEPTS[name].words.replace('|', chr(92) + '|')} |" for name in used]
    return "\n".join(rows)
