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

This catalogue is public and is rendered in docs/simlm.md (``memopt directives`` prints it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

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


CATALOGUE: tuple[Directive, ...] = (
    Directive(
        id="resolve_dates",
        operations=("extract", "summarize", "answer"),
        reads="a relative time expression (or a date) with a conversion ('convert', 'resolve', 'work out') "
        "or an absolute target ('absolute', 'the actual calendar date'); against it: keeping them as they are "
        "('keep / leave ... as written', 'must stay relative') or a negated conversion",
        cues=(
            Cue(+1, ("CONVERT",), ("RELATIVE",)),
            Cue(+1, ("RESOLVE",), ("DATE|RELATIVE",)),
            Cue(+1, ("CALCULATE",), ("RELATIVE|ABSOLUTE|ANCHOR", "RELATIVE|ABSOLUTE|DATE")),
            Cue(+1, ("ABSOLUTE",), ("DATE|RELATIVE",)),
            Cue(-1, ("AS_IS",), ("RELATIVE",)),
            Cue(-1, ("RELATIVE",), negated_only=True),
            Cue(+1, ("RELATIVE",), ("ABSOLUTE",)),
        ),
        failure="relative dates ('yesterday', 'last week', 'this month') are kept as written, with no date",
        behaviour="relative dates are rewritten against the session date ('on 7 May 2023', "
        "'the week before 9 June 2023'); on answer, against the date of the context item",
        phrasings=(
            "Resolve relative dates such as 'yesterday', 'last week' or 'this month' into absolute dates "
            "using the session date.",
            "Never leave a time reference relative: rewrite words like 'yesterday' or 'last month' as "
            "absolute calendar dates computed from the date of the session.",
            "When something is said to have happened 'yesterday' or 'last week', convert that relative "
            "time into the actual date, counting from when the conversation took place.",
            "Anchor every event in time: state the actual date instead of relative words, based on the "
            "date each session or memory carries.",
        ),
        examples_on=("Turn 'yesterday' or 'last Friday' into the calendar date, counting from the session date.",
                     "Dates must be absolute, never relative."),
        examples_off=("Do not resolve relative dates.", "Keep time expressions such as 'last week' as they are.",
                      "Sort the memories by date."),
    ),
    Directive(
        id="all_participants",
        operations=("extract",),
        reads="every speaker ('both speakers', 'each participant'; 'everyone' with what they say) or the "
        "other speaker with what they say; against it: a restriction to one speaker ('only the user', 'focus on "
        "the user') or leaving the other one out ('ignore the second speaker')",
        cues=(
            Cue(-1, ("RESTRICT", "ONE_PARTY")),
            Cue(-1, ("IGNORE",), ("OTHER_PARTY|ALL_PARTIES|ROLES",)),
            Cue(+1, ("ALL_PARTIES",)),
            Cue(+1, ("ROLES",), ("INFO|WRITE",)),
            Cue(+1, ("EVERYONE",), ("INFO|USE|WRITE",)),
            Cue(+1, ("OTHER_PARTY",), ("INFO",)),
        ),
        failure="only the first speaker's facts are kept (the 'user' of Mem0's default extraction); "
        "what the other speaker says about themselves is dropped",
        behaviour="facts of every speaker are kept, each attributed to the person who said it",
        phrasings=(
            "Extract facts about every participant in the conversation, not only the user.",
            "Cover both speakers: anything either person says about themselves must be recorded and "
            "attributed to the person who said it.",
            "Record personal information for each speaker in the dialogue, not just the user.",
        ),
        examples_on=("Both people in the conversation count: store what either of them says about themselves.",
                     "Do not skip the second speaker's facts."),
        examples_off=("Only extract facts about the user.", "Ignore what the other speaker says.",
                      "Return the facts as a list of strings."),
    ),
    Directive(
        id="keep_details",
        operations=("extract", "summarize"),
        reads="keeping specific details (names, numbers, places, 'every detail', 'exactly as said', 'in full') "
        "or a negated shortening or omission ('do not shorten', 'never drop names'); against it: shortening, "
        "dropping details, or only the gist",
        cues=(
            Cue(-1, ("SHORTEN",)),
            Cue(-1, ("OMIT",), ("DETAIL|DETAILS",)),
            Cue(+1, ("PRESERVE",), ("DETAIL|EXACT_DETAIL|WHOLE_FACT",)),
            Cue(+1, ("WRITE",), ("EXACT_DETAIL|WHOLE_FACT",)),
            Cue(+1, ("EXACT_DETAIL",)),
            Cue(+1, ("DETAILED_FACT",)),
            Cue(+1, ("TOO_VAGUE",)),
            Cue(-1, ("GIST",)),
        ),
        failure="long sentences are cut to their first clause, losing names, numbers and places",
        behaviour="whole sentences are kept with their names, numbers and places",
        phrasings=(
            "Keep specific details: names, numbers, places and titles must appear exactly as said.",
            "Preserve every concrete detail, such as the names of people and pets, places and numbers; "
            "do not shorten facts.",
            "Include the full specifics of each fact (who, what, where, and any names or quantities) "
            "rather than a shortened version.",
        ),
        examples_on=("Never drop the names of people, pets or places from a fact.",
                     "Write each fact in full, with every number it mentions."),
        examples_off=("Shorten every fact to a few words.", "Leave out the specifics.",
                      "Remember significant personal information like names and relationships."),
        trade_off="the facts are as long as the data's sentences: on long, multi-clause sentences every extraction "
        "and update reply costs more output tokens (and money with a priced LM); on short single-clause sentences "
        "it changes nothing",
    ),
    Directive(
        id="update_on_contradiction",
        operations=("update",),
        reads="an update restricted to a contradiction ('update only when it contradicts', 'unless it "
        "conflicts'), adding when the facts are compatible ('can both be true', 'does not contradict'), or a "
        "negated overwrite of compatible information; against it: updating on a shared topic, always, or by "
        "preference",
        cues=(
            Cue(-1, ("OVERWRITE",), ("UNLESS", "CONFLICT")),
            Cue(+1, ("KEEP_OLD",), ("UNLESS", "CONFLICT")),
            Cue(+1, ("ONLY_IF",), ("OVERWRITE", "CONFLICT")),
            Cue(+1, ("OVERWRITE", "CONFLICT")),
            Cue(+1, ("ADD",), ("COMPATIBLE|CONFLICT-|OTHERWISE",)),
            Cue(-1, ("OVERWRITE",), ("COMPATIBLE",)),
            Cue(+1, ("KEEP_BOTH",)),
            Cue(-1, ("OVERWRITE",), ("SAME_TOPIC|ALWAYS|PREFER",)),
            Cue(+1, ("ADD",), ("SAME_TOPIC",)),
            Cue(+1, ("ADD",), ("OVERWRITE-",)),
        ),
        failure="a new fact that overlaps an old memory on subject and topic overwrites it (UPDATE), "
        "losing compatible information",
        behaviour="UPDATE only when the new fact contradicts the memory (it signals a change: "
        "'moved', 'now', 'no longer', 'switched', 'instead'); compatible facts are ADDed",
        phrasings=(
            "Replace an existing memory only when the new fact contradicts it; compatible information "
            "must be added as a new memory.",
            "Use UPDATE only if the new fact directly conflicts with the stored one; otherwise ADD it and "
            "keep the old memory.",
            "Do not overwrite a memory with a fact that can both be true at the same time; keep both.",
        ),
        examples_on=("Overwrite a memory only if the new fact makes it false.",
                     "When the new fact does not contradict the memory, add it as a new one."),
        examples_off=("Update a memory whenever the new fact is about the same topic.",
                      "Always merge related facts into one memory.", "Return every memory with its id."),
    ),
    Directive(
        id="delete_only_explicit",
        operations=("update",),
        reads="a delete restricted to what is explicitly retracted ('delete only the memory it retracts', "
        "'unless explicitly withdrawn'), sparing the other memories ('leave the rest untouched', 'never delete "
        "other memories', 'when in doubt, keep it') or a shared topic denied as a ground ('a shared keyword is not "
        "a match'); against it: deleting related or all memories, or a negated restriction",
        cues=(
            Cue(+1, ("LIMIT",), ("DELETE",)),
            Cue(-1, ("DELETE",), ("UNLESS", "EXPLICIT|RETRACTION")),
            Cue(+1, ("SPARE", "OTHER_MEMORIES"), ("DELETE|RETRACTION",)),
            Cue(+1, ("ONLY_THAT",), ("DELETE", "THAT_ONE|RETRACTION|EXPLICIT")),
            Cue(-1, ("DELETE", "OTHER_MEMORIES")),
            Cue(-1, ("SAME_TOPIC",), ("DELETE",), negated_only=True),
            Cue(-1, ("DELETE",), ("SAME_TOPIC",)),
            Cue(+1, ("SPARE",), ("DOUBT", "DELETE|RETRACTION")),
            Cue(+1, ("EXPLICIT", "DELETE"), ("RETRACTION|CONFLICT|SAYS",)),
        ),
        failure="a negated fact ('no longer', 'quit', 'stopped') deletes every memory of the same person "
        "that shares a topic word with it",
        behaviour="DELETE only the memory the retraction names (same person and same object); other "
        "memories stay",
        phrasings=(
            "Delete a memory only when the new fact explicitly retracts that same memory; never delete "
            "other memories about the person.",
            "Only remove the single memory that a statement explicitly says is no longer true.",
            "A retraction must be explicit and about the same memory: delete that one only.",
        ),
        examples_on=("Remove a memory only if a new fact clearly withdraws it.",
                     "When someone quits one hobby, leave their other memories untouched."),
        examples_off=("Delete every memory related to a retracted fact.",
                      "Delete a memory if the new fact says it is no longer the case."),
    ),
    Directive(
        id="expand_query",
        operations=("rewrite_query",),
        reads="widening the query ('expand', 'broaden') or adding other words ('synonyms', 'related terms', "
        "'a keyword query'); against it: the question as it is ('verbatim', 'close to the original wording')",
        cues=(
            Cue(+1, ("EXPAND",), ("QUERY|TERMS",)),
            Cue(+1, ("INCLUDE", "TERMS")),
            Cue(-1, ("REMOVE",), ("TERMS",)),
            Cue(+1, ("KEYWORDS",)),
            Cue(+1, ("TERMS",)),
            Cue(-1, ("VERBATIM",)),
        ),
        failure="the query is the question verbatim",
        behaviour="the query holds the names and key nouns of the question and their related terms",
        phrasings=(
            "Expand the query with the names and key nouns of the question, plus closely related words.",
            "Add synonyms and related terms for the key nouns, and keep every person's name.",
            "Rewrite the question as a keyword query: the people named, the important nouns and their "
            "common synonyms.",
        ),
        examples_on=("Broaden the search with words that mean the same as the question's nouns.",
                     "Don't just repeat the question: add related terms."),
        examples_off=("Keep it close to the original wording.", "Do not add synonyms to the query.",
                      "Write the query in lower case."),
        trade_off="the related terms match other people's facts on the same topic: where the evidence is told in "
        "the question's own words, they rank distractors above it at a small `top_k`; where it is paraphrased "
        "('puppy' for 'pet'), they find it",
    ),
    Directive(
        id="combine_all",
        operations=("answer",),
        reads="combining context items ('combine', 'aggregate', 'merge', 'pull together') or using all of "
        "them ('use every relevant memory', 'list all matching items'); against it: one item ('the single best "
        "match', 'only the top memory')",
        cues=(
            Cue(+1, ("COMBINE",), ("ITEM|ALL_ITEMS",)),
            Cue(+1, ("USE", "ALL_ITEMS")),
            Cue(-1, ("STOP_AT",), ("ONE_ITEM",)),
            Cue(+1, ("BEYOND",), ("ONE_ITEM",)),
            Cue(-1, ("USE", "ONE_ITEM")),
            Cue(-1, ("IGNORE",), ("RELEVANT_ITEMS",)),
            Cue(-1, ("ONE_ITEM",), ("ONLY",)),
        ),
        failure="the answer is taken from the single best-overlapping context item",
        behaviour="the answer combines every relevant context item",
        phrasings=(
            "Combine all relevant memories into the answer, not just the single best match.",
            "If several context items are relevant, aggregate all of them and list every matching item.",
            "Questions may need multiple pieces of information: use every relevant entry in the context.",
        ),
        examples_on=("Pull together every memory that bears on the question.",
                     "Don't stop at the best-matching memory; include the other relevant ones too."),
        examples_off=("Answer from the single best-matching memory.", "Do not merge memories.",
                      "Look for direct evidence in the memories."),
        trade_off="items that overlap the question almost as well as the best are answered too: a multi-hop or "
        "list question gains the items it needs, a single-hop question whose context holds a near match (another "
        "pet, an earlier job) gets an extra, wrong span",
    ),
    Directive(
        id="abstain",
        operations=("answer",),
        reads="abstaining ('abstain', 'decline', 'admit') from an answer the context does not hold (not refusing a "
        "request for its topic) or saying it is not known (\"say 'Not mentioned'\", "
        "\"reply 'I don't know'\", 'say so'), or a negated guess ('never guess', 'do not make up an answer'); "
        "against it: guessing, always answering, or a negated abstention",
        cues=(
            Cue(+1, ("ABSTAIN",), ("ANSWER|UNSUPPORTED|ITEM|GUESS|SAY_UNKNOWN|KNOWING",)),
            Cue(+1, ("SAY_UNKNOWN",)),
            Cue(-1, ("GUESS",)),
            Cue(-1, ("ALWAYS_ANSWER",)),
            Cue(-1, ("ANSWER",), ("UNSUPPORTED", "!UNKNOWN_REPLY")),
        ),
        failure="SimLM always answers, from the closest context item, even when nothing supports it",
        behaviour="'Not mentioned' when no context item is about the person and topic asked",
        phrasings=(
            "If the context does not support an answer, reply exactly 'Not mentioned'.",
            "Abstain when the memories do not contain the answer: say 'Not mentioned' rather than "
            "guessing.",
            "Never guess: when no context item is about the person and topic asked, the question cannot "
            "be answered.",
        ),
        examples_on=("If you don't know the answer, just say that you don't know; don't try to make up an answer.",
                     "When nothing in the memories is about the question, answer 'Not mentioned'."),
        examples_off=("Always give an answer, never say it is not mentioned.", "Make your best guess when unsure.",
                      "Answer briefly, in a few words."),
        trade_off="an abstaining reader accepts as support only an item with the question's own words (its "
        "names and another word of its topic; a related word does not count): it gains where questions presume "
        "what was never said, and loses the answers whose evidence is paraphrased ('puppy' for 'pet')",
    ),
)

IRRELEVANT: tuple[str, ...] = (
    "Write in a neutral, professional tone.",
    "Use complete sentences and correct grammar.",
    "Think carefully before responding.",
    "Be concise and avoid repetition.",
    "Double-check the output format before answering.",
)


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
