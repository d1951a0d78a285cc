"""SimLM's directive catalogue: how the instructions it is sent change what it does.

SimLM is a simulator. For each operation it performs plain-NLP behaviour, and each *directive* is
one sentence-level capability an instruction can grant. An instruction "has" a directive when any
of the directive's trigger patterns matches it (case-insensitive). A prompt without the directive
shows the directive's ``failure``; with it, SimLM shows the ``behaviour``.

The reflection step of SimLM (proposing revised instructions) writes directives in the words of
``phrasings``; every phrasing matches a trigger of its directive and of no other directive of the
same operation (asserted in tests). ``symptoms`` are the cues in feedback text that make the
reflection step pick this directive.

This table is public and is rendered in the README (``memopt directives`` prints it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

__all__ = ["Directive", "CATALOGUE", "IRRELEVANT", "active_directives", "directives_for", "catalogue_table"]


@dataclass(frozen=True)
class Directive:
    """One entry of the catalogue."""

    id: str
    operations: tuple[str, ...]
    triggers: tuple[str, ...]
    failure: str
    behaviour: str
    phrasings: tuple[str, ...]
    symptoms: tuple[str, ...]

    def present(self, instructions: str) -> bool:
        """Whether the instruction text triggers this directive."""
        return any(p.search(instructions) for p in _compiled(self.triggers))


@cache
def _compiled(triggers: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(t, re.IGNORECASE) for t in triggers)


CATALOGUE: tuple[Directive, ...] = (
    Directive(
        id="resolve_dates",
        operations=("extract", "summarize", "answer"),
        triggers=(
            r"\babsolute\b[^.]{0,40}\bdates?\b",
            r"\bactual (calendar )?dates?\b",
            r"\bresolve\b[^.]{0,60}\b(dates?|time)\b",
            r"\b(convert|rewrite|turn)\b[^.]{0,40}\brelative\b[^.]{0,30}\b(dates?|time)",
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
        symptoms=("when did", "when is", "date", "yesterday", "last week", "last month", "relative",
                  "temporal", "ago"),
    ),
    Directive(
        id="all_participants",
        operations=("extract",),
        triggers=(
            r"\b(every|each|all|both)\b[^.]{0,30}\b(participants?|speakers?|persons|people)\b",
            r"\bnot (just|only) (about )?the user\b",
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
        symptoms=("speaker", "participant", "other person", "never extracted", "no fact mentions",
                  "not only the user"),
    ),
    Directive(
        id="keep_details",
        operations=("extract", "summarize"),
        triggers=(
            r"\b(keep|preserve|retain|include)\b[^.]{0,50}\b(details|specifics|names|numbers|places)\b",
            r"\bdo not (shorten|abbreviate|truncate)\b",
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
        symptoms=("detail", "name", "number", "place", "shortened", "cut", "truncated", "lost", "where",
                  "which", "what is the name"),
    ),
    Directive(
        id="update_on_contradiction",
        operations=("update",),
        triggers=(
            r"\bonly\b[^.]{0,60}\b(contradicts?|conflicts?)\b",
            r"\b(contradicts?|conflicts?)\b[^.]{0,60}\botherwise\b[^.]{0,20}\badd\b",
            r"\bboth (be|remain|stay) true\b",
            r"\bcompatible\b",
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
        symptoms=("updateerror", "overwr", "update", "replaced", "degraded", "compatible", "both"),
    ),
    Directive(
        id="delete_only_explicit",
        operations=("update",),
        triggers=(
            r"\bdelete\b[^.]{0,60}\bonly\b",
            r"\bonly\b[^.]{0,40}\b(delete|remove)",
            r"\bexplicit(ly)?\b[^.]{0,40}\b(retract|retraction|withdraw|no longer true)",
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
        symptoms=("deletionerror", "delet", "removed", "retract", "no longer", "quit"),
    ),
    Directive(
        id="expand_query",
        operations=("rewrite_query",),
        triggers=(
            r"\bexpand\b",
            r"\b(add|include)\b[^.]{0,40}\b(synonyms|related (terms|words)|key nouns)\b",
            r"\bkeyword query\b",
        ),
        failure="the query is the question verbatim",
        behaviour="the query holds the names and key nouns of the question and their related terms",
        phrasings=(
            "Expand the query with the names and key nouns of the question, plus closely related words.",
            "Add synonyms and related terms for the key nouns, and keep every person's name.",
            "Rewrite the question as a keyword query: the people named, the important nouns and their "
            "common synonyms.",
        ),
        symptoms=("retrievalerror", "retriev", "not in the retrieved", "missed", "search", "query"),
    ),
    Directive(
        id="combine_all",
        operations=("answer",),
        triggers=(
            r"\b(combine|aggregate|merge|synthesi[sz]e)\b[^.]{0,60}\b(all|every|multiple|several)\b",
            r"\b(all|every)\b[^.]{0,30}\brelevant\b[^.]{0,30}\b(memories|items|context|pieces|entries)\b",
            r"\bnot (just|only) the (first|top|single|best)\b",
        ),
        failure="the answer is taken from the single best-overlapping context item",
        behaviour="the answer combines every relevant context item",
        phrasings=(
            "Combine all relevant memories into the answer, not just the single best match.",
            "If several context items are relevant, aggregate all of them and list every matching item.",
            "Questions may need multiple pieces of information: use every relevant entry in the context.",
        ),
        symptoms=("multi-hop", "several", "multiple", "partial", "all of", " and ", "list", "both"),
    ),
    Directive(
        id="abstain",
        operations=("answer",),
        triggers=(
            r"\bnot mentioned\b",
            r"\babstain\b",
            r"\b(do not|don't|never) guess\b",
            r"\bcannot be answered\b",
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
        symptoms=("adversarial", "not mentioned", "abstain", "unanswerable", "hallucinat", "guess"),
    ),
)

IRRELEVANT: tuple[str, ...] = (
    "Write in a neutral, professional tone.",
    "Use complete sentences and correct grammar.",
    "Think carefully before responding.",
    "Be concise and avoid repetition.",
    "Double-check the output format before answering.",
)


def directives_for(operation: str) -> tuple[Directive, ...]:
    """The directives that affect one SimLM operation kind."""
    return tuple(d for d in CATALOGUE if operation in d.operations)


@lru_cache(maxsize=4096)
def active_directives(operation: str, instructions: str) -> frozenset[str]:
    """Ids of the directives of ``operation`` that ``instructions`` triggers."""
    return frozenset(d.id for d in directives_for(operation) if d.present(instructions))


def catalogue_table() -> str:
    """The catalogue as a Markdown table (for the README and `memopt lm directives`)."""
    rows = ["| id | operations | triggered by (regex, any) | without it | with it |", "|---|---|---|---|---|"]
    for d in CATALOGUE:
        triggers = "<br>".join(f"`{t.replace('|', chr(92) + '|')}`" for t in d.triggers)
        rows.append(f"| `{d.id}` | {', '.join(d.operations)} | {triggers} | {d.failure} | {d.behaviour} |")
    return "\n".join(rows)
