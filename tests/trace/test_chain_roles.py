"""A team that names its question, answer, gold and verdict in its own words (here Dutch, with a judge that reads
only the answer and the gold) is read by the shape of the question's chain (`memopt.trace.chain_roles`)."""

from __future__ import annotations

import pytest

from memopt.trace.memtracebench import from_memtrace
from memopt.trace.verdicts import verdict_of
from tests.attribution.shapes import Smartcomment, blame_smartcomment

QUESTION = "Op welke dag wil de klant de levering?"


def _garden_centre(*, core_block: bool = False, said_gold: bool = False, retire: bool = False,
                   second: bool = False) -> tuple[dict, dict[str, str]]:
    """A garden centre's assistant: ``geheugen.schrijf`` (category ``opslaan``) keeps a fact from each customer line,
    the second time without the delivery day; at question time ``zoek`` writes ``treffers``, ``antwoord.maak``
    writes a ``reactie``, and ``eval.rechter`` reads only that reply and the ``verwacht`` gold and writes
    ``{"uitslag": "FAIL"}``. ``core_block``: the answer op also reads the customer's profile (``profiel.bij`` wrote
    it) directly; ``said_gold``: the gold is written as a message (``{"speaker", "text"}``) and the verdict is a
    bare ``0``; ``retire``: a cleanup retires the first fact as ``{"weg": true}``, a version nothing reads;
    ``second``: a later question (class ``query``) whose search marks the fact it found with an edge into it
    ("query → hit")."""
    g = Smartcomment("tuincentrum")
    ops: dict[str, str] = {}
    g.session("dag1", date="2025-03-03")
    t1 = g.var("t1", "Ik heb een grote moestuin met tomaten en bonen.", cls="Klant", cat="uiting")
    ops["keep1"] = g.op("geheugen.schrijf", "opslaan")
    f1 = g.var("f1", "Klant heeft een moestuin met tomaten en bonen", cls="Feit", cat="geheugen")
    g.edges(t1, f1)
    t2 = g.var("t2", "Lever de potgrond graag op donderdag, dan ben ik thuis.", cls="Klant", cat="uiting")
    ops["keep2"] = g.op("geheugen.schrijf", "opslaan")
    f2 = g.var("f2", "Klant bestelt potgrond", cls="Feit", cat="geheugen")
    g.edges(t2, f2)
    if retire:
        g.op("geheugen.wis", "opruimen")
        g.edges([t2, f1], g.var("f1", {"weg": True}, cls="Feit", cat="geheugen"))
    g.op("profiel.bij", "profiel")
    profile = g.var("profiel", "Klant: Joris, Utrecht, moestuin", cls="Profiel", cat="geheugen")
    g.edges(t1, profile)
    g.session("vragen", date="2025-03-10")
    question = g.var("v1", QUESTION, cls="Vraag", cat="klantvraag")
    ops["search"] = g.op("zoek", "opzoeken")
    hits = g.var("v1-treffers", "Klant bestelt potgrond; Klant heeft een moestuin", cat="treffers")
    g.edges([question, f1, f2], hits)
    ops["answer"] = g.op("antwoord.maak", "genereren")
    reply = g.var("v1-reactie", "Daar heb ik geen voorkeur van opgeslagen.", cat="reactie")
    g.edges([question, hits, *([profile] if core_block else [])], reply)
    expected = g.var("v1-verwacht", {"speaker": "user", "text": "donderdag"} if said_gold else "donderdag",
                     cat="verwacht")
    g.op("eval.rechter", "beoordeling")
    g.edges([reply, expected], g.var("v1-oordeel", "0" if said_gold else {"uitslag": "FAIL"}, cat="oordeel"))
    if second:
        later = g.question("v2", "Wat kweekt de klant?")
        g.op("zoek", "opzoeken")
        g.edges(later, f2)  # the hit it found, marked with an edge into it
        g.op("antwoord.maak", "genereren")
        g.edges([later, f2], g.var("v2-reactie", "Tomaten en bonen.", cat="reactie"))
    return g.document(), ops


def test_a_judge_reading_only_the_answer_and_the_gold_names_question_answer_gold_and_verdict():
    """No role word memopt knows: the verdict is the unread ``{"uitslag": "FAIL"}``, the answer what its judge read
    that an op wrote, the gold what it read that none wrote, the question the newest unwritten ancestor of the
    answer (was: no case at all, so the failure could not be attributed)."""
    G, _ = from_memtrace(_garden_centre()[0], source="tuincentrum.json")
    kinds = {d["sc_id"]: d["kind"] for _, d in G.nodes(data=True) if d["type"] == "variable"}
    assert kinds["Vraag:v1@1"] == "question"
    assert kinds["v1-reactie@1"] == "answer"
    assert kinds["v1-verwacht@1"] == "gold"
    assert kinds["v1-oordeel@1"] == "judgement"
    assert kinds["v1-treffers@1"] == "context"
    assert kinds["Klant:t2@1"] == "turn"
    [case] = G.graph["cases"]
    assert (case["question"], case["gold"], case["judged"]) == (QUESTION, "donderdag", False)


def test_a_gold_written_as_a_message_and_a_bare_score_are_read_as_gold_and_verdict():
    """A reference the harness wrote like a line of the chat (a speaker and a text) is still the gold beside the
    answer its judge reads, and an unread ``0`` from that judge is its verdict."""
    G, _ = from_memtrace(_garden_centre(said_gold=True)[0], source="tuincentrum.json")
    kinds = {d["sc_id"]: d["kind"] for _, d in G.nodes(data=True) if d["type"] == "variable"}
    assert (kinds["v1-verwacht@1"], kinds["v1-oordeel@1"], kinds["Vraag:v1@1"]) == ("gold", "judgement", "question")
    [case] = G.graph["cases"]
    assert case["judged"] is False


def test_a_unit_retired_into_a_version_nothing_reads_is_no_verdict():
    """``{"weg": true}`` reads as a verdict and nothing reads it, but it is the next version of the fact its op
    read (a retirement), not a judge's output."""
    G, _ = from_memtrace(_garden_centre(retire=True)[0], source="tuincentrum.json")
    kinds = {d["sc_id"]: d["kind"] for _, d in G.nodes(data=True) if d["type"] == "variable"}
    assert kinds["Feit:f1@2"] != "judgement"
    assert [c["judged"] for c in G.graph["cases"]] == [False]


def test_another_question_s_search_edge_into_a_fact_does_not_make_it_this_answer_s_question():
    """A later question's search marks the fact it found with an edge into it; that edge reads the fact, so the
    later question is no ancestor of the first answer, whose question is still found (was: no case)."""
    G, _ = from_memtrace(_garden_centre(second=True)[0], source="tuincentrum.json")
    kinds = {d["sc_id"]: d["kind"] for _, d in G.nodes(data=True) if d["type"] == "variable"}
    assert kinds["Vraag:v1@1"] == "question"
    assert [c["question"] for c in G.graph["cases"] if "judged" in c] == [QUESTION]


def test_the_failure_is_blamed_on_the_op_that_dropped_the_day():
    """With the roles read, the fact written without the delivery day is the loss: an ExtractionError of the second
    ``geheugen.schrijf``, the graph's own op id."""
    doc, ops = _garden_centre()
    assert blame_smartcomment(doc, QUESTION, "donderdag", ("t2",)) == ("ExtractionError", ops["keep2"])


def test_an_answer_that_also_reads_memory_directly_has_no_one_context():
    """The reply reads the profile unit beside the hits: the hits are not the context (a context that left the
    profile out would report a retrieval loss the answer never had)."""
    G, _ = from_memtrace(_garden_centre(core_block=True)[0], source="tuincentrum.json")
    kinds = {d["sc_id"]: d["kind"] for _, d in G.nodes(data=True) if d["type"] == "variable"}
    assert kinds["v1-reactie@1"] == "answer"
    assert kinds["v1-treffers@1"] != "context"


@pytest.mark.parametrize(("said", "verdict"), [
    ("score=0", False), ("score: 1", True), ({"urteil": "falsch"}, False), ({"resultado": "correcto"}, True),
    ("FAUX", False), ({"urteil": "falsch", "punkte": 0}, False), ({"note": "x", "other": 0}, None),
    ({"id": "m1", "memory": "Goal: a 5k", "is_active": False}, None), ({"seikai": False}, False),
    ("veredicto: INCORRECTO", False), ("count: 3", None), ("note=0", False), ("BAD", False),
    ({"a": "richtig", "b": "falsch"}, None), ("41", True), ("a plain sentence", None)])
def test_verdicts_as_teams_write_them(said, verdict):
    """A judge's word in a key=value line, a record of one judge's word, another language, a record whose values all
    agree; a record with a value that says nothing (a memory item with an ``is_active`` flag) or values that
    disagree says nothing. (A number is a score here; `chain_roles` takes a sink for a verdict only from 0 to 1.)"""
    assert verdict_of(said) is verdict
