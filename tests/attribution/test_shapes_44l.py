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
    """["August 15, 2026", "2026-08-15"] is one day, not two items the answer needs, and ["7", "7 Tage"] one count;
    different days and different places stay items."""
    assert gold_text(["August 15, 2026", "2026-08-15"]) == "August 15, 2026"
    assert gold_text(["Yes", "yes."]) == "Yes"
    assert gold_text(["August 15, 2026", "2026-09-30"]) == '["August 15, 2026", "2026-09-30"]'
    assert gold_text(["7", "7 Tage"]) == "7"
    assert gold_text(["3", "three times"]) == "3"
    assert gold_text(["Porto", "Krakow"]) == '["Porto", "Krakow"]'


ERRAND = "Is renewing my passport still on my errand list?"


def _errands(*, closes_passport: bool = True) -> tuple[dict, dict[str, str]]:
    """An errand list kept as one record: ``errands.add`` writes each errand the user asks for, ``errands.close``
    marks errands done from what the user reports; told only that the dry cleaning is picked up, it also marks the
    passport renewal done (``closes_passport``). The search returns the list as it stands."""
    g = Smartcomment("errands")
    ops: dict[str, str] = {}
    g.session("monday", date="2025-04-07")
    t1 = g.turn("e1", "Noa", "Add renewing my passport to my errands, it expires in June.")
    g.op("errands.add", "extraction")
    first = g.var("list", {"items": [{"task": "renew passport", "state": "open"}]}, cls="Errands", cat="errand_list")
    g.edges(t1, first)
    t2 = g.turn("e2", "Noa", "Also pick up the dry cleaning on Thursday.")
    g.op("errands.add", "extraction")
    second = g.var("list", {"items": [{"task": "renew passport", "state": "open"},
                                      {"task": "pick up dry cleaning", "state": "open"}]}, cls="Errands",
                   cat="errand_list")
    g.edges([t2, first], second)
    g.session("thursday", date="2025-04-10")
    t3 = g.turn("e3", "Noa", "Got the dry cleaning, that one's done.")
    ops["close"] = g.op("errands.close", "update")
    passport = "done" if closes_passport else "open"
    third = g.var("list", {"items": [{"task": "renew passport", "state": passport},
                                     {"task": "pick up dry cleaning", "state": "done"}]}, cls="Errands",
                  cat="errand_list")
    g.edges([t3, second], third)
    g.session("ask", date="2025-04-12")
    q = g.question("q1", ERRAND)
    g.op("errands.search", "retrieval")
    context = g.var("q1", f"- renew passport: {passport}\n- pick up dry cleaning: done", cls="memory_context",
                    cat="memory_context")
    g.edges([q, third], context)
    answer = "No, renewing your passport is done." if closes_passport else "No, it's done."
    g.judge(q, "Yes", g.answer("q1", context, answer))
    return g.document(), ops


def test_a_yes_is_held_by_the_thing_asked_about_and_a_close_that_ended_it_is_the_deletion():
    """'Yes' is held by no memory: the passport errand is, while the list does not say it is done. The close that
    marked it done on a report about the dry cleaning is blamed, a DeletionError (was: an ExtractionError of the
    first add, since no variable ever held the word 'yes')."""
    doc, ops = _errands()
    for evidence in (("e1",), ()):
        assert blame_smartcomment(doc, ERRAND, "Yes", evidence) == ("DeletionError", ops["close"]), evidence


def test_a_yes_the_context_held_while_the_answer_said_no_is_the_response_error():
    """The list still says the passport errand is open and the answer said no: a ResponseError of the answer."""
    doc, _ = _errands(closes_passport=False)
    kind, _ = blame_smartcomment(doc, ERRAND, "Yes", ("e1",))
    assert kind == "ResponseError"


def test_what_a_yes_no_question_asks_about():
    from memopt.attribution.polar import polar_topic, says_retired

    assert polar_topic("Is my 'preterite vs imperfect' card still active?", "Yes") == "preterite vs imperfect"
    assert polar_topic("Do I still have a climbing gym pass?", "Yes") == "climbing gym pass"
    assert polar_topic("Nimmt die Patientin noch Ramipril?", "Ja", "Ramipril nehme ich weiterhin.") == "ramipril"
    assert polar_topic("When is my next dentist visit?", "Yes") is None
    assert polar_topic("Do I still have a gym pass?", "No, it was cancelled") is None
    assert polar_topic("Is Grace allowed to run?", "Yes. She was cleared to run again, but no downhill running") \
        is None
    assert says_retired("- renew passport: done") and says_retired("medikation.ramipril: GELÖSCHT")
    assert not says_retired("- renew passport: open")


TEACHES = "What does Lena teach this term?"


def _staff_rows() -> tuple[dict, dict[str, str]]:
    """A teacher's own notes as SQL rows (``{"pk", "subject": <person>, "attr", "value"}``): Tomas (the chat's
    ``user``) says what his sister Lena and he teach, the extraction swaps the two, and the search for Lena finds
    her row."""
    g = Smartcomment("staff")
    ops: dict[str, str] = {}
    g.session("intro", date="2025-09-01")
    said = g.turn("s1", "user", "[Tomas] My sister Lena teaches chemistry this term, and I teach biology.")
    ops["extract"] = g.op("rows.extract", "extraction")
    lena = g.var("row.lena", {"pk": 7, "subject": "Lena (sister)", "attr": "teaches", "value": "biology"},
                 cls="Row", cat="row")
    tomas = g.var("row.tomas", {"pk": 8, "subject": "Tomas", "attr": "teaches", "value": "chemistry"},
                  cls="Row", cat="row")
    g.edges(said, [lena, tomas])
    g.session("ask", date="2025-09-20")
    q = g.question("q1", TEACHES)
    g.op("rows.search", "retrieval")
    context = g.var("q1", "Lena (sister) | teaches | biology", cls="memory_context", cat="memory_context")
    g.edges([q, lena], context)
    g.judge(q, "chemistry", g.answer("q1", context, "Lena teaches biology."))
    return g.document(), ops


def test_a_row_filed_under_another_person_does_not_hold_the_named_person_s_fact():
    """Tomas's row says chemistry, but the question asks about Lena: the store never held Lena's subject, so the
    extraction that swapped the rows is blamed (was: 'the store held it' at Tomas's row, a RetrievalError)."""
    doc, ops = _staff_rows()
    for evidence in (("s1",), ()):
        assert blame_smartcomment(doc, TEACHES, "chemistry", evidence) == ("ExtractionError", ops["extract"]), evidence


def test_facts_filed_under_people_the_question_does_not_name_are_not_theirs():
    """Jordan's row holds '14 September', but "When is Maya's birthday?" is about Maya: held for others; a row filed
    under Maya, or under no person (an account id), is not."""
    from memopt.attribution.owner import held_for_others

    def states(text: str) -> bool:
        return "14 september" in text.lower()

    assert held_for_others({"pk": 18, "subject": "Jordan", "attr": "birthday", "value": "14 September"}, ["maya"],
                           states)
    assert not held_for_others({"subject": "Maya", "attr": "birthday", "value": "14 September"}, ["maya"], states)
    assert not held_for_others({"subject": "u88", "attr": "birthday", "value": "14 September"}, ["maya"], states)
