"""Shapes of an eighth and ninth author's systems: staging units a merge consumes (field candidates) beside the
records a search reads; a record of one account next to another account that shares a word of its name; golds
that give one answer in two writings."""

from __future__ import annotations

from memopt.trace.roles import gold_text

from .shapes import Smartcomment, blame_smartcomment

DESKS = "How many desks will Riverside Climbing have from March?"


def _leasing() -> tuple[dict, dict[str, str]]:
    """An office-leasing CRM: ``lease.extract`` writes a field candidate per call (``Candidate:<account>.<field>``,
    ``{"field", "value"}``; a later call's extraction revises the standing candidate), ``lease.merge`` folds it
    into the account's record, which ``lease.lookup`` reads at question time; a purge drops a merged candidate
    from its table. The second merge adds the new total to the stored count (20 → 32). Riverside Bakery, another
    account, shares a word of the asked account's name."""
    g = Smartcomment("leasing")
    ops: dict[str, str] = {}
    g.session("call-1", date="2025-01-10")
    t1 = g.turn("c1", "Omar", "Our office at Riverside Climbing has 12 desks right now.")
    g.op("lease.extract", "extraction")
    desks = g.var("riverside.desks", {"field": "desks", "value": 12}, cls="Candidate", cat="candidate")
    g.edges(t1, desks)
    g.op("lease.merge", "update")
    record = g.var("riverside_climbing", {"company": "Riverside Climbing", "desks": 12}, cls="Account", cat="record")
    g.edges(desks, record)
    t2 = g.turn("c2", "Omar", "Our neighbours at Riverside Bakery renew their lease in May.")
    g.op("lease.extract", "extraction")
    renewal = g.var("riversidebakery.renewal", {"field": "renewal", "value": "May", "account": "Riverside Bakery"},
                    cls="Candidate", cat="candidate")
    g.edges(t2, renewal)
    g.op("lease.merge", "update")
    other = g.var("riverside_bakery", {"company": "Riverside Bakery", "renewal": "May"}, cls="Account", cat="record")
    g.edges(renewal, other)
    g.op("lease.purge", "deletion")  # a merged candidate is purged: candidates are units of their own table
    g.edges(renewal, g.var("purged", "DELETED", cls="Tombstone", cat="marker"))
    g.session("call-2", date="2025-02-03")
    t3 = g.turn("c3", "Omar", "From March we will have 20 desks in total.")
    ops["extract"] = g.op("lease.extract", "extraction")
    total = g.var("riverside.desks", {"field": "desks", "value": 20, "kind": "total"}, cls="Candidate",
                  cat="candidate")
    g.edges([t3, desks], total)  # the extractor revises the account's standing candidate
    ops["merge"] = g.op("lease.merge", "update")
    wrong = g.var("riverside_climbing", {"company": "Riverside Climbing", "desks": 32}, cls="Account", cat="record")
    g.edges([total, record], wrong)
    g.session("qa", date="2025-02-20")
    q = g.question("q1", DESKS)
    g.op("lease.lookup", "retrieval")
    context = g.var("q1", "Riverside Climbing | desks 32", cls="memory_context", cat="memory_context")
    g.edges([q, wrong, other], context)
    g.judge(q, "20", g.answer("q1", context, "32 desks from March."))
    return g.document(), ops


def test_a_merge_that_miscounts_a_staged_field_is_the_update_error():
    """The candidate holding 20 is a staging unit no search reads (a merge consumes it), not the store: the merge
    that wrote 32 from it is blamed, an UpdateError (was: 'the store held it' at the candidate, a RetrievalError;
    and before that the candidate was read as Riverside Bakery's, which shares the word 'Riverside')."""
    doc, ops = _leasing()
    for evidence in (("c3",), ()):
        assert blame_smartcomment(doc, DESKS, "20", evidence) == ("UpdateError", ops["merge"]), evidence


def test_a_gold_in_two_writings_of_one_day_is_one_answer():
    """["August 15, 2026", "2026-08-15"] is one day, not two items the answer needs; different days stay items."""
    assert gold_text(["August 15, 2026", "2026-08-15"]) == "August 15, 2026"
    assert gold_text(["Yes", "yes."]) == "Yes"
    assert gold_text(["August 15, 2026", "2026-09-30"]) == '["August 15, 2026", "2026-09-30"]'
    assert gold_text(["7", "7 Tage"]) == '["7", "7 Tage"]'
