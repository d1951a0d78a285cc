"""Shapes of a fifth author's conventions: a voice assistant's transcripts, a help desk's ticket messages, a key
store's ``(nil)`` delete, a plan an executor applies, numbers spoken in words, a household's shared facts with
their owners, questions and answers written as message objects."""

from __future__ import annotations

from memopt.attribution.normalise import normalise_numbers
from memopt.trace.roles import question_text

from .shapes import Smartcomment, blame_smartcomment


def _judge(g: Smartcomment, question: str, gold: str, prediction: str) -> None:
    """A judge op reading the question, a gold and the prediction, writing a JSON verdict (no role word on the
    verdict's class)."""
    g.op("llm-judge", "evaluation")
    golden = g.var(f"{question}.gold", gold, cat="golden_answers")
    verdict = g.var(f"{question}.judge", {"score": 0, "label": "WRONG", "reason": "no"}, cat="judge_verdict")
    g.edges([question, golden, prediction], verdict)


def _voice(extracted: str) -> tuple[dict, str, str]:
    """A voice assistant: audio clips transcribed by ``asr.transcribe`` (category ``ingest``), facts extracted from
    each transcript, upserted as units; the question is a transcript too, found only by the judge that reads it."""
    g = Smartcomment("voice")
    g.session("wake-1", date="2025-06-01")
    g.op("asr.transcribe", "ingest")
    clip = g.var("clip_1", "audio://clip_1.opus", cls="AudioClip", cat="audio")
    said = g.var("clip_1.asr", "remind me every wednesday to pick up noor from soccer at five forty five",
                 cls="Transcript", cat="transcript")
    g.edges(clip, said)
    g.op("asr.transcribe", "ingest")
    clip2 = g.var("clip_2", "audio://clip_2.opus", cls="AudioClip", cat="audio")
    said2 = g.var("clip_2.asr", "and noor has piano on mondays at four", cls="Transcript", cat="transcript")
    g.edges(clip2, said2)
    extractor = g.op("memory.extract", "extraction")
    facts = g.var("clip_1.facts", [extracted], cls="Extracted", cat="llm_response")
    g.edges(said, facts)
    g.op("memory.extract", "extraction")
    facts2 = g.var("clip_2.facts", ["Noor has piano lessons on Mondays at 4pm"], cls="Extracted", cat="llm_response")
    g.edges(said2, facts2)
    g.op("memory.upsert", "update")
    soccer = g.var("mem_07", extracted, cls="VoiceMemory", cat="memory_item")
    g.edges(facts, soccer)
    g.op("memory.upsert", "update")
    piano = g.var("mem_08", "Noor's piano lesson: Mondays at 4 PM", cls="VoiceMemory", cat="memory_item")
    g.edges(facts2, piano)
    g.session("wake-2", date="2025-06-18")
    g.op("asr.transcribe", "ingest")
    clip3 = g.var("clip_3", "audio://clip_3.opus", cls="AudioClip", cat="audio")
    q = g.var("clip_3.asr", "what time do i pick up noor from soccer", cls="Transcript", cat="transcript")
    g.edges(clip3, q)
    recall = g.op("memory.recall", "retrieval")
    context = g.var("clip_3.recall", ["Noor's piano lesson: Mondays at 4 PM"], cls="RecallResult",
                    cat="memory_context")
    g.edges([q, piano], context)
    g.op("dialog.respond", "response")
    reply = g.var("clip_3.reply", "You pick Noor up at 4 PM.", cls="TTSText", cat="prediction")
    g.edges([q, context], reply)
    _judge(g, q, "5:45 PM", reply)
    return g.document(), recall, extractor


def test_a_transcript_question_is_found_by_its_judge_and_transcripts_are_the_conversation():
    """No role word names the question or the turns: the judge's third input is the question, and what the
    extraction reads (transcribed from audio) is the conversation. Spoken numbers meet the facts' digits."""
    doc, recall, extractor = _voice("Pick up Noor from soccer practice every Wednesday at 5:45 PM")
    question = "what time do i pick up noor from soccer"
    assert blame_smartcomment(doc, question, "5:45 PM", ("clip_1.asr",)) == ("RetrievalError", recall)
    assert blame_smartcomment(doc, question, "5:45 PM") == ("RetrievalError", recall)
    # the extraction that lost the time is blamed (the transcript's "five forty five" is the gold's 5:45)
    doc, _, extractor = _voice("Pick up Noor from soccer practice every Wednesday")
    assert blame_smartcomment(doc, question, "5:45 PM", ("clip_1.asr",)) == ("ExtractionError", extractor)


def test_spoken_numbers_read_as_digits():
    assert normalise_numbers("born in nineteen fifty seven") == "born in 1957"
    assert normalise_numbers("pick up at five forty five") == "pick up at 5:45"
    assert normalise_numbers("make it sixty eight not sixty five") == "make it 68 not 65"
    assert normalise_numbers("his birthday is july ninth") == "his birthday is july 9"
    assert normalise_numbers("three kittens") == "3 kittens"


def _tickets() -> tuple[dict, str]:
    """A help desk: ticket messages (category ``ticket_message``, the role ``customer`` / ``agent`` in metadata, no
    op wrote them) summarised on close into a customer note that lost the amount."""
    g = Smartcomment("desk")
    g.session("TCK-1", date="2024-03-08")
    asked = g.var("tck1-m1", "I cancelled Premium last week but got charged again on the 8th.", cls="TicketMessage",
                  cat="ticket_message", role="customer")
    told = g.var("tck1-m2", "You're right. I've issued a refund of $84.20 to your Visa.", cls="TicketMessage",
                 cat="ticket_message", role="agent")
    summarise = g.op("ticket.summarize_on_close", "extraction")
    note = g.var("note-1", "Premium cancelled; renewal charge refunded to Visa.", cls="CustomerMemory",
                 cat="customer_note")
    g.edges([asked, told], note)
    g.session("TCK-2", date="2024-04-02")
    q = g.var("tck2-q", "How much did you refund me for the Premium charge?", cls="TicketMessage",
              cat="customer_question")
    g.op("ctx.semantic_fetch", "retrieval")
    context = g.var("tck2-ctx", {"notes": ["Premium cancelled; renewal charge refunded to Visa."]},
                    cls="FetchResult", cat="memory_context")
    g.edges([q, note], context)
    g.op("agent.reply", "response")
    reply = g.var("tck2-a", "We refunded the charge to your Visa.", cls="TicketMessage", cat="prediction")
    g.edges([q, context], reply)
    _judge(g, q, "$84.20", reply)
    return g.document(), summarise


def test_messages_an_extraction_reads_are_the_conversation_whatever_their_category():
    doc, summarise = _tickets()
    question = "How much did you refund me for the Premium charge?"
    assert blame_smartcomment(doc, question, "$84.20", ("tck1-m2",)) == ("ExtractionError", summarise)
    assert blame_smartcomment(doc, question, "$84.20") == ("ExtractionError", summarise)


def _key_store(tombstone: str) -> tuple[dict, str]:
    """A key store planned by an LLM: ``planner.plan_commands`` (category ``update``) emits ``HDEL`` for the wrong
    field; ``redis.exec`` applies the plan faithfully, writing the field's next version as ``tombstone``."""
    g = Smartcomment("kv")
    g.session("chat-1", date="2024-10-06")
    said = g.turn("chat.1", "user", "Remind me about pottery class, Tuesdays at 7pm at the community center.")
    said2 = g.turn("chat.2", "user", "And yoga on Thursdays at 6:30am.")
    g.op("planner.extract_facts", "extraction")
    facts = g.var("facts.1", ["Pottery class every Tuesday at 7pm", "Yoga every Thursday at 6:30am"], cls="LLMOut",
                  cat="extracted_facts")
    g.edges([said, said2], facts)
    g.op("redis.exec", "write")
    tue = g.var("u88.reminders.tue", "Pottery class 7pm, community center", cls="HASH", cat="hash_field")
    thu = g.var("u88.reminders.thu", "Yoga 6:30am", cls="HASH", cat="hash_field")
    g.edges(facts, [tue, thu])
    g.session("chat-2", date="2024-10-13")
    cancel = g.turn("chat.3", "user", "Cancel my Thursday yoga reminder, the studio closed.")
    g.op("planner.extract_facts", "extraction")
    facts2 = g.var("facts.2", ["Cancel the Thursday yoga reminder"], cls="LLMOut", cat="extracted_facts")
    g.edges(cancel, facts2)
    planner = g.op("planner.plan_commands", "update")
    plan = g.var("cmds.2", ["HDEL u88:reminders tue"], cls="LLMOut", cat="command_plan")
    g.edges([facts2, tue, thu], plan)
    g.op("redis.exec", "write")
    if tombstone == "(nil)":
        gone = g.var("u88.reminders.tue", "(nil)", cls="HASH", cat="marker")
    else:
        gone = g.var("u88.reminders.tue", "DELETED", cls="HASH", cat="marker")
    g.edges([plan, tue], gone)
    g.session("qa", question_date="2024-10-20")
    q = g.question("q1", "What do I have on Tuesday evenings?")
    g.op("redis.hgetall", "retrieval")
    context = g.var("q1", {"thu": "Yoga 6:30am"}, cls="memory_context", cat="memory_context")
    g.edges([q, thu], context)
    g.judge(q, "Pottery class", g.answer("q1", context, "Nothing on Tuesday evenings."))
    return g.document(), planner


def test_a_nil_field_version_is_a_delete_and_the_plan_it_applied_is_blamed():
    """``(nil)`` as a marker is the field's delete (the plan the executor read is not a unit); the executor applied
    a plan naming the field (``HDEL u88:reminders tue``), so the planner is blamed."""
    for tombstone in ("(nil)", "DELETED"):
        doc, planner = _key_store(tombstone)
        question = "What do I have on Tuesday evenings?"
        assert blame_smartcomment(doc, question, "Pottery class", ("chat.1",)) == ("DeletionError", planner), \
            tombstone


def _household(question_speaker: str, diet_owner: str = "ana") -> tuple[dict, str, str]:
    """A kitchen speaker shared by two adults: facts are filed with an owner; the extraction gave Ben's diet to
    Ana."""
    g = Smartcomment("home")
    g.session("day-1", date="2024-11-02")
    said = g.var("utt-1", "Heads-up, I'm going vegetarian starting this week.", cls="Utterance", cat="utterance",
                 speaker="ben")
    said2 = g.var("utt-2", "Put me down as allergic to sulfa drugs.", cls="Utterance", cat="utterance",
                  speaker="ben")
    extractor = g.op("facts.extract", "extraction")
    facts = g.var("extract-1", [{"owner": diet_owner, "fact": "Is vegetarian starting this week"},
                                {"owner": "ben", "fact": "Allergic to sulfa drugs"}], cls="FactCandidates",
                  cat="llm_response")
    g.edges([said, said2], facts)
    g.op("facts.write", "update")
    diet = g.var("hf-ana-diet", {"owner": diet_owner, "fact": "Is vegetarian starting this week"}, cls="HouseholdFact",
                 cat="household_fact")
    sulfa = g.var("hf-ben-allergy", {"owner": "ben", "fact": "Allergic to sulfa drugs"}, cls="HouseholdFact",
                  cat="household_fact")
    g.edges(facts, [diet, sulfa])
    g.session("day-2", date="2024-12-03")
    q = g.var("utt-q", "What diet did I tell you I'm following?", cls="Utterance", cat="query",
              speaker=question_speaker)
    g.op("facts.search", "retrieval")
    context = g.var("utt-q.ctx", [f"[{diet_owner}] Is vegetarian starting this week", "[ben] Allergic to sulfa drugs"],
                    cls="RecallSet", cat="memory_context")
    g.edges([q, diet, sulfa], context)
    answer = g.op("assistant.reply", "response")
    reply = g.var("utt-q.reply", "You haven't told me about a diet.", cls="Reply", cat="prediction")
    g.edges([q, context], reply)
    _judge(g, q, "vegetarian", reply)
    return g.document(), extractor, answer


def test_a_fact_filed_under_someone_else_does_not_hold_it_for_the_asker():
    question = "What diet did I tell you I'm following?"
    doc, extractor, _ = _household("ben")
    assert blame_smartcomment(doc, question, "vegetarian", ("utt-1",)) == ("ExtractionError", extractor)
    # asked by Ana, her filed fact holds it: the reply is to blame
    doc, _, answer = _household("ana")
    assert blame_smartcomment(doc, question, "vegetarian", ("utt-1",)) == ("ResponseError", answer)
    # an account id is no one: the fact filed under it holds for anyone asking
    doc, _, answer = _household("ben", diet_owner="u88")
    assert blame_smartcomment(doc, question, "vegetarian", ("utt-1",)) == ("ResponseError", answer)


def _letta() -> tuple[dict, str]:
    """Questions and predictions as JSON message objects ``{"role", "text"}``; the search missed the passage."""
    g = Smartcomment("letta")
    g.session("s1", date="2024-06-02")
    said = g.var("msg-1", {"role": "user", "text": "Booked my dentist for June 14 at 3pm with Dr. Okafor."},
                 cls="Message", cat="message")
    g.op("agent.step:inner_monologue", "extraction")
    thought = g.var("msg-2", {"role": "assistant", "inner_thoughts": "Dentist appointment: June 14, 3pm."},
                    cls="Message", cat="llm_response")
    g.edges(said, thought)
    g.op("tool:archival_memory_insert", "update")
    passage = g.var("passage-1", "Dentist appointment with Dr. Okafor on June 14 at 3pm.", cls="Passage",
                    cat="archival_passage")
    g.edges(thought, passage)
    g.op("tool:archival_memory_insert", "update")
    other = g.var("passage-2", "GP blood test with Dr. Lin on June 9 at 10am.", cls="Passage", cat="archival_passage")
    g.edges(thought, other)
    g.session("s2", date="2024-06-05")
    q = g.var("msg-q", {"role": "user", "text": "When is my dentist appointment?"}, cls="Message", cat="query")
    search = g.op("tool:archival_memory_search", "retrieval")
    found = g.var("msg-q-results", ["GP blood test with Dr. Lin on June 9 at 10am."], cls="Message",
                  cat="tool_return")
    g.edges([q, other], found)
    g.op("tool:send_message", "response")
    reply = g.var("msg-q-reply", {"role": "assistant", "text": "June 9 at 10am."}, cls="Message", cat="prediction")
    g.edges([q, found], reply)
    _judge(g, q, "June 14, 3pm", reply)
    return g.document(), search


def test_questions_and_answers_written_as_message_objects_are_their_text():
    doc, search = _letta()
    assert blame_smartcomment(doc, "When is my dentist appointment?", "June 14, 3pm", ("msg-1",)) == (
        "RetrievalError", search)


def test_a_question_is_matched_one_way_everywhere():
    assert question_text("**Sofia:** When do I fly out to Osaka?") == question_text("when do i fly out to osaka")
    assert question_text("What time do I pick up Noor from soccer?") == question_text(
        "what time do i  pick up noor from soccer")
    assert question_text("What's the 10:30 meeting about?") != question_text("30 meeting about")


def _notebook(deleter_reads_news: bool) -> tuple[dict, str, str]:
    """A Markdown notebook: the daily note is compacted nightly into ``MEMORY.md`` (losing the outbound date), then
    archived into an ``ARCHIVED`` marker; the questions grep ``MEMORY.md`` only."""
    g = Smartcomment("notebook")
    g.session("day", date="2024-09-28")
    said = g.turn("turn-1", "Sofia", "Booked Osaka! Flying out Saturday October 12th, back October 20th.")
    g.op("notebook.append_daily", "extraction")
    note = g.var("notes/2024-09-28.md", "- Osaka trip: outbound Oct 12, return Oct 20.", cls="Note", cat="note")
    g.edges(said, note)
    g.op("notebook.init", "update")
    memory = g.var("MEMORY.md", "# Memory\n- Partner: Joel.", cls="Note", cat="note")
    g.edges(said, memory)
    g.session("night", date="2024-09-29")
    compact = g.op("cron.compact_daily", "update")
    memory2 = g.var("MEMORY.md", "# Memory\n- Partner: Joel.\n- Osaka trip: flight Oct 20.", cls="Note", cat="note")
    g.edges([memory, note], memory2)
    later = g.turn("turn-2", "Sofia", "The October trip is all sorted.")
    archive = g.op("cron.archive_daily", "deletion")
    g.edges([note, later] if deleter_reads_news else note, g.var("notes/2024-09-28.md", "ARCHIVED", cls="Note",
                                                                   cat="marker"))
    g.session("qa", question_date="2024-10-01")
    q = g.question("ask-1", "When do I fly out to Osaka?")
    g.op("tool.grep_notes", "retrieval")
    context = g.var("ask-1", {"pattern": "Osaka", "matches": ["- Osaka trip: flight Oct 20."]}, cls="memory_context",
                    cat="memory_context")
    g.edges([q, memory2], context)
    g.judge(q, "October 12", g.answer("ask-1", context, "You fly out on October 20."))
    return g.document(), compact, archive


def test_a_note_archived_after_its_compaction_is_not_the_loss_the_compaction_is():
    """The archive read nothing but the note, after an op had consolidated the note into the unit the questions
    read: the designed retirement; the compaction that lost the date is the UpdateError. An archive decided on new
    input stays a DeletionError."""
    doc, compact, _ = _notebook(deleter_reads_news=False)
    assert blame_smartcomment(doc, "When do I fly out to Osaka?", "October 12", ("turn-1",)) == (
        "UpdateError", compact)
    doc, _, archive = _notebook(deleter_reads_news=True)
    assert blame_smartcomment(doc, "When do I fly out to Osaka?", "October 12", ("turn-1",)) == (
        "DeletionError", archive)


def test_days_joined_with_and_are_items_each_needed():
    """A cases file joins a list of golds with "and": "Tuesday and Thursday" needs both days (a weekday beside a
    date stays one item)."""
    from memopt.attribution.need import gold_pieces

    assert gold_pieces("Tuesday and Thursday") == ["Tuesday", "Thursday"]
    assert gold_pieces("Mondays, Wednesdays and Fridays") == ["Mondays", "Wednesdays", "Fridays"]
    assert gold_pieces("Saturday, 3 June 2023") == ["Saturday, 3 June 2023"]


def test_a_speaker_marked_inline_is_the_speaker_and_a_sentence_before_a_colon_is_not():
    from memopt.trace.memtracebench import from_memtrace

    g = Smartcomment("inline")
    g.session("s1", date="2024-09-28")
    said = g.var("t1", "**Sofia:** Booked Osaka! Flying out October 12th.", cls="Chat", cat="message")
    aside = g.var("t2", "Oh and big news in our house: we adopted a greyhound, Biscuit.", cls="Chat", cat="message")
    g.op("notebook.append_daily", "extraction")
    g.edges([said, aside], g.var("note", "- Osaka Oct 12\n- dog Biscuit", cls="Note", cat="memory_entry"))
    G, _ = from_memtrace(g.document(), source="inline.json")
    turns = {d["sc_id"]: d["value"] for _, d in G.nodes(data=True) if d.get("kind") == "turn"}
    assert turns[said]["speaker"] == "Sofia" and turns[said]["text"].startswith("Booked Osaka")
    assert turns[aside]["speaker"] != "Oh and big news in our house"
    assert turns[aside]["text"].startswith("Oh and big news")


def _checkpoint(dropped: bool) -> tuple[dict, str]:
    """A LangGraph-style state keyed by fact (``{"move": ..., "kids": ...}``), rewritten whole by a reducer that
    drops the ``kids`` key (or rewrites it without Maya's swimming)."""
    g = Smartcomment("state")
    g.session("t1", date="2024-03-20")
    said = g.turn("t1_m1", "user", "Maya does swimming on Tuesdays after school.")
    moving = g.turn("t1_m2", "user", "We're moving to Rotterdam at the end of April.")
    g.op("node:extract_memories", "extraction")
    state = g.var("state.memories", {"move": "Moving to Rotterdam at end of April",
                                     "kids": "Maya: swimming on Tuesdays"}, cls="StateDict", cat="state")
    g.edges([said, moving], state)
    g.session("t2", date="2024-03-27")
    later = g.turn("t2_m1", "user", "The movers are booked for April 28.")
    reducer = g.op("reducer:merge_memories", "update")
    kept = {"move": "Moving to Rotterdam on April 28"}
    if not dropped:
        kept["kids"] = "Kids: busy schedule"
    g.edges([later, state], g.var("state.memories", kept, cls="StateDict", cat="state"))
    g.session("qa", question_date="2024-04-02")
    q = g.question("q1", "What does Maya do on Tuesdays?")
    g.op("load_state", "retrieval")
    context = g.var("q1", kept, cls="memory_context", cat="memory_context")
    g.edges([q, g.latest("state.memories", "StateDict")], context)
    g.judge(q, "swimming", g.answer("q1", context, "I don't know."))
    return g.document(), reducer


def test_a_key_a_reducer_drops_from_a_state_is_deleted_and_a_key_it_rewrites_is_updated():
    doc, reducer = _checkpoint(dropped=True)
    assert blame_smartcomment(doc, "What does Maya do on Tuesdays?", "swimming", ("t1_m1",)) == (
        "DeletionError", reducer)
    doc, reducer = _checkpoint(dropped=False)
    assert blame_smartcomment(doc, "What does Maya do on Tuesdays?", "swimming", ("t1_m1",)) == (
        "UpdateError", reducer)
