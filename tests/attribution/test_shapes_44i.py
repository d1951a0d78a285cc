"""Shapes of a sixth author's conventions: a clinic's intake messages as message objects written by an intake op,
FHIR-like records of short fields, a retraction by ``verificationStatus: entered-in-error``; a game character's
memory with a player's line (a speaker in its metadata) as the question and a TTL sweep's ``expired: true``; an
eval harness that loads the reference answer from the question (no judge op); a cases file naming a question no
graph asks beside one that is asked."""

from __future__ import annotations

import json
import logging

import pytest

from memopt.core.errors import DataError

from .shapes import Smartcomment, blame_smartcomment

ALLERGY = "Which drug allergies does Ruth have?"


def _clinic(*, structured: bool = True, retracted: bool = False, filtered: bool = False) -> tuple[dict, dict]:
    """A clinic's intake: a portal form (no op wrote it) split into message objects ``{author, text}`` by an intake
    op (category ``intake``: no role word, no extraction word), structured by an NLP op into records of short
    fields, written to the chart; a later call's directive read as a contradiction retracts the allergy (its next
    version says ``verificationStatus: entered-in-error``) when ``retracted``; the context step skips the allergy
    section when ``filtered``. Returns the graph and its ops by name."""
    g = Smartcomment("clinic")
    g.session("intake", date="2025-06-02")
    ops = {"intake": g.op("portal.receive_form", "intake")}
    form = g.var("enc-1", {"form": "pre-visit questionnaire", "patient": "Ruth Alvarez"}, cat="portal_form")
    m1 = g.var("enc-1.m01", {"author": "patient", "text": "I take metformin 500 mg twice a day."}, cat="portal_msg")
    m2 = g.var("enc-1.m02", {"author": "patient", "text": "Allergies: penicillin - I get hives."}, cat="portal_msg")
    g.edges(form, [m1, m2])
    ops["nlp"] = g.op("intake.nlp.structure", "nlp")
    metformin = g.var("cand-0", {"resourceType": "MedicationStatement", "medication": "metformin",
                                 "dosage": "500 mg twice daily", "status": "active"}, cls="cand", cat="fhir_candidate")
    allergy = g.var("cand-1", {"resourceType": "AllergyIntolerance", "code": "penicillin", "reaction": "hives",
                               "verificationStatus": "confirmed"} if structured else
                    {"resourceType": "AllergyIntolerance", "code": "none reported"}, cls="cand",
                    cat="fhir_candidate")
    g.edges([m1, m2], [metformin, allergy])
    ops["write"] = g.op("chart.reconcile", "chart_write")
    med = g.var("ms-metformin", {"resourceType": "MedicationStatement", "status": "active",
                                 "medication": {"text": "metformin 500 mg"}}, cls="MedicationStatement",
                cat="chart_resource")
    g.edges(metformin, med)
    unit = g.var("ai-1", {"resourceType": "AllergyIntolerance", "clinicalStatus": "active",
                          "verificationStatus": "confirmed", "code": {"text": json.loads(g.net._driver.get_node(
                              allergy).value)["code"]}, "reaction": [{"manifestation": "hives"}]},
                 cls="AllergyIntolerance", cat="chart_resource")
    g.edges(allergy, unit)
    if retracted:
        g.session("call", date="2025-06-05")
        ops["retract"] = g.op("chart.mark_entered_in_error", "chart_retract")
        unit = g.var("ai-1", {"resourceType": "AllergyIntolerance", "clinicalStatus": "active",
                              "verificationStatus": "entered-in-error", "code": {"text": "penicillin"},
                              "reaction": [{"manifestation": "hives"}]}, cls="AllergyIntolerance",
                     cat="chart_resource")
        g.edges("AllergyIntolerance:ai-1@1", unit)
    g.session("visit", date="2025-06-09")
    question = g.var("pvq-01", ALLERGY, cls="clinician_query", cat="query")
    ops["context"] = g.op("summary.context_assemble", "context")
    shown = [med] if filtered or retracted else [med, unit]  # a section filter keeps the medications only
    context = g.var("pvq-01.ctx", {"entries": [g.net._driver.get_node(v).value for v in shown]}, cls="ChartContext",
                    cat="memory_context")
    g.edges(question, [med] if retracted else [med, unit])
    g.edges(shown, context)
    ops["answer"] = g.op("summary.generate", "summarize")
    answer = g.var("pvq-01.answer", "No drug allergies are documented.", cls="SummaryAnswer", cat="prediction")
    g.edges([question, context], answer)
    g.op("chart-qa.review", "clinical_review")
    gold = g.var("pvq-01.gold", "Penicillin (hives).", cat="golden_answers")
    verdict = g.var("pvq-01.review", {"verdict": "INCORRECT"}, cls="ReviewVerdict", cat="review")
    g.edges([question, answer, gold], verdict)
    return g.document(), ops


def test_message_objects_an_intake_op_wrote_are_the_conversation():
    """The portal's messages ({author, text}, written by an intake op from a form no op wrote) are the turns the
    NLP op read: the op that structured the allergy away is blamed (was: 'no extraction step')."""
    doc, ops = _clinic(structured=False)
    assert blame_smartcomment(doc, ALLERGY, "Penicillin (hives).", ("enc-1.m02@1",)) == ("ExtractionError",
                                                                                         ops["nlp"])
    assert blame_smartcomment(doc, ALLERGY, "Penicillin (hives).") == ("ExtractionError", ops["nlp"])


def test_a_record_of_short_fields_is_one_fact():
    """A FHIR-like resource ({"code": {"text": "penicillin"}, "reaction": [{"manifestation": "hives"}]}) states
    'Penicillin (hives)': the context step that left it out is blamed (was: the NLP op, as the fields were read
    one per line)."""
    doc, ops = _clinic(filtered=True)
    assert blame_smartcomment(doc, ALLERGY, "Penicillin (hives).", ("enc-1.m02@1",)) == ("RetrievalError",
                                                                                         ops["context"])


def test_entered_in_error_is_a_delete():
    """A status field of any name (``verificationStatus``) saying entered-in-error retires the unit: a
    DeletionError of the op that wrote it (was: an UpdateError, the unit still 'holding' the allergy)."""
    doc, ops = _clinic(retracted=True)
    assert blame_smartcomment(doc, ALLERGY, "Penicillin (hives).", ("enc-1.m02@1",)) == ("DeletionError",
                                                                                         ops["retract"])


TOMAS = "Do you remember who brought Tomas back from the mines?"


def _npc(*, pinned_swept: bool = True) -> tuple[dict, dict]:
    """A tavern keeper's memory: world events (prose lines, written by a perception op from a bus tick no op
    wrote) appraised into fragments, committed, a TTL sweep marking fragments ``expired: true``; the player's
    line (category ``player_utterance``, a ``speaker`` in its metadata) is the question, judged ``FAIL`` by a
    playtest judge."""
    g = Smartcomment("npc")
    g.session("day-3", date="2025-09-03")
    ops = {"perceive": g.op("npc.perceive", "perception")}
    bus = g.var("bus@1100", {"tick": 1100, "zone": "tavern"}, cat="event_bus")
    event = g.var("evt_0413", '[tick 1184] Mira -> Brannoc: "Kestrel brought Tomas back alive from the mines."',
                  cls="WorldEvent", cat="perception", source="dialogue")
    bard = g.var("evt_0411", "[tick 1130] A travelling bard plays by the hearth.", cls="WorldEvent",
                 cat="perception", source="ambient")
    g.edges(bus, [bard, event])
    ops["appraise"] = g.op("npc.appraise_event", "appraisal")
    cand = g.var("cand.1", {"text": "Kestrel brought Tomas back from the mines", "salience": 0.92},
                 cls="Appraisal", cat="fragment_candidate")
    cand0 = g.var("cand.0", {"text": "A bard played by the hearth", "salience": 0.2}, cls="Appraisal",
                  cat="fragment_candidate")
    g.edges(event, cand)
    g.edges(bard, cand0)
    ops["commit"] = g.op("npc.commit_fragment", "memory_commit")
    frag = g.var("frag.0007", {"text": "Kestrel brought Tomas back from the mines", "pinned": True},
                 cat="memory_fragment")
    frag0 = g.var("frag.0005", {"text": "A bard played by the hearth", "pinned": False}, cat="memory_fragment")
    g.edges(cand, frag)
    g.edges(cand0, frag0)
    g.session("day-5", date="2025-09-05")
    ops["decay"] = g.op("npc.decay_tick", "forgetting")
    swept = [frag0, frag] if pinned_swept else [frag0]
    for old in swept:
        text = json.loads(g.net._driver.get_node(old).value)["text"]
        g.edges(old, g.var(old.split("@")[0], {"text": text, "expired": True, "expired_at_tick": 1902},
                           cat="memory_fragment"))
    g.session("day-12", date="2025-09-12")
    line = g.var("probe_01", TOMAS, cls="PlayerLine", cat="player_utterance", speaker="Kestrel")
    live = g.latest("frag.0007")
    ops["recall"] = g.op("npc.recall", "recall")
    recalled = g.var("probe_01.recalled", {"fragments": [] if pinned_swept else [
        g.net._driver.get_node(live).value]}, cls="RecallSet", cat="memory_context")
    g.edges(line, [] if pinned_swept else [live])
    g.edges([] if pinned_swept else [live], recalled)
    ops["speak"] = g.op("npc.speak", "dialogue")
    reply = g.var("probe_01.reply", "Can't say I do, traveller.", cls="NpcLine", cat="prediction")
    g.edges([line, recalled], reply)
    g.op("qa.playtest_judge", "qa")
    expected = g.var("probe_01.expected", "Kestrel brought Tomas back.", cls="expected_line", cat="golden_answers")
    verdict = g.var("probe_01.verdict", "FAIL", cls="PlaytestVerdict", cat="judge_verdict")
    g.edges([line, reply, expected], verdict)
    return g.document(), ops


def test_a_players_line_judged_by_a_playtest_judge_is_the_question_and_a_ttl_sweep_deletes():
    """The player's line has a speaker, so its marks make it a turn; what the judge reads beside the gold and the
    reply is the question all the same (was: no such question). The sweep's ``expired: true`` is a delete."""
    doc, ops = _npc()
    assert blame_smartcomment(doc, TOMAS, "Kestrel brought Tomas back.", ("WorldEvent:evt_0413@1",)) == (
        "DeletionError", ops["decay"])


PHONE = "What's the phone number for Sam from Ortiz Design?"


def _harness() -> tuple[dict, dict]:
    """An e-mail assistant with no judge op: the eval harness's ``bench.load_reference`` reads the question (an
    ``assistant_request``, no role word) and writes its gold; the prediction's metadata holds the score. E-mails
    ({"from", "body"}) are the conversation; a dedupe job tombstones a card it merged."""
    g = Smartcomment("inbox")
    g.session("april", date="2025-04-09")
    ops = {"parse": g.op("mail.parse_thread", "sync")}
    box = g.var("mbox-1", {"history_id": 880004, "count": 1}, cat="mbox_delta")
    mail = g.var("msg-1", {"from": "Sam Ortiz <sam@ortizdesign.co>", "subject": "Logo drafts",
                           "body": "Drafts attached.\n\nSam Ortiz, Ortiz Design Studio, +1 503 555 0143"},
                 cls="email", cat="mail_message")
    g.edges(box, mail)
    ops["enrich"] = g.op("contacts.enrich_from_signature", "enrich")
    patch = g.var("patch-2", {"set": {"FN": "Sam Ortiz", "ORG": "Ortiz Design Studio", "TEL": "+1 503 555 0143"}},
                  cls="card_patch", cat="card_patch")
    g.edges(mail, patch)
    ops["write"] = g.op("contacts.apply_patch", "card_write")
    card = g.var("c_0042", {"FN": "Sam Ortiz", "ORG": "Ortiz Design Studio", "TEL": ["+1 503 555 0143"]},
                 cls="vcard", cat="contact_card")
    g.edges(patch, card)
    g.session("dedupe", date="2025-05-25")
    ops["dedupe"] = g.op("contacts.dedupe_merge", "dedupe")
    g.edges(card, g.var("c_0042", {"tombstone": True, "merged_into": "c_0017"}, cls="vcard", cat="contact_card"))
    g.session("ask", date="2025-06-03")
    ask = g.var("ask#1", PHONE, cat="assistant_request", channel="sidebar")
    g.op("bench.load_reference", "eval_setup")
    g.edges(ask, g.var("ask#1:gold", ["+1 503 555 0143"], cat="golden_answers"))
    ops["lookup"] = g.op("assist.lookup_contact", "tool_call")
    cards = g.var("ask#1:cards", [], cat="memory_context")
    g.edges(ask, cards)
    ops["reply"] = g.op("assist.draft_reply", "compose")
    g.edges([ask, cards], g.var("ask#1:reply", "I have no number for Sam.", cat="prediction",
                                eval={"score": 0}))
    return g.document(), ops


def test_the_question_an_eval_harness_loads_the_reference_for():
    """No judge op reads the question: the op that writes its gold does, so what it reads is the question (was:
    no such question). The dedupe job's tombstone is the delete."""
    doc, ops = _harness()
    assert blame_smartcomment(doc, PHONE, "+1 503 555 0143", ("email:msg-1@1",)) == ("DeletionError",
                                                                                     ops["dedupe"])


def test_a_cases_file_question_no_graph_asks_is_a_warning_and_skipped(tmp_path, caplog):
    """One line whose question no graph asks does not stop the others: it is one warning naming the file and the
    line, and its case is left unattributed; a file none of whose questions is asked is still one error."""
    from memopt.attribution.attribute_run import attribute_trace
    from memopt.judge.judges import LexicalJudge

    doc, ops = _harness()
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "inbox.json").write_text(json.dumps(doc))
    lines = [{"question": "Who signed the lease for the Ortiz studio?", "expected": "Sam", "graph": "inbox.json"},
             {"question": PHONE, "expected": "+1 503 555 0143", "graph": "inbox.json"}]
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING):
        found = attribute_trace(trace, LexicalJudge(), cases_file=cases, gold_evidence=False)
    assert [(a.question, a.error_type, a.op_id) for a in found] == [(PHONE, "DeletionError", ops["dedupe"])]
    assert "cases.jsonl:1: no graph 'inbox.json' asks 'Who signed the lease for the Ortiz studio?'" in caplog.text
    assert "skipped" in caplog.text
    cases.write_text(json.dumps(lines[0]) + "\n")
    with pytest.raises(DataError, match=r"cases.jsonl:1: no graph 'inbox.json' asks"):
        attribute_trace(trace, LexicalJudge(), cases_file=cases, gold_evidence=False)


def test_a_score_in_the_answers_metadata_says_which_answer_failed(tmp_path):
    """No judge op and no cases file: the eval harness's ``{"eval": {"score": 0}}`` on the prediction is the
    verdict, so `memopt attribute TRACE` alone finds and attributes the failure (was: no failed case)."""
    from memopt.attribution.attribute_run import attribute_trace
    from memopt.judge.judges import LexicalJudge

    doc, ops = _harness()
    trace = tmp_path / "trace"
    trace.mkdir()
    (trace / "inbox.json").write_text(json.dumps(doc))
    found = attribute_trace(trace, LexicalJudge())
    assert [(a.question, a.error_type, a.op_id) for a in found] == [(PHONE, "DeletionError", ops["dedupe"])]


TITLE = "What's Lena Fischer's current job title?"


def test_a_value_written_into_another_field_is_not_held_for_the_field_asked():
    """A patch that sets ``TITLE`` stored into ``ORG`` (the old title kept): the card has the words, but not in the
    field the question asks about. The store's patch is the UpdateError (was: a ResponseError, the context
    'holding' the new title under ORG)."""
    g = Smartcomment("cards")
    g.session("may", date="2025-05-20")
    card = g.var("c_0051", {"FN": "Lena Fischer", "ORG": "Brightwave GmbH", "TITLE": "Procurement Analyst"},
                 cls="vcard", cat="contact_card")
    g.op("mail.parse_thread", "sync")
    mail = g.var("msg-2", {"from": "Lena Fischer <lena@brightwave.de>", "subject": "Re: Renewal",
                           "body": "Quick note: since May I am Head of Procurement at Brightwave."},
                 cls="email", cat="mail_message")
    g.edges(g.var("mbox-2", {"history_id": 11}, cat="mbox_delta"), mail)
    g.op("contacts.enrich_from_signature", "enrich")
    patch = g.var("patch-4", {"match": {"EMAIL": "lena@brightwave.de"}, "set": {"TITLE": "Head of Procurement"}},
                  cls="card_patch", cat="card_patch")
    g.edges(mail, patch)
    apply = g.op("contacts.apply_patch", "card_write")
    new = g.var("c_0051", {"FN": "Lena Fischer", "ORG": "Head of Procurement", "TITLE": "Procurement Analyst"},
                cls="vcard", cat="contact_card")
    g.edges([patch, card], new)
    g.session("ask", date="2025-06-03")
    ask = g.var("ask#2", TITLE, cat="assistant_request")
    g.op("bench.load_reference", "eval_setup")
    g.edges(ask, g.var("ask#2:gold", ["Head of Procurement"], cat="golden_answers"))
    g.op("assist.lookup_contact", "tool_call")
    cards = g.var("ask#2:cards", [g.net._driver.get_node(new).value], cat="memory_context")
    g.edges(ask, new)
    g.edges(new, cards)
    g.op("assist.draft_reply", "compose")
    g.edges([ask, cards], g.var("ask#2:reply", "Her card lists her as Procurement Analyst.", cat="prediction"))
    assert blame_smartcomment(g.document(), TITLE, "Head of Procurement", ("email:msg-2@1",)) == ("UpdateError",
                                                                                                  apply)
