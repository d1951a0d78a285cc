"""Reading instruction text the way a reader of English does: sentences, clauses, quotes and negation.

`read_sentences(text)` splits instructions into sentences (lines, sentence punctuation, bullets; a line
wrapped inside a sentence is joined back) and each sentence into clauses (at ``; : ( ) — –`` and
"but"). Every word token records:

- ``quoted``: it stands between quotes. Quoted text is an example, not an instruction: a negation
  word inside quotes ("say 'I don't know'") negates nothing, but the quoted words still count as
  what the sentence talks about.
- ``scope``: the id of the negation or contrast that covers it (0 = none). A scope opens after
  "not", "n't", "never", "nor", "without", "avoid", "refrain from", "no need to", "no", and the
  contrasts "instead of", "rather than", "as opposed to", "in place of"; it closes at
  punctuation, at a conjunction or subordinator ("but", "if", "when", "unless", "because", "that",
  ...), or at the next negation. A comma closes it unless a short list follows ("do not shorten,
  abbreviate or truncate"). A negation inside a subordinate clause ("if the context does not
  support it say ...") also closes before the next instruction verb; "without" and "no" cover a
  few words only ("no relative dates", but "under no circumstances" to the end of the clause).
  "not only" / "not just" puts what follows in a contrast scope ("every speaker, not only the
  user"), as "over" does after "prefer". "Don't forget to" / "never fail to" negate nothing, and a
  clause ending its subject with "is not allowed", "is unnecessary", "are forbidden", ... negates
  the subject ("guessing is not allowed").
- ``rationale``: it stands in a "because ..." / "since ..." clause, which explains and instructs
  nothing. (Clauses that imagine another setting or plan a later one, "one might ...", "a future version may
  ...", were marked so by a mood module until issue 47; the classifier has learnt them from the corpora.)
- ``condition``: it stands in a condition or exception ("unless ...", "if ...", "when ..."). A cue's
  concept found in the main clause outweighs the same concept in its condition ("do not restrict
  extraction to the user unless only one person speaks": the "only" restricts nothing).

A negation inside a subject or relative clause ("questions the memories cannot answer are ...", "a
fact that does not contradict it should be added") ends at the main clause's finite verb; "not"
before a participle after a noun ("memories not named by the retraction stay") covers the
participle phrase only; "under no circumstances should X, Y or Z be V-ed" reaches past the list's
commas to the verb. A match that reaches past "over" / "than" into a contrast is in the contrast. A sentence with no
word outside quotes (a JSON record such as ``{"id": "0", "text": "..."}``, a quoted example on a line of its own) is
data shown to the model, not an instruction, and is not read.

The reader is split by concern: `memopt.simlm.words` (the units and quotes), `memopt.simlm.clauses`
(sentences, clauses, conditions, rationale), `memopt.simlm.negation` (negation and contrast scopes) and
`memopt.simlm.prohibitions` (predicates that negate their subject, "more than" as "only").

`Clause.find(pattern)` returns the matches of a regular expression over the clause's words (joined
by single spaces, lower case), each with the scope of its first word.
"""

from __future__ import annotations

from functools import lru_cache

from memopt.simlm.clauses import drop_hedges, mark_conditions, mark_rationale, split_clauses, split_sentences
from memopt.simlm.labels import mark_label_negation, mark_literal_replies, restore_gapped_verb
from memopt.simlm.negation import mark_scopes
from memopt.simlm.prohibitions import mark_prohibited_subjects, more_than_as_only, privative_nothing
from memopt.simlm.words import CLAUSE_PUNCT, Clause, Match, Sentence, Word, make_clause, quote_mask, tokens

__all__ = ["Word", "Match", "Clause", "Sentence", "read_sentences", "quote_mask"]


def read_words(sentence: str) -> list[Word]:
    """The words of one sentence with their quotes, negation scopes, rationale and conditions marked."""
    words = privative_nothing(more_than_as_only(drop_hedges(tokens(sentence))))
    words = mark_label_negation(mark_scopes(mark_literal_replies(restore_gapped_verb(words))))
    return mark_conditions(mark_rationale(mark_prohibited_subjects(words)))


@lru_cache(maxsize=8192)
def read_sentences(text: str) -> tuple[Sentence, ...]:
    """The sentences of an instruction text, each read into clauses with quotes, scopes and rationale."""
    out = []
    for raw in split_sentences(text):
        words = read_words(raw)
        if not any(not w.quoted and any(c.isalnum() for c in w.text) for w in words):
            continue  # nothing but quotes (a JSON record, a quoted example line): data, not an instruction
        whole = make_clause([w for w in words if w.text not in CLAUSE_PUNCT])
        out.append(Sentence(tuple(make_clause(c, aside=a) for c, a in split_clauses(words)), whole, raw))
    return tuple(out)
